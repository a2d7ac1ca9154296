#!/usr/bin/env bash
# The README's two set-up commands share build/: deploy/quickstart.sh (demo
# build, no tests) and tests/run.sh (everything). A newcomer runs the first,
# then the second; CI runs only the second. This runs their configure steps
# in every order, in a scratch build directory, and checks that each command
# gets what it needs whatever the other left behind:
#   - run.sh after quickstart finds tests (quickstart turns them off);
#   - quickstart after a sanitizer run.sh builds without the sanitizer;
#   - a build directory configured from another checkout is taken over.
# Fails without deploy/configure-build.sh: tests/run.sh reused quickstart's
# BUILD_TESTING=OFF and ctest said "No tests were found".
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
unset FL_SANITIZE
failures=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
tests_found() {
  local n
  n=$(ctest --test-dir "$build" -N 2>/dev/null | sed -n 's/^Total Tests: //p')
  [[ "${n:-0}" -gt 0 ]]
}
quickstart() { FL_BUILD_DIR="$build" "$repo/deploy/quickstart.sh" --configure-only >/dev/null; }
run_tests() { BUILD_DIR="$build" "$repo/tests/run.sh" --configure-only >/dev/null; }

quickstart
check "quickstart configures without tests" test "$(cached BUILD_TESTING)" = OFF
run_tests
check "tests/run.sh after quickstart finds tests" tests_found
check "tests/run.sh keeps the build type quickstart used (no full rebuild)" \
  test "$(cached CMAKE_BUILD_TYPE)" = RelWithDebInfo
run_tests
check "tests/run.sh again still finds tests" tests_found
quickstart
check "quickstart after tests/run.sh turns tests off again" test "$(cached BUILD_TESTING)" = OFF
run_tests
check "tests/run.sh after quickstart, twice over" tests_found

FL_SANITIZE=address,undefined BUILD_DIR="$build" "$repo/tests/run.sh" --configure-only >/dev/null
check "a sanitizer run records its sanitizer" test "$(cached FL_SANITIZE)" = address,undefined
quickstart
check "quickstart after a sanitizer run builds without it" test -z "$(cached FL_SANITIZE)"
run_tests
check "tests/run.sh without FL_SANITIZE drops it too" test -z "$(cached FL_SANITIZE)"

# A build/ left by a clone that lived elsewhere.
sed -i 's|^CMAKE_HOME_DIRECTORY:INTERNAL=.*|CMAKE_HOME_DIRECTORY:INTERNAL=/nonexistent/old-checkout|' \
  "$build/CMakeCache.txt"
check "tests/run.sh takes over a build directory from another checkout" run_tests
check "... and finds tests there" tests_found

echo "newcomer path: $failures failure(s)"
[[ $failures -eq 0 ]]
