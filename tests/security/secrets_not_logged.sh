#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Secrets never reach a log (SECURITY.md, "Secrets"). Runs the real binaries
# at debug log level with canary secrets, collects everything each prints on
# stdout and stderr, and fails if a canary appears anywhere:
#   - a bearer token in a kubeconfig: `faultline-tainter nodes` and `untaint`
#     against fl-fake-apiserver (accepted: requests succeed), the same with a
#     token the server refuses (401 path), the tainter daemon, and the
#     standalone agent patching its node;
#   - sasl.password in kafka.properties: the agent and the tainter against
#     fl-mockcluster, whose broker does not speak SASL (the authentication
#     error path runs; librdkafka's own debug output is on), and the agent
#     with the password under a misspelt property name (a startup error).
# Each step also checks that it did the work it claims, so an early exit
# cannot pass by printing nothing.
#   usage: secrets_not_logged.sh BUILD_DIR
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../support/e2e_lib.sh
source "$SRC/tests/support/e2e_lib.sh"
e2e_init "$1" faultline-secrets
e2e_require jq curl

RUN=$RANDOM$RANDOM
TOKEN="fl-canary-token-$RUN-9f3a"
WRONG_TOKEN="fl-canary-wrong-$RUN-77c1"
PASSWORD="fl-canary-password-$RUN-5b2e"
CANARIES=("$TOKEN" "$WRONG_TOKEN" "$PASSWORD")

# Every log line of every step, kept whole for the final grep.
ALL="$T/all-output.log"
: >"$ALL"
run() {  # run NAME EXPECTED_RC CMD...: runs CMD to completion, output to $T/NAME.out
  local name=$1 want=$2 rc=0
  shift 2
  timeout 30 "$@" >"$T/$name.out" 2>&1 || rc=$?
  cat "$T/$name.out" >>"$ALL"
  [[ $rc -eq $want ]] || { cat "$T/$name.out" >&2; e2e_fail "$name exited $rc, expected $want"; }
}

e2e_start_api --token "$TOKEN" --node gpu-1 --node gpu-2
grep -qF "$TOKEN" "$T/kubeconfig" || e2e_fail "the kubeconfig does not carry the canary token"
sed "s/$TOKEN/$WRONG_TOKEN/" "$T/kubeconfig" >"$T/kubeconfig-wrong"
e2e_start_mock -t events:1:1 -t events.dead-letter:1:1

# ---- tainter subcommands, accepted and refused token ----------------------
tainter_config() {  # $1: kubeconfig
  cat <<YAML
log_level: debug
kafka:
  brokers: "$BS"
  topic: events
  group: secrets-$RUN
  dead_letter_topic: events.dead-letter
  properties:
    security.protocol: SASL_PLAINTEXT
    sasl.mechanisms: PLAIN
    sasl.username: faultline
    sasl.password: "$PASSWORD"
    debug: "broker,security,conf,generic"
    reconnect.backoff.max.ms: "200"
kubernetes: {kubeconfig: $1}
metrics_address: 127.0.0.1:0
YAML
}
tainter_config "$T/kubeconfig" >"$T/tainter.yaml"
tainter_config "$T/kubeconfig-wrong" >"$T/tainter-wrong.yaml"

run nodes 0 "$TAINTER" nodes --config "$T/tainter.yaml"
run untaint 0 "$TAINTER" untaint gpu-1 --reason "canary run" --config "$T/tainter.yaml"
e2e_api_get /debug/requests | jq -e '[.[] | select(.status == 200)] | length > 0' >/dev/null ||
  e2e_fail "the accepted token made no successful request"
rc=0
timeout 30 "$TAINTER" nodes --config "$T/tainter-wrong.yaml" >"$T/nodes-wrong.out" 2>&1 || rc=$?
cat "$T/nodes-wrong.out" >>"$ALL"
[[ $rc -ne 0 ]] || e2e_fail "a refused token did not fail: $(cat "$T/nodes-wrong.out")"
grep -q "401" "$T/nodes-wrong.out" || e2e_fail "the refused token's error does not say 401"

# ---- tainter daemon: API with the token, Kafka with the password ----------
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
# librdkafka's own debug lines prove the SASL client ran against the broker.
e2e_wait 20 grep -qi "sasl" "$T/tainter.log" || e2e_fail "the tainter never tried SASL"
sleep 2
e2e_stop tainter || true
cat "$T/tainter.log" >>"$ALL"

# ---- agent: Kafka with the password, then a misspelt property -------------
printf 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=canary, GPU has fallen off the bus.\n' >"$T/faults.log"
agent_config() {  # $1: the property name carrying the password
  cat <<YAML
node_name: gpu-1
state_dir: $T/state
log_level: debug
metrics_address: 127.0.0.1:0
shutdown_grace: 2s
sources:
  kmsg: {enabled: false}
  file:
    - {path: $T/faults.log, follow: true, origin: kernel}
kafka:
  brokers: "$BS"
  topic: events
  properties:
    security.protocol: SASL_PLAINTEXT
    sasl.mechanisms: PLAIN
    sasl.username: faultline
    $1: "$PASSWORD"
    debug: "broker,security,conf,generic"
    reconnect.backoff.max.ms: "200"
YAML
}
agent_config sasl.password >"$T/agent.yaml"
agent_config sasl.pasword >"$T/agent-typo.yaml"
e2e_start agent "$AGENT" --config "$T/agent.yaml"
e2e_wait_log 10 agent '"msg":"started"'
e2e_wait 20 grep -qi "sasl" "$T/agent.log" || e2e_fail "the agent never tried SASL"
sleep 2
e2e_stop agent || true  # 1: the event could not be delivered, as expected
cat "$T/agent.log" >>"$ALL"
run agent-typo 2 "$AGENT" --config "$T/agent-typo.yaml"
grep -q "sasl.pasword" "$T/agent-typo.out" || e2e_fail "the misspelt property is not named"

# ---- standalone agent: patches its node with the token --------------------
cat >"$T/standalone.yaml" <<YAML
node_name: gpu-2
state_dir: $T/state-standalone
log_level: debug
metrics_address: 127.0.0.1:0
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  ibcounters: {enabled: false}
  file:
    - {path: $T/faults.log, follow: true, origin: kernel}
kubernetes: {kubeconfig: $T/kubeconfig}
YAML
e2e_start standalone "$AGENT" --standalone --config "$T/standalone.yaml"
has_taint() { e2e_node gpu-2 | jq -e '[.spec.taints[]? | select(.key == "faultline.dev/faulty")] | length == 1' >/dev/null; }
e2e_wait 20 has_taint || e2e_fail "the standalone agent did not taint its node"
e2e_stop standalone || true
cat "$T/standalone.log" >>"$ALL"

# ---- the check --------------------------------------------------------------
lines=$(wc -l <"$ALL")
for canary in "${CANARIES[@]}"; do
  if grep -nF -- "$canary" "$ALL" >"$T/hits"; then
    head -5 "$T/hits" >&2
    e2e_fail "a secret appears in the output ($(wc -l <"$T/hits") lines)"
  fi
done
echo "ok: $lines lines of output from 8 runs, no token or password in any"
