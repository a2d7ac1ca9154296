#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dashboard and the alert rules reference only metrics the daemons really
# export: starts a real faultline-agent (file source, Kafka through
# fl-mockcluster) and a real faultline-tainter (fl-mockcluster and the HTTPS
# Kubernetes API double), makes the series that only appear once something
# happens appear (a fault line the safety valve refuses, a poison message for
# the dead-letter topic), scrapes both /metrics and checks every faultline_*
# name in deploy/monitoring/grafana-dashboard.json and faultline-alerts.yaml
# against them (a histogram through its _bucket/_count series). The grep-based
# check in render_test.py reads the sources; this one reads what is served.
# About 10 s. Needs kcat, jq, curl (else SKIPPED).
#
# usage: metrics_scrape_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_require kcat jq curl python3
e2e_init "$1" faultline-scrape
SRC=$2
MON=$SRC/deploy/monitoring

RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
NODE="gpu-scrape-$RUN"
# A free loopback port for each daemon (the tainter does not log the one it
# got when given port 0).
AGENT_PORT=$(e2e_free_port)
TAINTER_PORT=$(e2e_free_port)

e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
e2e_start_api --node "$NODE"

# The valve is strict (no node may be tainted), so the fault below is refused
# and faultline_tainter_taints_refused_total{rule} comes into being.
cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-scrape-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
valve: {max_fraction: 0, per_rule_max_fraction: 0, min_allowed: 0}
metrics_address: 127.0.0.1:$TAINTER_PORT
YAML
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"

e2e_file_agent "$NODE" "127.0.0.1:$AGENT_PORT"
e2e_start agent "$AGENT" --config "$T/agent.yaml"
e2e_wait_log 20 tainter '"msg":"partitions assigned"'
e2e_wait_log 20 agent '"msg":"started"'

# A hardware Xid (a taint the valve refuses) and a poison message.
echo "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus. scrape-$RUN" >>"$T/node.log"
echo "not a faultline event" | kcat -P -b "$BS" -t events -k "$NODE" 2>/dev/null

scrape() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics"; }
has_series() { scrape "$1" | grep -q "^$2[{ ]"; }
e2e_wait 30 has_series "$TAINTER_PORT" faultline_tainter_taints_refused_total ||
  e2e_fail "the tainter never refused the taint (no faultline_tainter_taints_refused_total)"
e2e_wait 30 has_series "$TAINTER_PORT" faultline_tainter_dead_lettered_total ||
  e2e_fail "the tainter never dead-lettered the poison message"
e2e_wait 10 has_series "$TAINTER_PORT" faultline_tainter_consumer_lag ||
  e2e_fail "the tainter exports no consumer lag"

# Every sample name either daemon serves.
{ scrape "$AGENT_PORT"; scrape "$TAINTER_PORT"; } | grep -v '^#' |
  sed -n 's/^\([a-zA-Z_:][a-zA-Z0-9_:]*\).*/\1/p' | sort -u >"$T/exported"
[[ -s "$T/exported" ]] || e2e_fail "nothing scraped"

# Every faultline_* name the dashboard's queries and the alert rules use.
jq -r '.panels[].targets[]?.expr' "$MON/grafana-dashboard.json" >"$T/queries"
grep -v '^ *#' "$MON/faultline-alerts.yaml" >>"$T/queries"
grep -o 'faultline_[a-z0-9_]*' "$T/queries" | sort -u >"$T/referenced"
[[ $(wc -l <"$T/referenced") -ge 10 ]] || e2e_fail "found only $(wc -l <"$T/referenced") metric names in the dashboard and alerts"

missing=()
while read -r name; do
  grep -qx -- "$name" "$T/exported" && continue
  grep -qx -- "${name}_count" "$T/exported" && continue  # a histogram by its base name
  missing+=("$name")
done <"$T/referenced"
if ((${#missing[@]})); then
  echo "exported by the running daemons:" >&2
  sed 's/^/  /' "$T/exported" >&2
  e2e_fail "referenced by the dashboard or alerts but not exported: ${missing[*]}"
fi
echo "ok: $(wc -l <"$T/referenced") metric names referenced by the dashboard and alerts, all exported"
