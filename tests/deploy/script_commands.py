#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a script the tests, benches, CI or deploy run uses a command that
no package of deploy/install-deps.sh (with --test) or of a minimal Debian root
provides.

Why: CI runs on a machine that already has many tools, so a script that calls
`bc` passed there and failed on a newcomer's fresh Debian 12 (issue 25). This
reads every tracked shell script (and the first word of Python's
subprocess.run([...]) lists), finds the commands it runs, and asks dpkg which
package owns each one. A package counts as provided when it is in the
install-deps list, is part of minbase (Essential, or Priority required, or
apt), or is a dependency (Depends/Pre-Depends, first alternative) of one of
those, as installed on this machine. An executable of the same name in
tests/fakes/ (a stand-in the tests put first on PATH) counts as provided.

    script_commands.py [--repo DIR] [--scripts PATH...] [--packages FILE]
                       [--extra-package NAME...] [--list]

--scripts: check these files or folders instead of the repository's scripts;
--packages: a file with one package per line instead of
`deploy/install-deps.sh --list --test`; --list: print command -> package.
Exits 0 when every command is provided, 1 with one line per missing command
(the command, the package that has it here or "not installed here", and the
script lines that use it), 2 on a usage error.

It is a reader, not a shell: it understands quotes, command substitution,
pipelines, case labels, here-documents, redirections and the usual wrappers
(sudo, env, nice, timeout, xargs, ...). A command named only through a
variable or passed to one of our own shell functions is not seen.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# Bash builtins and keywords: not programs, nothing to install.
BUILTINS = set("""
. : [ [[ ]] { } ! alias bg bind break builtin caller case cd command compgen complete continue
declare dirs disown do done echo elif else enable esac exec exit export false fc fg fi for
function getopts hash help history if in jobs kill let local logout mapfile popd printf pushd pwd
read readarray readonly return select set shift shopt source suspend test then time times trap
true type typeset ulimit umask unalias unset until wait while coproc
""".split())

# Commands the scripts run only after checking that they exist (`command -v`,
# `shutil.which`), saying SKIPPED or NOTE otherwise. Each needs a reason.
OPTIONAL = {
    "kubectl": "render_test.py checks `shutil.which` first; Debian 12 has no kubectl package",
    "node": "render_test.py's admission case says SKIPPED without Node.js",
    "npm": "render_test.py's admission case says SKIPPED without npm",
    "perf": "tainter_bench.sh runs it only when FL_BENCH_PERF asks for a profile",
    "debootstrap": "tests/newcomer/fresh_root.sh (run by hand) installs it before use",
}

WRAPPERS_NO_ARGS = {"sudo", "nohup", "setsid", "exec", "stdbuf", "time", "builtin", "then",
                    "do", "else", "elif", "if", "while", "until", "!", "{", "coproc"}
# Options that take a separate argument, per wrapper.
WRAPPER_ARG_OPTIONS = {
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S"},
    "xargs": {"-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E", "--max-args", "--max-procs",
              "--delimiter", "--arg-file"},
    "ionice": {"-c", "-n", "-p"},
    "taskset": set(),
    "chrt": set(),
    "unshare": set(),
    "setpriv": set(),
}
WORD_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
HEREDOC_RE = re.compile(r"(?<![<])<<(?!<)-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
FUNCTION_RE = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_:-]*)\s*\(\)\s*[{(]?",
                         re.M)
FUNCTION_KEYWORD_RE = re.compile(r"^\s*function\s+([A-Za-z_][A-Za-z0-9_:-]*)", re.M)


def blank_heredocs(text):
    """Empties here-document bodies (embedded Python, YAML, configs), keeping
    the line count so line numbers stay right."""
    lines = text.split("\n")
    out = []
    pending = []  # (delimiter, strip tabs) of here-documents opened on this line
    for line in lines:
        if pending:
            delim, strip = pending[0]
            body_line = line.lstrip("\t") if strip else line
            out.append("")
            if body_line == delim:
                pending.pop(0)
            continue
        out.append(line)
        code = line.split(" #", 1)[0]
        for m in HEREDOC_RE.finditer(code):
            pending.append((m.group(2), "<<-" in code[m.start():m.start() + 3]))
    return "\n".join(out)


class Scanner:
    """A small reader of bash: yields (first word, line) of each simple command."""

    def __init__(self, text):
        self.s = text
        self.i = 0
        self.found = []

    def line(self, pos):
        return self.s.count("\n", 0, pos) + 1

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def skip_balanced(self, open_ch, close_ch):
        """Skips to the matching close (used for ${...}, $((...)) and ((...)))."""
        depth = 0
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == open_ch:
                depth += 1
            elif c == close_ch:
                depth -= 1
                if depth == 0:
                    self.i += 1
                    return
            self.i += 1

    def read_single_quoted(self):
        end = self.s.find("'", self.i + 1)
        end = len(self.s) if end < 0 else end
        word = self.s[self.i + 1:end]
        self.i = end + 1
        return word

    def read_double_quoted(self):
        """Returns the text of "..." and scans the command substitutions inside."""
        self.i += 1
        parts = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\":
                parts.append(self.s[self.i:self.i + 2])
                self.i += 2
            elif c == '"':
                self.i += 1
                break
            elif not self.expansion(parts, braces=False):
                parts.append(c)
                self.i += 1
        return "".join(parts)

    def expansion(self, parts, braces=True):
        """At `$(`, a backquote or (with `braces`) `${`: scans it and leaves
        `$` in `parts`. False (nothing read) anywhere else. Inside double
        quotes `${...}` is left as text: its own quotes (`${x:-"a"}`) would
        throw the brace count off."""
        c = self.s[self.i]
        if c == "$" and self.peek(1) == "(":
            parts.append("$")
            self.substitution()
        elif braces and c == "$" and self.peek(1) == "{":
            parts.append("$")
            self.i += 1
            self.skip_balanced("{", "}")
        elif c == "`":
            parts.append("$")
            self.backquote()
        else:
            return False
        return True

    def substitution(self):
        """At `$(`: a command substitution, or `$((` arithmetic."""
        if self.peek(2) == "(":
            self.i += 1
            self.skip_balanced("(", ")")
            return
        self.i += 2
        self.commands(")")

    def backquote(self):
        end = self.s.find("`", self.i + 1)
        end = len(self.s) if end < 0 else end
        inner = Scanner(self.s[self.i + 1:end])
        inner.commands(None)
        base = self.line(self.i) - 1
        self.found.extend((w, base + n) for w, n in inner.found)
        self.i = end + 1

    def read_word(self):
        """One shell word (with its quoting removed, expansions kept as `$`)."""
        parts = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t\n;&|()<>":
                break
            if c == "\\":
                parts.append(self.s[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                parts.append(self.read_single_quoted())
            elif c == '"':
                parts.append(self.read_double_quoted())
            elif not self.expansion(parts):
                parts.append(c)
                self.i += 1
        return "".join(parts)

    def commands(self, terminator):
        """Reads commands until `terminator` (`)` for a substitution) or the end."""
        words, start = [], self.i
        in_test = False  # inside [[ ... ]]: words, not commands
        case_state = None  # None, "word", "in", "pattern", "body"
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
                continue
            if c == "\\" and self.peek(1) == "\n":
                self.i += 2
                continue
            if c == "#" and (self.i == 0 or self.s[self.i - 1] in " \t\n;(|&"):
                nl = self.s.find("\n", self.i)
                self.i = len(self.s) if nl < 0 else nl
                continue
            if terminator and c == terminator and not in_test and case_state != "pattern":
                self.i += 1
                break
            if in_test:
                if self.s.startswith("]]", self.i):
                    in_test = False
                    self.i += 2
                elif c in "()|&<>;\n":
                    self.i += 1
                else:
                    self.read_word()
                continue
            if case_state == "pattern":
                # A case label: everything up to the `)` that closes it.
                if c in "\n(":
                    self.i += 1
                    continue
                if self.s.startswith("esac", self.i):
                    self.i += 4
                    case_state = None
                    continue
                while self.i < len(self.s) and self.s[self.i] != ")":
                    if self.s[self.i] in "'\"":
                        self.read_word()
                    else:
                        self.i += 1
                self.i += 1
                case_state = "body"
                continue
            if c in "\n;&|(){}":
                if case_state == "body" and self.s.startswith(";;", self.i):
                    self.emit(words, start)
                    words = []
                    self.i += 3 if self.peek(2) in "&" else 2
                    case_state = "pattern"
                    continue
                if c == "(" and self.peek(1) == "(":  # ((arithmetic)), for ((...))
                    self.skip_balanced("(", ")")
                    continue
                if c == "(" and words and ASSIGNMENT_RE.match(words[-1]) and \
                        words[-1].endswith("="):  # name=(array words), not commands
                    words.pop()
                    self.skip_balanced("(", ")")
                    continue
                self.emit(words, start)
                words = []
                self.i += 1
                start = self.i
                continue
            if c in "<>":
                # A redirection: drop it and its target word.
                if words and words[-1].isdigit():
                    words.pop()
                while self.peek() in "<>&":
                    self.i += 1
                while self.peek() in " \t":
                    self.i += 1
                if self.peek() == "(":  # process substitution <(...)
                    self.i += 1
                    self.commands(")")
                else:
                    self.read_word()
                continue
            if not words:
                start = self.i
            word = self.read_word()
            if not word:
                self.i += 1
                continue
            if case_state == "word":
                if word == "in":
                    case_state = "pattern"
                continue
            if not words and word == "[[":
                in_test = True
                continue
            if not words and word == "case":
                case_state = "word"
                continue
            if not words and word == "esac":
                case_state = None
                continue
            words.append(word)
        self.emit(words, start)

    def emit(self, words, start):
        line = self.line(start)
        for name, rest in commands_of(words):
            self.found.append((name, line))
            if rest is not None:  # eval STRING, bash -c STRING: scan the string too
                inner = Scanner(rest)
                inner.commands(None)
                self.found.extend((w, line) for w, _ in inner.found)


def commands_of(words):
    """The programs a simple command runs: its wrappers (timeout, xargs, ...)
    and the program past assignments and wrappers, each as (name, string to
    scan as well or None)."""
    found = []
    i = 0
    while i < len(words):
        w = words[i]
        if ASSIGNMENT_RE.match(w):
            i += 1
        elif w in WRAPPERS_NO_ARGS:
            if w in ("sudo", "nohup", "setsid", "stdbuf"):
                found.append((w, None))
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif w in WRAPPER_ARG_OPTIONS:
            found.append((w, None))
            takes = WRAPPER_ARG_OPTIONS[w]
            i += 1
            while i < len(words) and (words[i].startswith("-") or ASSIGNMENT_RE.match(words[i])):
                i += 2 if words[i] in takes else 1
            if w == "timeout" and i < len(words):
                i += 1  # the duration
            if w in ("taskset", "chrt", "ionice") and i < len(words) and words[i][:1].isdigit():
                i += 1
        elif w == "command":
            if i + 1 < len(words) and words[i + 1] in ("-v", "-V"):
                return found
            i += 1
        elif w == "eval":
            found.append(("eval", " ".join(words[i + 1:])))
            return [(n, r) for n, r in found if n != "eval" or r]
        elif w in ("$SUDO", "$") and i == 0 and len(words) > 1 and words[1] in ("apt-get", "apt"):
            i += 1  # `$SUDO apt-get ...`, the installer's sudo idiom
        else:
            if w in BUILTINS or "$" in w or "/" in w or not WORD_RE.match(w):
                return found
            if w[0].isdigit() or w.startswith("-"):
                return found
            rest = None
            if w in ("bash", "sh") and "-c" in words[i + 1:]:
                k = words.index("-c", i + 1)
                rest = words[k + 1] if k + 1 < len(words) else None
            found.append((w, rest))
            return found
    return found


def shell_commands(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    functions = set(FUNCTION_RE.findall(text)) | set(FUNCTION_KEYWORD_RE.findall(text))
    scanner = Scanner(blank_heredocs(text))
    scanner.commands(None)
    found = list(scanner.found)
    # Here-documents are often Python run by the script: its subprocess lists.
    for m in SUBPROCESS_RE.finditer(text):
        found.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    return found, functions


SUBPROCESS_RE = re.compile(
    r"subprocess\.(?:run|Popen|check_output|check_call|call)\(\s*\[\s*\"([A-Za-z0-9_.+-]+)\"")


def python_commands(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return [(m.group(1), text.count("\n", 0, m.start()) + 1) for m in SUBPROCESS_RE.finditer(text)]


def is_shell(path):
    if path.endswith(".sh"):
        return True
    try:
        with open(path, "rb") as f:
            head = f.readline()
    except OSError:
        return False
    return head.startswith(b"#!") and re.search(rb"\b(ba)?sh\b", head) is not None


def repo_scripts(repo):
    """Tracked .sh and .py files, .ci/run, and executables with a shell #! line
    (tests/fakes/nvidia-smi)."""
    out = subprocess.run(["git", "-C", repo, "ls-files", "-s"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    files = []
    for row in out:
        mode, _, rest = row.partition(" ")
        p = rest.partition("\t")[2]
        full = os.path.join(repo, p)
        if not p or not os.path.isfile(full):
            continue
        if p.endswith((".sh", ".py")) or p == ".ci/run" or (mode == "100755" and is_shell(full)):
            files.append(full)
    return files


def dpkg_database():
    """Installed packages: name -> (depends (first alternatives), is minbase),
    and virtual name -> providers."""
    fmt = "${Package}\t${Priority}\t${Essential}\t${Depends}, ${Pre-Depends}\t${Provides}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fmt], capture_output=True, text=True,
                         check=True).stdout
    packages, providers = {}, {}
    for line in out.splitlines():
        name, priority, essential, depends, provides = (line.split("\t") + [""] * 5)[:5]
        first = []
        for dep in depends.split(","):
            alt = dep.split("|")[0].strip().split(" ")[0].split(":")[0]
            if alt:
                first.append(alt)
        packages[name] = (first, essential == "yes" or priority == "required" or name == "apt")
        for p in provides.split(","):
            p = p.strip().split(" ")[0]
            if p:
                providers.setdefault(p, []).append(name)
    return packages, providers


def provided_packages(listed, packages, providers):
    todo = list(listed) + [p for p, (_, base) in packages.items() if base]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in packages:
            todo.extend(packages[p][0])
        else:
            todo.extend(providers.get(p, [])[:1])
    return seen


SYSTEM_DIRS = ("/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/")


def owners(commands):
    """command -> the Debian package that installs it on this machine (absent
    when none does: not installed, or installed by hand as under
    /usr/local). One dpkg call for all: it takes a second to start."""
    candidates = {}  # path -> command
    for command in commands:
        found = [d + command for d in SYSTEM_DIRS if os.path.exists(d + command)]
        which = shutil.which(command)
        if which:
            found.append(which)
        for path in found:
            # merged /usr: dpkg may know /usr/bin/x as /bin/x; alternatives
            # (awk -> mawk) are known by their real path.
            real = os.path.realpath(path)
            for p in {path, real, real.replace("/usr/bin/", "/bin/"),
                      real.replace("/usr/sbin/", "/sbin/")}:
                candidates[p] = command
    out = subprocess.run(["dpkg", "-S"] + sorted(candidates), capture_output=True,
                         text=True).stdout
    result = {}
    for line in out.splitlines():
        pkgs, _, path = line.partition(": ")
        command = candidates.get(path.strip())
        if command and command not in result and not pkgs.startswith("diversion"):
            result[command] = pkgs.split(",")[0].split(":")[0].strip()
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--scripts", nargs="+")
    ap.add_argument("--packages")
    ap.add_argument("--extra-package", nargs="*", default=[])
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    repo = os.path.realpath(args.repo)

    if args.scripts:
        files = []
        for s in args.scripts:
            if os.path.isdir(s):
                files += [os.path.join(d, f) for d, _, fs in os.walk(s) for f in sorted(fs)]
            else:
                files.append(s)
    else:
        files = repo_scripts(repo)

    if args.packages:
        with open(args.packages, encoding="utf-8") as f:
            listed = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    else:
        listed = subprocess.run([os.path.join(repo, "deploy", "install-deps.sh"), "--list",
                                 "--test"], capture_output=True, text=True,
                                check=True).stdout.split()
    listed += args.extra_package

    uses = {}  # command -> [file:line]
    functions = set()
    for path in files:
        rel = os.path.relpath(path, repo)
        rel = path if rel.startswith("..") else rel
        if path.endswith(".py"):
            found = python_commands(path)
        elif is_shell(path):
            found, defined = shell_commands(path)
            functions |= defined
        else:
            continue
        for name, line in found:
            uses.setdefault(name, []).append(f"{rel}:{line}")
    for f in functions:
        uses.pop(f, None)
    # Stand-ins the tests put first on PATH (tests/fakes/nvidia-smi for the
    # node-problem-detector plugin under test): provided by the tree itself.
    fakes = os.path.join(repo, "tests", "fakes")
    for name in list(uses):
        if os.access(os.path.join(fakes, name), os.X_OK):
            uses.pop(name)

    packages, providers = dpkg_database()
    provided = provided_packages(listed, packages, providers)
    missing = 0
    owned = owners(uses)
    for command in sorted(uses):
        pkg = owned.get(command)
        ok = pkg in provided or command in OPTIONAL
        if args.list:
            print(f"{command}\t{pkg or '-'}\t{'ok' if ok else 'MISSING'}")
        if ok:
            continue
        missing += 1
        where = ", ".join(uses[command][:3]) + (" ..." if len(uses[command]) > 3 else "")
        had = f"package {pkg} is not" if pkg else "no package here provides it, and none is"
        print(f"{command}: used by {where}; {had} in deploy/install-deps.sh --test "
              "or a minimal Debian root")
    print(f"script_commands: {len(uses)} commands in {len(files)} files; {missing} not provided")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
