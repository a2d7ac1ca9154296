#!/usr/bin/env bash
# Runs clang-tidy, with the root .clang-tidy, over every .cc file of the
# repository: production code, tests/ (fuzzers included) and bench/. The
# generated builtin_rule_packs.cc (in the build directory) is not ours to tidy.
# Any finding fails the run; the findings are listed, then counted per check.
#   tests/run-clang-tidy.sh            (TIDY_BUILD_DIR, default build-tidy; TIDY_JOBS, default nproc)
#   tests/run-clang-tidy.sh REGEX...   only the files whose path matches (while fixing)
# Costs ~10 CPU-seconds per file, ~30 CPU-minutes for the 170 files: ~15 min
# on the idle 2-core machine (tests/README.md, "clang-tidy"). Two runs at once
# need two TIDY_BUILD_DIRs: each rewrites its directory's database and log.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)
build_dir=${TIDY_BUILD_DIR:-build-tidy}
jobs=${TIDY_JOBS:-$(nproc)}

# The directory is configured with clang below. CMake, given another
# compiler than a directory's cache names, deletes that cache and configures
# afresh: TIDY_BUILD_DIR=build would turn the GCC build of tests/run.sh into
# a clang one, and its next run would rebuild everything. Refuse instead.
if [[ -f "$build_dir/CMakeCache.txt" ]]; then
  compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
  if [[ -n "$compiler" && "$(basename "$compiler")" != clang++* ]]; then
    echo "run-clang-tidy: $build_dir is configured with $compiler, not clang++;" \
      "give clang-tidy a directory of its own (TIDY_BUILD_DIR, default build-tidy)" >&2
    exit 2
  fi
fi

deploy/install-deps.sh --test
# Configured with clang, so the compile commands hold no GCC-only flag that
# clang-tidy would reject; fuzzers on, so tests/fuzz is in the database too.
# tests/sanitizers/tsan_c11_threads.cc is compiled only in a TSan build (which
# excludes the fuzzers' ASan): a second configuration lends its command.
# Configuring is enough: no header is generated, nothing needs building.
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_BUILD_FUZZERS=ON -DFL_BUILD_BENCH=ON \
  -DBUILD_TESTING=ON -DFL_SANITIZE= >/dev/null
CC=clang CXX=clang++ cmake -S . -B "$build_dir/tsan" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_BUILD_FUZZERS=OFF -DFL_BUILD_BENCH=OFF \
  -DBUILD_TESTING=ON -DFL_SANITIZE=thread >/dev/null

# One database: the main configuration's commands, then the TSan one's for
# the files the main one lacks. Every tracked .cc must be in it, or it would
# go unchecked without anyone noticing.
mkdir -p "$build_dir/db"
missing=$(git ls-files '*.cc' | python3 -c '
import json, os, sys
main, tsan, out = sys.argv[1:]
def path(e): return os.path.realpath(os.path.join(e["directory"], e["file"]))
db = json.load(open(main))
known = {path(e) for e in db}
for e in json.load(open(tsan)):
    if path(e) not in known:
        db.append(e)
        known.add(path(e))
json.dump(db, open(out, "w"), indent=1)
for f in sys.stdin.read().split():
    if os.path.realpath(f) not in known:
        print(f)' "$build_dir/compile_commands.json" "$build_dir/tsan/compile_commands.json" \
  "$build_dir/db/compile_commands.json")
if [[ -n "$missing" ]]; then
  echo "run-clang-tidy: in no compile database (add them to a target):"
  echo "$missing"
  exit 1
fi

if (($# > 0)); then
  files=("$@")
else
  # The repository's own top-level folders: the build directories hold only
  # generated sources.
  folders=$(git ls-files '*.cc' | cut -d/ -f1 | sort -u | paste -sd'|')
  files=("^$repo/($folders)/.*\\.cc\$")
fi

log=$build_dir/clang-tidy.log  # the full output (run-clang-tidy 14 always colours it), kept
start=$SECONDS
status=0
# The static analyzer's node budget per function, 75,000 (its "shallow"
# budget) instead of 225,000: tainter/apply/node_applier.cc takes 17 CPU-s instead of
# 41 with the same findings; the budget only matters in a function whose
# paths exceed it, and there the analyzer stops exploring it sooner.
analyzer=(-extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang
  -extra-arg=max-nodes=75000)
run-clang-tidy -p "$build_dir/db" -j "$jobs" -quiet "${analyzer[@]}" "${files[@]}" >"$log" 2>&1 || status=$?
# A header's finding is reported once per file that includes it: count it once.
# Every "file:line:col: warning:" line counts, whether or not its check's name
# ends the line: the analyzer's names have capitals (DeadStores) and some of
# its messages run over several lines (optin.performance.Padding), and both
# went uncounted when only lines ending in a lower-case [check] were.
findings=$(sed $'s/\x1b\[[0-9;]*m//g' "$log" | grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): ' | sort -u || true)
echo "clang-tidy: $(grep -cE '^(/[^ ]*/)?clang-tidy(-14)? ' "$log" || true) files in $((SECONDS - start)) s"
if [[ -n "$findings" ]]; then
  echo "$findings" | sed "s|^$repo/||"
  echo "clang-tidy: $(echo "$findings" | wc -l) findings, per check:"
  echo "$findings" | sed -E 's/.*\[([A-Za-z0-9.,-]+)\]$/\1/; t; s/.*/(check named on a later line)/' |
    sort | uniq -c | sort -rn
  exit 1
fi
if ((status != 0)); then
  # No finding, yet clang-tidy failed: a file that does not compile, for one.
  grep -E 'error|Error' "$log" | head -40
  echo "clang-tidy: failed (exit $status) without a finding"
  exit 1
fi
echo "clang-tidy: no findings"
