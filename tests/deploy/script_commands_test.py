#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The guard in script_commands.py, on scripts made here: it must name a
command whose package install-deps.sh does not install (issue 25: bench
scripts called `bc`, which a fresh Debian 12 root lacks, and CI's machine
had), pass once the package is listed, and not mistake quoted text,
here-documents, case labels or arithmetic for commands."""
import os
import subprocess
import sys
import tempfile

GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "script_commands.py")
REPO = os.path.join(os.path.dirname(GUARD), "..", "..")
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def guard(scripts, packages=None, listing=False):
    argv = [sys.executable, GUARD, "--repo", REPO, "--scripts"] + scripts
    if packages is not None:
        argv += ["--packages", packages]
    if listing:
        argv.append("--list")
    return subprocess.run(argv, capture_output=True, text=True)


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


listed = subprocess.run([os.path.join(REPO, "deploy", "install-deps.sh"), "--list", "--test"],
                        capture_output=True, text=True, check=True).stdout.split()

with tempfile.TemporaryDirectory(prefix="fl-script-commands-") as tmp:
    # 1. The line bench/agent_rate.sh had before the fix: bc is not provided,
    #    whether or not this machine has it installed.
    bc = write(os.path.join(tmp, "uses_bc.sh"), '#!/usr/bin/env bash\nhz=100\n'
               'cpu=$(echo "scale=2; (5 - 1) / $hz" | bc)\n')
    run = guard([bc])
    check(run.returncode == 1, f"a script calling bc fails the guard (exit {run.returncode})")
    check("bc: used by" in run.stdout and "uses_bc.sh:3" in run.stdout,
          "the failure names the command and the script line: " + run.stdout.strip())

    # 2. A package taken off the list: jq is in install-deps --test.
    jq = write(os.path.join(tmp, "uses_jq.sh"), "#!/bin/bash\njq -r .rule events.json | sort\n")
    without = write(os.path.join(tmp, "without-jq"), "\n".join(p for p in listed if p != "jq"))
    run = guard([jq], without)
    check(run.returncode == 1 and "jq: used by" in run.stdout,
          "jq fails once jq is taken off the package list: " + run.stdout.strip())
    run = guard([jq], write(os.path.join(tmp, "with-jq"), "\n".join(listed)))
    check(run.returncode == 0, "and passes with the list as install-deps.sh has it: "
          + run.stdout.strip())

    # 3. What is not a command.
    tricky = write(os.path.join(tmp, "tricky.sh"), r'''#!/usr/bin/env bash
set -euo pipefail
packages=(
  bc jq
)
echo "rate: (lines read: $lines; bc later)" | tee /dev/null
python3 - <<'PY'
import os
bc = frobnicate()
PY
case "$1" in
  quick|fast) n=3 ;;
  *) n=10 ;;
esac
if ((n > 2)); then for ((i = 0; i < n; i++)); do :; done; fi
[[ $x =~ ^(bc|dc)$ ]] && echo match
$SUDO apt-get install -y -qq "${missing[@]}"
timeout 5 nice -n 19 sort -u <(cut -d' ' -f1 "$f") >"$out" 2>&1
local_fn() { grep -c x "$1"; }
local_fn file
result=$(git ls-files '*.cc' | xargs clang-format --dry-run)
''')
    run = guard([tricky], listing=True)
    seen = {line.split("\t")[0] for line in run.stdout.splitlines() if "\t" in line}
    want = {"set", "tee", "python3", "apt-get", "timeout", "nice", "sort", "cut", "grep",
            "git", "xargs", "clang-format"} - {"set"}
    check(want <= seen, f"the reader finds {sorted(want - seen)} too (found {sorted(seen)})")
    wrong = seen & {"bc", "jq", "frobnicate", "quick", "fast", "n", "i", "dc", "lines",
                    "local_fn", "echo", "rate"}
    check(not wrong, f"quoted text, arrays, here-documents, case labels, arithmetic and "
          f"functions are not commands (wrongly found: {sorted(wrong)})")

    # 4. The repository's own scripts: every command is provided.
    run = subprocess.run([sys.executable, GUARD, "--repo", REPO], capture_output=True, text=True)
    check(run.returncode == 0, "the repository's scripts: " + run.stdout.strip())

print(f"{4 + 3 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
