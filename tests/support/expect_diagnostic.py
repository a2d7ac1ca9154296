#!/usr/bin/env python3
"""Checks what a `--format json` run printed on stderr: one diagnostic.

usage: expect_diagnostic.py STDERR_FILE CONDITION...
  KEY=VALUE   the field, as text, is VALUE          (code=C002, line=3)
  KEY~TEXT    the field contains TEXT               (message~topicz)
  KEY>N       the field is a number above N         (line>0)

The array is the last stderr line that starts with '[' (log lines may come
before it). It must hold exactly one diagnostic; exit 1 with what it holds
when it does not, or when a condition fails.
"""
import json
import re
import sys


def main():
    path, conditions = sys.argv[1], sys.argv[2:]
    with open(path, encoding="utf-8") as f:
        arrays = [line for line in f if line.startswith("[")]
    if not arrays:
        sys.exit(f"expect_diagnostic: no JSON array in {path}")
    found = json.loads(arrays[-1])
    if len(found) != 1:
        sys.exit(f"expect_diagnostic: want one diagnostic, got {found}")
    d = found[0]
    for c in conditions:
        key, op, want = re.match(r"(\w+)([=~>])(.*)", c).groups()
        got = d.get(key)
        ok = (op == "=" and str(got) == want) or (op == "~" and want in str(got)) or (
            op == ">" and isinstance(got, int) and got > int(want))
        if not ok:
            sys.exit(f"expect_diagnostic: {c} does not hold for {d}")


if __name__ == "__main__":
    main()
