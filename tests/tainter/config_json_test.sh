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
# The credentials' problems too: a kubeconfig's own (file:line:col, code),
# before anything connects.
printf 'apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: nope\n' > "$dir/kc"
printf 'kafka:\n  brokers: "127.0.0.1:1"\nkubernetes:\n  kubeconfig: %s\n' "$dir/kc" > "$dir/good.yaml"
rc=0
"$bin" --config "$dir/good.yaml" --format json 2> "$dir/err" > "$dir/out" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: bad kubeconfig: exit $rc, want 2"; cat "$dir/err"; exit 1; }
grep '^\[' "$dir/err" > "$dir/json" || { echo "FAIL: no JSON array"; cat "$dir/err"; exit 1; }
python3 - "$dir/json" "$dir/kc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 1, d
e = d[0]
assert e["file"] == sys.argv[2] and e["line"] > 0 and e["code"] == "C003", e
assert "nope" in e["message"], e
PY
# A kubeconfig that is not there: one C000 naming it.
printf 'kafka:\n  brokers: "127.0.0.1:1"\nkubernetes:\n  kubeconfig: %s/none\n' "$dir" > "$dir/gone.yaml"
rc=0
"$bin" --config "$dir/gone.yaml" --format json 2> "$dir/err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: missing kubeconfig: exit $rc, want 2"; exit 1; }
grep '^\[' "$dir/err" > "$dir/json" || { echo "FAIL: no JSON array"; cat "$dir/err"; exit 1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["code"]=="C000" and "none" in d[0]["file"], d' "$dir/json"
echo PASS
