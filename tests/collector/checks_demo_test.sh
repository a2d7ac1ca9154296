#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The AKS demo (issue 27), end to end through real processes: a node with
# eight GPUs in a fake sysfs tree and the fake NVML; one is removed (as
# `nvidia-smi drain` removes it from the PCI bus) -> the GPU-count checks
# fail -> the node is tainted with the reason check.gpu-count and the
# condition GPUFault=True; the GPU comes back -> the checks pass ->
# check.gpu-count-ok clears the reason: the taint goes, GPUFault=False.
#
#   fake sysfs + fake NVML -> faultline-agent (checks) -> fl-mockcluster (Kafka)
#                             -> faultline-tainter -> fl-fake-apiserver
#   and: faultline-agent --standalone -> fl-fake-apiserver
#
# usage: checks_demo_test.sh BUILD_DIR [--disable-count-check]
#   --disable-count-check runs the same demo with the count checks off
#   (gpu_inventory and nvml disabled): it must FAIL (ctest runs it with
#   WILL_FAIL), which shows the taint comes from the checks and nothing else.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_require jq curl
e2e_init "$1" faultline-checks-demo
COUNT_CHECKS=true
[[ "${2:-}" == --disable-count-check ]] && COUNT_CHECKS=false
# In the disabled run a missing taint is the expected outcome: say so fast.
WAIT=$($COUNT_CHECKS && echo 30 || echo 8)

RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
NODE="gpu-demo-$RUN"
# The standalone phase acts on a node of its own: the Kafka phase's clear is
# in the first node's recovery history, and a fault soon after it would be
# "recurring" (lifted by hand only, tainter/README.md "Return to service").
STANDALONE_NODE="gpu-demo-standalone-$RUN"
TAINT_KEY=faultline.dev/faulty
START=$SECONDS

# ---- the node's GPUs ----------------------------------------------------------
source "$HERE/../support/fake_gpu_node.sh"
: >"$T/quiet.log"
fake_gpu_node_init
for i in 0 1 2 3 4 5 6 7; do gpu_add "$i"; done
# A bridge of the same vendor (an NVSwitch) is not a GPU.
mkdir -p "$T/sys/bus/pci/devices/0000:05:00.0"
echo 0x10de >"$T/sys/bus/pci/devices/0000:05:00.0/vendor"
echo 0x068000 >"$T/sys/bus/pci/devices/0000:05:00.0/class"
gpu_nvml_state 0 1 2 3 4 5 6 7

remove_gpu() { # GPU 3 leaves the PCI bus, and NVML counts one GPU fewer
  gpu_remove 3
  gpu_nvml_state 0 1 2 3 4 5 6
}
restore_gpu() { gpu_add 3; gpu_nvml_state 0 1 2 3 4 5 6 7; }

# ---- helpers on the API double ---------------------------------------------------
node_json() { e2e_node "$NODE"; } # NODE: the node of the current phase
has_our_taint() {
  node_json | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 1' >/dev/null
}
lacks_our_taint() { ! has_our_taint; }
reasons() { node_json | jq -c '.metadata.annotations["faultline.dev/reasons"] // "[]" | fromjson'; }
condition() { node_json | jq -r --arg t "$1" '[.status.conditions[]? | select(.type == $t)][0].status // "none"'; }
condition_is() { [[ $(condition "$1") == "$2" ]]; }

checks_config() { # STATE_DIR
  cat <<YAML
node_name: $NODE
state_dir: $1
metrics_address: 127.0.0.1:0
shutdown_grace: 5s
checkpoint_interval: 200ms
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  ibcounters: {enabled: false}
  # Something to read besides the checks: with the count checks off (the
  # --disable-count-check run) the agent must still start.
  file: [{path: $T/quiet.log, follow: true}]
checks:
  jitter: 0s
  sysfs_root: $T/sys
  procfs_root: $T/proc
  gpu_inventory: {enabled: $COUNT_CHECKS, interval: 500ms, timeout: 2s, expected: {nvidia: 8}}
  nvml: {enabled: $COUNT_CHECKS, interval: 500ms, timeout: 2s, expected: 8}
YAML
}

# demo NAME: remove a GPU, expect the taint, restore it, expect the lift.
demo() {
  sleep 1.5 # a few rounds of passing checks first
  lacks_our_taint || e2e_fail "$1: tainted before the GPU was removed: $(node_json)"
  remove_gpu
  e2e_wait "$WAIT" has_our_taint || e2e_fail "$1: removing a GPU did not taint the node: $(node_json)"
  # The sysfs count check and the NVML checks run apart: either may taint
  # first (an NVML round that catches the GPU leaving mid-round reports it
  # lost), so wait for the sysfs check's reason rather than read it at once.
  has_gpu_count_reason() { reasons | jq -e 'map(.rule) | index("check.gpu-count") != null' >/dev/null; }
  e2e_wait 10 has_gpu_count_reason || e2e_fail "$1: reasons: $(reasons)"
  local r
  r=$(reasons)
  jq -e --arg a "$(gpu_addr 3)" '.[] | select(.rule == "check.gpu-count")
      | (.summary | startswith("7 of 8 nvidia GPUs on the PCI bus (missing: " + $a + ")"))' \
    <<<"$r" >/dev/null || e2e_fail "$1: check.gpu-count summary: $r"
  e2e_wait 10 condition_is GPUFault True || e2e_fail "$1: GPUFault is $(condition GPUFault)"
  echo "ok: $1: GPU $(gpu_addr 3) removed -> tainted (check.gpu-count), GPUFault=True ($((SECONDS - START)) s)"
  restore_gpu
  e2e_wait "$WAIT" lacks_our_taint || e2e_fail "$1: the GPU came back but the taint stayed: $(reasons)"
  e2e_wait 10 condition_is GPUFault False || e2e_fail "$1: GPUFault is $(condition GPUFault) after the lift"
  echo "ok: $1: GPU restored -> check passes -> taint lifted by clear, GPUFault=False ($((SECONDS - START)) s)"
}

# ---- through Kafka and the tainter ---------------------------------------------
e2e_start_mock -b 1 -t events:3:1
e2e_start_api --node "$NODE:nvidia.com/gpu.present=true" --node "$STANDALONE_NODE" \
  --node "gpu-demo-bystander-$RUN"
cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-checks-demo-$RUN
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
metrics_address: 127.0.0.1:0
YAML
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
e2e_wait_log 20 tainter '"msg":"partitions assigned"'
{
  checks_config "$T/state"
  printf 'kafka: {brokers: "%s", topic: events, linger: 1ms, properties: {log_level: "0"}}\n' "$BS"
} >"$T/agent.yaml"
e2e_start agent "$AGENT" --config "$T/agent.yaml"
e2e_wait_log 10 agent '"msg":"started"'
if $COUNT_CHECKS; then
  e2e_wait_log 10 agent '"msg":"NVML loaded"'
fi
demo kafka
e2e_stop agent || e2e_fail "agent exited with $?"
e2e_stop tainter || e2e_fail "tainter exited with $?"

# ---- the standalone agent ------------------------------------------------------
NODE=$STANDALONE_NODE
{
  checks_config "$T/state-standalone"
  printf 'kubernetes: {kubeconfig: %s}\n' "$T/kubeconfig"
} >"$T/agent-standalone.yaml"
e2e_start standalone "$AGENT" --standalone --config "$T/agent-standalone.yaml"
e2e_wait_log 10 standalone '"msg":"started"'
demo standalone
e2e_stop standalone || e2e_fail "standalone agent exited with $?"
echo "PASS: the AKS demo through the agent, Kafka and the tainter, and the standalone agent, in $((SECONDS - START)) s"
