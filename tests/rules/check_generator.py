#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/gen_corpus.py is deterministic and honours its size: the same seed gives the
same bytes and truth, another seed other bytes, and the file is --size-mb (minus at
most one line) with the truth's byte and line counts.

    check_generator.py --generator bench/gen_corpus.py --workdir DIR
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys


def generate(gen, workdir, name, seed):
    out = os.path.join(workdir, name + ".log")
    truth = os.path.join(workdir, name + ".json")
    subprocess.run([sys.executable, gen, "--size-mb", "1", "--fault-rate", "0.01", "--seed", str(seed),
                    "--out", out, "--truth", truth], check=True, stderr=subprocess.DEVNULL)
    data = open(out, "rb").read()
    return hashlib.sha256(data).hexdigest(), data, json.load(open(truth))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    a_hash, a_data, a_truth = generate(args.generator, args.workdir, "a", 5)
    b_hash, _, b_truth = generate(args.generator, args.workdir, "b", 5)
    c_hash, _, _ = generate(args.generator, args.workdir, "c", 6)
    problems = []
    if a_hash != b_hash or a_truth != b_truth:
        problems.append("same seed, different output")
    if a_hash == c_hash:
        problems.append("different seeds, same output")
    if not (1048576 - 4096 < len(a_data) <= 1048576):
        problems.append("size %d is not 1 MiB" % len(a_data))
    if a_truth["bytes"] != len(a_data) or a_truth["lines"] != a_data.count(b"\n"):
        problems.append("truth counts differ from the file")
    if a_truth["noise_lines"] + a_truth["fault_lines"] + a_truth["context_lines"] != a_truth["lines"]:
        problems.append("noise + fault + context lines != lines")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
