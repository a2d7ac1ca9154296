#!/bin/sh
# faultline-tainter --format json: config problems as one JSON array on
# stderr (file, line, column, level, code, message), exit 2, nothing started.
# Usage: config_json_test.sh BUILD_DIR
set -eu
bin="$1/tainter/faultline-tainter"
expect="$(dirname "$0")/../../support/expect_diagnostic.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'kafka:\n  brokers: "k:9092"\n  topicz: events\n' > "$dir/bad.yaml"
rc=0
"$bin" --config "$dir/bad.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, want 2"; cat "$dir/err"; exit 1; }
python3 "$expect" "$dir/err" file="$dir/bad.yaml" line=3 column=3 level=error code=C002 \
  message~topicz
rc=0
"$bin" --config "$dir/missing.yaml" --format json 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: missing file: exit $rc, want 2"; exit 1; }
python3 "$expect" "$dir/err" code=C000
rc=0
"$bin" --config "$dir/bad.yaml" --format xml 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--format must be json or text' "$dir/err" || { echo "FAIL: --format xml"; exit 1; }
# The credentials' problems too: a kubeconfig's own (file:line:col, code),
# before anything connects.
printf 'apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: nope\n' > "$dir/kc"
printf 'kafka:\n  brokers: "127.0.0.1:1"\nkubernetes:\n  kubeconfig: %s\n' "$dir/kc" > "$dir/good.yaml"
rc=0
"$bin" --config "$dir/good.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: bad kubeconfig: exit $rc, want 2"; cat "$dir/err"; exit 1; }
python3 "$expect" "$dir/err" file="$dir/kc" 'line>0' code=C003 message~nope
# A kubeconfig that is not there: one C000 naming it.
printf 'kafka:\n  brokers: "127.0.0.1:1"\nkubernetes:\n  kubeconfig: %s/none\n' "$dir" > "$dir/gone.yaml"
rc=0
"$bin" --config "$dir/gone.yaml" --format json 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: missing kubeconfig: exit $rc, want 2"; exit 1; }
python3 "$expect" "$dir/err" code=C000 file~none
echo PASS
