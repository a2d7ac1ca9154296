#!/usr/bin/env bash
# bench/scan_bench.sh, the matcher's figure beside its peers, on a 1 MiB
# corpus: it must run every peer and check every count (exit 0, a ratio
# against rg), and a peer that fails must fail the run with its exit status
# named, not turn into a ratio against a run that did not happen (a machine
# without ripgrep printed "0.01x" and a MISMATCH before bench/ installed it).
#   scan_bench_test.sh FAULTLINE FL_HS_COUNT WORK_DIR
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export FL_BENCH_BINARY=$1 FL_BENCH_HS_COUNT=$2 FL_BENCH_DIR=$3
mkdir -p "$FL_BENCH_DIR"
run() { "$ROOT/bench/scan_bench.sh" --size-mb 1 --runs 1 --no-grep "$@"; }

out=$(run 2>&1) || { echo "$out"; echo "FAIL: scan_bench.sh exited $?"; exit 1; }
for want in "faultline vs rg:" "rg -j1 -c -f patterns.rg" "equals truth" \
            "faultline vs vectorscan block:" "per-rule counts equal truth"; do
  grep -qF "$want" <<<"$out" || { echo "$out"; echo "FAIL: no '$want' in the report"; exit 1; }
done
if grep -q "MISMATCH\|FAILED" <<<"$out"; then echo "$out"; echo "FAIL: a check failed"; exit 1; fi

# Half the lines from fault templates, so that every template is drawn: the
# rules each template's line matches must be the generator's truth (a rule
# that came to match a template's line, "Cable plugged" once issue 29
# classified it, made every 256 MiB run a MISMATCH while 1 MiB at 0.1% passed).
rc=0
out=$(run --fault-rate 0.5 2>&1) || rc=$?
if [[ $rc -ne 0 ]] || grep -q "MISMATCH\|FAILED" <<<"$out"; then
  echo "$out"
  echo "FAIL: at 50% fault lines, exit $rc or a check failed"
  exit 1
fi

# A broken rg first on PATH.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\necho "rg: broken" >&2\nexit 2\n' >"$fake/rg"
chmod +x "$fake/rg"
rc=0
out=$(PATH="$fake:$PATH" run 2>&1) || rc=$?
[[ $rc -eq 1 ]] || { echo "$out"; echo "FAIL: exit $rc with a failing rg, want 1"; exit 1; }
grep -qF "FAILED: rg exited 2" <<<"$out" || { echo "$out"; echo "FAIL: the failed peer is not named"; exit 1; }
echo "PASS"
