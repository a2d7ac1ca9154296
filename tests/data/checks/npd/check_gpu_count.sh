#!/bin/bash
# A GPU-count plugin for node-problem-detector's custom-plugin-monitor,
# shaped like the one in the AKS write-up on GPU node health: count the GPUs
# nvidia-smi lists and compare with the number the node should have.
# NPD protocol: exit 0 = OK, 1 = problem (stdout is the message), 2 = unknown.
readonly OK=0
readonly NONOK=1
readonly UNKNOWN=2

EXPECTED_GPU_COUNT=${1:-8}

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi not found"
  exit $UNKNOWN
fi
if ! gpus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>&1); then
  echo "nvidia-smi failed: $gpus"
  exit $UNKNOWN
fi
count=$(printf '%s\n' "$gpus" | grep -c .)
if [ "$count" -ne "$EXPECTED_GPU_COUNT" ]; then
  echo "GPU count mismatch: expected $EXPECTED_GPU_COUNT, found $count"
  exit $NONOK
fi
echo "GPU count is $count"
exit $OK
