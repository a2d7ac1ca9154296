#!/usr/bin/env bash
# Runs one bench/ command small and checks that its report has the figures
# bench/README.md records, and no failed check: so a bench command that
# stops working fails the suite, not the next person who measures.
#   bench_command_test.sh WORK_DIR COMMAND ARGS... -- WANTED-LINE-PREFIX...
set -euo pipefail
export FL_BENCH_NO_BUILD=1 FL_BENCH_DIR=$1
shift
mkdir -p "$FL_BENCH_DIR"
cmd=()
while [[ $1 != -- ]]; do cmd+=("$1"); shift; done
shift
rc=0
out=$("${cmd[@]}" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || { echo "$out"; echo "FAIL: ${cmd[*]} exited $rc"; exit 1; }
for want in "$@"; do
  grep -q "^$want" <<<"$out" || { echo "$out"; echo "FAIL: no line '$want...' in the report"; exit 1; }
done
if grep -q "STALLED\|MISMATCH\|FAIL" <<<"$out"; then echo "$out"; echo "FAIL: a check failed"; exit 1; fi
echo "$out" | tail -n 12
echo "PASS"
