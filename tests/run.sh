#!/usr/bin/env bash
# Installs what is missing, builds faultline and runs every test.
#   tests/run.sh                 release-like build in build/, all tests
#   BUILD_DIR=... tests/run.sh   another build directory
#   FL_SANITIZE=address,undefined tests/run.sh   the same under sanitizers
#   tests/run.sh --configure-only   install and configure, no build (the newcomer-path test)
# It shares build/ with deploy/quickstart.sh: deploy/configure-build.sh states
# what each of them needs, so they work in either order.
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/install-deps.sh --test

build_dir=${BUILD_DIR:-build}
jobs=$(nproc)
deploy/configure-build.sh "$build_dir" tests >/dev/null
if [[ "${1:-}" == "--configure-only" ]]; then exit 0; fi
cmake --build "$build_dir" -j "$jobs"
# --no-tests=error: a run that finds no tests fails instead of passing silently.
ctest --test-dir "$build_dir" --no-tests=error --output-on-failure -j "$jobs" --timeout 300
