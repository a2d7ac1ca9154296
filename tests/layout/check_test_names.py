#!/usr/bin/env python3
"""Every doctest TEST_CASE name must be runnable by ctest on its own.

doctest_discover_tests registers each case as its own ctest test, and CMake
splits a test name at ';': a case named "a; b" became two tests, "a" and
" b", whose --test-case filters match no case, so it passed without running.
Three tainter cases did, and one of them failed once it ran. Usage:
check_test_names.py SOURCE_DIR
"""
import pathlib
import re
import sys

NAME = re.compile(r'TEST_CASE\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
PIECE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def main():
    root = pathlib.Path(sys.argv[1])
    bad = []
    for path in sorted((root / "tests").rglob("*.cc")):
        text = path.read_text(errors="replace")
        for m in NAME.finditer(text):
            name = "".join(PIECE.findall(m.group(1)))
            if ";" in name:
                line = text.count("\n", 0, m.start()) + 1
                bad.append("%s:%d: %s" % (path.relative_to(root), line, name))
    for b in bad:
        print("a ';' splits this test case's name under ctest: " + b)
    print("%d test case names with ';'" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
