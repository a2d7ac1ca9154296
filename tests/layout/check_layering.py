#!/usr/bin/env python3
"""The folders' dependency arrows, as the README's Development section draws
them, checked on every project #include:

  base                 -> nothing else (the vocabulary: no network, no threads)
  endpoint             -> base
  kafka                -> base     (librdkafka configuration, one place)
  matcher              -> base
  collector/sources    -> base
  collector/checks     -> base, collector/sources   (the active checks: one more Source)
  collector/agent      -> base, endpoint, kafka, matcher, collector/sources, collector/checks
  collector/standalone -> base, endpoint, kafka, matcher, collector/*, tainter/*
  tainter/kube         -> base
  tainter              -> base, endpoint, kafka, matcher, tainter/kube   (the rule packs
                          every event is checked against: tainter/rule_check.h)

A new include that points the other way (the rule engine reaching into the
agent, a source needing Kafka, the tainter needing the collector) fails here
before it becomes a cycle. The mains (collector/agent_main.cc and the
executables in tainter/ and matcher/) are held to their folder's rule too.
"""
import os
import re
import sys

ALLOWED = {
    "base": {"base"},
    "endpoint": {"base", "endpoint"},
    "kafka": {"base", "kafka"},
    "matcher": {"base", "matcher"},
    "collector/sources": {"base", "collector/sources"},
    "collector/checks": {"base", "collector/sources", "collector/checks"},
    "collector/agent": {"base", "endpoint", "kafka", "matcher", "collector/sources",
                        "collector/checks", "collector/agent"},
    "collector/standalone": {"base", "endpoint", "kafka", "matcher", "collector/sources",
                             "collector/checks", "collector/agent", "collector/standalone",
                             "tainter", "tainter/kube"},
    "collector": {"base", "endpoint", "kafka", "matcher", "collector/sources", "collector/checks",
                  "collector/agent", "collector/standalone"},
    "tainter/kube": {"base", "tainter/kube"},
    "tainter": {"base", "endpoint", "kafka", "matcher", "tainter", "tainter/kube"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    """The most specific ALLOWED key that `path` (a/b/c.h) lives in."""
    directory = os.path.dirname(path)
    while directory and directory not in ALLOWED:
        directory = os.path.dirname(directory)
    return directory or None


def main():
    root = sys.argv[1]
    violations, files = [], 0
    for top in ("base", "endpoint", "kafka", "matcher", "collector", "tainter"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                owner = folder_of(path)
                files += 1
                for included in INCLUDE.findall(open(os.path.join(root, path)).read()):
                    target = folder_of(included)
                    if target is None:  # a generated or system-relative header
                        continue
                    if target not in ALLOWED[owner]:
                        violations.append(f"{path}: includes {included} ({owner} -> {target})")
    for v in violations:
        print("FAIL:", v)
    print(f"layering: {files} files, {len(violations)} include(s) against the arrows")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
