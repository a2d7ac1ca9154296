#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` for nodes without Kubernetes, into a temporary DESTDIR with
# prefix /usr, as a package would (deploy/CMakeLists.txt). One CASE per run:
#
#   tree      the binaries, the packs, the example configs and the units are
#             where deploy/README.md says; the installed binaries run; the
#             installed packs are the built-in ones and pass `rules check`;
#             the examples pass the daemons' config parsers and point at the
#             installed packs; the installed agent, with the installed packs
#             only, turns an Xid 79 line into a (dry-run) taint.
#   units     `systemd-analyze verify` accepts both units (ExecStart pointed at
#             the DESTDIR binary in a copy); they carry the hardening the README
#             promises; `systemd-analyze security` rates them.
#   syscalls  the installed agent, traced with strace while it reads kmsg,
#             the journal, a file and IB counters, serves /metrics, reloads
#             and delivers to Kafka (fl-mockcluster), makes only system calls
#             the units' SystemCallFilter allows, and maps no W+X memory
#             (MemoryDenyWriteExecute=yes).
#
# Parts that this machine cannot run print "SKIPPED: reason" and pass.
# usage: install_test.sh CASE BUILD_DIR SOURCE_DIR AGENT_CONFIG_CHECK TAINTER_CONFIG_CHECK
set -euo pipefail

CASE=$1
BUILD=$2
SRC=$3
AGENT_CHECK=$4
TAINTER_CHECK=$5
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_init "$BUILD" faultline-install
D=$T/root
failures=0
check() {  # check MESSAGE CMD...: runs CMD; a failure is reported and counted.
  local message=$1
  shift
  if ! "$@"; then
    echo "FAIL: $message" >&2
    failures=$((failures + 1))
  fi
}

DESTDIR=$D cmake --install "$BUILD" --prefix /usr >"$T/install.log" 2>&1 ||
  { cat "$T/install.log" >&2; e2e_fail "cmake --install failed (are all targets built?)"; }

# A config derived from an installed example that runs here: the installed
# paths moved into DESTDIR, no metrics unless asked, and a file source (plus
# whatever sources SOURCES_YAML names) in place of the node's.
derived_config() {  # derived_config EXAMPLE OUT SOURCES_YAML METRICS_ADDRESS KAFKA_BROKERS
  python3 - "$D" "$@" "$T" <<'PY'
import sys, yaml
d, example, out, sources, metrics, brokers, tmp = sys.argv[1:8]
c = yaml.safe_load(open(example))
c["rules"]["paths"] = [d + p for p in c["rules"]["paths"]]
c["state_dir"] = tmp + "/state"
c["metrics_address"] = metrics
c["node_name"] = "gpu-installed"
c["sources"] = yaml.safe_load(sources)
c["sources"]["file"] = [{"path": tmp + "/node.log", "follow": True, "origin": "kernel"}]
if brokers:
    c["kafka"]["brokers"] = brokers
yaml.safe_dump(c, open(out, "w"))
PY
}

case_tree() {
  local bin
  for bin in faultline faultline-agent faultline-tainter kubectl-faultline; do
    check "/usr/bin/$bin is installed and executable" test -x "$D/usr/bin/$bin"
    # It runs (its shared libraries resolve) and prints its usage.
    check "/usr/bin/$bin --help runs from the install tree" \
      sh -c '"$1" --help 2>&1 | grep -q "usage"' _ "$D/usr/bin/$bin"
    # The build tree's RUNPATH must not follow the binary into the package.
    if command -v readelf >/dev/null; then
      check "/usr/bin/$bin carries no RUNPATH into the build tree" \
        sh -c '! readelf -d "$1" | grep -E "R(UN)?PATH" | grep -qF "$2"' _ "$D/usr/bin/$bin" "$BUILD"
    fi
  done

  # The packs: exactly the source's, and the same rules as the built-in ones,
  # because the example configs load them with `builtin: false`.
  local packs=$D/usr/share/faultline/rules
  check "every pack of rules/ is installed unchanged in /usr/share/faultline/rules" \
    sh -c 'for f in "$1"/*.yaml; do cmp -s "$f" "$2/$(basename "$f")" || exit 1; done
           [ "$(ls "$1"/*.yaml | wc -l)" = "$(ls "$2"/*.yaml | wc -l)" ]' _ "$SRC/rules" "$packs"
  check "the installed faultline passes rules check on the installed packs alone" \
    "$D/usr/bin/faultline" rules check --no-builtin "$packs"
  "$D/usr/bin/faultline" rules list --format json >"$T/builtin.json"
  "$D/usr/bin/faultline" rules list --no-builtin --format json "$packs" >"$T/installed.json"
  check "the installed packs hold the built-in rules" \
    bash -c 'cmp -s <(jq -S "[.[] | del(.defined_at)]" "$1") \
                  <(jq -S "[.[] | del(.defined_at)]" "$2")' \
    _ "$T/builtin.json" "$T/installed.json"
  check "the local pack directory /etc/faultline/rules exists" test -d "$D/etc/faultline/rules"
  check "the event schema is installed unchanged in /usr/share/faultline/schema" \
    cmp -s "$SRC/schema/faultline-event-v1.schema.json" \
    "$D/usr/share/faultline/schema/faultline-event-v1.schema.json"

  # The examples parse with the daemons' own parsers and name the installed paths.
  local ex=$D/usr/share/faultline/examples
  check "the agent example passes the agent's config parser" \
    "$AGENT_CHECK" agent "$ex/agent.yaml"
  check "the standalone example passes the agent's config parser in standalone mode" \
    "$AGENT_CHECK" standalone "$ex/agent-standalone.yaml"
  check "the tainter example passes the tainter's config parser" \
    "$TAINTER_CHECK" tainter "$ex/tainter.yaml"
  local example
  for example in agent.yaml agent-standalone.yaml; do
    check "$example loads the installed packs and /etc/faultline/rules, not the built-in copy" \
      python3 -c '
import sys, yaml
r = yaml.safe_load(open(sys.argv[1]))["rules"]
sys.exit(not (r["builtin"] is False and
              r["paths"] == ["/usr/share/faultline/rules", "/etc/faultline/rules"]))' \
      "$ex/$example"
    check "$example keeps its state in the unit's StateDirectory" \
      grep -qE '^state_dir: /var/lib/faultline( |$)' "$ex/$example"
  done

  # The installed agent, with nothing but the installed packs, detects a fault.
  derived_config "$ex/agent-standalone.yaml" "$T/standalone.yaml" \
    '{kmsg: {enabled: false}, journal: {enabled: false}, ibcounters: {enabled: false}}' "" ""
  mkdir -p "$T/state"
  echo 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python3, GPU has fallen off the bus.' >"$T/node.log"
  e2e_start standalone env KUBECONFIG="$T/none" "$D/usr/bin/faultline-agent" --standalone \
    --dry-run --config "$T/standalone.yaml"
  e2e_wait_log 20 standalone '+ taint      faultline.dev/faulty=true:NoSchedule'
  check "the installed agent's dry run names the installed nvidia.xid rule" \
    e2e_log_has standalone 'detected nvidia.xid'
}

case_units() {
  local units=$D/usr/lib/systemd/system unit
  for unit in faultline-agent.service faultline-agent-standalone.service; do
    check "$unit is installed" test -f "$units/$unit"
    local u=$units/$unit
    local want
    for want in 'DynamicUser=yes' 'SupplementaryGroups=systemd-journal' \
      'AmbientCapabilities=CAP_SYSLOG' 'CapabilityBoundingSet=CAP_SYSLOG' \
      'NoNewPrivileges=yes' 'StateDirectory=faultline' 'ProtectSystem=strict' \
      'ProtectHome=yes' 'PrivateTmp=yes' 'DeviceAllow=/dev/kmsg r' \
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK' \
      'SystemCallFilter=@system-service' 'Restart=on-failure' 'RestartPreventExitStatus=2'; do
      check "$unit has $want" grep -qxF "$want" "$u"
    done
    for want in 'PrivateDevices=yes' 'ProtectKernelLogs=yes' 'PrivateUsers=yes' 'User=root'; do
      check "$unit does not set $want (it would hide /dev/kmsg or void CAP_SYSLOG)" \
        sh -c '! grep -qxF "$1" "$2"' _ "$want" "$u"
    done
    local exec config
    exec=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$u")
    config=$(sed -n 's/^ExecStart=.* --config \([^ ]*\)$/\1/p' "$u")
    check "$unit starts /usr/bin/faultline-agent ($exec)" test "$exec" = /usr/bin/faultline-agent
    check "$unit reads its config from /etc/faultline, where an installed example fits ($config)" \
      test -f "$D/usr/share/faultline/examples/$(basename "$config")" -a "${config%/*}" = /etc/faultline
  done
  check "the standalone unit runs --standalone" \
    grep -q '^ExecStart=.* --standalone ' "$units/faultline-agent-standalone.service"
  check "the two units exclude each other" \
    grep -qx 'Conflicts=faultline-agent-standalone.service' "$units/faultline-agent.service"

  if ! command -v systemd-analyze >/dev/null; then
    echo "SKIPPED: systemd-analyze is not installed (Debian package systemd)"
    return
  fi
  # verify needs the ExecStart binary to exist: a copy pointing into DESTDIR.
  mkdir -p "$T/units"
  for unit in faultline-agent.service faultline-agent-standalone.service; do
    sed "s#^ExecStart=/usr/bin/#ExecStart=$D/usr/bin/#" "$units/$unit" >"$T/units/$unit"
  done
  if ! (cd "$T/units" && systemd-analyze verify ./faultline-agent.service \
    ./faultline-agent-standalone.service) >"$T/verify.log" 2>&1; then
    if grep -qiE 'failed to (initialize|set up|connect)|no such file or directory.*bus' "$T/verify.log"; then
      echo "SKIPPED: systemd-analyze verify cannot run here: $(head -1 "$T/verify.log")"
      return
    fi
    check "systemd-analyze verify accepts the units: $(cat "$T/verify.log")" false
  else
    # It returns 0 on unknown keys and bad values, with a warning: none allowed.
    check "systemd-analyze verify has no warning: $(cat "$T/verify.log")" test ! -s "$T/verify.log"
  fi
  local exposure
  exposure=$(cd "$T/units" && systemd-analyze security --offline=yes ./faultline-agent.service 2>/dev/null |
    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  if [[ -n "$exposure" ]]; then
    echo "systemd-analyze security: exposure $exposure (0 = fully confined, 10 = unconfined)"
    check "the agent unit's exposure ($exposure) stays below 3.0" \
      python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 3.0)' "$exposure"
  fi
}

# Every system call in a @group as systemd-analyze expands it, one per line.
syscall_group() {
  systemd-analyze syscall-filter "$1" | tail -n +2 | grep -v '^ *#' | sed 's/^ *//' |
    while read -r name; do
      [[ -z "$name" ]] && continue
      if [[ $name == @* ]]; then syscall_group "$name"; else echo "$name"; fi
    done
}

case_syscalls() {
  e2e_require strace systemd-analyze kcat curl jq
  if ! strace -f -qq -o /dev/null true 2>/dev/null; then
    echo "SKIPPED: strace cannot trace here (ptrace not permitted)"
    exit 0
  fi
  local sources='{kmsg: {enabled: true}, journal: {enabled: true}, ibcounters: {enabled: true}}'
  if [[ ! -r /dev/kmsg ]]; then
    echo "NOTE: /dev/kmsg is not readable by uid $(id -u); tracing without the kmsg source"
    sources='{kmsg: {enabled: false}, journal: {enabled: true}, ibcounters: {enabled: true}}'
  fi
  local ex=$D/usr/share/faultline/examples port
  port=$(e2e_free_port)
  e2e_start_mock -b 1 -t faultline.events:2:1
  derived_config "$ex/agent.yaml" "$T/agent.yaml" "$sources" "127.0.0.1:$port" "$BS"
  mkdir -p "$T/state"
  : >"$T/node.log"
  e2e_start agent strace -f -qq -o "$T/strace.out" "$D/usr/bin/faultline-agent" --config "$T/agent.yaml"
  e2e_wait_log 20 agent '"msg":"started"'
  curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >/dev/null || e2e_fail "no /metrics"
  echo "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python3, GPU has fallen off the bus. trace-$$" >>"$T/node.log"
  e2e_wait 20 sh -c 'kcat -C -b "$1" -t faultline.events -o beginning -e -q 2>/dev/null | grep -q "trace-$2"' _ "$BS" "$$" ||
    e2e_fail "the traced agent did not deliver the event"
  local agent_pid
  agent_pid=$(pgrep -P "$E2E_PID_agent" -x faultline-agent || true)
  [[ -n "$agent_pid" ]] || e2e_fail "cannot find the traced agent's pid"
  kill -HUP "$agent_pid"
  e2e_wait_log 10 agent '"msg":"rules reloaded"'
  # SIGTERM to the agent itself (strace would detach from it), then strace exits.
  kill -TERM "$agent_pid"
  e2e_wait 30 e2e_not_running "$E2E_PID_agent" || e2e_fail "the traced agent did not stop"

  sed -n 's/^[0-9]\+ \+\([a-z0-9_]\+\)(.*/\1/p' "$T/strace.out" | sort -u >"$T/used"
  syscall_group @system-service | sort -u >"$T/allowed"
  { syscall_group @privileged; syscall_group @resources; } | sort -u >"$T/denied"
  echo "the agent made $(wc -l <"$T/used") distinct system calls"
  check "system calls outside @system-service: $(comm -23 "$T/used" "$T/allowed" | tr '\n' ' ')" \
    test -z "$(comm -23 "$T/used" "$T/allowed")"
  check "system calls in @privileged or @resources: $(comm -12 "$T/used" "$T/denied" | tr '\n' ' ')" \
    test -z "$(comm -12 "$T/used" "$T/denied")"
  check "no writable and executable mapping (MemoryDenyWriteExecute=yes)" \
    sh -c '! grep -E "(mmap|mprotect|pkey_mprotect)\(.*PROT_WRITE\|PROT_EXEC|PROT_EXEC\|PROT_WRITE" "$1"' \
    _ "$T/strace.out"
}

case "$CASE" in
  tree) case_tree ;;
  units) case_units ;;
  syscalls) case_syscalls ;;
  *) echo "usage: install_test.sh tree|units|syscalls BUILD SRC AGENT_CHECK TAINTER_CHECK" >&2; exit 2 ;;
esac
((failures == 0)) || e2e_fail "$failures check(s) failed"
echo "$CASE: ok"
