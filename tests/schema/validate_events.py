#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Validates faultline events (one JSON object per line) against the
published schema, schema/faultline-event-v1.schema.json, with Debian's
python3-jsonschema (deploy/install-deps.sh --test installs it).

usage: validate_events.py [--schema FILE] [--min N] [FILE|-]...

Reads every FILE (stdin without one), prints each event that does not
validate with the reasons, and exits 1 if any does not, or if fewer than N
events were read (so that an empty input cannot pass by accident).
"""
import argparse
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("validate_events.py: python3-jsonschema is not installed "
             "(deploy/install-deps.sh --test installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "..", "schema", "faultline-event-v1.schema.json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("--min", type=int, default=1, help="fail with fewer events than this")
    ap.add_argument("files", nargs="*", default=["-"])
    args = ap.parse_args()

    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)  # the file itself is a valid schema of its draft
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)

    events = bad = 0
    for name in args.files:
        f = sys.stdin if name == "-" else open(name, encoding="utf-8")
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            events += 1
            where = "%s:%d" % ("<stdin>" if name == "-" else name, number)
            try:
                event = json.loads(line)
            except json.JSONDecodeError as e:
                print("%s: not JSON: %s" % (where, e))
                bad += 1
                continue
            errors = sorted(validator.iter_errors(event), key=lambda e: list(e.path))
            if errors:
                bad += 1
                print("%s: does not validate:" % where)
                for e in errors:
                    print("  at /%s: %s" % ("/".join(str(p) for p in e.path), e.message))
        if f is not sys.stdin:
            f.close()
    print("%d events, %d invalid (%s, %s)" % (events, bad, os.path.basename(args.schema),
                                             cls.__name__))
    if events < args.min:
        print("expected at least %d events" % args.min)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
