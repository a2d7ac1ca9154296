#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's two set-up commands as a newcomer meets them: a brand-new
# minimal Debian 12 root (debootstrap --variant=minbase, nothing else), a
# clean clone of this repository's HEAD, then deploy/quickstart.sh, then
# tests/run.sh, each timed. Run by hand (as root; it takes 30-60 min on two
# cores), not by ctest: it downloads a whole Debian root. CI's own machine has
# more tools than a newcomer's, so this is the check that a set-up change
# really installs everything it needs (issue 25).
#
#   tests/newcomer/fresh_root.sh [ROOT_DIR]      default /var/tmp/fl-fresh-root
#   FL_FRESH_ORDER="tests quickstart" ...        the other order
#
# Prints one line per step: "fresh-root STEP: exit N, wall S s". Exits non-zero
# when a step failed; the root is kept for a look (chroot ROOT_DIR bash).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-/var/tmp/fl-fresh-root}
order=${FL_FRESH_ORDER:-quickstart tests}
mirror=${FL_FRESH_MIRROR:-http://deb.debian.org/debian}

if [[ $(id -u) -ne 0 ]]; then
  echo "fresh_root.sh: needs root (debootstrap, chroot, mounts)" >&2
  exit 2
fi
command -v debootstrap >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
}

mounts=()
cleanup() {
  local m
  for ((m = ${#mounts[@]} - 1; m >= 0; m--)); do umount -l "${mounts[m]}" 2>/dev/null || true; done
}
trap cleanup EXIT

if [[ -e "$root" ]]; then
  echo "fresh_root.sh: $root exists; remove it first, a used root is not fresh" >&2
  exit 2
fi
start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
  tail -20 "$root.debootstrap.log" >&2
  exit 1
}
echo "fresh-root debootstrap: exit 0, wall $((SECONDS - start)) s ($(chroot "$root" dpkg-query -W | wc -l) packages)"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for m in proc sys dev dev/pts; do
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounts+=("$root/$m")
done
# A booted Debian 12 has its cgroup file system mounted (systemd); the
# root's fresh sysfs has none, and slurmd (tainter_slurm.job_action) will
# not start without it: the machine's own, as a booted machine has it.
if grep -q ' /sys/fs/cgroup' /proc/mounts; then
  mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
  mounts+=("$root/sys/fs/cgroup")
fi

# A clean clone: only what is committed, as a newcomer's `git clone` gives.
# The root has no git yet (minbase), so the clone is made outside and copied.
git clone -q --no-hardlinks "$repo" "$root/home/faultline"

failed=0
for step in $order; do
  case $step in
    quickstart) cmd=deploy/quickstart.sh ;;
    tests) cmd=tests/run.sh ;;
    *) echo "fresh_root.sh: unknown step $step" >&2; exit 2 ;;
  esac
  t0=$SECONDS
  rc=0
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    bash -c "cd /home/faultline && $cmd" >"$root.$step.log" 2>&1 || rc=$?
  echo "fresh-root $step: exit $rc, wall $((SECONDS - t0)) s (log $root.$step.log)"
  tail -3 "$root.$step.log"
  ((rc == 0)) || failed=1
done
exit $failed
