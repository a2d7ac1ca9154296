#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A corpus for one pattern set of bench/sets_bench.sh: noise lines with the set's fault lines.

    python3 bench/set_corpus.py --base gen|real --size-mb 64 --fault-rate 0.001 --seed 1 \
        --samples PACK.yaml [PACK.yaml ...] --out corpus.log

--base gen   noise from bench/gen_corpus.py --fault-rate 0 (the generator's GPU-node noise,
             near misses of the built-in rules included), given as --noise FILE
--base real  real public node log lines (bench/corpora/loghub, PROVENANCE.md there), drawn at
             random

A --fault-rate fraction of the lines are the set's fault lines: the `tests: match` lines of
the rules in the given packs, each written as a kernel or journal record would be (no
prefix, a dmesg "[ seconds]" prefix, or a syslog "Nov 22 hh:mm:ss host ident: " prefix).

There is no truth file: which lines each pattern matches is what the reference RE2 scan
(fl-re2-count) finds, since noise may match a user's broad pattern too.
Same arguments, same bytes (the generator's own random.Random(seed)).
"""

import argparse
import os
import random
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
LOGHUB = os.path.join(HERE, "corpora", "loghub")
HOST = "gpu-17"
JOURNAL_IDENT = re.compile(r"^[A-Za-z][\w.@-]*(?:\[\d+\])?: ")


def sample_lines(paths):
    """The `tests: match` lines of every rule in the packs, in file order."""
    lines = []
    for path in paths:
        with open(path) as f:
            pack = yaml.safe_load(f)
        for rule in pack.get("rules") or []:
            for t in ((rule.get("tests") or {}).get("match") or []):
                line = t["line"] if isinstance(t, dict) else t
                if isinstance(line, str) and "\n" not in line and line:
                    lines.append(line)
    if not lines:
        sys.exit("set_corpus.py: no test lines in %s" % ", ".join(paths))
    return lines


def real_lines():
    lines = []
    for name in sorted(os.listdir(LOGHUB)):
        if name.endswith(".log"):
            with open(os.path.join(LOGHUB, name), encoding="utf-8", errors="replace") as f:
                lines.extend(l.rstrip("\r\n") for l in f if l.strip())
    return lines


def dressed(rng, line, t):
    """The line as a log source writes it."""
    r = rng.random()
    if r < 0.3:
        return line
    if r < 0.6:
        return "[%12.6f] %s" % (t, line)
    clock = "Nov 22 %02d:%02d:%02d" % (t // 3600 % 24, t // 60 % 60, t % 60)
    if JOURNAL_IDENT.match(line):
        return "%s %s %s" % (clock, HOST, line)
    return "%s %s kernel: %s" % (clock, HOST, line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", choices=["gen", "real"], required=True)
    ap.add_argument("--noise", help="with --base gen: a gen_corpus.py --fault-rate 0 corpus")
    ap.add_argument("--size-mb", type=float, required=True)
    ap.add_argument("--fault-rate", type=float, default=0.001)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", nargs="+", required=True, help="rule packs whose test lines are the faults")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    faults = sample_lines(args.samples)
    if args.base == "gen":
        if not args.noise:
            sys.exit("set_corpus.py: --base gen needs --noise FILE")
        noise_file = open(args.noise, "rb")

        def next_noise():
            line = noise_file.readline()
            if not line:
                noise_file.seek(0)
                line = noise_file.readline()
            return line.rstrip(b"\n").decode("utf-8", "replace")
    else:
        pool = real_lines()

        def next_noise():
            return rng.choice(pool)

    target = int(args.size_mb * 1024 * 1024)
    written = lines = fault_lines = 0
    t = 1800.0
    acc = 0.0
    with open(args.out, "wb") as out:
        while written < target:
            block = []
            for _ in range(4096):
                acc += args.fault_rate
                t += rng.random() * 0.02
                if acc >= 1.0:
                    acc -= 1.0
                    block.append(dressed(rng, rng.choice(faults), t))
                    fault_lines += 1
                else:
                    block.append(next_noise())
            data = ("\n".join(block) + "\n").encode()
            if written + len(data) > target:  # end on a whole line near the size
                data = data[:max(data.rfind(b"\n", 0, target - written) + 1, 0)]
                if not data:
                    break
            out.write(data)
            written += len(data)
            lines += data.count(b"\n")
    print("wrote %d bytes, %d lines, about %d fault lines" % (written, lines, fault_lines),
          file=sys.stderr)


if __name__ == "__main__":
    main()
