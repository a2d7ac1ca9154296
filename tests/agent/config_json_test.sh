#!/bin/sh
# faultline-agent --format json: the agent config's problems as one JSON array
# on stderr (file, line, column, level, code, message), exit 2, nothing
# started; in Kafka mode and standalone, which read the config alike.
# Usage: config_json_test.sh BUILD_DIR
set -eu
bin="$1/collector/faultline-agent"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Line 3, column 3: a misspelt key inside kafka:.
printf 'node_name: n1\nkafka:\n  topicz: events\n  brokers: "k:9092"\n' > "$dir/bad.yaml"
for mode in "" "--standalone"; do
  rc=0
  # shellcheck disable=SC2086 # $mode is one flag or none
  "$bin" $mode --config "$dir/bad.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL ($mode): exit $rc, want 2"; cat "$dir/err"; exit 1; }
  python3 - "$dir/err" "$dir/bad.yaml" <<'PY' || { echo "FAIL ($mode)"; cat "$dir/err"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 1, d
e = d[0]
assert e["file"] == sys.argv[2] and e["line"] == 3 and e["column"] == 3, e
assert e["level"] == "error" and e["code"] == "C002", e
assert "topicz" in e["message"], e
PY
  rc=0
  # shellcheck disable=SC2086
  "$bin" $mode --config "$dir/missing.yaml" --format json 2> "$dir/err" || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL ($mode): missing file: exit $rc, want 2"; exit 1; }
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["code"]=="C000", d' "$dir/err"
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
