#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The built-in packs on a generated corpus: every fault template is found, at the
lines the generator put it, and no noise line yields an event or a taint.

    check_corpus.py --faultline BIN --generator bench/gen_corpus.py --workdir DIR
                    [--size-mb 20] [--fault-rate 0.005] [--seed 7]

Exit 0 when `faultline scan --all --format json` reports exactly the generator's ground
truth (rule by rule and line by line; `--all` keeps the matches whose outcome is
`ignore`, which the truth lists), every rule of `faultline rules list` has a template in the
corpus, and nothing else is reported; 1 otherwise (with the differences).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultline", required=True)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--size-mb", type=float, default=20)
    ap.add_argument("--fault-rate", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    corpus = os.path.join(args.workdir, "corpus.log")
    truth_path = os.path.join(args.workdir, "corpus.truth.json")
    subprocess.run([sys.executable, args.generator, "--size-mb", str(args.size_mb),
                    "--fault-rate", str(args.fault_rate), "--seed", str(args.seed),
                    "--out", corpus, "--truth", truth_path, "--truth-lines"], check=True)
    truth = json.load(open(truth_path))

    started = time.monotonic()
    # `--all`: matches whose outcome is `ignore` too (a rule of action ignore, or a
    # classify entry like mlx5.port-module-event's "Cable plugged"), which the
    # generator's truth lists as the matches they are.
    scan = subprocess.run([args.faultline, "scan", "--all", "--format", "json", corpus],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.monotonic() - started
    if scan.returncode != 0:
        print("faultline scan exited %d: %s" % (scan.returncode, scan.stderr.decode()[-2000:]))
        return 1

    # Every rule of the built-in packs must occur, `ignore` ones included.
    listing = subprocess.run([args.faultline, "rules", "list", "--format", "json"],
                             stdout=subprocess.PIPE, check=True)
    rules = json.loads(listing.stdout)
    ignored = {r["id"] for r in rules if r.get("action") == "ignore" and not r.get("classify")}
    untested = sorted(r["id"] for r in rules
                      if r["id"] not in truth["per_rule"] and not r.get("disabled"))
    for rule in untested:
        print("NO FAULT TEMPLATE in the corpus for rule %s" % rule)
    expected = {(rule, n) for rule, ns in truth["rule_lines"].items() for n in ns}
    got = collections.Counter()
    per_rule = collections.Counter()
    per_action = collections.Counter()
    for raw in scan.stdout.splitlines():
        if not raw.strip():
            continue
        ev = json.loads(raw)
        got[(ev["rule"], int(ev["line"]))] += 1
        per_rule[ev["rule"]] += 1
        per_action[ev.get("action", "?")] += 1

    failures = 0
    noise = [(k, c) for k, c in got.items() if k not in expected]
    missed = sorted(k for k in expected if k not in got)
    dup = [(k, c) for k, c in got.items() if c > 1]
    lines = open(corpus, encoding="utf-8", errors="replace").read().split("\n")
    for (rule, n), _ in sorted(noise)[:20]:
        print("NOISE MATCH %s at line %d: %s" % (rule, n, lines[n - 1][:200]))
    for rule, n in missed[:20]:
        print("MISSED %s at line %d: %s" % (rule, n, lines[n - 1][:200]))
    for (rule, n), c in dup[:20]:
        print("REPORTED %d TIMES %s at line %d" % (c, rule, n))
    failures = len(noise) + len(missed) + len(dup) + len(untested)
    for rule, count in sorted(truth["per_rule"].items()):
        if per_rule.get(rule, 0) != count:
            print("COUNT %s: scan %d, truth %d" % (rule, per_rule.get(rule, 0), count))
    print("corpus %.1f MiB, %d lines, %d fault lines, %d rules in truth (%d ignore); scan %.2f s; "
          "events %d (%s); noise matches %d, missed %d" % (
              truth["bytes"] / 1048576.0, truth["lines"], truth["fault_lines"], len(truth["per_rule"]),
              len(ignored), elapsed, sum(got.values()), dict(per_action), len(noise), len(missed)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
