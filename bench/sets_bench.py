#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""faultline scan beside rg and Vectorscan on every pattern set and corpus, checked against RE2.

    bench/sets_bench.py BUILD_DIR [--size-mb 64] [--fault-rate 0.001] [--runs 3]
                        [--sets builtin,npd,...] [--bases gen,real]

BUILD_DIR holds the built matcher/faultline, bench/fl-hs-count and bench/fl-re2-count.

Pattern sets (bench/sets/, frozen before round 3's tuning; bench/README.md):
  builtin     the built-in packs (rules/*.yaml, as compiled into faultline)
  npd         node-problem-detector's default kernel and systemd monitor patterns (npd.yaml)
  user-gpu    a GPU operator's rules as users write them (user-gpu.yaml)
  user-host   a platform team's host rules as users write them (user-host.yaml)
  user-loose  quick GPU-host rules, 5 of 29 without a prefilter literal (user-loose.yaml)
  user-fleet  a fleet SRE's storage, network and GPU alert rules, held out (user-fleet.yaml)
  subset-a    23 built-in rules drawn at random (subset-a.ids), the others disabled
  subset-b    46 built-in rules drawn at random (subset-b.ids)
Corpora (bench/set_corpus.py): "gen", the generator's noise (bench/gen_corpus.py) and
"real", real public node logs (bench/corpora/loghub), each with the set's own test lines
as fault lines at --fault-rate (the builtin set's gen corpus is gen_corpus.py's own, with
its fault templates).

For each set and corpus, pinned to one core (FL_BENCH_CPU, 0), interleaved --runs rounds:
  faultline scan [set's packs] --source any --all --format json CORPUS
  rg -j1 -c -f set.rg CORPUS              (faultline rules list --format ere; a rule
                                          without an ERE form in RE2 syntax, which rg reads)
  fl-hs-count block|stream set.ere CORPUS
The ground truth is fl-re2-count: plain RE2 on every line, raw (checks rg's line count and
Vectorscan's per-pattern counts) and as faultline's rules see it (checks faultline's
per-rule counts). Prints one "set" line per pair with CPU (user+sys) times, ratios and
checks, and the load average beside them. Exit status 1 if any check failed.
"""

import argparse
import collections
import hashlib
import json
import os
import random
import statistics
import shutil
import subprocess
import sys
import tempfile

from rg_syntax import for_rg

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SETS = ["builtin", "npd", "user-gpu", "user-host", "user-loose", "user-fleet", "subset-a",
        "subset-b"]
BASES = ["gen", "real"]


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def run(argv, out_path, cpu):
    """argv pinned to one core, stdout to out_path: (wall s, cpu s, exit status)."""
    import time
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        p = subprocess.Popen(["taskset", "-c", cpu] + argv, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), err


def builtin_packs():
    return sorted(os.path.join(ROOT, "rules", f) for f in os.listdir(os.path.join(ROOT, "rules"))
                  if f.endswith(".yaml"))


class PatternSet:
    """One set: the faultline arguments that load it, its patterns, its fault lines."""

    def __init__(self, name, faultline, work, run_dir):
        self.name = name
        # This run's own files (patterns, override pack, outputs): two runs at
        # once, of two builds, must not read each other's. The samples pack,
        # whose time stamp says when the shared corpora are stale, stays shared.
        self.dir = os.path.join(run_dir, name)
        self.shared = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.shared, exist_ok=True)
        sets = os.path.join(HERE, "sets")
        if name == "builtin":
            self.load, self.samples = [], builtin_packs()
        elif name.startswith("subset-"):
            keep = [l.strip() for l in open(os.path.join(sets, name + ".ids"))
                    if l.strip() and not l.startswith("#")]
            self.load, self.samples = [self.subset_pack(faultline, keep)], builtin_packs()
        else:
            path = os.path.join(sets, name + ".yaml")
            self.load, self.samples = ["--no-builtin", path], [path]
        rules = json.loads(self.faultline(faultline, ["list", "--format", "json"]))
        self.rules = [r for r in rules if not r["disabled"]]
        if name.startswith("subset-"):
            self.samples = [self.subset_samples(keep)]
        self.re2 = os.path.join(self.dir, "patterns.re2")
        with open(self.re2, "w") as f:
            for r in self.rules:
                f.write(r["pattern"] + "\n")
        self.ere = os.path.join(self.dir, "patterns.ere")
        p = subprocess.run([faultline, "rules", "list"] + self.paths() + ["--format", "ere"],
                           capture_output=True, text=True, check=True)
        open(self.ere, "w").write(p.stdout)
        skipped = {l.split("skipped ", 1)[1].split(":", 1)[0] for l in p.stderr.splitlines()
                   if "skipped " in l}
        self.ere_ids = [r["id"] for r in self.rules if r["id"] not in skipped]
        self.ere_skipped = sorted(skipped)
        assert len(self.ere_ids) == len(p.stdout.splitlines()), (name, len(self.ere_ids))
        # rg reads both syntaxes: a rule without an ERE form is given to it in RE2's,
        # which rg's own regex syntax reads the same (so rg checks every rule);
        # word boundaries in RE2's ASCII meaning (rg_syntax.py).
        ere_lines = iter(p.stdout.splitlines())
        self.rg = os.path.join(self.dir, "patterns.rg")
        with open(self.rg, "w") as f:
            for r in self.rules:
                f.write(for_rg(r["pattern"] if r["id"] in skipped else next(ere_lines)) + "\n")
        self.key = hashlib.sha256(open(self.re2, "rb").read()).hexdigest()[:12]

    def paths(self):
        return [a for a in self.load if a != "--no-builtin"] + (
            ["--no-builtin"] if "--no-builtin" in self.load else [])

    def scan_args(self):
        out = []
        for a in self.load:
            out += [a] if a == "--no-builtin" else ["--rules", a]
        return out

    def faultline(self, faultline, args):
        return subprocess.run([faultline, "rules"] + args[:1] + self.paths() + args[1:],
                              capture_output=True, text=True, check=True).stdout

    def subset_pack(self, faultline, keep):
        """An override pack that disables every built-in rule not in keep, as a user would."""
        rules = json.loads(subprocess.run([faultline, "rules", "list", "--format", "json"],
                                          capture_output=True, text=True, check=True).stdout)
        missing = set(keep) - {r["id"] for r in rules}
        if missing:
            sys.exit("sets_bench: %s names rules faultline does not have: %s" % (
                self.name, ", ".join(sorted(missing))))
        path = os.path.join(self.dir, "disable.yaml")
        with open(path, "w") as f:
            f.write("pack: bench-%s\nversion: 1\nrules:\n" % self.name)
            for r in rules:
                if r["id"] not in keep:
                    f.write("  - id: %s\n    override: true\n    disabled: true\n" % r["id"])
        return path

    def subset_samples(self, keep):
        """A pack file holding only the kept rules' test lines (for set_corpus.py)."""
        import yaml
        rules = []
        for path in builtin_packs():
            for r in yaml.safe_load(open(path)).get("rules") or []:
                if r.get("id") in keep:
                    rules.append({"id": r["id"], "tests": r.get("tests") or {}})
        path = os.path.join(self.shared, "samples.yaml")
        text = yaml.safe_dump({"rules": rules})
        # Rewritten only when it changes: a newer file regenerates the corpora.
        if not os.path.exists(path) or open(path).read() != text:
            write_whole(path, text.encode())
        return path


def write_whole(path, data):
    """Writes `path` so that a reader sees the old file or the new one, never half of it."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def corpus(pset, base, size, rate, work):
    """The corpus file for a set and base, built once and cached."""
    tag = "%s-%s-%gmb-rate%g" % (pset.name, base, size, rate)
    path = os.path.join(work, "corpora", tag + ".log")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    sources = [os.path.join(HERE, "gen_corpus.py"), os.path.join(HERE, "set_corpus.py")] + pset.samples
    if os.path.exists(path) and all(os.path.getmtime(s) < os.path.getmtime(path) for s in sources):
        return path
    print("sets_bench: generating %s ..." % path, file=sys.stderr)
    # Written under a name of this process's, then renamed: a run beside this
    # one reads the old corpus or the new one, never half of it.
    tmp = "%s.%d.tmp" % (path, os.getpid())
    gen = [sys.executable, os.path.join(HERE, "gen_corpus.py"), "--seed", "1", "--size-mb", str(size)]
    if pset.name == "builtin" and base == "gen":
        subprocess.run(gen + ["--fault-rate", str(rate), "--out", tmp], check=True)
        os.replace(tmp, path)
        return path
    cmd = [sys.executable, os.path.join(HERE, "set_corpus.py"), "--base", base, "--size-mb",
           str(size), "--fault-rate", str(rate), "--seed", "1", "--out", tmp, "--samples"] + pset.samples
    if base == "gen":
        noise = os.path.join(work, "corpora", "gen-noise-%gmb.log" % size)
        if not os.path.exists(noise) or os.path.getmtime(noise) < os.path.getmtime(sources[0]):
            noise_tmp = "%s.%d.tmp" % (noise, os.getpid())
            subprocess.run(gen + ["--fault-rate", "0", "--out", noise_tmp], check=True)
            os.replace(noise_tmp, noise)
        cmd += ["--noise", noise]
    subprocess.run(cmd, check=True)
    os.replace(tmp, path)
    return path


def reference(pset, corpus_path, re2_count):
    path = "%s.%s.truth.json" % (corpus_path, pset.key)
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(corpus_path):
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as out:
            subprocess.run([re2_count, pset.re2, corpus_path], stdout=out, check=True)
        os.replace(tmp, path)
    return json.load(open(path))


def bench_pair(pset, base, args, tools, work):
    faultline, hs_count, re2_count = tools
    path = corpus(pset, base, args.size_mb, args.fault_rate, work)
    truth = reference(pset, path, re2_count)
    size = os.path.getsize(path)
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # page cache
    outs = {k: os.path.join(pset.dir, "%s-%s.out" % (base, k)) for k in ("fl", "rg", "block", "stream")}
    commands = [
        ("fl", [faultline, "scan"] + pset.scan_args() + ["--source", "any", "--all", "--format",
                                                         "json", path]),
        ("rg", ["rg", "-j1", "-c", "-f", pset.rg, path]),
        ("block", [hs_count, "block", pset.ere, path]),
        ("stream", [hs_count, "stream", pset.ere, path]),
    ]
    load_before = loadavg()
    results = collections.defaultdict(list)
    status = {}
    errors = {}
    for _ in range(args.runs):
        for key, argv in commands:
            wall, cpu, rc, err = run(argv, outs[key], args.cpu)
            results[key].append((wall, cpu))
            status[key], errors[key] = rc, err
    load_after = loadavg()

    checks = []
    ok = True
    # faultline: lines per rule, as faultline's rules see each line.
    if status["fl"] != 0:
        checks.append("faultline FAILED (exit %d: %s)" % (status["fl"], errors["fl"].strip()[:200]))
        ok = False
    else:
        per_rule = collections.Counter()
        seen = set()
        for line in open(outs["fl"]):
            e = json.loads(line)
            if (e["rule"], e["line"]) not in seen:
                seen.add((e["rule"], e["line"]))
                per_rule[e["rule"]] += 1
        want = {r["id"]: n for r, n in zip(pset.rules, truth["message"]) if n}
        if dict(per_rule) == want:
            checks.append("faultline per-rule = RE2 (%d lines)" % truth["message_lines"])
        else:
            diff = {k: (per_rule.get(k, 0), want.get(k, 0)) for k in set(per_rule) | set(want)
                    if per_rule.get(k, 0) != want.get(k, 0)}
            checks.append("faultline MISMATCH (rule: faultline, RE2) %s" % sorted(diff.items())[:6])
            ok = False
    # rg: lines any pattern matches, raw.
    if status["rg"] not in (0, 1):
        checks.append("rg FAILED (exit %d)" % status["rg"])
        ok = False
    else:
        rg = int(open(outs["rg"]).read().strip() or 0)
        if rg == truth["raw_lines"]:
            checks.append("rg = RE2 (%d lines)" % rg)
        else:
            checks.append("rg MISMATCH %d, RE2 %d" % (rg, truth["raw_lines"]))
            ok = False
    # Vectorscan: per pattern, raw. A peer's wrong count is reported, not failed.
    raw = dict(zip((r["id"] for r in pset.rules), truth["raw"]))
    for mode in ("block", "stream"):
        if status[mode] != 0:
            checks.append("vectorscan %s FAILED (exit %d)" % (mode, status[mode]))
            ok = False
            continue
        hs = json.load(open(outs[mode]))
        got = {rid: n for i, (rid, n) in enumerate(zip(pset.ere_ids, hs["per_pattern"]))
               if i not in hs["skipped"]}
        bad = {rid: (n, raw[rid]) for rid, n in got.items() if n != raw[rid]}
        checks.append("vectorscan %s %s%s" % (
            mode, "= RE2" if not bad else "MISMATCH (rule: vectorscan, RE2) %s" % sorted(bad.items())[:4],
            " (%d skipped)" % len(hs["skipped"]) if hs["skipped"] else
            " (%d without ERE form)" % len(pset.ere_skipped) if pset.ere_skipped else ""))

    def best(key):
        return min(c for _, c in results[key]), statistics.median(c for _, c in results[key])

    fl_best, fl_med = best("fl")
    row = {
        "set": pset.name, "base": base, "rate": args.fault_rate, "mib": size / 2**20,
        "patterns": len(pset.rules), "lines": truth["lines"], "fault_lines": truth["message_lines"],
        "cpu": {k: best(k)[0] for k in results}, "median_cpu": {k: best(k)[1] for k in results},
        "load": "%s -> %s" % (load_before, load_after), "checks": checks, "ok": ok,
    }
    ratio = {k: row["cpu"][k] / max(fl_best, 1e-9) for k in ("rg", "block", "stream")}
    print("set %-9s corpus %-4s %3.0f MiB rate %-6g %3d patterns, %5.2f%% lines match: faultline %.3f s cpu (%4.0f MB/s) | "
          "x rg %.2f | x vectorscan block %.2f | x stream %.2f | load %s | %s" % (
              pset.name, base, row["mib"], args.fault_rate, row["patterns"],
              100.0 * truth["message_lines"] / max(truth["lines"], 1), fl_best,
              size / 1e6 / max(fl_best, 1e-9), ratio["rg"], ratio["block"], ratio["stream"],
              row["load"], "; ".join(checks)), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--size-mb", type=float, default=64)
    ap.add_argument("--fault-rate", type=float, default=0.001)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--bases", default=",".join(BASES))
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    args.cpu = os.environ.get("FL_BENCH_CPU", "0")
    work = os.environ.get("FL_BENCH_DIR") or os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                          "faultline-bench")
    work = os.path.join(work, "sets")
    os.makedirs(work, exist_ok=True)
    run_dir = tempfile.mkdtemp(prefix="run-", dir=work)
    tools = (os.path.join(args.build, "matcher", "faultline"),
             os.path.join(args.build, "bench", "fl-hs-count"),
             os.path.join(args.build, "bench", "fl-re2-count"))
    for t in tools:
        if not os.access(t, os.X_OK):
            sys.exit("sets_bench: %s is not built" % t)
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                      if l.startswith("model name")), "?")
    print("machine: %s, nproc %d; best of %d interleaved runs, whole process, cpu = user+sys; "
          "ratios are peer cpu / faultline cpu" % (cpu_model, os.cpu_count(), args.runs))
    rows = []
    for name in args.sets.split(","):
        if name not in SETS:
            sys.exit("sets_bench: unknown set %s (sets: %s)" % (name, ", ".join(SETS)))
        pset = PatternSet(name, tools[0], work, run_dir)
        for base in args.bases.split(","):
            if base not in BASES:
                sys.exit("sets_bench: unknown corpus %s (corpora: %s)" % (base, ", ".join(BASES)))
            rows.append(bench_pair(pset, base, args, tools, work))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    shutil.rmtree(run_dir, ignore_errors=True)
    sys.exit(0 if all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
