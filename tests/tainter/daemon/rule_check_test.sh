#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tainter checks every event against its rule (issue 11, defect 7), with
# real processes: fl-mockcluster (Kafka), fl-fake-apiserver (Kubernetes),
# faultline-tainter, faultline-agent, and forged events produced with kcat as
# any client that can reach the topic could.
#
# usage: rule_check_test.sh BUILD_DIR SCENARIO
#   forgery  strict default: a forged `taint` for an event-only outcome (Xid 13)
#            and forged threshold/expire (a link flap claiming "one event,
#            never expires") do not taint and are set aside as rule_mismatch;
#            an unknown rule id is set aside as unknown_rule; each is counted
#            and dead-lettered with its reason; a genuine Xid 79 that the real
#            agent reads from a kernel-origin file still taints.
#   skew     rules at other versions (rolling upgrades, a ConfigMap edit):
#            an event of a rule the tainter does not know yet is set aside; the
#            tainter reloads the packs when their files change, and then takes
#            the rule's events; an event whose claims follow another version
#            of a rule is decided by the tainter's copy with
#            `rules.on_mismatch: decide_by_rule` (the expire on the node is
#            the rule's, not the claimed one).
#
# API-double semantics relied on (as kube-apiserver): GET /api/v1/nodes/NAME
# returns the node with the taints and annotations the tainter's JSON Patch
# wrote; a list+watch reports them to the tainter.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
e2e_require kcat jq curl python3
e2e_init "$1" faultline-rulecheck
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
TAINT_KEY=faultline.dev/faulty
ANNOTATION=faultline.dev/reasons

TAINTER_PORT=$(e2e_free_port)
has_taint() {
  e2e_node "$1" | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 1' >/dev/null
}
lacks_taint() { ! has_taint "$1"; }
metric() {  # metric 'NAME{labels}': its value, 0 when absent
  curl -sf --max-time 5 "http://127.0.0.1:$TAINTER_PORT/metrics" |
    awk -v m="$1" 'index($0, m " ") == 1 { print $2; found = 1 } END { if (!found) print 0 }'
}
metric_is() { [[ $(metric "$1") == "$2" ]]; }
# send NODE JSON: one message on the events topic, key = node (what any
# producer with access to the topic can do).
send() { kcat -P -b "$BS" -t events -k "$1" <<<"$2" 2>/dev/null || e2e_fail "kcat -P failed"; }
# event NODE RULE ORIGIN FIELDS_JSON CLAIMS: an event as an agent writes it,
# with the claims of the jq object CLAIMS (action, severity, expire, ...).
event() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$RUN-$1-$2-$RANDOM" --arg n "$1" --arg r "$2" --arg o "$3" --arg t "$now" \
    --argjson f "$4" \
    '{schema: 1, id: $id, node: $n, source: "kmsg", origin: $o, rule: $r, category: "hardware",
      severity: "warning", action: "event", summary: "s", fields: $f, message: "test line",
      log_time: $t, detected_time: $t} + '"$5"
}
# tainter RULES_YAML: a tainter replica with these `rules:`, given its partitions.
tainter() {
  cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-rulecheck-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
rules: $1
valve: {event_interval: 1ms, max_fraction: 1.0, per_rule_max_fraction: 1.0, max_new_taints: 0}
metrics_address: 127.0.0.1:$TAINTER_PORT
YAML
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
}
# dead_letter_reasons: the faultline.dlq.reason header of every dead letter.
dead_letter_reasons() {
  kcat -C -b "$BS" -t events.dead-letter -o beginning -e -q -f '%h\n' 2>/dev/null |
    tr ',' '\n' | sed -n 's/^faultline\.dlq\.reason=//p'
}
dead_letters_are() { [[ $(dead_letter_reasons | wc -l) -ge $1 ]]; }

e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
e2e_start_api --node gpu-1 --node gpu-2 --node gpu-3 --node gpu-4

case "$SCENARIO" in
forgery)
  tainter "{builtin: true, paths: []}"
  # Every counter the checks below read exists from the start at 0.
  metric_is 'faultline_tainter_events_set_aside_total{why="rule_mismatch"}' 0 ||
    e2e_fail "the set-aside counter does not start at 0: $(metric 'faultline_tainter_events_set_aside_total{why="rule_mismatch"}')"
  # (Waited for: under load the metrics endpoint may answer a moment after
  # the consumer's "partitions assigned"; nothing has been sent yet.)
  unknown_rule_at_0() {
    curl -sf --max-time 5 "http://127.0.0.1:$TAINTER_PORT/metrics" |
      grep -q '^faultline_tainter_events_set_aside_total{why="unknown_rule"} 0'
  }
  e2e_wait 20 unknown_rule_at_0 ||
    e2e_fail "faultline_tainter_events_set_aside_total{why=\"unknown_rule\"} is not exported at 0"

  # Xid 13 is an application fault: nvidia.xid classifies it `event`. A
  # producer asks for a permanent critical taint anyway.
  send gpu-1 "$(event gpu-1 nvidia.xid kernel '{"xid":"13","pci":"0000:3b:00"}' \
    '{category: "application", severity: "critical", action: "taint"}')"
  # A link flap (threshold 5 within 24h, expire 24h) claiming that one event
  # is enough and that the taint never expires.
  send gpu-2 "$(event gpu-2 net.netdev-link-down kernel \
    '{"driver":"mlx5_core","pci":"0000:3b:00.0","netdev":"eth0"}' '{action: "taint"}')"
  # A rule no pack defines.
  send gpu-3 "$(event gpu-3 site.made-up kernel '{}' '{category: "hardware", severity: "critical", action: "taint"}')"

  # A genuine Xid 79, read by the real agent from a kernel-origin file.
  e2e_file_agent gpu-4 ""
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 20 agent '"msg":"started"'
  echo "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus. $RUN" >>"$T/node.log"
  e2e_wait 30 has_taint gpu-4 || e2e_fail "a genuine Xid 79 from the agent did not taint gpu-4"
  consumed() { (($(metric faultline_tainter_events_consumed_total) >= 4)); }
  e2e_wait 20 consumed || e2e_fail "the tainter did not consume the four events"
  sleep 1  # a decision's node write, had there been one
  for n in gpu-1 gpu-2 gpu-3; do lacks_taint "$n" || e2e_fail "a forged event tainted $n"; done

  e2e_wait 20 metric_is 'faultline_tainter_events_set_aside_total{why="rule_mismatch"}' 2 ||
    e2e_fail "rule_mismatch set aside $(metric 'faultline_tainter_events_set_aside_total{why="rule_mismatch"}'), want 2"
  e2e_wait 10 metric_is 'faultline_tainter_events_set_aside_total{why="unknown_rule"}' 1 ||
    e2e_fail "unknown_rule set aside $(metric 'faultline_tainter_events_set_aside_total{why="unknown_rule"}'), want 1"
  metric_is 'faultline_tainter_rule_mismatches_total' 2 ||
    e2e_fail "rule_mismatches_total is $(metric faultline_tainter_rule_mismatches_total), want 2"
  e2e_wait 20 dead_letters_are 3 || e2e_fail "not every set-aside event was dead-lettered: $(dead_letter_reasons)"
  dead_letter_reasons | grep -qF "rule_mismatch: action 'taint' but rule 'nvidia.xid' says 'event'" ||
    e2e_fail "no dead letter names the forged action: $(dead_letter_reasons)"
  dead_letter_reasons | grep -qF "rule_mismatch: expire 'never' but rule 'net.netdev-link-down' says '1d'" ||
    e2e_fail "no dead letter names the forged expire: $(dead_letter_reasons)"
  dead_letter_reasons | grep -qF "unknown_rule: rule 'site.made-up' is not in the tainter's rule packs" ||
    e2e_fail "no dead letter names the unknown rule: $(dead_letter_reasons)"
  e2e_log_has tainter '"msg":"event set aside"' || e2e_fail "no log line for a set-aside event"
  e2e_stop agent || e2e_fail "agent exited with $?"
  ;;
skew)
  mkdir -p "$T/rules"
  cp "$HERE/state_test_rules.yaml" "$T/rules/test.yaml"
  tainter "{builtin: true, paths: [$T/rules], on_mismatch: decide_by_rule}"
  # A rule added to the agents' packs before the tainter's: unknown here.
  send gpu-1 "$(event gpu-1 test.added kernel '{}' '{category: "test", severity: "critical", action: "taint"}')"
  e2e_wait 20 metric_is 'faultline_tainter_events_set_aside_total{why="unknown_rule"}' 1 ||
    e2e_fail "an event of a rule the tainter does not know was not set aside"
  lacks_taint gpu-1 || e2e_fail "an unknown rule tainted gpu-1"

  # The pack changes on disk (what the kubelet does on a ConfigMap edit): the
  # tainter reloads it and takes the new rule's events.
  cat >"$T/rules/added.yaml" <<'YAML'
pack: tainter-test-added
version: 2
rules:
  - id: test.added
    sources: [kernel]
    pattern: 'faultline test added'
    category: test
    severity: critical
    action: taint
    expire: 10m
YAML
  e2e_wait_log 30 tainter '"msg":"rules reloaded"'
  send gpu-1 "$(event gpu-1 test.added kernel '{}' '{category: "test", severity: "critical", action: "taint", expire: "10m"}')"
  e2e_wait 20 has_taint gpu-1 || e2e_fail "the reloaded rule's event did not taint gpu-1"

  # An agent on another version of test.long claims expire 2s (the
  # tainter's copy says 10m): decided by the tainter's rule.
  send gpu-2 "$(event gpu-2 test.long kernel '{"n":"7"}' '{category: "test", severity: "critical", action: "taint", expire: "2s"}')"
  e2e_wait 20 has_taint gpu-2 || e2e_fail "the event decided by the rule did not taint gpu-2"
  span=$(e2e_node gpu-2 | jq -r --arg a "$ANNOTATION" '.metadata.annotations[$a] | fromjson | .[0] |
    ((.expires_at | sub("\\.[0-9]+"; "") | fromdateiso8601) - (.last_seen | sub("\\.[0-9]+"; "") | fromdateiso8601))')
  [[ "$span" -ge 590 && "$span" -le 610 ]] || e2e_fail "the reason expires ${span}s after last seen; the rule says 600"
  metric_is 'faultline_tainter_rule_mismatches_total' 1 ||
    e2e_fail "rule_mismatches_total is $(metric faultline_tainter_rule_mismatches_total), want 1"
  metric_is 'faultline_tainter_events_set_aside_total{why="rule_mismatch"}' 0 ||
    e2e_fail "decide_by_rule set a mismatching event aside"
  sleep 4
  has_taint gpu-2 || e2e_fail "the claimed 2s expiry lifted the taint"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
e2e_stop tainter || e2e_fail "tainter exited with $?"
echo "PASS: $SCENARIO"
