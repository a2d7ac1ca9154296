#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Start-up of `faultline scan`: the whole process on an empty file, built-in packs loaded.

    bench/startup_bench.py FAULTLINE [--runs 21] [--callgrind]

Prints the median and best CPU time (user+sys) and wall time of RUNS runs of
`faultline scan EMPTY` pinned to one core (FL_BENCH_CPU, 0): reading and compiling the
built-in packs is all such a run does. With --callgrind also the instructions of one run
under valgrind (steady under load, unlike the times).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("faultline")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--callgrind", action="store_true")
    args = ap.parse_args()
    cpu = os.environ.get("FL_BENCH_CPU", "0")
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.log")
        open(empty, "w").close()
        cpus, walls = [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            p = subprocess.Popen(["taskset", "-c", cpu, args.faultline, "scan", empty],
                                 stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            walls.append(time.perf_counter() - start)
            cpus.append(usage.ru_utime + usage.ru_stime)
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit("startup_bench: faultline scan exited %d" % os.waitstatus_to_exitcode(status))
        load = " ".join(open("/proc/loadavg").read().split()[:3])
        print("start-up (faultline scan of an empty file, built-in packs): median %.1f ms cpu "
              "(best %.1f), median %.1f ms wall, %d runs; load average %s" % (
                  1000 * statistics.median(cpus), 1000 * min(cpus),
                  1000 * statistics.median(walls), args.runs, load))
        if args.callgrind:
            out = os.path.join(tmp, "callgrind.out")
            p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                                args.faultline, "scan", empty], capture_output=True, text=True)
            m = re.search(r"Collected : (\d+)", p.stderr)
            print("start-up instructions (callgrind): %s" % (
                format(int(m.group(1)), ",") if m else "? (valgrind failed)"))


if __name__ == "__main__":
    main()
