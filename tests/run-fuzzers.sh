#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time on its seed corpus. Any crash, leak or sanitizer report fails.
#   tests/run-fuzzers.sh [SECONDS_PER_FUZZER]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}

deploy/install-deps.sh --test
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFL_BUILD_FUZZERS=ON -DFL_BUILD_BENCH=OFF -DBUILD_TESTING=ON >/dev/null
fuzzers=$(sed -n 's/^faultline_add_fuzzer(\([a-z_]*\).*/\1/p' tests/fuzz/CMakeLists.txt)
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" --target $fuzzers

# UBSan only prints by default and the run goes on; make its reports fail
# the run like ASan's (that is how the time overflow in fault_event_fuzz
# would have been missed).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

status=0
for f in $fuzzers; do
  # A scratch copy of the seed corpus: new inputs stay out of the repository.
  corpus=$(mktemp -d)
  if [[ -d tests/fuzz/corpus/$f ]]; then cp -r "tests/fuzz/corpus/$f/." "$corpus/"; fi
  # -entropic=0: the entropic scheduler spends most of a short run on its own
  # bookkeeping for small parsers (seen on ibcounters_fuzz).
  if "$build_dir/tests/fuzz/$f" -max_total_time="$seconds" -max_len=4096 -entropic=0 \
      -print_final_stats=1 "$corpus" >"$corpus.log" 2>&1; then
    echo "fuzz $f: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$corpus.log" | grep -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "fuzz $f: FAILED"; tail -40 "$corpus.log"; status=1
  fi
  rm -rf "$corpus" "$corpus.log"
done
exit $status
