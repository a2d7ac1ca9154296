# SPDX-License-Identifier: Apache-2.0
# Sourced by the bench scripts, so that each bench command works on a fresh
# machine right after a clone, in any order with the README's two commands.
#
# bench_prepare BUILD_DIR TARGET...: installs what the benchmarks run beside
# faultline (deploy/install-deps.sh --test: rg, grep, jq, curl, kcat, ...) and
# builds TARGET... in BUILD_DIR. A BUILD_DIR without the test tools
# (fl-mockcluster and fl-fake-apiserver are test targets; the quickstart
# configures build/ without them) is configured as the test suite configures
# it, by deploy/configure-build.sh.
#   FL_BENCH_NO_BUILD=1   only install; the binaries are there already (ctest's
#                         smoke runs of the bench commands set it)

bench_prepare() {
  local build=$1 root
  shift
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  "$root/deploy/install-deps.sh" --test >&2
  [[ -n "${FL_BENCH_NO_BUILD:-}" ]] && return 0
  if ! grep -qs '^BUILD_TESTING:BOOL=ON' "$build/CMakeCache.txt"; then
    "$root/deploy/configure-build.sh" "$build" tests >/dev/null
  fi
  cmake --build "$build" --target "$@" -j "$(nproc)" >&2
}
