# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A Slurm controller of its own for a test: munged on its own socket with a
# generated key, and slurmctld on a free loopback port with a generated
# slurm.conf, state in $T/slurm/state. Both are started with e2e_start, so
# the EXIT trap of tests/support/e2e_lib.sh kills them. What was learnt about
# their behaviour is in tests/tainter/slurm/README.md.
#
#   source "$SRC/tests/support/e2e_lib.sh"; source "$SRC/tests/tainter/slurm/slurm_lib.sh"
#   e2e_init "$BUILD" faultline-slurm
#   slurm_require                 # SKIPPED (exit 0) without the Debian packages
#   slurm_start_munge; slurm_write_conf 10; slurm_start_ctld
#   scontrol show node gpu001     # SLURM_CONF is exported

# slurm_require: SKIPPED unless slurmctld, scontrol and munged are installed.
slurm_require() {
  local tool
  for tool in slurmctld scontrol munged; do
    if ! command -v "$tool" >/dev/null && [[ ! -x /usr/sbin/$tool ]]; then
      echo "SKIPPED: $tool is not installed (deploy/install-deps.sh --test installs slurmctld, slurm-client, munge)"
      exit 0
    fi
  done
  PATH=$PATH:/usr/sbin
}

# slurm_start_munge: munged in the foreground on $T/slurm/munge.socket.
slurm_start_munge() {
  SLURM_DIR=$T/slurm
  mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/munge"
  chmod 700 "$SLURM_DIR/munge"
  head -c 1024 /dev/urandom >"$SLURM_DIR/munge/munge.key"
  chmod 600 "$SLURM_DIR/munge/munge.key"
  MUNGE_SOCKET=$SLURM_DIR/munge/munge.socket
  e2e_start munged munged --foreground --force --socket="$MUNGE_SOCKET" \
    --key-file="$SLURM_DIR/munge/munge.key" --log-file="$SLURM_DIR/munge/munged.log" \
    --pid-file="$SLURM_DIR/munge/munged.pid" --seed-file="$SLURM_DIR/munge/munged.seed"
  e2e_wait 10 test -S "$MUNGE_SOCKET" || e2e_fail "munged did not create its socket"
}

# slurm_write_conf N: slurm.conf for nodes gpu001..gpuN in partition gpu,
# every node at 127.0.0.1 (no slurmd runs: scontrol's drains work anyway).
# The controller's address is given: a minimal root has no /etc/hosts, and
# there "localhost" does not resolve (scontrol then never reaches it).
slurm_write_conf() {
  local last
  last=$(printf '%03d' "$1")
  SLURM_PORT=$(e2e_free_port)
  cat >"$SLURM_DIR/slurm.conf" <<CONF
ClusterName=fltest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURM_PORT
SlurmUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmctldDebug=info
ReturnToService=0
SlurmdTimeout=3600
SlurmdPort=$(e2e_free_port)
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmdLogFile=$SLURM_DIR/slurmd.log
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
NodeName=gpu[001-$last] NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=gpu Nodes=gpu[001-$last] Default=YES State=UP
CONF
  export SLURM_CONF=$SLURM_DIR/slurm.conf
}

# slurm_start_ctld: slurmctld in the foreground (its log: $T/slurmctld.log);
# returns once scontrol reads the nodes.
slurm_start_ctld() {
  e2e_start slurmctld slurmctld -D
  e2e_wait 20 slurm_up || e2e_fail "slurmctld did not answer within 20 s"
}
slurm_up() { scontrol show node gpu001 >/dev/null 2>&1; }

# slurm_start_slurmd NODE: a slurmd for NODE (root only: it runs the jobs),
# SKIPPED without the slurmd package; returns once NODE is IDLE. At exit,
# every job is cancelled before the processes are killed, so no job step
# outlives the test.
slurm_start_slurmd() {
  if ! command -v slurmd >/dev/null; then
    echo "SKIPPED: slurmd is not installed (deploy/install-deps.sh --test installs it)"
    exit 0
  fi
  [[ $(id -u) == 0 ]] || { echo "SKIPPED: slurmd runs jobs as their users: needs root"; exit 0; }
  # slurmd will not start without a cgroup file system (a booted machine
  # has one; a container or chroot may not).
  grep -q ' /sys/fs/cgroup' /proc/mounts ||
    { echo "SKIPPED: slurmd needs a cgroup file system at /sys/fs/cgroup"; exit 0; }
  trap 'scancel --full --quiet --partition=gpu 2>/dev/null; sleep 1; e2e_cleanup' EXIT
  e2e_start slurmd slurmd -D -N "$1"
  e2e_wait 30 eval '[[ $(slurm_state '"$1"') == IDLE* ]]' ||
    e2e_fail "$1 did not register: $(slurm_state "$1")"
}

# slurm_stop_ctld: SIGTERM (slurmctld saves its state and exits).
slurm_stop_ctld() { e2e_stop slurmctld || true; }

slurm_state() { scontrol show node "$1" 2>/dev/null | sed -n 's/^ *State=\([^ ]*\) .*/\1/p'; }
slurm_reason() { scontrol show node "$1" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[[^]]*\]$/\1/p'; }
slurm_extra() { scontrol show node "$1" 2>/dev/null | sed -n 's/^ *Extra=//p'; }
slurm_drained() { [[ $(slurm_state "$1") == *+DRAIN* ]]; }
slurm_not_drained() { local s; s=$(slurm_state "$1") && [[ -n "$s" && $s != *+DRAIN* ]]; }
slurm_ours() { slurm_drained "$1" && [[ $(slurm_reason "$1") == faultline:* ]]; }
