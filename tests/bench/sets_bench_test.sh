#!/usr/bin/env bash
# bench/sets_bench.py, every pattern set on both corpora at 1 MiB: each
# pair must run faultline, rg and both Vectorscan modes and check every count
# against the reference RE2 scan; a faultline count that differs from RE2's
# must fail the run (a rule whose pattern the check cannot see, or a
# broken reference, would otherwise pass silently).
#   sets_bench_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$1
export FL_BENCH_DIR=$2
mkdir -p "$FL_BENCH_DIR"
out=$("$ROOT/bench/sets_bench.py" "$BUILD" --size-mb 1 --runs 1 2>&1) ||
  { rc=$?; echo "$out"; echo "FAIL: sets_bench.py exited $rc"; exit 1; }
for set in builtin npd user-gpu user-host user-loose user-fleet subset-a subset-b; do
  for base in gen real; do
    grep -Eq "^set $set +corpus $base .*faultline per-rule = RE2.*rg = RE2.*vectorscan block = RE2.*vectorscan stream = RE2" <<<"$out" ||
      { echo "$out"; echo "FAIL: no checked row for $set on $base"; exit 1; }
  done
done

# user-loose again at 2 MiB: past 256 KiB per literal-less rule (5 of its
# 29), where a scan finds their lines with the unfiltered search
# (matcher/unfiltered_search.h) instead of trying them on every line.
out=$("$ROOT/bench/sets_bench.py" "$BUILD" --size-mb 2 --runs 1 --sets user-loose 2>&1) ||
  { rc=$?; echo "$out"; echo "FAIL: sets_bench.py (user-loose, 2 MiB) exited $rc"; exit 1; }
for base in gen real; do
  grep -Eq "^set user-loose +corpus $base .*faultline per-rule = RE2" <<<"$out" ||
    { echo "$out"; echo "FAIL: no checked 2 MiB row for user-loose on $base"; exit 1; }
done

# Two runs at once on a fresh directory (an A/B of two builds is run so):
# each must find its corpora and references whole. Before each wrote them
# under one temporary name and its set's files in place, one of two such
# runs failed (a reference's .tmp renamed away by the other run).
both=$(mktemp -d)
FL_BENCH_DIR=$both "$ROOT/bench/sets_bench.py" "$BUILD" --size-mb 2 --runs 1 --sets npd,user-host >"$both/a" 2>&1 &
first=$!
rc_b=0
FL_BENCH_DIR=$both "$ROOT/bench/sets_bench.py" "$BUILD" --size-mb 2 --runs 1 --sets npd,user-host >"$both/b" 2>&1 || rc_b=$?
rc_a=0
wait "$first" || rc_a=$?
if ((rc_a != 0 || rc_b != 0)); then
  cat "$both/a" "$both/b"
  echo "FAIL: two sets_bench.py runs at once exited $rc_a and $rc_b"
  exit 1
fi
rm -rf "$both"

# A reference that disagrees (every count one higher) must fail the check.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/matcher" "$fake/bench"
ln -s "$BUILD/matcher/faultline" "$fake/matcher/faultline"
ln -s "$BUILD/bench/fl-hs-count" "$fake/bench/fl-hs-count"
cat >"$fake/bench/fl-re2-count" <<SH
#!/bin/sh
"$BUILD/bench/fl-re2-count" "\$@" | python3 -c '
import json, sys
t = json.load(sys.stdin)
t["message"] = [n + 1 for n in t["message"]]
print(json.dumps(t))'
SH
chmod +x "$fake/bench/fl-re2-count"
export FL_BENCH_DIR=$fake/work
rc=0
out=$("$ROOT/bench/sets_bench.py" "$fake" --size-mb 1 --runs 1 --sets npd --bases real 2>&1) || rc=$?
[[ $rc -eq 1 ]] || { echo "$out"; echo "FAIL: exit $rc with a wrong truth, want 1"; exit 1; }
grep -q "faultline MISMATCH" <<<"$out" || { echo "$out"; echo "FAIL: the mismatch is not named"; exit 1; }
echo "PASS"
