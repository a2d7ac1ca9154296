#!/usr/bin/env python3
"""Are two `faultline scan --format json` outputs the same bytes, but for the run's time?

usage: same_scan_json.py OLD.json NEW.json

A change that only makes writing events cheaper must not change a byte of what
`faultline scan` prints. Two runs differ in one thing by design: each run's
"detected_time" (and "log_time" on lines that carry no time of their own, which
is the detected time). Per line, that value (the quoted text after
"detected_time":) is replaced wherever it occurs in the line; everything else is
compared byte for byte. Exit 0 when the same; 1 with the first differing line
shown when not; 2 for bad usage.
"""

import re
import sys

DETECTED = re.compile(rb'"detected_time":("[^"]*")')


def normalized(line):
    m = DETECTED.search(line)
    if not m:
        return line
    return line.replace(m.group(1), b'"@DETECTED"')


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], "rb") as old_file, open(argv[2], "rb") as new_file:
        old_lines = old_file.read().split(b"\n")
        new_lines = new_file.read().split(b"\n")
    for number, (old, new) in enumerate(zip(old_lines, new_lines), start=1):
        if normalized(old) != normalized(new):
            print("line %d differs:\n- %s\n+ %s" % (number, old.decode(errors="replace"),
                                                     new.decode(errors="replace")))
            return 1
    if len(old_lines) != len(new_lines):
        print("%d lines before, %d after" % (len(old_lines) - 1, len(new_lines) - 1))
        return 1
    print("same: %d events" % (len(old_lines) - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
