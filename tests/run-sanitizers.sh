#!/usr/bin/env bash
# Builds and runs the tests under sanitizers; any report fails the run.
#   tests/run-sanitizers.sh [asan|tsan|all]   (default all)
#   asan: the whole test suite under ASan + UBSan + LSan, in build-asan/
#   tsan: the threaded parts (agent pipeline and Kafka sink, sources, tainter,
#         kube client, standalone sink, /metrics server) under TSan, in build-tsan/
# GCC, the same compiler as tests/run.sh. Reports go to files (log_path), so a
# finding in a child process whose exit status a test ignores (an agent run
# by a shell script, a tainter stopped with SIGTERM) still fails the stage.
# Suppressions, each justified: tests/sanitizers/*.supp.
# Build directories: ASAN_BUILD_DIR, TSAN_BUILD_DIR. A compiler launcher
# (ccache) is taken from CMAKE_CXX_COMPILER_LAUNCHER in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
stage=${1:-all}
case "$stage" in asan|tsan|all) ;; *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;; esac
jobs=$(nproc)
supp=$repo/tests/sanitizers

deploy/install-deps.sh --test

# The in-process test executables whose code runs threads (TSan stage).
tsan_tests=(agent_test agent_kafka_test kmsg_source_test file_source_test ibcounters_test
  collector_journal_test collector_podlog_test tainter_policy_test kube_client_test
  tainter_kafka_test tainter_kube_test kube_hostile_response_test standalone_unit_test
  http_endpoint_test)

# run_stage NAME FL_SANITIZE BUILD_DIR CTEST_ARGS... ; BUILD_TARGETS from the caller.
status=0
summary=()
run_stage() {
  local name=$1 flags=$2 build=$3; shift 3
  local reports; reports=$(mktemp -d "/tmp/fl-$name-reports.XXXXXX")
  local t0=$SECONDS result=ok
  # -O1 -g1: the usual optimisation for sanitizers, line tables for the
  # reports, and about half the compile time of -O2 -g on this 2-core machine.
  cmake -S . -B "$build" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
  FL_SANITIZE=$flags deploy/configure-build.sh "$build" tests >/dev/null
  # No benchmarks: no test runs them, and timing under a sanitizer means nothing.
  cmake -S . -B "$build" -DFL_BUILD_BENCH=OFF >/dev/null
  # shellcheck disable=SC2086
  if ! cmake --build "$build" -j "$jobs" ${BUILD_TARGETS:+--target $BUILD_TARGETS}; then
    summary+=("sanitizer $name: FAILED (build)"); status=1; return
  fi
  local t1=$SECONDS
  local log; log=$(mktemp "/tmp/fl-$name-ctest.XXXXXX")
  # halt_on_error for UBSan and exitcode for all: a report fails the test
  # that made it; the report files catch the rest.
  # MAX_HWM_MB: agent_safety_it.memory bounds the agent's peak RSS at 100 MiB
  # in tests/run.sh; ASan's shadow memory, redzones and quarantine take it to
  # about 315 MiB for the same 200 x 250 KiB lines, so here the bound is 1 GiB.
  if ! MAX_HWM_MB=1024 ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:log_path=$reports/asan" \
       LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
       UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan" \
       TSAN_OPTIONS="suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4:log_path=$reports/tsan" \
       ctest --test-dir "$build" --no-tests=error --output-on-failure -j "$jobs" --timeout 600 "$@" \
       >"$log" 2>&1; then
    result=FAILED
  fi
  local t2=$SECONDS
  # LSan cannot stop the world under ptrace: the agent that
  # tests/deploy/install_test.sh runs under `strace -f` (its syscall filter
  # test) ends with "LeakSanitizer has encountered a fatal error" and no
  # report. Such a file alone is not a finding.
  local f
  for f in "$reports"/*; do
    if [[ -f "$f" ]] && grep -q 'LeakSanitizer has encountered a fatal error' "$f" &&
       ! grep -q 'ERROR:\|WARNING:\|runtime error' "$f"; then rm -f "$f"; fi
  done
  local nreports; nreports=$(find "$reports" -type f | wc -l)
  local counts; counts=$(grep -o '[0-9]* tests failed out of [0-9]*' "$log" || true)
  if [[ "$result" != ok || "$nreports" -gt 0 ]]; then
    tail -60 "$log"
    for f in $(find "$reports" -type f | head -20); do echo "== $f"; head -80 "$f"; done
    result="FAILED ($nreports report files in $reports; ctest log $log)"
    status=1
  else
    rm -rf "$reports" "$log"
  fi
  summary+=("sanitizer $name: $result; build $((t1 - t0)) s, tests $((t2 - t1)) s${counts:+; $counts}")
}

if [[ "$stage" == asan || "$stage" == all ]]; then
  BUILD_TARGETS='' run_stage asan address,undefined "${ASAN_BUILD_DIR:-build-asan}"
fi
if [[ "$stage" == tsan || "$stage" == all ]]; then
  regex="^($(IFS='|'; echo "${tsan_tests[*]}"))\\."
  BUILD_TARGETS="${tsan_tests[*]}" run_stage tsan thread "${TSAN_BUILD_DIR:-build-tsan}" -R "$regex"
fi
printf '%s\n' "${summary[@]}"
exit $status
