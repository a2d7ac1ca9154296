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
                          (the tainter's policy in-process)
  tainter/core         -> base     (the pure decisions: no client, no I/O)
  tainter/kube         -> base, tainter/core (its value types, core/node_model.h)
  tainter/watch        -> base, tainter/core, tainter/kube
  tainter/apply        -> base, tainter/core, tainter/kube    (never the informers:
                          it takes their changes, core/node_model.h)
  tainter/remediation  -> base, tainter/core, tainter/kube
  tainter/slurm        -> base, tainter/core, and of tainter/kube its NodeApi
                          interface only (node_api.h): a second actuator beside
                          the Kubernetes client, never the client nor apply
  tainter/correlation  -> base, kafka, tainter/core, tainter/kube, tainter/watch
                          (never tainter/apply: it returns blames and events)
  tainter/intake       -> base, kafka, matcher, tainter/core, tainter/apply
                          (the rule packs every event is checked against:
                          tainter/intake/rule_check.h)
  tainter/daemon       -> base, endpoint, kafka, matcher, tainter/*

A new include that points the other way (the rule engine reaching into the
agent, a source needing Kafka, the tainter needing the collector) fails here
before it becomes a cycle. The mains (collector/agent_main.cc and the
executables in tainter/ and matcher/) are held to their folder's rule too.
"""
import os
import re
import sys

TAINTER = ("tainter/core", "tainter/kube", "tainter/slurm", "tainter/watch", "tainter/apply",
           "tainter/remediation", "tainter/correlation", "tainter/intake", "tainter/daemon")
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
                             "tainter", *TAINTER},
    "collector": {"base", "endpoint", "kafka", "matcher", "collector/sources", "collector/checks",
                  "collector/agent", "collector/standalone"},
    "tainter/core": {"base", "tainter/core"},
    "tainter/kube": {"base", "tainter/core", "tainter/kube"},
    "tainter/watch": {"base", "tainter/core", "tainter/kube", "tainter/watch"},
    "tainter/apply": {"base", "tainter/core", "tainter/kube", "tainter/apply"},
    "tainter/remediation": {"base", "tainter/core", "tainter/kube", "tainter/remediation"},
    "tainter/slurm": {"base", "tainter/core", "tainter/kube", "tainter/slurm"},
    "tainter/correlation": {"base", "kafka", "tainter/core", "tainter/kube", "tainter/watch",
                            "tainter/correlation"},
    "tainter/intake": {"base", "kafka", "matcher", "tainter/core", "tainter/apply",
                       "tainter/intake"},
    "tainter/daemon": {"base", "endpoint", "kafka", "matcher", "tainter/daemon", *TAINTER},
    # tainter/ itself holds only its README and CMakeLists.txt: every source
    # file lives in a wing.
    "tainter": set(),
}
# Headers of an allowed folder that a wing may still not include: of the
# Kubernetes client, the Slurm actuator takes the interface it implements.
ONLY_FROM = {("tainter/slurm", "tainter/kube"): {"tainter/kube/node_api.h"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    """The most specific ALLOWED key that `path` (a/b/c.h) lives in."""
    directory = os.path.dirname(path)
    while directory and directory not in ALLOWED:
        directory = os.path.dirname(directory)
    return directory or None


MAX_TAINTER_FLOORS = 6


def tainter_floors(arrows):
    """The wings' floors drawn from their includes: a wing that includes no
    other wing is on floor 1, any other one floor above the highest it
    includes. Returns ({wing: floor}, [a circle found, as a path]), the
    circle empty when there is none."""
    floors, visiting = {}, []

    def floor(wing):
        if wing in floors:
            return floors[wing], []
        if wing in visiting:
            return 0, visiting[visiting.index(wing):] + [wing]
        visiting.append(wing)
        best = 0
        for below in sorted(arrows.get(wing, ())):
            f, circle = floor(below)
            if circle:
                return 0, circle
            best = max(best, f)
        visiting.pop()
        floors[wing] = best + 1
        return floors[wing], []

    for wing in sorted(set(arrows) | {w for ws in arrows.values() for w in ws}):
        _, circle = floor(wing)
        if circle:
            return floors, circle
    return floors, []


def main():
    root = sys.argv[1]
    violations, files = [], 0
    arrows = {}  # tainter wing -> the tainter wings it includes
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
                    elif included not in ONLY_FROM.get((owner, target), {included}):
                        violations.append(f"{path}: includes {included} ({owner} may take only "
                                          f"{', '.join(sorted(ONLY_FROM[(owner, target)]))} "
                                          f"from {target})")
                    if owner.startswith("tainter/") and target.startswith("tainter/") \
                            and target != owner:
                        arrows.setdefault(owner, set()).add(target)
    floors, circle = tainter_floors(arrows)
    if circle:
        violations.append("tainter: the wings' includes run in a circle: " + " -> ".join(circle))
    elif max(floors.values(), default=0) > MAX_TAINTER_FLOORS:
        violations.append(f"tainter: {max(floors.values())} floors, at most {MAX_TAINTER_FLOORS}")
    for wing in sorted(floors, key=lambda w: (floors[w], w)):
        print(f"  floor {floors[wing]}: {wing} -> {', '.join(sorted(arrows.get(wing, ()))) or '-'}")
    print(f"tainter: {len(floors)} wings on {max(floors.values(), default=0)} floors, "
          f"{sum(len(v) for v in arrows.values())} arrows between them")
    for v in violations:
        print("FAIL:", v)
    print(f"layering: {files} files, {len(violations)} include(s) against the arrows")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
