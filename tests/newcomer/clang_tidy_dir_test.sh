#!/usr/bin/env bash
# tests/run-clang-tidy.sh configures its directory with clang. Pointed at a
# directory that GCC configured (TIDY_BUILD_DIR=build), CMake would delete
# that cache and reconfigure it with clang, and the next tests/run.sh would
# rebuild everything: the script must refuse, exit 2, and leave the cache
# as it was. Fails without the check at the top of run-clang-tidy.sh (the
# script goes on to configure the directory).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%s\n' '# a GCC build directory, as tests/run.sh leaves one' \
  'CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++' 'CMAKE_C_COMPILER:FILEPATH=/usr/bin/cc' \
  >"$dir/CMakeCache.txt"
cp "$dir/CMakeCache.txt" "$dir/before"
rc=0
# A file pattern that names no file: should the check fail, the script
# configures the directory and tidies nothing, instead of the whole tree.
TIDY_BUILD_DIR=$dir "$repo/tests/run-clang-tidy.sh" "^/no-such-file\$" >"$dir/out" 2>&1 || rc=$?
cat "$dir/out"
[[ $rc -eq 2 ]] || { echo "FAIL: exit $rc, expected 2"; exit 1; }
grep -q "configured with /usr/bin/c++, not clang++" "$dir/out" || { echo "FAIL: no reason given"; exit 1; }
cmp -s "$dir/before" "$dir/CMakeCache.txt" || { echo "FAIL: the cache was changed"; exit 1; }
echo "ok: run-clang-tidy.sh refuses a GCC build directory and leaves it alone"
