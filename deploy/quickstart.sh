#!/usr/bin/env bash
# faultline in one command, on the machine it runs on: installs what is
# missing, builds faultline and faultline-agent, and runs the
# standalone agent's demo: a fake "GPU fell off the bus" (Xid 79) and an
# application fault (Xid 13) go into /dev/kmsg, and the agent prints what it
# detected and the exact Kubernetes patch and Event it would send. Nothing is
# sent anywhere. Then it tells you how to do the same by hand.
#
#   deploy/quickstart.sh          from a clone, any directory; safe to run again
#   deploy/quickstart.sh --configure-only   install and configure, no build (the newcomer-path test)
# It shares build/ with tests/run.sh: deploy/configure-build.sh states what
# each of them needs, so they work in either order.
#
# Environment: FL_BUILD_DIR (default: <repo>/build), FL_JOBS (default: nproc).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FL_BUILD_DIR:-$repo/build}"
jobs="${FL_JOBS:-$(nproc 2>/dev/null || echo 2)}"
log="$(mktemp -t faultline-quickstart.XXXXXX)"
trap 'rm -f "$log"' EXIT

step() { printf '\n==> %s\n' "$*"; }
run_quiet() {  # runs "$@" with its output in $log; shows the tail only on failure
  if ! "$@" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "quickstart: failed: $*" >&2
    exit 1
  fi
}

step "1/3 dependencies (Debian/Ubuntu packages, via apt-get where missing)"
run_quiet "$repo/deploy/install-deps.sh"
tail -n 1 "$log"

step "2/3 building faultline and faultline-agent in ${build#"$PWD"/}"
run_quiet "$repo/deploy/configure-build.sh" "$build" quickstart
if [[ "${1:-}" == "--configure-only" ]]; then exit 0; fi
run_quiet cmake --build "$build" -j "$jobs" --target faultline faultline-agent
agent="$build/collector/faultline-agent"
scan="$build/matcher/faultline"
echo "built $agent"

step "3/3 demo: a fake Xid 79 and Xid 13, detected, and the patch faultline would send"
kmsg_readable=1
[[ -r /dev/kmsg ]] && dd if=/dev/kmsg of=/dev/null bs=16k count=0 status=none 2>/dev/null ||
  kmsg_readable=0
if ((kmsg_readable == 0)); then
  echo "/dev/kmsg is not readable here (it needs root or CAP_SYSLOG), so faultline reads the"
  echo "shipped sample log instead. What 'faultline scan' finds in tests/data/sample-node.log:"
  (cd "$repo" && "$scan" scan --format text tests/data/sample-node.log) || true
  echo
  echo "And the standalone agent, fed the demo's lines through a file source:"
fi
# KUBECONFIG points nowhere: the demo never reads a cluster, whatever ~/.kube holds.
if ! KUBECONFIG=/nonexistent "$agent" --standalone --demo; then
  echo "quickstart: the demo detected nothing; see the lines above" >&2
  exit 1
fi

rel_agent="${agent#"$PWD"/}"
cat <<EOF

==> Try it yourself (two shells)
  shell 1:  sudo $rel_agent --standalone --dry-run
  shell 2:  echo '<4>NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.' | sudo tee /dev/kmsg

Shell 1 prints "== detected nvidia.xid", then the JSON Patch that would add the taint
faultline.dev/faulty=true:NoSchedule and the faultline.dev/reasons annotation to this
node, and the Warning Event FaultlineTainted. On its first start it also reports faults
still in the kernel ring (this demo's lines among them); after that it resumes where it
stopped. Without --dry-run and with Kubernetes credentials (in-cluster, \$KUBECONFIG or
~/.kube/config), it applies them to this node, and only this node. Stop it with Ctrl-C.
EOF
