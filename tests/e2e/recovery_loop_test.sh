#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 28: the whole return-to-service loop with the built-in packs, through
# real processes (tainter/README.md "Return to service"):
#
#   fake sysfs + fake NVML + a kernel log file -> faultline-agent (checks,
#   boot id from a file) -> fl-mockcluster (Kafka) -> faultline-tainter
#   (cordon + drain on) -> fl-fake-apiserver (Kubernetes)
#
# A reboot is played as a real one looks from outside: the agent stops, the
# kubelet reports a new status.nodeInfo.bootID (POST /debug/boot), the agent
# starts again in the new boot (a new boot id file, a new kernel log).
#
# usage: recovery_loop_test.sh BUILD_DIR SCENARIO
#   loop         Xid 79 -> taint, GPUFault, cordon; reboot -> AwaitingValidation
#                until the new boot's checks pass -> lifted, FaultlineRecovered,
#                uncordoned, the passing round in the history
#   gpu-missing  after the reboot one GPU is missing -> ValidationFailed with
#                the check's message and an Event; the node stays out
#   inspection   the same Xid in the boot after each of two reboots -> marked
#                for inspection (label, condition reason, Event); a third
#                reboot with passing checks does not lift it; `untaint` does
#   standalone   the loop by `faultline-agent --standalone` on its own node
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_require jq curl
e2e_init "$1" faultline-recovery-loop
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
NODE="gpu-loop-$RUN"
TAINT_KEY=faultline.dev/faulty
PROBATION=4s
START=$SECONDS

# ---- the node: eight GPUs in a fake sysfs tree and the fake NVML -------------
source "$HERE/../support/fake_gpu_node.sh"
# GPU 5 has uncorrectable ECC errors in its lifetime count: an RMA candidate
# (check.ecc-aggregate-uncorrected, an Event), not a reason to keep the node
# out: its failing finding must not hold back the check rounds.
ECC5='5:"ecc_aggregate_uncorrected":3'
fake_gpu_node_init
for i in 0 1 2 3 4 5 6 7; do gpu_add "$i"; done
gpu_nvml_state 0 1 2 3 4 "$ECC5" 6 7
remove_gpu() { # GPU 3 leaves the PCI bus, and NVML counts one GPU fewer
  gpu_remove 3
  gpu_nvml_state 0 1 2 3 4 "$ECC5" 6
}

# ---- what the API double shows ----------------------------------------------------
node_json() { e2e_node "$NODE"; }
has_our_taint() {
  node_json | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 1' >/dev/null
}
lacks_our_taint() { ! has_our_taint; }
reasons() { node_json | jq -c '.metadata.annotations["faultline.dev/reasons"] // "[]" | fromjson'; }
history() { node_json | jq -c '.metadata.annotations["faultline.dev/recoveries"] // "[]" | fromjson'; }
gpu_fault() { node_json | jq -c '[.status.conditions[]? | select(.type == "GPUFault")][0] // {}'; }
gpu_fault_is() { # STATUS REASON
  gpu_fault | jq -e --arg s "$1" --arg r "$2" '.status == $s and .reason == $r' >/dev/null
}
cordoned() { node_json | jq -e '.spec.unschedulable == true' >/dev/null; }
uncordoned() { ! cordoned; }
label() { node_json | jq -r --arg k "$1" '.metadata.labels[$k] // ""'; }
events_with() {
  e2e_api_get /debug/events |
    jq -c --arg r "$1" --arg n "$NODE" '[.items[] | select(.reason == $r and .involvedObject.name == $n)]'
}
has_event() { [[ $(events_with "$1" | jq 'length') -ge 1 ]]; }

# ---- boots ------------------------------------------------------------------------
BOOT=""
# boot_id N: a boot id as the kernel writes it (a UUID).
boot_id() { printf '1f3c0000-0000-4000-8000-%012d' "$1"; }
# kubelet_boot BOOT_ID: the kubelet reports it as status.nodeInfo.bootID.
kubelet_boot() {
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST --data "" \
    "$API_URL/debug/boot?node=$NODE&boot_id=$1" >/dev/null || e2e_fail "POST /debug/boot failed"
}
# agent_config BOOT_ID: the agent of that boot, reading kmsg-N.log as kernel lines.
agent_config() {
  echo "$1" >"$T/boot_id-$1"
  : >>"$T/kmsg-$1.log"
  mkdir -p "$T/state"
  cat <<YAML
node_name: $NODE
state_dir: $T/state
metrics_address: 127.0.0.1:0
shutdown_grace: 5s
checkpoint_interval: 200ms
boot_id_path: $T/boot_id-$1
rules: {builtin: true, paths: []}
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  ibcounters: {enabled: false}
  file: [{path: $T/kmsg-$1.log, follow: true, origin: kernel}]
checks:
  jitter: 0s
  sysfs_root: $T/sys
  procfs_root: $T/proc
  gpu_inventory: {interval: 500ms, timeout: 2s, expected: {nvidia: 8}}
  nvml: {interval: 500ms, timeout: 2s, expected: 8}
YAML
}
AGENT_MODE=kafka
# start_agent BOOT_ID: the agent process of that boot.
start_agent() {
  BOOT=$1
  {
    agent_config "$BOOT"
    if [[ $AGENT_MODE == kafka ]]; then
      printf 'kafka: {brokers: "%s", topic: events, linger: 1ms, properties: {log_level: "0"}}\n' "$BS"
    else
      printf 'kubernetes: {kubeconfig: %s}\n' "$T/kubeconfig"
      printf 'standalone: {recovery: {probation: %s}}\n' "$PROBATION"
    fi
  } >"$T/agent-$BOOT.yaml"
  if [[ $AGENT_MODE == kafka ]]; then
    e2e_start "agent-$BOOT" "$AGENT" --config "$T/agent-$BOOT.yaml"
  else
    e2e_start "agent-$BOOT" "$AGENT" --standalone --config "$T/agent-$BOOT.yaml"
  fi
  e2e_wait_log 15 "agent-$BOOT" '"msg":"started"'
}
# reboot NEW_BOOT_ID [REASON]: the agent stops, the kubelet reports the new
# boot; the tainter's GPUFault says what the node waits for (REASON, default
# AwaitingValidation); the agent starts again.
reboot() {
  e2e_stop "agent-$BOOT" || e2e_fail "the agent of boot $BOOT exited with $?"
  kubelet_boot "$1"
  if [[ $AGENT_MODE == kafka ]]; then
    e2e_wait 10 gpu_fault_is True "${2:-AwaitingValidation}" ||
      e2e_fail "after the reboot GPUFault is $(gpu_fault), not ${2:-AwaitingValidation}"
  fi
  start_agent "$1"
}
# xid79 BOOT_ID: the driver's line, as the kernel writes it, in that boot's log.
xid79() {
  echo "NVRM: Xid (PCI:0000:38:00): 79, pid=4711, name=python3, GPU has fallen off the bus." \
    >>"$T/kmsg-$1.log"
}

start_tainter() {
  e2e_start_mock -b 1 -t events:3:1
  cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-recovery-loop-$RUN
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
metrics_address: 127.0.0.1:0
valve: {event_interval: 1ms, max_fraction: 1.0}
recovery: {probation: $PROBATION}
remediation:
  by_rule: {nvidia.xid: drain}
  drain: {grace_period: 0s, max_concurrent: 1, retry_interval: 1s, max_retry_interval: 2s}
YAML
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
}

# The first fault: Xid 79 in boot 1 taints, GPUFault=True (and, with the
# tainter, cordons and drains).
first_fault() {
  kubelet_boot "$(boot_id 1)"
  start_agent "$(boot_id 1)"
  e2e_wait_log 15 "agent-$BOOT" '"msg":"check round passed"'
  xid79 "$BOOT"
  e2e_wait 20 has_our_taint || e2e_fail "Xid 79 did not taint the node: $(node_json)"
  reasons | jq -e --arg b "$BOOT" '.[0].rule == "nvidia.xid" and .[0].recover == "reboot" and .[0].boot_id == $b' \
    >/dev/null || e2e_fail "reasons: $(reasons)"
  e2e_wait 10 gpu_fault_is True NvidiaXid || e2e_fail "GPUFault: $(gpu_fault)"
  if [[ $AGENT_MODE == kafka ]]; then
    e2e_wait 10 cordoned || e2e_fail "the node was not cordoned: $(node_json)"
  fi
  echo "ok: Xid 79 -> tainted (nvidia.xid), GPUFault=True$([[ $AGENT_MODE == kafka ]] && echo ', cordoned') ($((SECONDS - START)) s)"
}

# After the reboot the checks of the new boot pass: lifted, recorded.
verified_lift() {
  local rebooted_at=$SECONDS
  e2e_wait 30 lacks_our_taint || e2e_fail "not lifted after the reboot and passing checks: $(gpu_fault) $(history)"
  e2e_wait 10 gpu_fault_is False FaultlineLifted || e2e_fail "GPUFault after the lift: $(gpu_fault)"
  e2e_wait 10 has_event FaultlineRecovered || e2e_fail "no FaultlineRecovered Event"
  events_with FaultlineRecovered | jq -e '.[0].message | contains("check round passed at")' >/dev/null ||
    e2e_fail "FaultlineRecovered: $(events_with FaultlineRecovered)"
  # The lift and the round it needed, both of the new boot, in the history.
  history | jq -e --arg b "$BOOT" '(.[-1] | .how == "reboot" and .rule == "nvidia.xid" and .boot_id == $b)
      and ([.[] | select(.how == "validation" and .boot_id == $b and .passed)] | length == 1)' >/dev/null ||
    e2e_fail "history: $(history)"
  if [[ $AGENT_MODE == kafka ]]; then
    e2e_wait 10 uncordoned || e2e_fail "not uncordoned after the lift"
  fi
  echo "ok: reboot -> checks of the new boot pass -> lifted $((SECONDS - rebooted_at)) s after the new agent started, FaultlineRecovered, round in the history"
}

case "$SCENARIO" in
loop)
  e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"
  start_tainter
  first_fault
  # Quiet is not healthy: past the probation without the agent of the new
  # boot the node stays out, and says what it waits for.
  e2e_stop "agent-$BOOT" || e2e_fail "the agent exited with $?"
  kubelet_boot "$(boot_id 2)"
  e2e_wait 10 gpu_fault_is True AwaitingValidation || e2e_fail "GPUFault: $(gpu_fault)"
  sleep 5
  has_our_taint || e2e_fail "lifted after the reboot and the probation without a check round"
  gpu_fault | jq -e '.message | contains("a passing check round in boot '"$(boot_id 2)"'")' >/dev/null ||
    e2e_fail "GPUFault message: $(gpu_fault)"
  "$TAINTER" explain "$NODE" --config "$T/tainter.yaml" >"$T/explain.txt" 2>&1 || e2e_fail "explain failed"
  grep -q "waits for:  a passing check round in boot $(boot_id 2)" "$T/explain.txt" ||
    e2e_fail "explain: $(cat "$T/explain.txt")"
  grep -q "rebooted boot: boot id $(boot_id 1) -> $(boot_id 2)" "$T/explain.txt" ||
    e2e_fail "explain has no history: $(cat "$T/explain.txt")"
  echo "ok: rebooted, no check round yet -> still out past the probation, AwaitingValidation ($((SECONDS - START)) s)"
  start_agent "$(boot_id 2)"
  verified_lift
  ;;
gpu-missing)
  e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"
  start_tainter
  first_fault
  remove_gpu # the GPU does not come back with the reboot
  reboot "$(boot_id 2)"
  e2e_wait 20 gpu_fault_is True ValidationFailed || e2e_fail "GPUFault: $(gpu_fault)"
  gpu_fault | jq -e '.message | contains("7 of 8")' >/dev/null || e2e_fail "GPUFault message: $(gpu_fault)"
  e2e_wait 10 has_event FaultlineValidationFailed || e2e_fail "no FaultlineValidationFailed Event"
  sleep 6 # past the probation
  has_our_taint || e2e_fail "a node with a GPU missing after the reboot was lifted"
  # The Xid's own reason stays (its reboot was not validated), and the
  # missing GPU is a reason of its own.
  reasons | jq -e 'map(.rule) | (index("nvidia.xid") != null and index("check.gpu-count") != null)' \
    >/dev/null || e2e_fail "reasons after the failed validation: $(reasons)"
  history | jq -e --arg b "$BOOT" '[.[] | select(.how == "validation" and .boot_id == $b and (.passed | not))] | length >= 1' \
    >/dev/null || e2e_fail "history: $(history)"
  echo "ok: reboot with a GPU missing -> ValidationFailed ($(gpu_fault | jq -r .message | cut -c1-120)...), Event, still out ($((SECONDS - START)) s)"
  ;;
inspection)
  e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"
  start_tainter
  first_fault
  for n in 2 3; do
    # The GPU falls off the bus again in the next boot, as the kernel log
    # shows it from the boot's start.
    xid79 "$(boot_id "$n")"
    reboot "$(boot_id "$n")"
    e2e_wait 20 eval "reasons | jq -e '.[0].reboots == $((n - 1))' >/dev/null" ||
      e2e_fail "after reboot $((n - 1)): $(reasons)"
  done
  reasons | jq -e '.[0].inspection == true and (.[0].recover // "") == ""' >/dev/null ||
    e2e_fail "not marked for inspection: $(reasons)"
  e2e_wait 10 gpu_fault_is True NeedsInspection || e2e_fail "GPUFault: $(gpu_fault)"
  [[ $(label faultline.dev/needs-inspection) == true ]] || e2e_fail "no label: $(node_json | jq -c .metadata.labels)"
  e2e_wait 10 has_event FaultlineNeedsInspection || e2e_fail "no FaultlineNeedsInspection Event"
  events_with FaultlineNeedsInspection | jq -e '.[0].message | contains("survived 2 reboots")' >/dev/null ||
    e2e_fail "FaultlineNeedsInspection: $(events_with FaultlineNeedsInspection)"
  echo "ok: the same Xid after two reboots -> NeedsInspection, label, Event ($((SECONDS - START)) s)"
  reboot "$(boot_id 4)" NeedsInspection # a third reboot; its checks pass
  e2e_wait_log 15 "agent-$BOOT" '"msg":"check round passed"'
  sleep 6
  has_our_taint || e2e_fail "a third reboot lifted a node marked for inspection"
  "$TAINTER" explain "$NODE" --config "$T/tainter.yaml" >"$T/explain.txt" 2>&1 || e2e_fail "explain failed"
  grep -q "\[NeedsInspection\]" "$T/explain.txt" || e2e_fail "explain: $(cat "$T/explain.txt")"
  "$TAINTER" untaint "$NODE" --reason "GPU replaced (RMA)" --config "$T/tainter.yaml" >>"$T/cli.log" 2>&1 ||
    e2e_fail "untaint failed"
  lacks_our_taint || e2e_fail "untaint left the taint"
  [[ -z $(label faultline.dev/needs-inspection) ]] || e2e_fail "untaint left the label"
  echo "ok: a third reboot with passing checks -> still out; untaint by hand lifts it and the label ($((SECONDS - START)) s)"
  ;;
standalone)
  AGENT_MODE=standalone
  e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"
  first_fault
  reboot "$(boot_id 2)"
  verified_lift
  ;;
*) e2e_fail "unknown scenario $SCENARIO" ;;
esac
if [[ -e "$T/tainter.log" ]] && e2e_log_has tainter '"msg":"event set aside"'; then
  e2e_fail "an event was set aside: $(grep 'set aside' "$T/tainter.log")"
fi
echo "PASS $SCENARIO in $((SECONDS - START)) s"
