#!/bin/sh
# faultline-tainter --format json: config problems as one JSON array on
# stderr (file, line, column, level, code, message), exit 2, nothing started.
# Usage: config_json_test.sh BUILD_DIR
set -eu
bin="$1/tainter/faultline-tainter"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'kafka:\n  brokers: "k:9092"\n  topicz: events\n' > "$dir/bad.yaml"
rc=0
"$bin" --config "$dir/bad.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, want 2"; cat "$dir/err"; exit 1; }
python3 - "$dir/err" "$dir/bad.yaml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 1, d
e = d[0]
assert e["file"] == sys.argv[2] and e["line"] == 3 and e["column"] == 3, e
assert e["level"] == "error" and e["code"] == "C002", e
assert "topicz" in e["message"], e
PY
rc=0
"$bin" --config "$dir/missing.yaml" --format json 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: missing file: exit $rc, want 2"; exit 1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["code"]=="C000", d' "$dir/err"
rc=0
"$bin" --config "$dir/bad.yaml" --format xml 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--format must be json or text' "$dir/err" || { echo "FAIL: --format xml"; exit 1; }
echo PASS
