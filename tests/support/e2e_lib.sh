# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shell helpers for multi-process tests and benchmarks that run faultline's
# real processes: fl-mockcluster (Kafka), fl-fake-apiserver (Kubernetes),
# faultline-agent, faultline-tainter. Source it from bash (set -euo pipefail):
#
#   source "$SRC/tests/support/e2e_lib.sh"
#   e2e_init "$BUILD" faultline-e2e       # temp dir $T, cleanup trap, binaries
#   e2e_require kcat jq curl              # or: SKIPPED + exit 0
#   e2e_start_mock -t events:6:1          # -> $BS (bootstrap servers)
#   e2e_start_api --node gpu-1            # -> $API_URL, $T/kubeconfig, $T/ca.pem
#   e2e_start agent "$AGENT" --config "$T/agent.yaml"   # log in $T/agent.log
#   e2e_wait_log 10 agent '"msg":"started"'      # or e2e_fail with the logs
#
# Every process started here is killed by the EXIT trap; every wait is bounded.

# e2e_init BUILD_DIR NAME: the temp dir $T, the binaries, the cleanup trap.
e2e_init() {
  E2E_BUILD=$1
  T=$(mktemp -d "${TMPDIR:-/tmp}/$2-XXXXXX")
  E2E_PIDS=()
  E2E_NAMES=()
  # shellcheck disable=SC2034  # used by the scripts that source this file
  AGENT=${FL_AGENT:-$E2E_BUILD/collector/faultline-agent}
  # shellcheck disable=SC2034
  TAINTER=${FL_TAINTER:-$E2E_BUILD/tainter/faultline-tainter}
  MOCK=${FL_MOCKCLUSTER:-$E2E_BUILD/tests/support/fl-mockcluster}
  FAKE_API=${FL_FAKE_APISERVER:-$E2E_BUILD/tests/support/fl-fake-apiserver}
  trap e2e_cleanup EXIT
}

e2e_cleanup() {
  local pid
  for pid in "${E2E_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Give each a moment to exit cleanly, then make sure.
  for pid in "${E2E_PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  exec 3>&- 2>/dev/null || true
  wait 2>/dev/null || true
  [[ -n "${E2E_KEEP:-}" ]] && { echo "kept $T" >&2; return; }
  rm -rf "$T"
}

# e2e_require TOOL...: prints "SKIPPED: TOOL is not installed" and exits 0 if one is missing.
e2e_require() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 0; }
  done
}

# e2e_fail MESSAGE: prints it with the tail of every process log and exits 1.
e2e_fail() {
  echo "FAIL: $*" >&2
  local name
  for name in "${E2E_NAMES[@]}"; do
    echo "--- $name log (tail) ---" >&2
    tail -n 25 "$T/$name.log" >&2 2>/dev/null || true
  done
  exit 1
}

# e2e_wait SECONDS CMD...: runs CMD every 100 ms until it succeeds; 1 after SECONDS.
e2e_wait() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.1
  done
}

# e2e_start NAME CMD...: runs CMD in the background, stdout+stderr to $T/NAME.log;
# its pid is in E2E_PID_<NAME> and killed at exit.
e2e_start() {
  local name=$1
  shift
  "$@" >>"$T/$name.log" 2>&1 &
  E2E_PIDS+=($!)
  E2E_NAMES+=("$name")
  printf -v "E2E_PID_${name//-/_}" '%s' "$!"
}

# e2e_stop NAME: SIGTERM and wait (bounded); returns the exit code.
e2e_stop() {
  local var="E2E_PID_${1//-/_}"
  local pid=${!var}
  kill -TERM "$pid" 2>/dev/null || true
  local rc=0
  e2e_wait 15 e2e_not_running "$pid" || kill -9 "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  return $rc
}

e2e_not_running() { ! kill -0 "$1" 2>/dev/null; }

# e2e_log_has NAME FIXED_STRING: the process log contains the string.
e2e_log_has() { grep -qF -- "$2" "$T/$1.log" 2>/dev/null; }

# e2e_wait_log SECONDS NAME FIXED_STRING: waits for the string in the process
# log; fails at once (e2e_fail) if the process exits first, or after SECONDS.
e2e_wait_log() {
  local var="E2E_PID_${2//-/_}"
  local end=$((SECONDS + $1))
  until e2e_log_has "$2" "$3"; do
    kill -0 "${!var}" 2>/dev/null || e2e_fail "$2 exited before logging $3"
    ((SECONDS < end)) || e2e_fail "$2 did not log $3 within $1 s"
    sleep 0.1
  done
}

# e2e_start_mock ARGS...: fl-mockcluster with these args (-b N, -t topic:parts:rf);
# sets BS. `e2e_mock CMD` sends a control command (down -1, up -1, ...).
e2e_start_mock() {
  mkfifo "$T/mock.ctl"
  # Opened read-write first (that never blocks on a FIFO) and held, so that the
  # mock's open for reading does not wait for a writer.
  exec 3<>"$T/mock.ctl"
  # The FIFO must be the background command's own redirection: bash gives a
  # background command without one /dev/null as stdin, so a redirection of
  # the e2e_start call would not reach it (and e2e_mock would go nowhere).
  "$MOCK" "$@" -f "$T/bootstrap" <"$T/mock.ctl" >>"$T/mock.log" 2>&1 &
  E2E_PIDS+=($!)
  E2E_NAMES+=(mock)
  # shellcheck disable=SC2034  # for scripts that stop or signal the mock
  E2E_PID_mock=$!
  e2e_wait 10 test -s "$T/bootstrap" || e2e_fail "mock cluster did not start"
  BS=$(cat "$T/bootstrap")
}
e2e_mock() { echo "$*" >&3; }

# e2e_start_api ARGS...: fl-fake-apiserver (--node NAME[:labels], --taint ...);
# sets API_URL and writes $T/kubeconfig and $T/ca.pem.
e2e_start_api() {
  e2e_start api "$FAKE_API" --kubeconfig "$T/kubeconfig" --ca-file "$T/ca.pem" \
    --url-file "$T/api.url" "$@"
  e2e_wait 10 test -s "$T/api.url" || e2e_fail "fake API server did not start"
  API_URL=$(cat "$T/api.url")
}

# e2e_api_get PATH: a debug endpoint of the API double (/debug/nodes, /debug/events,
# /debug/requests) as JSON on stdout.
e2e_api_get() { curl -sf --max-time 5 --cacert "$T/ca.pem" "$API_URL$1"; }

# e2e_node NAME: the Node JSON from the API double.
e2e_node() { e2e_api_get /debug/nodes | jq -c --arg n "$1" '.items[] | select(.metadata.name == $n)'; }

# e2e_kmsg_check: 0 if /dev/kmsg can be read and written; else E2E_KMSG_WHY says why.
# FL_E2E_KMSG_UNAVAILABLE=REASON pretends it is not (to exercise the SKIPPED path).
e2e_kmsg_check() {
  E2E_KMSG_WHY=""
  if [[ -n "${FL_E2E_KMSG_UNAVAILABLE:-}" ]]; then
    E2E_KMSG_WHY="$FL_E2E_KMSG_UNAVAILABLE"
  elif [[ ! -e /dev/kmsg ]]; then
    E2E_KMSG_WHY="no /dev/kmsg"
  elif [[ ! -w /dev/kmsg ]]; then
    E2E_KMSG_WHY="/dev/kmsg not writable by uid $(id -u)"
  elif [[ ! -r /dev/kmsg ]]; then
    E2E_KMSG_WHY="/dev/kmsg not readable by uid $(id -u)"
  elif ! (printf '<7>faultline e2e probe\n' >/dev/kmsg) 2>/dev/null; then
    E2E_KMSG_WHY="a write to /dev/kmsg failed"
  fi
  [[ -z "$E2E_KMSG_WHY" ]]
}

# e2e_kmsg_write LINE: one record at warning level through a fresh fd (the
# kernel rate-limits each open file to 10 lines per 5 s), ending in \n so it
# is readable at once. At most 1024 bytes with the prefix.
e2e_kmsg_write() { printf '<4>%s\n' "$1" >/dev/kmsg; }

# e2e_free_port: a TCP port free on 127.0.0.1 now (the kernel's pick, let go
# for the caller's server to bind).
e2e_free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# e2e_cri_line STREAM TEXT: a containerd-style CRI log line stamped now.
e2e_cri_line() { printf '%s %s F %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "$1" "$2"; }

# e2e_topic TOPIC: every message as "key<TAB>headers<TAB>value" lines.
e2e_topic() { kcat -C -b "$BS" -t "$1" -o beginning -e -q -f '%k\t%h\t%s\n' 2>/dev/null; }

# e2e_file_agent NODE METRICS_ADDRESS: writes $T/agent.yaml for an agent that
# follows $T/node.log as kernel lines with the built-in packs and publishes to
# the events topic on $BS; creates $T/node.log and $T/state.
e2e_file_agent() {
  : >"$T/node.log"
  mkdir -p "$T/state"
  cat >"$T/agent.yaml" <<YAML
node_name: $1
state_dir: $T/state
metrics_address: "$2"
rules: {builtin: true, paths: []}
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  ibcounters: {enabled: false}
  file: [{path: $T/node.log, follow: true, origin: kernel}]
kafka: {brokers: "$BS", topic: events}
YAML
}
