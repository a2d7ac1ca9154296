# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A GPU node's hardware for the process tests, sourced after e2e_init: a
# fake sysfs tree and /proc/driver/nvidia under $T (the agent's
# checks.sysfs_root and procfs_root point there) and the fake NVML
# (tests/fakes/fake_nvml.cc, loaded through the agent's own dlopen) reading
# $T/nvml.json, which the test rewrites to change the GPUs under it.
#
#   fake_gpu_node_init           the driver's version file; the fake NVML on
#                                LD_LIBRARY_PATH, FAKE_NVML_STATE exported
#   gpu_addr I                   GPU I's PCI address (an HGX board's: 0000:18:00.0, 0000:28:00.0, ...)
#   gpu_add I / gpu_remove I     GPU I on (off) the PCI bus and the driver's list
#   gpu_nvml_state I[:MEMBERS]...  what NVML shows: these GPUs, 4 active NVLinks
#                                each, MEMBERS added to GPU I's JSON object
#                                (e.g. 5:'"ecc_aggregate_uncorrected":3');
#                                replaced in one rename, so no call reads half a file

gpu_addr() { printf '0000:%02x:00.0' $((0x18 + 0x10 * $1)); }

gpu_add() {
  local d
  d="$T/sys/bus/pci/devices/$(gpu_addr "$1")"
  mkdir -p "$d" "$T/proc/driver/nvidia/gpus/$(gpu_addr "$1")"
  echo 0x10de >"$d/vendor"  # NVIDIA
  echo 0x030200 >"$d/class" # 3D controller
}

gpu_remove() { rm -rf "$T/sys/bus/pci/devices/$(gpu_addr "$1")" "$T/proc/driver/nvidia/gpus/$(gpu_addr "$1")"; }

gpu_nvml_state() {
  local gpu devices="" members
  for gpu in "$@"; do
    members=""
    [[ $gpu == *:* ]] && members=",${gpu#*:}"
    devices+="${devices:+,}{\"pci\":\"$(gpu_addr "${gpu%%:*}")\",\"nvlink\":[1,1,1,1]$members}"
  done
  echo "{\"devices\":[$devices]}" >"$T/nvml.json.tmp"
  mv "$T/nvml.json.tmp" "$T/nvml.json"
}

fake_gpu_node_init() {
  mkdir -p "$T/proc/driver/nvidia"
  echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15" >"$T/proc/driver/nvidia/version"
  [[ -e "$E2E_BUILD/tests/fakes/nvml/libnvidia-ml.so.1" ]] || e2e_fail "the fake NVML is not built"
  export FAKE_NVML_STATE="$T/nvml.json"
  export LD_LIBRARY_PATH="$E2E_BUILD/tests/fakes/nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}
