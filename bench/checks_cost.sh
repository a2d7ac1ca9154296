#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The active checks' cost (issue 27.7): CPU and RSS of faultline-agent with
# every built-in check (gpu-inventory, pcie-link, pcie-aer, nvidia-driver,
# amd-ras on fake sysfs/procfs trees of 8 GPUs and 8 NICs; nvml and nvml-xid
# on the fake NVML with 8 GPUs) against the same agent with checks off. To measure in a minute what a 60 s interval costs,
# the checks run every INTERVAL (1s) and the CPU per round is scaled to one
# round a minute. Both agents publish to fl-mockcluster and read an idle file.
# Prints: rounds, CPU ms per round, the share of one core at 60 s intervals,
# and VmHWM of both agents (the RSS the checks add).
# The fake NVML parses its JSON state file on every call, so its rounds cost
# more than calls into the real libnvidia-ml would; the figure is an upper
# bound for the NVML part.
#
# usage: bench/checks_cost.sh BUILD_DIR [SECONDS=60] [INTERVAL=1s]
# Not part of ctest (two minutes).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../tests/support/e2e_lib.sh"
source "$HERE/bench_lib.sh"
bench_prepare "$1" faultline-agent fl-mockcluster fake_nvml
e2e_init "$1" faultline-checks-cost
SECS=${2:-60}
INTERVAL=${3:-1s}

# An HGX-like node: 8 GPUs, 8 ConnectX NICs, link and AER files for each.
dev() { # ADDRESS VENDOR CLASS
  local d="$T/sys/bus/pci/devices/$1"
  mkdir -p "$d"
  echo "$2" >"$d/vendor"
  echo "$3" >"$d/class"
  echo 16 >"$d/current_link_width"
  echo 16 >"$d/max_link_width"
  echo "32.0 GT/s PCIe" >"$d/current_link_speed"
  echo "32.0 GT/s PCIe" >"$d/max_link_speed"
  printf 'Undefined 0\nSurpriseDown 0\nTOTAL_ERR_FATAL 0\n' >"$d/aer_dev_fatal"
  printf 'Undefined 0\nCompletionTimeout 0\nTOTAL_ERR_NONFATAL 0\n' >"$d/aer_dev_nonfatal"
}
devices=""
for i in 0 1 2 3 4 5 6 7; do
  a=$(printf '0000:%02x:00.0' $((0x18 + 0x10 * i)))
  dev "$a" 0x10de 0x030200
  mkdir -p "$T/proc/driver/nvidia/gpus/$a"
  dev "$(printf '0000:%02x:00.0' $((0x1a + 0x10 * i)))" 0x15b3 0x020700
  devices+="${devices:+,}{\"pci\":\"$a\",\"nvlink\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}"
done
echo "{\"devices\":[$devices]}" >"$T/nvml.json"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15" >"$T/proc/driver/nvidia/version"
export FAKE_NVML_STATE="$T/nvml.json"
export LD_LIBRARY_PATH="$E2E_BUILD/tests/fakes/nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
: >"$T/idle.log"

e2e_start_mock -b 1 -t events:3:1
run() { # NAME ENABLED: starts an agent, measures SECS, prints "ticks hwm_kib rounds"
  cat >"$T/$1.yaml" <<YAML
node_name: cost-node
state_dir: $T/state-$1
metrics_address: ""
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  file: [{path: $T/idle.log, follow: true}]
checks:
  enabled: $2
  jitter: 0s
  concurrency: 4
  sysfs_root: $T/sys
  procfs_root: $T/proc
  gpu_inventory: {interval: $INTERVAL, expected: {nvidia: 8}}
  pcie: {interval: $INTERVAL}
  aer: {interval: $INTERVAL}
  nvidia_driver: {interval: $INTERVAL}
  amd_ras: {interval: $INTERVAL}
  nvml: {interval: $INTERVAL, expected: 8, xid_interval: $INTERVAL}
kafka: {brokers: "$BS", topic: events, properties: {log_level: "0"}}
YAML
  e2e_start "$1" "$AGENT" --config "$T/$1.yaml"
  e2e_wait_log 10 "$1" '"msg":"started"'
  # Both agents match some log lines, as every agent on a node does: the
  # first records through the rule engine page in its matcher code (2.4 MiB
  # of libhs), which is no cost of the checks.
  local i
  for ((i = 0; i < 200; i++)); do echo "worker $i: heartbeat ok, step $i of 200"; done >>"$T/idle.log"
  local var="E2E_PID_$1"
  local pid=${!var}
  local t0
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  sleep "$SECS"
  local t1 hwm
  t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  e2e_stop "$1" || true
  echo "$((t1 - t0)) $hwm"
}
read -r on_ticks on_hwm < <(run with_checks true)
read -r off_ticks off_hwm < <(run without_checks false)
e2e_log_has with_checks '"msg":"NVML loaded"' || e2e_fail "the fake NVML was not loaded"
HZ=$(getconf CLK_TCK)
python3 - "$SECS" "$INTERVAL" "$HZ" "$on_ticks" "$off_ticks" "$on_hwm" "$off_hwm" <<'PY'
import sys
secs, interval, hz, on, off, on_hwm, off_hwm = sys.argv[1:]
secs, hz, on, off, on_hwm, off_hwm = float(secs), int(hz), int(on), int(off), int(on_hwm), int(off_hwm)
iv = float(interval[:-2]) / 1000 if interval.endswith("ms") else float(interval[:-1])
rounds = secs / iv
per_round_ms = max(on - off, 0) / hz * 1000 / rounds
print(f"checks: gpu-inventory, pcie-link, pcie-aer, nvidia-driver, amd-ras, nvml, nvml-xid on 8 GPUs + 8 NICs, every {interval} for {secs:.0f} s ({rounds:.0f} rounds)")
print(f"agent CPU: {on / hz:.2f} s with checks, {off / hz:.2f} s without (clock tick {1000 / hz:.0f} ms)")
print(f"checks CPU: {per_round_ms:.2f} ms per round -> {per_round_ms / 60000 * 100:.4f}% of one core at one round per 60 s (budget 0.2%)")
print(f"agent VmHWM: {on_hwm / 1024:.1f} MiB with checks, {off_hwm / 1024:.1f} MiB without: +{(on_hwm - off_hwm) / 1024:.2f} MiB (budget 2 MiB)")
PY
