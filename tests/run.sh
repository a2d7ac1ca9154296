#!/usr/bin/env bash
# Installs what is missing, builds faultline and runs every test.
#   tests/run.sh                 release-like build in build/, all tests
#   BUILD_DIR=... tests/run.sh   another build directory
#   FL_SANITIZE=address,undefined tests/run.sh   the same under sanitizers
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/install-deps.sh --test

build_dir=${BUILD_DIR:-build}
jobs=$(nproc)
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_SANITIZE="${FL_SANITIZE:-}" >/dev/null
cmake --build "$build_dir" -j "$jobs"
# --no-tests=error: a run that finds no tests fails instead of passing silently.
ctest --test-dir "$build_dir" --no-tests=error --output-on-failure -j "$jobs" --timeout 300
