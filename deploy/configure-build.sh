#!/usr/bin/env bash
# Configures a CMake build directory for one of the README's commands, stating
# every setting that command needs, so that the two commands can share build/
# in either order and repeatedly: nothing one of them leaves in the cache
# (tests off, a sanitizer, a fuzzer build, another checkout's paths) is
# silently inherited by the other.
#
#   deploy/configure-build.sh BUILD_DIR quickstart   faultline + faultline-agent only
#   deploy/configure-build.sh BUILD_DIR tests        everything the test suite builds
#
# Environment for `tests`: FL_SANITIZE (e.g. address,undefined or thread).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:?usage: configure-build.sh BUILD_DIR quickstart|tests}"
purpose="${2:?usage: configure-build.sh BUILD_DIR quickstart|tests}"

case "$purpose" in
  quickstart)  # no test or bench dependencies are installed for the quickstart
    settings=(-DBUILD_TESTING=OFF -DFL_BUILD_BENCH=OFF -DFL_SANITIZE=) ;;
  tests)
    settings=(-DBUILD_TESTING=ON -DFL_BUILD_BENCH=ON "-DFL_SANITIZE=${FL_SANITIZE:-}") ;;
  *) echo "configure-build.sh: unknown purpose '$purpose' (quickstart or tests)" >&2; exit 2 ;;
esac

# A build directory made from another checkout (a moved or re-cloned repo)
# makes CMake stop with "does not match the source ... used to generate
# cache". Its objects are useless here anyway: start that directory afresh.
cache="$build/CMakeCache.txt"
if [[ -f "$cache" ]]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  if [[ -n "$home" && "$(cd "$home" 2>/dev/null && pwd -P)" != "$(cd "$repo" && pwd -P)" ]]; then
    echo "configure-build.sh: $build was configured for $home; reconfiguring it for $repo"
    rm -rf "$cache" "$build/CMakeFiles"
  fi
fi

# The same build type for both commands, so switching between them never
# recompiles everything; the fuzzers have their own directory (run-fuzzers.sh).
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_BUILD_FUZZERS=OFF "${settings[@]}"
