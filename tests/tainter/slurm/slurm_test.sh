#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# faultline-tainter's Slurm actuator (issue 31) with real processes: munged
# and slurmctld on loopback (started here, tests/tainter/slurm/slurm_lib.sh),
# fl-mockcluster (Kafka), faultline-agent following a file, faultline-tainter
# replicas and their CLI. No slurmd runs: scontrol's drains work without one.
#
# usage: slurm_test.sh BUILD_DIR SCENARIO
#   drain_resume   an agent's fault drains its node with faultline's reason;
#                  `nodes` and `explain` show it; the fault expires and the
#                  node is resumed; `untaint` resumes another.
#   operator       an operator's drain is never claimed or resumed; a node
#                  faultline drained and an operator resumed stays resumed.
#   outage_restart slurmctld down for 20 s with a fault waiting and the
#                  tainter restarted in between: the drain lands after, once;
#                  a drain from before the restart is adopted, not repeated.
#   shared_valve   two replicas share max_fraction through slurm.valve_record:
#                  faults on all 10 nodes at once drain one.
#   names          faultline's node names mapped to Slurm's: a pattern
#                  ("gpu{name}": node 003 is gpu003) and an explicit pair
#                  (odd-host is gpu010); a Slurm node outside both is not managed.
#   job_action     with a real slurmd on gpu001 and a batch job running there:
#                  a drain leaves the job running by default; with
#                  `slurm.jobs: {action: requeue}` the job is requeued.
#   nhc            `faultline-agent --check-once` as Slurm's HealthCheckProgram
#                  would run it: exit 0 and silent on a healthy node; exit 1
#                  and "faultline: RULE: SUMMARY" when a check fails (7 of 8
#                  GPUs); the wrapper drains with that line and the tainter
#                  adopts the drain as its own.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
source "$HERE/slurm_lib.sh"
slurm_require
e2e_require kcat jq python3
e2e_init "$1" faultline-slurm
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
RULES=$HERE/../daemon/state_test_rules.yaml

# event NODE RULE EXPIRE: one taint event on the events topic, key = node, as
# an agent on state_test_rules.yaml publishes it.
event() {
  local now id=$RUN-$1-$2-$RANDOM
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$id" --arg n "$1" --arg r "$2" --arg e "$3" --arg t "$now" \
    '{schema: 1, id: $id, node: $n, source: "kmsg", origin: "kernel", rule: $r, category: "test", severity: "critical",
      action: "taint", summary: ($r + " on " + $n), message: "test line", log_time: $t, detected_time: $t, expire: $e}' |
    kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
}
# tainter_config NAME [VALVE_YAML [SLURM_KEYS]]: $T/NAME.yaml, actuator slurm.
tainter_config() {
  local valve=${2:-'valve: {event_interval: 1ms, max_fraction: 1.0, per_rule_max_fraction: 1.0}'}
  cat >"$T/$1.yaml" <<YAML
actuator: slurm
slurm:
  ${3:-}
  slurm_conf: $SLURM_CONF
  poll_interval: 1s
  timeout: 5s
  valve_record: $T/valve-record
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-slurm-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
rules: {builtin: true, paths: [$RULES]}
correlation: {enabled: false}
$valve
metrics_address: 127.0.0.1:0
YAML
}
tainter() {
  tainter_config "$@"
  e2e_start "$1" "$TAINTER" --config "$T/$1.yaml"
  e2e_wait_log 40 "$1" '"msg":"partitions assigned"'
}
cli() { "$TAINTER" "$@" --config "$T/tainter.yaml" 2>>"$T/cli.log"; }
# drains NAME NODE: how many times the log says the tainter drained NODE.
drains() { grep -c "\"msg\":\"tainted node\".*\"node\":\"$2\"" "$T/$1.log" 2>/dev/null || true; }

slurm_start_munge
slurm_write_conf 10
slurm_start_ctld
e2e_start_mock -b 1 -t events:4:1 -t events.dead-letter:1:1

case "$SCENARIO" in
drain_resume)
  tainter tainter
  # The agent on gpu001, following a file as kernel lines, with the test pack.
  e2e_file_agent gpu001 127.0.0.1:0
  sed -i "s|rules: {builtin: true, paths: \[\]}|rules: {builtin: true, paths: [$RULES]}|" "$T/agent.yaml"
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 20 agent '"msg":"started"'
  echo "faultline test short 7" >>"$T/node.log"
  e2e_wait 30 slurm_ours gpu001 || e2e_fail "gpu001 was not drained by faultline"
  reason=$(slurm_reason gpu001)
  [[ $reason == "faultline: test.short: test short 7" ]] || e2e_fail "unexpected Reason: '$reason'"
  # The reasons, for explain, live in the node's Extra.
  slurm_extra gpu001 | jq -e '."faultline.dev/reasons" | fromjson | .[0].rule == "test.short"' >/dev/null ||
    e2e_fail "Extra does not hold the reasons: $(slurm_extra gpu001)"
  cli nodes | grep -q '^gpu001 ' || e2e_fail "'nodes' does not list gpu001: $(cli nodes)"
  cli explain gpu001 | grep -q 'test.short' || e2e_fail "'explain' does not name the rule"
  # test.short expires after 6 quiet seconds: faultline resumes the node.
  e2e_wait 30 slurm_not_drained gpu001 || e2e_fail "gpu001 was not resumed after expiry"
  # Slurm shows the node undrained before scontrol returns and the tainter
  # logs the lift: wait for the line rather than read the log at once.
  e2e_wait_log 10 tainter '"msg":"lifted taint"' || e2e_fail "no lift logged"
  # untaint by hand through the CLI.
  event gpu003 test.long 10m
  e2e_wait 30 slurm_ours gpu003 || e2e_fail "gpu003 was not drained"
  cli untaint gpu003 --reason "GPU replaced" >/dev/null || e2e_fail "untaint failed: $(tail -3 "$T/cli.log")"
  slurm_not_drained gpu003 || e2e_fail "untaint left gpu003 drained: $(slurm_state gpu003)"
  sleep 3  # three polls: the lift by hand stays
  slurm_not_drained gpu003 || e2e_fail "gpu003 was drained again after untaint"
  e2e_stop agent || e2e_fail "the agent exited with $?"
  ;;
operator)
  tainter tainter
  # An operator's drain: a fault on the node is recorded, never claimed.
  scontrol update NodeName=gpu002 State=DRAIN Reason="operator: bad fan"
  sleep 2  # a poll sees it
  event gpu002 test.long 10m
  e2e_wait_log 30 tainter 'not tainted (node opted out)'
  [[ $(slurm_reason gpu002) == "operator: bad fan" ]] || e2e_fail "the operator's reason changed: $(slurm_reason gpu002)"
  # The operator resumes it: faultline does not drain it.
  scontrol update NodeName=gpu002 State=RESUME 2>/dev/null || true
  sleep 3
  slurm_not_drained gpu002 || e2e_fail "gpu002 drained after the operator resumed it"
  # An operator's DOWN is not faultline's either.
  scontrol update NodeName=gpu005 State=DOWN Reason="operator: cabling"
  sleep 2
  event gpu005 test.short 6s
  e2e_wait_log 30 tainter '"node":"gpu005"'
  sleep 8  # past test.short's expiry: nothing of faultline's to lift
  [[ $(slurm_state gpu005) == DOWN* && $(slurm_reason gpu005) == "operator: cabling" ]] ||
    e2e_fail "gpu005 changed: $(slurm_state gpu005) '$(slurm_reason gpu005)'"
  # faultline drains gpu004; the operator resumes it: it stays resumed
  # (as a taint lifted by hand), also when its other reason lapses.
  event gpu004 test.long 10m
  event gpu004 test.short 6s
  e2e_wait 30 slurm_ours gpu004 || e2e_fail "gpu004 was not drained"
  # Both faults decided before the operator acts (a new fault after the
  # resume would be a new drain, as a new fault after an untaint is).
  two_reasons() { slurm_extra gpu004 | jq -e '."faultline.dev/reasons" | fromjson | length == 2' >/dev/null 2>&1; }
  e2e_wait 30 two_reasons || e2e_fail "gpu004 does not hold both reasons: $(slurm_extra gpu004)"
  scontrol update NodeName=gpu004 State=RESUME 2>/dev/null || true
  slurm_not_drained gpu004 || e2e_fail "scontrol did not resume gpu004"
  sleep 9  # polls, and test.short's expiry
  slurm_not_drained gpu004 || e2e_fail "faultline drained gpu004 again after the operator resumed it"
  [[ $(drains tainter gpu004) == 1 ]] || e2e_fail "gpu004 drained $(drains tainter gpu004) times"
  ;;
outage_restart)
  tainter tainter
  event gpu002 test.long 10m
  e2e_wait 30 slurm_ours gpu002 || e2e_fail "gpu002 was not drained"
  slurm_stop_ctld
  OUTAGE=$SECONDS
  event gpu001 test.long 10m
  sleep 8
  # The tainter restarts while the controller is down.
  e2e_stop tainter || e2e_fail "the tainter exited with $? during the outage"
  mv "$T/tainter.log" "$T/tainter-1.log"
  tainter_config tainter
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  sleep $((20 - (SECONDS - OUTAGE)))
  slurm_start_ctld
  e2e_wait 60 slurm_ours gpu001 || e2e_fail "the drain did not land after the outage"
  slurm_ours gpu002 || e2e_fail "gpu002's drain from before the restart is gone"
  e2e_wait 10 eval '[[ $(cli nodes | grep -c "^gpu00[12] ") == 2 ]]' ||
    e2e_fail "'nodes' after the restart: $(cli nodes)"
  [[ $(($(drains tainter-1 gpu002) + $(drains tainter gpu002))) == 1 ]] ||
    e2e_fail "gpu002 was drained again after the restart"
  [[ $(($(drains tainter-1 gpu001) + $(drains tainter gpu001))) == 1 ]] ||
    e2e_fail "gpu001 was drained more than once"
  ;;
shared_valve)
  VALVE='valve: {event_interval: 1ms, max_fraction: 0.1, min_allowed: 1}'
  tainter tainter "$VALVE"
  tainter tainter-b "$VALVE"
  sleep 2  # the first replica's rebalance after the second joined
  for i in $(seq -w 1 10); do event "gpu0$i" test.long 10m; done
  all_decided() {
    [[ $(cat "$T/tainter.log" "$T/tainter-b.log" |
      grep -c '"msg":"safety valve refused a taint"\|"msg":"tainted node"') -ge 10 ]]
  }
  e2e_wait 60 all_decided || e2e_fail "not every event was decided"
  n=0
  for i in $(seq -w 1 10); do slurm_drained "gpu0$i" && n=$((n + 1)); done
  [[ $n == 1 ]] || e2e_fail "$n nodes drained; the fleet's limit is 1 of 10"
  e2e_stop tainter-b || e2e_fail "tainter-b exited with $?"
  ;;
names)
  tainter tainter "" $'node_name_pattern: "gpu{name}"\n  node_names: {odd-host: gpu010}'
  event 003 test.long 10m
  event odd-host test.long 10m
  e2e_wait 30 slurm_ours gpu003 || e2e_fail "node 003 did not drain Slurm node gpu003"
  e2e_wait 30 slurm_ours gpu010 || e2e_fail "odd-host did not drain Slurm node gpu010"
  listed=$(cli nodes | awk 'NR > 1 {print $1}' | sort | tr '\n' ' ')
  [[ $listed == "003 odd-host " ]] || e2e_fail "'nodes' lists '$listed', not faultline's names"
  cli explain odd-host | grep -q test.long || e2e_fail "'explain odd-host' does not name the rule"
  # gpu010 answers to odd-host only: a fault for "010" names no Slurm node it may drain.
  cli explain 010 >/dev/null 2>&1 && e2e_fail "'explain 010' found a node the map gave to odd-host"
  ;;
job_action)
  slurm_start_slurmd gpu001
  job=$(sbatch --parsable -w gpu001 -o /dev/null --wrap "sleep 300") || e2e_fail "sbatch failed"
  job_field() { scontrol show job "$job" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
  running() { [[ $(job_field JobState) == RUNNING ]]; }
  e2e_wait 30 running || e2e_fail "job $job did not start: $(job_field JobState) $(job_field Reason)"
  # By default a drain lets the job run on (Slurm's DRAIN).
  tainter tainter
  event gpu001 test.short 6s
  e2e_wait 30 slurm_ours gpu001 || e2e_fail "gpu001 was not drained"
  sleep 2
  running || e2e_fail "the job was touched with no slurm.jobs: $(job_field JobState)"
  e2e_wait 30 slurm_not_drained gpu001 || e2e_fail "gpu001 was not resumed"
  e2e_stop tainter || e2e_fail "the tainter exited with $?"
  mv "$T/tainter.log" "$T/tainter-1.log"
  # With jobs: {action: requeue}: the job goes back to the queue.
  tainter tainter "" 'jobs: {action: requeue, rules: [test.]}'
  event gpu001 test.long 10m
  e2e_wait 30 slurm_ours gpu001 || e2e_fail "gpu001 was not drained again"
  requeued() { [[ $(job_field JobState) == PENDING && $(job_field Restarts) == 1 ]]; }
  e2e_wait 30 requeued || e2e_fail "job $job not requeued: $(job_field JobState) restarts $(job_field Restarts)"
  e2e_wait_log 10 tainter '"msg":"requeued the jobs of a drained node"' ||
    e2e_fail "the requeue is not logged"
  ;;
nhc)
  # A node whose PCI bus shows 7 NVIDIA GPUs (class 0x030200) of the 8 expected.
  for i in 1 2 3 4 5 6 7; do
    d=$T/sys/bus/pci/devices/0000:0$i:00.0
    mkdir -p "$d"
    echo 0x10de >"$d/vendor"
    echo 0x030200 >"$d/class"
  done
  check_config() {
    cat >"$T/check.yaml" <<YAML
node_name: gpu001
checks:
  sysfs_root: $T/sys
  gpu_inventory: {$1}
  pcie: {enabled: false}
  aer: {enabled: false}
  nvidia_driver: {enabled: false}
  nvml: {enabled: false}
YAML
  }
  # What /etc/slurm/faultline-health-check.sh does (README.md, "Slurm").
  health_check() {
    local msg rc=0
    msg=$("$AGENT" --check-once --config "$T/check.yaml" 2>>"$T/check.log") || rc=$?
    printf '%s' "$msg" >"$T/check.out"
    case $rc in
    0) ;;
    1) scontrol update NodeName=gpu001 State=DRAIN Reason="$msg" ;;
    *) e2e_fail "--check-once exited $rc: $(tail -3 "$T/check.log")" ;;
    esac
    return $rc
  }
  check_config "expected: {nvidia: 7}"
  health_check || e2e_fail "a healthy node failed its check: $(cat "$T/check.out")"
  [[ ! -s "$T/check.out" ]] || e2e_fail "a healthy check printed: $(cat "$T/check.out")"
  slurm_not_drained gpu001 || e2e_fail "gpu001 drained while healthy"
  check_config "expected: {nvidia: 8}"
  rc=0
  health_check || rc=$?
  [[ $rc == 1 ]] || e2e_fail "7 of 8 GPUs: --check-once exited $rc"
  [[ $(cat "$T/check.out") == 'faultline: check.gpu-count: 7 of 8 nvidia GPUs on the PCI bus'* ]] ||
    e2e_fail "unexpected message: $(cat "$T/check.out")"
  slurm_ours gpu001 || e2e_fail "the health check did not drain gpu001: $(slurm_state gpu001)"
  # The tainter takes the drain as faultline's: listed, never resumed on its own.
  tainter tainter
  e2e_wait 10 eval 'cli nodes | grep -q "^gpu001 "' || e2e_fail "'nodes' does not list gpu001: $(cli nodes)"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
e2e_stop tainter || e2e_fail "the tainter exited with $?"
echo "PASS: slurm $SCENARIO"
