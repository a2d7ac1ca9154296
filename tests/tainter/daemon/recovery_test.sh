#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Return to service (issue 15 step 3) with real processes: fl-mockcluster
# (Kafka), fl-fake-apiserver (Kubernetes, with watch), faultline-tainter, and
# the events an agent publishes, written with kcat.
#
# usage: recovery_test.sh BUILD_DIR SCENARIO
#   reboot  a fake Xid 79 (rule `recover: reboot`, `probation: 3s`) taints the
#           node and sets GPUFault=True; the node reboots (a new
#           status.nodeInfo.bootID in the double) and after the probation the
#           taint goes, GPUFault=False, a FaultlineRecovered Event and a
#           history entry record it. The same Xid 79 again: tainted as
#           recurring, and a second reboot does not lift it.
#   clear   an NVLink fault taints; its recovery line (a `clear:` rule)
#           lifts the taint.
#   dry_run faultline-tainter --dry-run: the Xid 79 is decided and every write
#           it would send is logged, the node condition patch (GPUFault=True,
#           the strategic merge patch for nodes/status) included; the API
#           double's node keeps no taint and no GPUFault condition.
#
# API-double semantics relied on (as kube-apiserver): a status write by the
# kubelet (the new bootID after a reboot) bumps the node's resourceVersion and
# reaches a watch as MODIFIED; a strategic merge patch on nodes/status merges
# status.conditions by type; Events are POSTed to the event namespace and
# listed with GET.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-recovery
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
TAINT_KEY=faultline.dev/faulty

has_taint() {
  e2e_node "$1" | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 1' >/dev/null
}
lacks_taint() { ! has_taint "$1"; }
condition() {
  e2e_node "$1" | jq -r --arg t "$2" '[.status.conditions[]? | select(.type == $t) | .status][0] // ""'
}
condition_is() { [[ $(condition "$1" "$2") == "$3" ]]; }
reasons() { e2e_node "$1" | jq -c '.metadata.annotations["faultline.dev/reasons"] // "[]" | fromjson'; }
history() { e2e_node "$1" | jq -c '.metadata.annotations["faultline.dev/recoveries"] // "[]" | fromjson'; }
events_with() { e2e_api_get /debug/events | jq -c --arg r "$1" '[.items[] | select(.reason == $r)]'; }
events_count() { [[ $(events_with "$1" | jq 'length') == "$2" ]]; }
# reboot NODE BOOT_ID: the kubelet reports the new boot id after a reboot.
reboot() {
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST --data "" \
    "$API_URL/debug/boot?node=$1&boot_id=$2" >/dev/null || e2e_fail "POST /debug/boot failed"
}
# event NODE BOOT_ID RULE CATEGORY SEVERITY ACTION MESSAGE [EXTRA_JSON]: one
# event as an agent on recovery_test_rules.yaml publishes it (the tainter
# checks the claims against that rule).
event() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$RUN-$RANDOM$RANDOM" --arg n "$1" --arg b "$2" --arg r "$3" --arg c "$4" \
    --arg s "$5" --arg a "$6" --arg m "$7" --arg t "$now" --argjson x "${8:-{\}}" \
    '{schema: 1, id: $id, node: $n, boot_id: $b, source: "kmsg", origin: "kernel", rule: $r,
      category: $c, severity: $s, action: $a, summary: $r, message: $m, log_time: $t,
      detected_time: $t} + $x' |
    kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
}
# round NODE BOOT_ID STATUS: the agent's check-round summary (rule check.round,
# rules/check-rounds.yaml) from that boot.
round() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$RUN-$RANDOM$RANDOM" --arg n "$1" --arg b "$2" --arg st "$3" --arg t "$now" \
    '{schema: 1, id: $id, node: $n, boot_id: $b, source: "checks", origin: "check",
      rule: "check.round", pack: "check-rounds", category: "informational", severity: "info",
      action: "event", summary: "check round", log_time: $t, detected_time: $t,
      message: ("check=round status=" + $st + " device=node counter=round value=4 expected=4 checks=a,b,c,d msg=every check passed"),
      fields: {status: $st, passed: "4", checks: "4", names: "a,b,c,d", message: "every check passed"}}' |
    kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
}
xid79() {
  event "$1" "$2" test.xid79 hardware critical taint \
    'NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.' \
    '{"fields":{"pci":"0000:3b:00"},"condition":"GPUFault","recover":"reboot","probation":"3s"}'
}

e2e_start_mock -b 1 -t events:2:1 -t events.dead-letter:1:1
e2e_start_api --node gpu-1 --node gpu-2 --node gpu-3 --node gpu-4
cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-recovery-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
rules: {builtin: true, paths: [$HERE/recovery_test_rules.yaml]}
valve: {event_interval: 1ms, max_fraction: 0.5}
recovery: {probation: 10m, recurring_window: 1h}
metrics_address: 127.0.0.1:0
YAML

case "$SCENARIO" in
reboot)
  reboot gpu-1 boot-a  # the node as booted before the fault
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'

  # 1. The fault: taint, GPUFault=True, the boot id kept with the reason.
  xid79 gpu-1 boot-a
  e2e_wait 20 has_taint gpu-1 || e2e_fail "Xid 79 did not taint gpu-1"
  e2e_wait 10 condition_is gpu-1 GPUFault True || e2e_fail "GPUFault is not True"
  [[ $(reasons gpu-1 | jq -r '.[0].boot_id + " " + .[0].recover') == "boot-a reboot" ]] ||
    e2e_fail "the reason does not keep the boot id and recover: $(reasons gpu-1)"
  "$TAINTER" explain gpu-1 --config "$T/tainter.yaml" >"$T/explain.txt" 2>&1 || e2e_fail "explain failed"
  grep -q "recovers once the node reboots (it faulted in boot id boot-a) and stays quiet for 3s" \
    "$T/explain.txt" || e2e_fail "explain: $(cat "$T/explain.txt")"
  grep -q "What lifts the taint: faultline itself after a reboot, a passing round of the node's checks in the new boot and the probation" "$T/explain.txt" ||
    e2e_fail "explain: $(cat "$T/explain.txt")"
  sleep 4  # past the probation without a reboot: the taint stays
  has_taint gpu-1 || e2e_fail "the taint was lifted without a reboot"

  # 2. The reboot: quiet is not healthy. Past the probation without a
  # check round of the new boot the node stays out, AwaitingValidation.
  reboot gpu-1 boot-b
  START=$SECONDS
  sleep 4
  has_taint gpu-1 || e2e_fail "lifted after the reboot without a passing check round"
  e2e_node gpu-1 | jq -e '[.status.conditions[] | select(.type == "GPUFault")][0].reason == "AwaitingValidation"' \
    >/dev/null || e2e_fail "GPUFault does not say AwaitingValidation: $(e2e_node gpu-1 | jq -c .status.conditions)"
  # The agent's first round in the new boot passes: back in service.
  round gpu-1 boot-b ok
  e2e_wait 20 lacks_taint gpu-1 || e2e_fail "the taint was not lifted after the reboot, the round and the probation"
  ((SECONDS - START >= 2)) || e2e_fail "lifted after $((SECONDS - START))s, before the 3s probation"
  e2e_wait 10 condition_is gpu-1 GPUFault False || e2e_fail "GPUFault did not go back to False"
  e2e_wait 10 events_count FaultlineRecovered 1 || e2e_fail "no FaultlineRecovered Event"
  events_with FaultlineRecovered | jq -e '.[0].type == "Normal" and
    (.[0].message | startswith("test.xid79 recovered (reboot: boot id boot-a -> boot-b"))' >/dev/null ||
    e2e_fail "FaultlineRecovered: $(events_with FaultlineRecovered)"
  [[ $(history gpu-1 | jq -r '.[-1].rule + " " + .[-1].how + " " + .[-1].boot_id') == "test.xid79 reboot boot-b" ]] ||
    e2e_fail "history: $(history gpu-1)"
  history gpu-1 | jq -e '[.[] | select(.how == "validation" and .boot_id == "boot-b" and .passed)] | length == 1' \
    >/dev/null || e2e_fail "the passing round of boot-b is not in the history: $(history gpu-1)"
  e2e_node gpu-1 | jq -e '.metadata.annotations["faultline.dev/reasons"] == null' >/dev/null ||
    e2e_fail "the reasons annotation outlived the taint"

  # 3. The same fault again within recurring_window: recurring, a reboot no
  # longer lifts it.
  xid79 gpu-1 boot-b
  e2e_wait 20 has_taint gpu-1 || e2e_fail "the recurring Xid 79 did not taint gpu-1"
  reasons gpu-1 | jq -e '.[0].recurring == true and (.[0].summary | startswith("recurring after reboot recovery"))' \
    >/dev/null || e2e_fail "not recurring: $(reasons gpu-1)"
  reboot gpu-1 boot-c
  sleep 5
  has_taint gpu-1 || e2e_fail "a reboot lifted a recurring fault"
  "$TAINTER" explain gpu-1 --config "$T/tainter.yaml" >"$T/explain.txt" 2>&1 || e2e_fail "explain failed"
  grep -q "What lifts the taint: only by hand" "$T/explain.txt" || e2e_fail "explain: $(cat "$T/explain.txt")"
  "$TAINTER" untaint gpu-1 --reason "GPU replaced" --config "$T/tainter.yaml" >>"$T/cli.log" 2>&1 ||
    e2e_fail "untaint failed"
  lacks_taint gpu-1 || e2e_fail "untaint left the taint"
  [[ $(history gpu-1 | jq -r '.[-1].how + " " + .[-1].detail') == "hand GPU replaced" ]] ||
    e2e_fail "the hand lift is not in the history: $(history gpu-1)"
  ;;
clear)
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
  event gpu-2 boot-a test.nvlink-down hardware critical taint 'faultline test nvlink 3 down' \
    '{"fields":{"link":"3"}}'
  e2e_wait 20 has_taint gpu-2 || e2e_fail "the NVLink fault did not taint gpu-2"
  event gpu-2 boot-a test.nvlink-up informational info event 'faultline test nvlink 3 up' \
    '{"fields":{"link":"3"},"clears":["test.nvlink-down"]}'
  e2e_wait 20 lacks_taint gpu-2 || e2e_fail "the clear rule did not lift the taint"
  e2e_wait 10 condition_is gpu-2 GPUFault False || e2e_fail "GPUFault did not go back to False"
  [[ $(history gpu-2 | jq -r '.[0].how') == clear ]] || e2e_fail "history: $(history gpu-2)"
  e2e_wait 10 events_count FaultlineRecovered 1 || e2e_fail "no FaultlineRecovered Event"
  ;;
dry_run)
  reboot gpu-3 boot-a
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml" --dry-run
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
  xid79 gpu-3 boot-a
  e2e_wait_log 20 tainter '"msg":"dry-run: would update node"'
  e2e_wait_log 10 tainter '"msg":"dry-run: would patch node conditions"'
  line=$(grep '"msg":"dry-run: would patch node conditions"' "$T/tainter.log" | head -1)
  jq -e '.node == "gpu-3" and .conditions.GPUFault == "True" and
         ([.patch.status.conditions[] | select(.type == "GPUFault" and .status == "True"
           and .reason == "TestXid79")] | length == 1)' <<<"$line" >/dev/null ||
    e2e_fail "the condition patch is not the one a real run sends: $line"
  sleep 1  # a real write would have landed by now
  lacks_taint gpu-3 || e2e_fail "a dry run tainted gpu-3"
  [[ -z $(condition gpu-3 GPUFault) ]] || e2e_fail "a dry run set GPUFault on gpu-3"
  ;;
*) e2e_fail "unknown scenario $SCENARIO" ;;
esac
e2e_log_has tainter '"msg":"event set aside"' && e2e_fail "an event was set aside: $(grep 'set aside' "$T/tainter.log")"
echo "PASS $SCENARIO"
