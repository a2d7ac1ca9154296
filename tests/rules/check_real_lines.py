#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The built-in packs on real log lines from public sources (tests/data/real-lines).

    check_real_lines.py --faultline BIN --data DIR --workdir DIR
                        [--split all|dev|heldout] [--heldout-file NAME] [--files GLOB]
                        [--per-class] [--variants] [--min-variant-recall R]
                        [--min-taint-recall R] [--min-detect-recall R] [--max-noise N]

Each *.tsv row is `expect, origin, kind, url, line`, or `expect, origin, kind, url,
class, line` (see the README there; a 5-field row's class is its file's name); --files
keeps only the files matching a glob. The pages listed in DIR/heldout-pages.txt (round 3),
or in the file --heldout-file names (round 4: heldout-pages-r4.txt), are the held-out
pages: `--split heldout` checks only their lines, `--split dev` only the others,
`--split all` (default) every line. The lines of each origin are scanned with
`faultline scan --source ORIGIN`, so a kernel line is judged as a kernel record and a
pod line as a pod line, exactly as the agent would. A line's outcome is `taint` when a
match has action taint (immediately or once its threshold is reached), `event` when a
match is an event, else `nothing`.

Prints taint recall, detection recall, wrong taints and noise, and every line whose
outcome differs from its expectation; with --per-class also each class's recalls.

--variants also scans, for every line whose outcome is as expected, the forms an operator
or a web page commonly makes of it (VARIANT_KINDS below): without its syslog/dmesg/journal
prefix, without the driver's device prefix, with typographic quotes, with the first letter
of its verdict word in the other case. A variant of a taint or event line should keep its
outcome; a variant of a `nothing` line must not taint. Prints, per kind, how many stay
detected and stay taint, and every variant that does not; --min-variant-recall fails the
run when the detection of the variants (all kinds together) falls below it, and any
variant of a line that must not taint that taints fails it too. Exit 1
on any wrong taint (a taint outcome for a line that must not taint), on recall below the
minimums, or on more noise (events on lines that must yield nothing) than allowed; 2 on a
malformed data file.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

EXPECT = ("taint", "event", "nothing")
ORIGINS = ("kernel", "journal", "pod")
KINDS = ("log", "fixture", "format")


def load_heldout(data_dir, name="heldout-pages.txt"):
    """The held-out page URLs (DIR/NAME; empty when absent)."""
    path = os.path.join(data_dir, name)
    if not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {t.strip() for t in f if t.strip() and not t.startswith("#")}


def load(data_dir, pattern="*.tsv"):
    rows = []
    for path in sorted(glob.glob(os.path.join(data_dir, pattern))):
        for number, text in enumerate(open(path, encoding="utf-8"), start=1):
            text = text.rstrip("\n")
            if not text or text.startswith("#"):
                continue
            fields = text.split("\t")
            where = "%s:%d" % (os.path.relpath(path), number)
            if len(fields) == 5:
                expect, origin, kind, url, line = fields
                klass = os.path.splitext(os.path.basename(path))[0]
            elif len(fields) == 6:
                expect, origin, kind, url, klass, line = fields
            else:
                raise ValueError("%s: %d tab-separated fields, expected 5 or 6" %
                                 (where, len(fields)))
            if expect not in EXPECT:
                raise ValueError("%s: expect %r is not one of %s" % (where, expect, EXPECT))
            if origin not in ORIGINS:
                raise ValueError("%s: origin %r is not one of %s" % (where, origin, ORIGINS))
            if kind not in KINDS:
                raise ValueError("%s: kind %r is not one of %s" % (where, kind, KINDS))
            if not url.startswith("https://"):
                raise ValueError("%s: the provenance %r is not an https URL" % (where, url))
            if not line.strip():
                raise ValueError("%s: empty line" % where)
            if not klass or " " in klass:
                raise ValueError("%s: class %r is empty or has a space" % (where, klass))
            rows.append({"where": where, "file": os.path.basename(path), "expect": expect,
                         "origin": origin, "kind": kind, "url": url, "class": klass,
                         "line": line})
    return rows


def scan(faultline, workdir, origin, rows):
    """Returns, per row, the list of (rule, action) matches."""
    path = os.path.join(workdir, "real-lines.%s.log" % origin)
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(row["line"] + "\n")
    run = subprocess.run([faultline, "scan", "--source", origin, "--format", "json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if run.returncode != 0:
        raise RuntimeError("faultline scan exited %d: %s" % (run.returncode, run.stderr.decode()))
    matches = collections.defaultdict(list)
    for text in run.stdout.decode().splitlines():
        event = json.loads(text)
        matches[event["line"] - 1].append((event["rule"], event["action"]))
    return [matches[i] for i in range(len(rows))]


# A syslog/journal date and host ("Oct  7 12:58:23 node1 ", ISO dates), util-linux dmesg's
# "kern  :err   : <date> " and Talos' "kern: alert: ", "<4>" levels, dmesg's "[ 123.456]"
# or "[Mon Jan  7 14:25:59 2023]", and the "kernel: " tag.
SYSLOG_DATE = re.compile(
    r"^(?:<\d>)?(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) \S*[^\s:] ")
KERNEL_PREFIX = re.compile(
    r"^(?:kern\s*:\s*\w+\s*: (?:\S+ )?|<\d>|kernel: ?|\[\s*\d+\.\d+\] ?"
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ?)")
# The device prefixes of the drivers the packs read (dev_printk's "DRIVER PCI: ", nvme's
# "nvme nvmeN: ", DRM_ERROR's "[drm:FUNC [amdgpu]] *ERROR* ", amdgpu's repeated "amdgpu: ",
# "NVRM: ").
DEVICE_PREFIX = re.compile(
    r"^(?:[a-z][\w-]* [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]:? (?:amdgpu: )?"
    r"|nvme nvme\d+: |\[drm:[^\]\s]+ \[\w+\]\] \*ERROR\* |\[drm\] (?:\*ERROR\* )?"
    r"|amdgpu: |NVRM: )")
# Verdict words drivers print at the start of a message in either case across versions
# ("Failed to ..."/"failed to ...", "Fatal error"/"fatal error"); only the message's first
# word (after the prefixes above) is changed.
CASE_WORD = re.compile(r"(?:[Ff]ailed|[Ff]atal|[Ee]rror|[Uu]nable|[Cc]annot|[Tt]imeout)\b")
VARIANT_KINDS = ("no-prefix", "no-device", "typographic", "case")


def strip_prefix(line, origin):
    """The line without its syslog/dmesg/journal prefix (kernel lines: also `kernel:`)."""
    if origin == "pod":
        return line
    text = SYSLOG_DATE.sub("", line, count=1)
    if origin == "kernel":
        while True:
            shorter = KERNEL_PREFIX.sub("", text, count=1)
            if shorter == text:
                break
            text = shorter
    return text


def variants(line, origin):
    """(kind, text) pairs: the forms of the line a page or an operator commonly makes."""
    out = []
    bare = strip_prefix(line, origin)
    if bare != line and bare.strip():
        out.append(("no-prefix", bare))
    if origin == "kernel":
        text, stripped = bare, bare
        while True:
            shorter = DEVICE_PREFIX.sub("", stripped, count=1)
            if shorter == stripped:
                break
            stripped = shorter
        if stripped != text and stripped.strip():
            out.append(("no-device", stripped))
    else:
        stripped = bare
    if "'" in line or '"' in line:
        # An apostrophe inside a word becomes U+2019; other quotes open and close in turn,
        # as a word processor or a web page's "smart quotes" make them.
        quoted, single, double = [], True, True
        for i, ch in enumerate(line):
            if ch == "'" and 0 < i < len(line) - 1 and line[i - 1].isalnum() and \
                    line[i + 1].isalpha():
                quoted.append("\u2019")
            elif ch == "'":
                quoted.append("\u2018" if single else "\u2019")
                single = not single
            elif ch == '"':
                quoted.append("\u201c" if double else "\u201d")
                double = not double
            else:
                quoted.append(ch)
        out.append(("typographic", "".join(quoted)))
    start = len(line) - len(stripped)
    word = CASE_WORD.match(line, start)
    if word:
        w = word.group(0)
        flipped = (w[0].lower() if w[0].isupper() else w[0].upper()) + w[1:]
        out.append(("case", line[:word.start()] + flipped + line[word.end():]))
    return out


def check_variants(args, rows):
    """Scans the variants of every line whose outcome was as expected; returns the
    detection recall of the variants of taint and event lines and the variants that
    taint although their line must not."""
    cases = []
    for row in rows:
        if row["got"] != row["expect"]:
            continue
        for kind, text in variants(row["line"], row["origin"]):
            cases.append({"row": row, "kind": kind, "line": text, "origin": row["origin"]})
    for origin in ORIGINS:
        subset = [c for c in cases if c["origin"] == origin]
        for case, matches in zip(subset, scan(args.faultline, args.workdir, origin, subset)):
            case["matches"] = matches
            case["got"] = outcome(matches)
    print("variants (of lines whose outcome is as expected):")
    print("%-12s %10s %10s %10s" % ("kind", "detected", "taint", "wrong"))
    for kind in VARIANT_KINDS:
        sub = [c for c in cases if c["kind"] == kind]
        det = [c for c in sub if c["row"]["expect"] != "nothing"]
        taint = [c for c in sub if c["row"]["expect"] == "taint"]
        print("%-12s %10s %10s %10d" % (
            kind, "%d/%d" % (sum(c["got"] != "nothing" for c in det), len(det)),
            "%d/%d" % (sum(c["got"] == "taint" for c in taint), len(taint)),
            sum(c["row"]["expect"] != "taint" and c["got"] == "taint" for c in sub)))
    for case in cases:
        expect = case["row"]["expect"]
        lost = expect != "nothing" and (case["got"] == "nothing" or
                                        (expect == "taint" and case["got"] != "taint"))
        wrong = expect != "taint" and case["got"] == "taint"
        if lost or wrong:
            rules = ",".join(sorted({rule for rule, _ in case["matches"]})) or "-"
            was = ",".join(sorted({rule for rule, _ in case["row"]["matches"]})) or "-"
            print("variant %-11s %-7s expected %-7s got %-7s [%s; line: %s] %s\n        %s" % (
                case["kind"], case["origin"], expect, case["got"], rules, was,
                case["row"]["where"], case["line"]))
    det = [c for c in cases if c["row"]["expect"] != "nothing"]
    recall = sum(c["got"] != "nothing" for c in det) / len(det) if det else 1.0
    wrong = [c for c in cases if c["row"]["expect"] != "taint" and c["got"] == "taint"]
    print("variant detection recall: %d/%d = %.3f (minimum %.3f); variant wrong taints: %d" % (
        sum(c["got"] != "nothing" for c in det), len(det), recall, args.min_variant_recall,
        len(wrong)))
    return recall, wrong


def outcome(matches):
    actions = {action for _, action in matches}
    if "taint" in actions:
        return "taint"
    if "event" in actions:
        return "event"
    return "nothing"


def print_per_class(rows):
    """One line per class: taint recall, detection recall, wrong taints, noise."""
    print("%-12s %6s %12s %12s %6s %6s" % ("class", "lines", "taint", "detect", "wrong", "noise"))
    for klass in sorted({r["class"] for r in rows}):
        sub = [r for r in rows if r["class"] == klass]
        taint = [r for r in sub if r["expect"] == "taint"]
        detect = [r for r in sub if r["expect"] != "nothing"]
        print("%-12s %6d %12s %12s %6d %6d" % (
            klass, len(sub),
            "%d/%d" % (sum(r["got"] == "taint" for r in taint), len(taint)),
            "%d/%d" % (sum(r["got"] != "nothing" for r in detect), len(detect)),
            sum(r["expect"] != "taint" and r["got"] == "taint" for r in sub),
            sum(r["expect"] == "nothing" and r["got"] == "event" for r in sub)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultline", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--min-taint-recall", type=float, default=1.0)
    ap.add_argument("--min-detect-recall", type=float, default=1.0)
    ap.add_argument("--max-noise", type=int, default=0)
    ap.add_argument("--split", choices=("all", "dev", "heldout"), default="all")
    ap.add_argument("--per-class", action="store_true")
    ap.add_argument("--files", default="*.tsv",
                    help="which data files of DIR to check (a glob, e.g. 'r4b-*.tsv')")
    ap.add_argument("--heldout-file", default="heldout-pages.txt",
                    help="the list of held-out pages in DIR (round 3: heldout-pages.txt, "
                    "round 4: heldout-pages-r4.txt)")
    ap.add_argument("--variants", action="store_true",
                    help="also scan the common variants of each line (no prefix, no device "
                    "prefix, typographic quotes, case of the verdict word)")
    ap.add_argument("--min-variant-recall", type=float, default=0.0)
    args = ap.parse_args()

    try:
        rows = load(args.data, args.files)
        heldout = load_heldout(args.data, args.heldout_file)
    except (OSError, ValueError) as e:
        print("bad regression data: %s" % e)
        return 2
    if args.split != "all":
        if not heldout:
            print("bad regression data: --split %s needs %s" % (
                args.split, os.path.join(args.data, args.heldout_file)))
            return 2
        keep = args.split == "heldout"
        rows = [r for r in rows if (r["url"] in heldout) == keep]
    os.makedirs(args.workdir, exist_ok=True)
    for origin in ORIGINS:
        subset = [r for r in rows if r["origin"] == origin]
        for row, matches in zip(subset, scan(args.faultline, args.workdir, origin, subset)):
            row["matches"] = matches
            row["got"] = outcome(matches)

    must_taint = [r for r in rows if r["expect"] == "taint"]
    must_detect = [r for r in rows if r["expect"] != "nothing"]
    tainted = [r for r in must_taint if r["got"] == "taint"]
    detected = [r for r in must_detect if r["got"] != "nothing"]
    wrong_taints = [r for r in rows if r["expect"] != "taint" and r["got"] == "taint"]
    noise = [r for r in rows if r["expect"] == "nothing" and r["got"] == "event"]
    taint_recall = len(tainted) / len(must_taint) if must_taint else 1.0
    detect_recall = len(detected) / len(must_detect) if must_detect else 1.0

    for row in rows:
        if row["got"] != row["expect"]:
            rules = ",".join(sorted({rule for rule, _ in row["matches"]})) or "-"
            print("%-7s expected %-7s got %-7s [%s] %s\n        %s" % (
                row["origin"], row["expect"], row["got"], rules, row["where"], row["line"]))
    per_file = collections.Counter((r["file"], r["got"] == r["expect"]) for r in rows)
    files = sorted({r["file"] for r in rows})
    print("per file (as expected / total): " + ", ".join(
        "%s %d/%d" % (f, per_file[(f, True)], per_file[(f, True)] + per_file[(f, False)])
        for f in files))
    if args.per_class:
        print_per_class(rows)
    print("split: %s, pages: %d" % (args.split, len({r["url"] for r in rows})))
    print("lines: %d (%s), kinds: %s" % (
        len(rows), ", ".join("%s %d" % (e, sum(r["expect"] == e for r in rows)) for e in EXPECT),
        ", ".join("%s %d" % (k, sum(r["kind"] == k for r in rows)) for k in KINDS)))
    print("taint recall: %d/%d = %.3f (minimum %.3f)" % (
        len(tainted), len(must_taint), taint_recall, args.min_taint_recall))
    print("detection recall: %d/%d = %.3f (minimum %.3f)" % (
        len(detected), len(must_detect), detect_recall, args.min_detect_recall))
    print("wrong taints: %d (must be 0)" % len(wrong_taints))
    print("noise (events on lines that must yield nothing): %d (maximum %d)" % (
        len(noise), args.max_noise))

    failed = (wrong_taints or taint_recall < args.min_taint_recall
              or detect_recall < args.min_detect_recall or len(noise) > args.max_noise)
    if args.variants:
        variant_recall, variant_wrong = check_variants(args, rows)
        failed = failed or variant_wrong or variant_recall < args.min_variant_recall
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
