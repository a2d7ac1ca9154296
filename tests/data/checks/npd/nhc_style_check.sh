#!/bin/bash
# A check in the style of LBNL Node Health Check (NHC): a list of
# check_* functions, each of which reports the first failure as
# "ERROR: ..." and fails; the run stops there. Here as an NPD plugin, so it
# exits 1 on a failure and prints the message NHC would log.
# The checks read $NHC_ROOT (a test tree standing in for /).
root=${NHC_ROOT:-/}

die() { echo "ERROR:  nhc:  Health check failed:  $*"; exit 1; }

check_fs_mount_rw() {
  grep -q " $1 [^ ]* rw[ ,]" "$root/proc/mounts" || die "Check check_fs_mount_rw $1 failed: not mounted read-write"
}
check_file_test() {
  test "$1" "$root$2" || die "Check check_file_test $1 $2 failed"
}
check_hw_physmem_free() {
  free_kb=$(awk '/^MemAvailable:/ {print $2}' "$root/proc/meminfo")
  [ "${free_kb:-0}" -ge "$1" ] || die "Check check_hw_physmem_free $1kB failed: ${free_kb}kB free"
}

check_fs_mount_rw /
check_file_test -e /dev/nvidiactl
check_hw_physmem_free 1048576
exit 0
