#!/bin/sh
# faultline-agent --format json: the agent config's problems as one JSON array
# on stderr (file, line, column, level, code, message), exit 2, nothing
# started; in Kafka mode and standalone, which read the config alike.
# Usage: config_json_test.sh BUILD_DIR
set -eu
bin="$1/collector/faultline-agent"
expect="$(dirname "$0")/../support/expect_diagnostic.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Line 3, column 3: a misspelt key inside kafka:.
printf 'node_name: n1\nkafka:\n  topicz: events\n  brokers: "k:9092"\n' > "$dir/bad.yaml"
for mode in "" "--standalone"; do
  rc=0
  # shellcheck disable=SC2086 # $mode is one flag or none
  "$bin" $mode --config "$dir/bad.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL ($mode): exit $rc, want 2"; cat "$dir/err"; exit 1; }
  python3 "$expect" "$dir/err" file="$dir/bad.yaml" line=3 column=3 level=error code=C002 \
    message~topicz || { echo "FAIL ($mode)"; exit 1; }
  rc=0
  # shellcheck disable=SC2086
  "$bin" $mode --config "$dir/missing.yaml" --format json 2> "$dir/err" || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL ($mode): missing file: exit $rc, want 2"; exit 1; }
  python3 "$expect" "$dir/err" code=C000 || { echo "FAIL ($mode): missing file"; exit 1; }
done
# Text stays the default: file:line:col, the code, the caret.
rc=0
"$bin" --config "$dir/bad.yaml" 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "bad.yaml:3:3: error: .*\[C002\]" "$dir/err" && grep -q '\^' "$dir/err" ||
  { echo "FAIL: text format"; cat "$dir/err"; exit 1; }
rc=0
"$bin" --config "$dir/bad.yaml" --format xml 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--format must be json or text' "$dir/err" || { echo "FAIL: --format xml"; exit 1; }
echo PASS
