#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Cordon and drain (tainter/remediation/remediation.h) end to end: fl-mockcluster (Kafka),
# fl-fake-apiserver (Kubernetes), the real faultline-tainter with
# `remediation: {by_rule: {test.short: drain}}`, events written with kcat.
#
# usage: drain_test.sh BUILD_DIR [end_to_end|deadline]
#   end_to_end (the default): a test.long fault on gpu-1 taints, cordons (recorded in
#   faultline.dev/cordoned) and drains it: the pod behind a PodDisruptionBudget
#   that allows no disruption is refused (429) and retried until the budget
#   allows one; the DaemonSet and mirror pods stay. `faultline-tainter
#   untaint gpu-1` lifts the fault: gpu-1 is uncordoned. gpu-2 was cordoned
#   by an operator before its test.short fault: when that fault expires (6 s
#   quiet), gpu-2 stays cordoned.
#   deadline (issue 28, item 7): max_concurrent 1 and drain.deadline 4s; gpu-1's
#   pod is Terminating and never goes (no kubelet here either). Past the
#   deadline gpu-1's mark is `timed-out`, a warning is logged, a Warning Event
#   FaultlineDrainTimedOut is recorded, its GPUFault condition's reason says
#   so, the metric counts it, and gpu-3, which waited, is drained.
#
# API-double semantics relied on (as kube-apiserver): POST
# pods/{name}/eviction answers 429 "Cannot evict pod as it would violate the
# pod's disruption budget." (no Retry-After) while the budget's
# disruptionsAllowed is 0, and 201 once it is 1, after which the pod is
# deleted (grace 0: at once); a JSON merge patch sets spec.unschedulable and
# `null` removes it; a merge patch with a stale metadata.resourceVersion is 409.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-drain
SCENARIO=${2:-end_to_end}
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
TOKEN=fl-test-token

api() { # METHOD PATH [CONTENT_TYPE BODY]
  curl -sf --max-time 5 --cacert "$T/ca.pem" -H "Authorization: Bearer $TOKEN" -X "$1" \
    ${3:+-H "Content-Type: $3"} ${4:+--data "$4"} "$API_URL$2"
}
debug_post() { curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST "$API_URL$1" --data "${2:-}" >/dev/null; }
unschedulable() { [[ $(e2e_node "$1" | jq -r '.spec.unschedulable // false') == true ]]; }
schedulable() { ! unschedulable "$1"; }
annotation() { e2e_node "$1" | jq -r --arg k "$2" '.metadata.annotations[$k] // ""'; }
drain_is() { [[ $(annotation "$1" faultline.dev/drain) == "$2" ]]; }
has_taint() { e2e_node "$1" | jq -e '[.spec.taints[]? | select(.key == "faultline.dev/faulty")] | length == 1' >/dev/null; }
lacks_taint() { ! has_taint "$1"; }
pod_exists() { api GET "/api/v1/pods?fieldSelector=metadata.name%3D$1" | jq -e '.items | length == 1' >/dev/null; }
pod_gone() { ! pod_exists "$1"; }
evictions() { e2e_api_get /debug/requests | jq --arg p "/pods/$1/eviction" '[.[] | select(.path | endswith($p))] | length'; }
evictions_at_least() { (($(evictions "$1") >= $2)); }
no_drain_mark() { [[ -z $(annotation "$1" faultline.dev/drain) ]]; }
event() { # NODE RULE EXPIRE
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$RUN-$1-$RANDOM" --arg n "$1" --arg r "$2" --arg e "$3" --arg t "$now" \
    '{schema: 1, id: $id, node: $n, source: "kmsg", origin: "kernel", rule: $r, category: "test", severity: "critical",
      action: "taint", summary: ($r + " on " + $n), message: "test line", log_time: $t, detected_time: $t, expire: $e}' |
    kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
}
pod() { # NS NAME NODE [METADATA_JSON]
  debug_post /debug/pods "$(jq -nc --arg ns "$1" --arg n "$2" --arg node "$3" --argjson m "${4:-{\}}" \
    '{apiVersion: "v1", kind: "Pod", metadata: ({name: $n, namespace: $ns} + $m),
      spec: {nodeName: $node}, status: {phase: "Running"}}')"
}

NODES=()
for i in $(seq 0 3); do NODES+=(--node "gpu-$i"); done
e2e_start_mock -b 1 -t events:2:1 -t events.dead-letter:1:1
e2e_start_api "${NODES[@]}"

if [[ $SCENARIO == deadline ]]; then
  condition() { # NODE TYPE FIELD
    e2e_node "$1" | jq -r --arg t "$2" --arg f "$3" '[.status.conditions[]? | select(.type == $t) | .[$f]][0] // ""'
  }
  condition_reason_is() { [[ $(condition "$1" GPUFault reason) == "$2" ]]; }
  hw_event() { # NODE: the recovery pack's test.nvlink-down (hardware: GPUFault)
    local now
    now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    jq -nc --arg id "$RUN-$1-$RANDOM" --arg n "$1" --arg t "$now" \
      '{schema: 1, id: $id, node: $n, source: "kmsg", origin: "kernel", rule: "test.nvlink-down",
        category: "hardware", severity: "critical", action: "taint", summary: "NVLink 3 down",
        message: "faultline test nvlink 3 down", log_time: $t, detected_time: $t}' |
      kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
  }
  timed_out_events() {
    e2e_api_get /debug/events |
      jq '[.items[] | select(.reason == "FaultlineDrainTimedOut" and .involvedObject.name == "gpu-1" and .type == "Warning")] | length'
  }
  has_timed_out_event() { (($(timed_out_events) >= 1)); }
  # A pod already leaving that no kubelet will ever confirm gone.
  pod ml stuck-0 gpu-1 '{"deletionTimestamp":"2026-11-24T00:00:00Z","deletionGracePeriodSeconds":30}'
  pod ml train-3 gpu-3
  PORT=$(e2e_free_port)
  cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-drain-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
rules: {builtin: true, paths: [$HERE/recovery_test_rules.yaml]}
valve: {max_fraction: 0.5, min_allowed: 2, event_interval: 1ms}
remediation:
  by_rule: {test.nvlink-down: drain}
  drain: {grace_period: 0s, max_concurrent: 1, retry_interval: 1s, max_retry_interval: 2s, deadline: 4s}
metrics_address: 127.0.0.1:$PORT
YAML
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
  hw_event gpu-1
  e2e_wait 15 drain_is gpu-1 running || e2e_fail "gpu-1's drain did not start"
  e2e_wait 10 condition_reason_is gpu-1 TestNvlinkDown || e2e_fail "gpu-1 has no GPUFault condition"
  hw_event gpu-3
  e2e_wait 15 unschedulable gpu-3 || e2e_fail "gpu-3 was not cordoned"
  no_drain_mark gpu-3 || e2e_fail "gpu-3 drained while gpu-1 held the one slot"
  pod_exists train-3 || e2e_fail "train-3 was evicted while gpu-1 held the one slot"
  # Past the 4 s deadline: gpu-1 needs a person and gpu-3 gets the slot.
  e2e_wait 15 drain_is gpu-1 timed-out || e2e_fail "gpu-1's drain did not time out: $(annotation gpu-1 faultline.dev/drain)"
  e2e_wait 10 pod_gone train-3 || e2e_fail "gpu-3 was not drained after gpu-1's drain timed out"
  e2e_wait 10 drain_is gpu-3 done || e2e_fail "gpu-3's drain did not complete"
  e2e_log_has tainter '"msg":"drain timed out; the node needs a person (its slot is free)"' ||
    e2e_fail "no log line for the timed-out drain"
  e2e_wait 10 has_timed_out_event || e2e_fail "no Warning Event FaultlineDrainTimedOut on gpu-1"
  e2e_wait 10 condition_reason_is gpu-1 FaultlineDrainTimedOut ||
    e2e_fail "gpu-1's GPUFault reason is '$(condition gpu-1 GPUFault reason)'"
  [[ $(condition gpu-1 GPUFault message) == *"ml/stuck-0"* ]] ||
    e2e_fail "the condition does not name the pod: $(condition gpu-1 GPUFault message)"
  [[ $(condition gpu-1 GPUFault status) == True ]] || e2e_fail "GPUFault is not True on gpu-1"
  unschedulable gpu-1 || e2e_fail "gpu-1 was uncordoned: a person decides"
  metrics=$(curl -sf --max-time 5 "http://127.0.0.1:$PORT/metrics")
  grep -q '^faultline_tainter_drains_total{state="timed_out"} 1$' <<<"$metrics" ||
    e2e_fail "drains_total{state=timed_out} is not 1"
  e2e_stop tainter || e2e_fail "tainter exited with $?"
  echo "PASS: drain deadline"
  exit 0
fi

pod ml web-1 gpu-1 '{"labels":{"app":"web"}}'
pod ml train-0 gpu-1 '{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"t","uid":"u1","controller":true}]}'
pod kube-system dcgm-x gpu-1 '{"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"d","uid":"u2","controller":true}]}'
pod kube-system static-gpu-1 gpu-1 '{"annotations":{"kubernetes.io/config.mirror":"abc"}}'
pod ml other-0 gpu-3
debug_post "/debug/pdb?namespace=ml&name=web-pdb&selector=app%3Dweb&allowed=0"
# An operator cordoned gpu-2 (kubectl cordon: a merge patch).
api PATCH /api/v1/nodes/gpu-2 application/merge-patch+json '{"spec":{"unschedulable":true}}' >/dev/null ||
  e2e_fail "cordon by hand failed"

cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-drain-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
rules: {builtin: true, paths: [$HERE/state_test_rules.yaml]}
valve: {max_fraction: 0.5, min_allowed: 1, event_interval: 1ms}
remediation:
  by_rule: {test.short: drain, test.long: drain}
  drain: {grace_period: 0s, max_concurrent: 1, retry_interval: 1s, max_retry_interval: 2s}
metrics_address: 127.0.0.1:0
YAML
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
e2e_wait_log 30 tainter '"msg":"partitions assigned"'
e2e_log_has tainter '"msg":"remediation beyond the taint is on"' || e2e_fail "no warning that remediation is on"

event gpu-1 test.long 10m
event gpu-2 test.short 6s
e2e_wait 15 has_taint gpu-1 || e2e_fail "gpu-1 was not tainted"
e2e_wait 10 unschedulable gpu-1 || e2e_fail "gpu-1 was not cordoned"
[[ -n $(annotation gpu-1 faultline.dev/cordoned) ]] || e2e_fail "gpu-1's cordon is not recorded"
e2e_wait 10 pod_gone train-0 || e2e_fail "train-0 was not evicted"
# The budget refuses web-1 and the drain keeps asking (1 s, then 2 s apart).
e2e_wait 10 evictions_at_least web-1 2 || e2e_fail "web-1's refused eviction was not retried"
pod_exists web-1 || e2e_fail "web-1 was evicted against its PodDisruptionBudget"
drain_is gpu-1 running || e2e_fail "gpu-1's drain mark is not 'running': $(annotation gpu-1 faultline.dev/drain)"
e2e_log_has tainter '"msg":"eviction refused by a PodDisruptionBudget; retrying later"' ||
  e2e_fail "the refusal was not logged"
# The budget allows one disruption now.
debug_post "/debug/pdb?namespace=ml&name=web-pdb&selector=app%3Dweb&allowed=1"
e2e_wait 10 pod_gone web-1 || e2e_fail "web-1 was not evicted once its budget allowed it"
e2e_wait 10 drain_is gpu-1 "done" || e2e_fail "gpu-1's drain did not complete"
pod_exists dcgm-x || e2e_fail "the DaemonSet pod was evicted"
pod_exists static-gpu-1 || e2e_fail "the mirror pod was evicted"
pod_exists other-0 || e2e_fail "a pod of another node was evicted"
[[ $(evictions dcgm-x) == 0 && $(evictions static-gpu-1) == 0 ]] || e2e_fail "DaemonSet or mirror pod eviction requested"
# gpu-2 was cordoned by someone else: drained too, but the cordon is not ours.
[[ -z $(annotation gpu-2 faultline.dev/cordoned) ]] || e2e_fail "faultline claimed the operator's cordon"

# Lifted by hand: the taint goes, and our cordon with it.
"$TAINTER" untaint gpu-1 --reason "drain test" --config "$T/tainter.yaml" >>"$T/cli.log" 2>&1 ||
  e2e_fail "untaint failed"
e2e_wait 10 schedulable gpu-1 || e2e_fail "gpu-1 was not uncordoned when its fault was lifted"
[[ -z $(annotation gpu-1 faultline.dev/cordoned)$(annotation gpu-1 faultline.dev/drain) ]] ||
  e2e_fail "gpu-1 keeps faultline's cordon or drain mark"
# gpu-2's fault expires (6 s without a repeat): the operator's cordon stays.
e2e_wait 20 lacks_taint gpu-2 || e2e_fail "gpu-2's taint did not expire"
e2e_wait 10 no_drain_mark gpu-2 || e2e_fail "gpu-2 keeps the drain mark"
unschedulable gpu-2 || e2e_fail "faultline uncordoned gpu-2, which an operator had cordoned"
e2e_stop tainter || e2e_fail "tainter exited with $?"
echo "PASS: drain"
