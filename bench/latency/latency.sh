#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Detection latency, from the write of a fake Xid 79 to /dev/kmsg to faultline's
# taint landing on the Node (the API double's 200 to the PATCH), for both set-ups:
#   kafka:      faultline-agent -> fl-mockcluster -> faultline-tainter -> fl-fake-apiserver
#   standalone: faultline-agent --standalone -> fl-fake-apiserver
# Built-in rule packs plus a bench pack that gives Xid 79 `expire: 2s`, so the
# Tainter lifts each taint by itself and every injection is a new taint decision
# (measure.py has the method). Prints p50/p90/p99/max in ms per path.
#
# usage: bench/latency/latency.sh BUILD_DIR [INJECTIONS=50] [PATHS="kafka standalone"]
#   FL_BENCH_TAINTER_PROPERTIES='{fetch.wait.max.ms: "10"}'  librdkafka properties for the tainter
#   FL_BENCH_KUBE='qps: 100, burst: 100'   extra kubernetes keys for the tainter and the standalone agent
#   FL_BENCH_GAP=2   seconds of quiet after each lift before the next injection (measure.py
#                    --gap; 0: back-to-back taint+lift cycles, a storm that saturates the
#                    tainter's client-side limiter at the shipped qps 5 / burst 10)
# Needs root (a writable /dev/kmsg), python3, jq, curl. Not part of ctest (minutes).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../tests/support/e2e_lib.sh"
source "$HERE/../bench_lib.sh"
bench_prepare "$1" faultline-agent faultline-tainter fl-mockcluster fl-fake-apiserver
e2e_require python3 jq curl
e2e_init "$1" faultline-latency
N=${2:-50}
PATHS=${3:-kafka standalone}
e2e_kmsg_check || { echo "SKIPPED: $E2E_KMSG_WHY"; exit 0; }

RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
NODE="gpu-bench-$RUN"
mkdir -p "$T/rules"
cat >"$T/rules/bench.yaml" <<'YAML'
pack: bench-latency
version: 1
rules:
  - id: nvidia.xid
    override: true
    classify:
      values:
        "79": {category: hardware, severity: critical, action: taint, expire: 2s,
               summary: 'Xid 79 on {pci}: GPU has fallen off the bus (bench: expires after 2 s)'}
YAML

e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"

agent_config() {  # $1: state dir; the rest is appended as is
  cat <<YAML
node_name: $NODE
state_dir: $1
metrics_address: 127.0.0.1:0
shutdown_grace: 5s
rules: {builtin: true, paths: [$T/rules]}
sources:
  kmsg: {enabled: true, start: end}
  journal: {enabled: false}
  podlog: {enabled: false}
YAML
}

measure() {  # $1: label
  python3 "$HERE/measure.py" --api "$API_URL" --ca "$T/ca.pem" --node "$NODE" \
    --count "$N" --out "$T/$1.us" --label "$1" --gap "${FL_BENCH_GAP:-2}"
}

for path in $PATHS; do
  case $path in
  kafka)
    e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
    cat >"$T/tainter.yaml" <<YAML
kafka: {brokers: "$BS", topic: events, group: bench-$RUN, dead_letter_topic: events.dead-letter,
        properties: ${FL_BENCH_TAINTER_PROPERTIES:-{\}}}
kubernetes: {kubeconfig: $T/kubeconfig${FL_BENCH_KUBE:+, $FL_BENCH_KUBE}}
rules: {builtin: true, paths: [$T/rules]}  # the agent's packs: events are checked against them
valve: {max_new_taints: 0}
metrics_address: 127.0.0.1:0
YAML
    e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
    e2e_wait_log 30 tainter '"msg":"partitions assigned"'
    {
      agent_config "$T/state-kafka"
      printf 'kafka: {brokers: "%s", topic: events}\n' "$BS"
    } >"$T/agent-kafka.yaml"
    e2e_start agent-kafka "$AGENT" --config "$T/agent-kafka.yaml"
    e2e_wait_log 10 agent-kafka '"msg":"started"'
    measure kafka
    # For the breakdown: the agent's detected_time and Kafka's message time per event.
    kcat -C -b "$BS" -t events -o beginning -e -q -f '%T\t%s\n' >"$T/kafka.topic" 2>/dev/null || true
    e2e_stop agent-kafka || true
    e2e_stop tainter || true
    ;;
  standalone)
    {
      agent_config "$T/state-standalone"
      printf 'kubernetes: {kubeconfig: %s%s}\n' "$T/kubeconfig" "${FL_BENCH_KUBE:+, $FL_BENCH_KUBE}"
      printf 'standalone: {valve: {max_new_taints: 0}}\n'
    } >"$T/agent-standalone.yaml"
    e2e_start agent-standalone "$AGENT" --standalone --config "$T/agent-standalone.yaml"
    e2e_wait_log 10 agent-standalone '"msg":"started"'
    measure standalone
    e2e_stop agent-standalone || true
    ;;
  *) e2e_fail "unknown path $path" ;;
  esac
done

# shellcheck disable=SC2086  # one argument per path
python3 - "$T" $PATHS <<'PY'
import datetime, json, math, os, sys
t, paths = sys.argv[1], sys.argv[2:]
def pct(xs, p):  # nearest rank
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]
def row(name, xs):
    xs = sorted(xs)
    print(f"{name:<30}{len(xs):>4}{pct(xs,50):>9.1f}{pct(xs,90):>9.1f}{pct(xs,99):>9.1f}{xs[-1]:>9.1f}{xs[0]:>9.1f}")
print(f"{'write -> taint on the Node':<30}{'n':>4}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}{'min ms':>9}")
samples = {}
for p in paths:
    samples[p] = [l.split() for l in open(f"{t}/{p}.us") if l.strip()]
    row(p, [int(s[0]) / 1000 for s in samples[p]])
if "kafka" in paths and os.path.exists(f"{t}/kafka.topic"):
    # Where the Kafka path's time goes: write -> agent matched (detected_time),
    # write -> message produced (Kafka timestamp, ms resolution).
    t0 = {s[2]: int(s[1]) for s in samples["kafka"]}
    detect, produce = [], []
    for line in open(f"{t}/kafka.topic"):
        ts, _, value = line.partition("\t")
        try:
            e = json.loads(value)
        except ValueError:
            continue
        m = e.get("fields", {}).get("process")
        if m not in t0:
            continue
        d = datetime.datetime.fromisoformat(e["detected_time"].replace("Z", "+00:00"))
        detect.append((d.timestamp() * 1e6 - t0[m]) / 1000)
        produce.append(int(ts) - t0[m] / 1000)
    if detect:
        print("kafka path breakdown:")
        row("  write -> agent detected", detect)
        row("  write -> Kafka message time", produce)
PY
