#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders deploy/ with `kubectl kustomize` and checks its invariants.

One CASE per run (CTest runs each as its own test, see CMakeLists.txt):
  base        the base: least privilege, tolerations, RBAC, probes, configs
  strimzi     overlays/kafka-strimzi: the base's invariants plus topics that
              match the configs
  standalone  overlays/standalone: no Kafka, no tainter, the agent's own RBAC
  kmsg        components/kmsg on the base: the one privileged variant
  drain       components/drain on the base: the tainter may also create
              pods/eviction, and nothing else changes
  image       deploy/Dockerfile against the manifests and CMake install rules,
              and (when built) the binaries' shared libraries against the
              runtime packages
  configs     the ConfigMaps' files accepted by the built binaries
  monitoring  the scrape config, the dashboard's and alerts' metric names, the
              alerts' runbooks, the PrometheusRule against the plain rules
              file, and (with kubectl) the PodMonitors against the base
  admission   the ValidatingAdmissionPolicies of overlays/standalone and
              components/tainter-scope, evaluated by a CEL evaluator
              (admission_policy_test.mjs) against allowed and denied requests;
              the evaluator is an npm package installed into --cel-dir on
              first use (SKIPPED without node/npm or the registry)

Prints "SKIPPED: <reason>" and passes where kubectl or python3-yaml is
missing. Exit status 1 with one line per violated invariant otherwise.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # Debian: python3-yaml (deploy/install-deps.sh --test)
    yaml = None

NAMESPACE = "faultline"
AGENT = "faultline-agent"
TAINTER = "faultline-tainter"
FAULTLINE_TAINT = {"key": "faultline.dev/faulty", "value": "true", "effect": "NoSchedule"}
# Taints the agent must tolerate: faultline's own, the ones Kubernetes puts on
# a cordoned, unreachable or NotReady node, and any NoExecute taint.
TAINTS_TO_TOLERATE = [
    FAULTLINE_TAINT,
    {"key": "trainy.konduktor.ai/faulty", "value": "true", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    {"key": "example.com/anything", "value": "x", "effect": "PreferNoSchedule"},
]
# Capabilities the agent container may add: none. It runs as uid 0 with every
# capability dropped, which reads the root-owned journal and pod-log files
# (owner permission, no CAP_DAC_OVERRIDE needed); CAP_SYSLOG would matter only
# for /dev/kmsg under kernel.dmesg_restrict=1, and /dev/kmsg is reachable only
# in the privileged components/kmsg variant (the device cgroup). SECURITY.md,
# "Containers", explains each.
AGENT_ALLOWED_CAPS = set()
AGENT_HOST_PATHS = {"/var/log", "/run/log", "/etc/machine-id", "/var/lib/faultline"}
AGENT_STATE_DIR = "/var/lib/faultline"
# Every Kubernetes API request faultline sends, as (who, verb, API group,
# resource, where). RBAC must grant exactly these (least privilege: no verb
# the code does not send, none missing), and the code must send no request
# that is not listed (code_requests() reads the Kubernetes client's sources).
# Adding a request, e.g. a `watch` on nodes, is one line here plus the RBAC.
# "standalone" is the agent in --standalone mode: the same client behind
# OwnNodeApi, which answers ListNodes with one GET of its own node.
API_REQUESTS = [
    ("tainter", "get", "", "nodes", "KubeNodeApi::GetNodeJson: re-read before a patch"),
    ("tainter", "list", "", "nodes", "KubeNodeApi::ListNodes: inventory, adoption, resync"),
    ("tainter", "watch", "", "nodes", "NodeInformer: watch from the list's resourceVersion"),
    ("tainter", "patch", "", "nodes", "KubeNodeApi::UpdateNode: JSON Patch of taint + reasons"),
    ("tainter", "patch", "", "nodes/status",
     "KubeNodeApi::PatchNodeConditions: faultline's NodeConditions (strategic merge by type)"),
    # Fleet correlation's pod index (tainter/watch/pod_informer.h): pod IP -> node and
    # the pods' controller, every namespace, field selector status.podIP!=.
    ("tainter", "list", "", "pods",
     "ListPods (node_pods.h): PodInformer, incidents command, pod Events, drain"),
    ("tainter", "watch", "", "pods", "KubeNodeApi::WatchPods: PodInformer"),
    # Cordon and drain (tainter/remediation/remediation.h): the cordon and drain marks are
    # node patches (above); the node's pods are listed with the pods list
    # above (field selector spec.nodeName=,status.phase!=...); evicting is the one new verb,
    # granted only by the opt-in components/drain.
    ("tainter", "create", "", "pods/eviction",
     "KubeEvictionApi::Evict: drain, with components/drain only"),
    # Events in every namespace (a ClusterRole): a Pod's or a job's Event must
    # be in the object's namespace (ValidateEvent); Node Events in "default".
    ("tainter", "create", "", "events", "KubeNodeApi::CreateEvent: nodes, pods, jobs' owners"),
    ("tainter", "get", "", "events", "KubeNodeApi::CreateEvent: count after a 409"),
    ("tainter", "patch", "", "events", "KubeNodeApi::PatchEventCount"),
    # The safety valve's shared record: one Lease every replica reads, creates
    # once and replaces optimistically (KubeNodeApi::GetValveRecord / PutValveRecord).
    ("tainter", "get", "coordination.k8s.io", "leases", "KubeNodeApi::GetValveRecord"),
    ("tainter", "create", "coordination.k8s.io", "leases", "KubeNodeApi::PutValveRecord: first"),
    ("tainter", "update", "coordination.k8s.io", "leases", "KubeNodeApi::PutValveRecord"),
    ("standalone", "get", "", "nodes", "OwnNodeApi::GetNode / ListNodes"),
    ("standalone", "patch", "", "nodes", "OwnNodeApi::UpdateNode"),
    ("standalone", "patch", "", "nodes/status", "OwnNodeApi::PatchNodeConditions"),
    ("standalone", "create", "", "events", "OwnNodeApi::CreateEvent"),
    ("standalone", "get", "", "events", "KubeNodeApi::CreateEvent: count after a 409"),
    ("standalone", "patch", "", "events", "KubeNodeApi::PatchEventCount"),
]
# Where the requests are made: every KubeHttpClient::Send in these files.
KUBE_CLIENT_SOURCES = ["tainter/kube"]


def requested_rules(who, resources):
    """{(group, resource): {verbs}} of API_REQUESTS for `who`, limited to `resources`."""
    rules = {}
    for w, verb, group, resource, _ in API_REQUESTS:
        if w == who and resource in resources:
            rules.setdefault((group, resource), set()).add(verb)
    return rules


TAINTER_RULES = requested_rules("tainter", {"nodes", "nodes/status", "pods", "events"})
TAINTER_DRAIN_RULES = requested_rules("tainter", {"nodes", "nodes/status", "pods", "events",
                                                  "pods/eviction"})
STANDALONE_RULES = requested_rules("standalone", {"nodes", "nodes/status"})
EVENT_RULES = requested_rules("tainter", {"events"})
TAINTER_EVENT_RULES = requested_rules("tainter", {"leases"})  # events: in the ClusterRole
STANDALONE_EVENT_RULES = requested_rules("standalone", {"events"})
EVENT_NAMESPACE = "default"  # EventOptions::namespace_name
# Runtime libraries a sanitizer build adds; the image is never built with one.
SANITIZER_LIBS = re.compile(r"lib(asan|ubsan|tsan|lsan)\.so")


def code_requests(source_dir):
    """{(verb, resource)} of every `.verb = "..."` request in the Kubernetes
    client's sources. The resource is read from the path literals of the
    function making the request ("/events" or "/api/v1/nodes"), since a path
    may be built in a variable first; a helper that takes its path from its
    callers (ListPages, KubeNodeApi::StreamWatch) sends the resources of the
    functions that call it, in any file of the client."""
    def resource_of(window):
        return ("pods/eviction" if '"/eviction"' in window else
                "leases" if '/leases' in window else
                "events" if '/events' in window else
                "nodes/status" if ('"/api/v1/nodes' in window and '"/status"' in window) else
                "nodes" if '"/api/v1/nodes' in window else
                "pods" if '"/api/v1/pods' in window else None)

    def function_around(text, at):
        start = text.rfind("\n}\n", 0, at)
        end = text.find("\n}\n", at)
        return max(start, 0), (len(text) if end < 0 else end)

    texts = {}
    for rel in KUBE_CLIENT_SOURCES:
        directory = os.path.join(source_dir, rel)
        for name in sorted(os.listdir(directory)):
            if name.endswith(".cc"):
                texts[name] = open(os.path.join(directory, name)).read()
    found = set()
    for name, text in texts.items():
        for m in re.finditer(r'\.verb\s*=\s*"(\w+)"', text):
            function_start = text.rfind("\n}\n", 0, m.start())
            send_end = text.find("});", m.start())
            window = text[max(function_start, 0):send_end]
            resource = resource_of(window)
            if resource is not None:
                found.add((m.group(1), resource))
                continue
            # The helper is the function defined here (the first line at column
            # 0 that opens a parameter list); its callers may be in any file of
            # the client (ListPages: KubeNodeApi's lists and node_pods.cc's).
            helper = re.search(r"^(?![\s/}])[^\n(]*?\b(?:\w+::)?(\w+)\(", window, re.M)
            callers = [(other, c) for other, other_text in texts.items()
                       for c in re.finditer(r"(?<![:\w])%s\(" % helper.group(1), other_text)
                       if (other, function_around(other_text, c.start())[0]) !=
                       (name, max(function_start, 0))] if helper else []
            if not callers:
                found.add((m.group(1), f"unknown ({name} offset {m.start()})"))
            for other, c in callers:
                start, end = function_around(texts[other], c.start())
                found.add((m.group(1), resource_of(texts[other][start:end]) or
                           f"unknown ({other} offset {c.start()})"))
    return found


class Failures:
    def __init__(self):
        self.items = []

    def check(self, condition, message):
        if not condition:
            self.items.append(message)
        return condition


# ---------------------------------------------------------------- rendering


def render(directory):
    out = subprocess.run(["kubectl", "kustomize", directory], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {directory} failed:\n{out.stderr}")
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def render_with_component(deploy_dir, component):
    """Renders base + a component through a throw-away overlay (kustomize
    accepts only relative paths to other kustomizations)."""
    with tempfile.TemporaryDirectory(prefix="fl-deploy-") as tmp:
        rel = lambda p: os.path.relpath(os.path.join(deploy_dir, p), tmp)
        with open(os.path.join(tmp, "kustomization.yaml"), "w") as f:
            f.write("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                    f"resources:\n  - {rel('base')}\ncomponents:\n  - {rel(component)}\n")
        return render(tmp)


def find(docs, kind, name=None):
    return [d for d in docs if d.get("kind") == kind and
            (name is None or d["metadata"].get("name") == name)]


def one(docs, kind, name):
    found = find(docs, kind, name)
    return found[0] if len(found) == 1 else None


def pod_templates(docs):
    for d in docs:
        if d.get("kind") in ("DaemonSet", "Deployment", "StatefulSet", "Job"):
            yield d, d["spec"]["template"]
        elif d.get("kind") == "Pod":
            yield d, d


def containers(pod):
    spec = pod["spec"]
    return spec.get("initContainers", []) + spec.get("containers", [])


def configmap_files(docs, name_prefix):
    """The data of the ConfigMap whose name is name_prefix or name_prefix-<hash>."""
    for cm in find(docs, "ConfigMap"):
        name = cm["metadata"]["name"]
        if name == name_prefix or re.fullmatch(re.escape(name_prefix) + r"-[a-z0-9]{10}", name):
            return cm.get("data", {}), name
    return None, None


def volume_configmap(pod, volume_name):
    for v in pod["spec"].get("volumes", []):
        if v["name"] == volume_name and "configMap" in v:
            return v["configMap"]["name"]
    return None


def config_of(docs, workload, container_name):
    """Follows the container's --config argument to the ConfigMap file it
    names and returns (parsed config, mount dir of the config)."""
    pod = workload["spec"]["template"]
    c = next(c for c in pod["spec"]["containers"] if c["name"] == container_name)
    args = c.get("args", [])
    if "--config" not in args:
        return None, None
    path = args[args.index("--config") + 1]
    directory, filename = os.path.dirname(path), os.path.basename(path)
    mount = next((m for m in c.get("volumeMounts", []) if m["mountPath"] == directory), None)
    if mount is None:
        return None, None
    cm_name = volume_configmap(pod, mount["name"])
    cm = one(docs, "ConfigMap", cm_name)
    if cm is None or filename not in cm.get("data", {}):
        return None, None
    return yaml.safe_load(cm["data"][filename]), directory


# -------------------------------------------------------------- invariants


def tolerates(tolerations, taint):
    """Kubernetes' toleration matching (ToleratesTaint)."""
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        op = t.get("operator", "Equal")
        if op == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def seconds(text):
    """'25s', '500ms', '2m', '1h' -> seconds; None if unparseable."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)", str(text).strip())
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def rbac_rules(role):
    rules = {}
    for r in role.get("rules", []):
        for group in r.get("apiGroups", []):
            for res in r.get("resources", []):
                rules.setdefault((group, res), set()).update(r.get("verbs", []))
    return rules


def roles_bound_to(docs, service_account):
    """(role kind, role name, namespace or None) for each binding of the
    ServiceAccount faultline/<service_account>."""
    bound = []
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        for b in find(docs, kind):
            for s in b.get("subjects", []):
                if (s.get("kind") == "ServiceAccount" and s.get("name") == service_account and
                        s.get("namespace") == NAMESPACE):
                    bound.append((b["roleRef"]["kind"], b["roleRef"]["name"],
                                  b["metadata"].get("namespace")))
    return sorted(bound, key=str)


def check_bound_rules(docs, service_account, cluster_rules, f, event_rules=None):
    """The ServiceAccount holds exactly one ClusterRole with cluster_rules
    and one Role with event_rules (default EVENT_RULES) in EVENT_NAMESPACE,
    and nothing else."""
    event_rules = EVENT_RULES if event_rules is None else event_rules
    bound = roles_bound_to(docs, service_account)
    kinds = sorted(k for k, _, _ in bound)
    if not f.check(kinds == ["ClusterRole", "Role"],
                   f"{service_account} is bound to one ClusterRole and one Role; {bound}"):
        return
    for kind, name, ns in bound:
        if kind == "ClusterRole":
            role = one(docs, "ClusterRole", name)
            f.check(role is not None and rbac_rules(role) == cluster_rules,
                    f"{service_account} ClusterRole is exactly {cluster_rules}; "
                    f"is {role and rbac_rules(role)}")
        else:
            roles = [r for r in find(docs, "Role", name) if r["metadata"].get("namespace") == ns]
            f.check(ns == EVENT_NAMESPACE and len(roles) == 1 and
                    rbac_rules(roles[0]) == event_rules,
                    f"{service_account} Role in {ns} is exactly {event_rules} in "
                    f"{EVENT_NAMESPACE}; is {roles and rbac_rules(roles[0])}")


def check_common(docs, f, expected_image, privileged_ok=False, extra_host_paths=()):
    images = set()
    for workload, pod in pod_templates(docs):
        for c in containers(pod):
            images.add(c["image"])
    f.check(images == {expected_image},
            f"every container runs the one image {expected_image}; found {sorted(images)}")

    configmaps = {(d["metadata"].get("namespace"), d["metadata"]["name"])
                  for d in find(docs, "ConfigMap")}
    accounts = {(d["metadata"].get("namespace"), d["metadata"]["name"])
                for d in find(docs, "ServiceAccount")}
    for workload, pod in pod_templates(docs):
        ns = workload["metadata"].get("namespace")
        wname = workload["metadata"]["name"]
        for v in pod["spec"].get("volumes", []):
            refs = []
            if "configMap" in v:
                refs.append(v["configMap"]["name"])
            for src in v.get("projected", {}).get("sources", []):
                if "configMap" in src:
                    refs.append(src["configMap"]["name"])
            for ref in refs:
                f.check((ns, ref) in configmaps,
                        f"{wname}: volume {v['name']} refers to ConfigMap {ref}, which is not rendered")
        sa = pod["spec"].get("serviceAccountName")
        f.check(sa is None or (ns, sa) in accounts,
                f"{wname}: ServiceAccount {sa} is not rendered")
        for c in containers(pod):
            mounts = {m["name"] for m in c.get("volumeMounts", [])}
            volumes = {v["name"] for v in pod["spec"].get("volumes", [])}
            for m in c.get("volumeMounts", []):
                if volume_configmap(pod, m["name"]):
                    f.check(m.get("readOnly") is True,
                            f"{wname}/{c['name']}: ConfigMap mount {m['mountPath']} is read-only")
            f.check(mounts <= volumes, f"{wname}/{c['name']}: mounts {sorted(mounts - volumes)} "
                                       "have no volume")
            for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                p = c.get(probe, {}).get("httpGet", {})
                f.check(p.get("path") == path and p.get("port") in ("metrics", 9400),
                        f"{wname}/{c['name']}: {probe} must GET {path} on the metrics port")
            res = c.get("resources", {})
            for kind in ("requests", "limits"):
                f.check({"cpu", "memory"} <= set(res.get(kind, {})),
                        f"{wname}/{c['name']}: resources.{kind} must set cpu and memory")
            ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
            f.check(ports.get("metrics") == 9400, f"{wname}/{c['name']}: metrics port 9400")
        ann = pod["metadata"].get("annotations", {})
        f.check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "9400",
                f"{wname}: pod template carries the prometheus.io scrape annotations")

    for cm in find(docs, "ConfigMap"):
        for key, text in (cm.get("data") or {}).items():
            if key.endswith((".yaml", ".yml")):
                try:
                    parsed = yaml.safe_load(text)
                    f.check(isinstance(parsed, dict),
                            f"ConfigMap {cm['metadata']['name']}/{key} is not a YAML mapping")
                except yaml.YAMLError as e:
                    f.check(False, f"ConfigMap {cm['metadata']['name']}/{key} does not parse: {e}")

    for svc in find(docs, "Service"):
        selector = svc["spec"].get("selector", {})
        matched = [w for w, pod in pod_templates(docs)
                   if selector and selector.items() <= pod["metadata"].get("labels", {}).items()]
        f.check(matched, f"Service {svc['metadata']['name']} selects no rendered pod")

    for d in docs:
        if d.get("kind") in ("Namespace", "ClusterRole", "ClusterRoleBinding",
                             "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                             "KafkaTopic"):
            continue
        if d.get("kind") in ("Role", "RoleBinding") and d["metadata"]["name"].endswith("-events"):
            f.check(d["metadata"].get("namespace") == EVENT_NAMESPACE,
                    f"{d['kind']} {d['metadata']['name']} is in the Event namespace")
            continue
        f.check(d["metadata"].get("namespace") == NAMESPACE,
                f"{d['kind']} {d['metadata']['name']} is in namespace {NAMESPACE}")

    check_agent(docs, f, privileged_ok, extra_host_paths)


def check_agent(docs, f, privileged_ok=False, extra_host_paths=()):
    ds = one(docs, "DaemonSet", AGENT)
    if not f.check(ds is not None, "the agent DaemonSet is rendered once"):
        return
    pod = ds["spec"]["template"]
    spec = pod["spec"]
    for taint in TAINTS_TO_TOLERATE:
        f.check(tolerates(spec.get("tolerations"), taint),
                f"agent tolerates {taint['key']}:{taint['effect']}")
    f.check(spec.get("priorityClassName") == "system-node-critical",
            "agent priorityClassName is system-node-critical")
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        f.check(not spec.get(host), f"agent does not use {host}")
    f.check(spec.get("securityContext", {}).get("seccompProfile", {}).get("type") ==
            "RuntimeDefault", "agent seccompProfile is RuntimeDefault")
    c = next(c for c in spec["containers"] if c["name"] == "agent")
    sc = c.get("securityContext", {})
    if not privileged_ok:
        f.check(sc.get("privileged") is False, "agent container is not privileged")
        f.check(sc.get("allowPrivilegeEscalation") is False, "agent allows no privilege escalation")
    f.check(sc.get("readOnlyRootFilesystem") is True, "agent root filesystem is read-only")
    caps = sc.get("capabilities", {})
    f.check(caps.get("drop") == ["ALL"], "agent drops ALL capabilities")
    f.check(set(caps.get("add", [])) <= AGENT_ALLOWED_CAPS,
            f"agent adds only {sorted(AGENT_ALLOWED_CAPS)}; adds {caps.get('add')}")
    env = {e["name"]: e for e in c.get("env", [])}
    f.check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            == "spec.nodeName", "agent NODE_NAME comes from the downward API spec.nodeName")

    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    allowed_paths = AGENT_HOST_PATHS | set(extra_host_paths)
    for v in spec.get("volumes", []):
        hp = v.get("hostPath")
        if not hp:
            continue
        f.check(hp["path"] in allowed_paths, f"agent hostPath {hp['path']} is one of the expected")
        m = mounts.get(v["name"])
        if hp["path"] == AGENT_STATE_DIR:
            f.check(hp.get("type") == "DirectoryOrCreate", "state dir hostPath is DirectoryOrCreate")
            f.check(m is not None and not m.get("readOnly"), "state dir is mounted read-write")
        else:
            f.check(m is None or m.get("readOnly") is True,
                    f"agent hostPath {hp['path']} is mounted read-only")
            # An unset type lets the runtime create a missing path as a
            # directory; *OrCreate creates it. Only /run (tmpfs) may be created.
            f.check(hp.get("type") and (not hp["type"].endswith("OrCreate") or
                                        hp["path"].startswith("/run/")),
                    f"hostPath {hp['path']} must have a type and not be created on the host")

    config, config_dir = config_of(docs, ds, "agent")
    if not f.check(config is not None, "agent --config names a file in a mounted ConfigMap"):
        return
    f.check(not config.get("node_name"), "agent config leaves node_name to NODE_NAME")
    mount_paths = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    f.check(config.get("state_dir") == AGENT_STATE_DIR and AGENT_STATE_DIR in mount_paths,
            "agent state_dir is the mounted host state directory")
    for path in (config.get("rules") or {}).get("paths", []):
        m = mount_paths.get(path)
        f.check(m is not None and "subPath" not in m and
                volume_configmap(pod, m["name"]) is not None,
                f"rule path {path} is a whole ConfigMap directory mount (symlink swaps reload)")
    addr = str(config.get("metrics_address", "0.0.0.0:9400"))
    f.check(addr.rsplit(":", 1)[-1] == "9400", "agent metrics_address port is the container port")
    grace = seconds(config.get("shutdown_grace", "25s"))  # default: collector/agent/agent_config.h
    f.check(grace is not None and grace < spec.get("terminationGracePeriodSeconds", 30),
            f"agent shutdown_grace {config.get('shutdown_grace', '25s')} ends before the pod's "
            "terminationGracePeriodSeconds (flush and checkpoints before SIGKILL)")
    sources = config.get("sources") or {}
    # Defaults as in collector/agent/agent_config.h: kmsg on, the others off.
    enabled = lambda name, default=False: (sources.get(name) or {}).get("enabled", default)
    if enabled("podlog"):
        podlog = sources["podlog"].get("root", "/var/log/pods")
        f.check(any(podlog == p or podlog.startswith(p.rstrip("/") + "/") for p in mount_paths),
                f"podlog root {podlog} is inside a mount")
    kmsg_on = enabled("kmsg", True)
    f.check(kmsg_on or enabled("journal"),
            "kernel messages are read (kmsg, or the journal's kernel entries)")
    kmsg_mounted = "/dev/kmsg" in mount_paths
    f.check(not kmsg_on or (kmsg_mounted and sc.get("privileged") is True),
            "the kmsg source is on only where /dev/kmsg is mounted into a privileged container "
            "(the device cgroup denies it otherwise)")


def check_kafka_mode(docs, f, source_dir):
    ds = one(docs, "DaemonSet", AGENT)
    sa = one(docs, "ServiceAccount", AGENT)
    if ds:
        f.check(ds["spec"]["template"]["spec"].get("automountServiceAccountToken") is False,
                "agent pods mount no API token in Kafka mode")
    f.check(sa is not None and sa.get("automountServiceAccountToken") is False,
            "agent ServiceAccount disables token automount")
    f.check(roles_bound_to(docs, AGENT) == [], "agent ServiceAccount has no role binding")

    dep = one(docs, "Deployment", TAINTER)
    if not f.check(dep is not None, "the tainter Deployment is rendered"):
        return
    f.check(dep["spec"].get("replicas") == 2, "tainter runs 2 replicas")
    pod = dep["spec"]["template"]
    psc = pod["spec"].get("securityContext", {})
    f.check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 65532,
            "tainter runs as non-root uid 65532")
    f.check(psc.get("seccompProfile", {}).get("type") == "RuntimeDefault",
            "tainter seccompProfile is RuntimeDefault")
    for c in pod["spec"]["containers"]:
        sc = c.get("securityContext", {})
        f.check(not sc.get("privileged"), "tainter is not privileged")
        f.check(sc.get("readOnlyRootFilesystem") is True, "tainter root filesystem is read-only")
        f.check(sc.get("allowPrivilegeEscalation") is False, "tainter allows no privilege escalation")
        f.check(sc.get("capabilities", {}).get("drop") == ["ALL"] and
                not sc.get("capabilities", {}).get("add"), "tainter drops ALL capabilities, adds none")
        f.check(sc.get("runAsUser", 65532) != 0, "tainter container does not run as root")
    pdbs = [p for p in find(docs, "PodDisruptionBudget")
            if p["spec"]["selector"].get("matchLabels", {}).items()
            <= pod["metadata"]["labels"].items()]
    f.check(len(pdbs) == 1 and pdbs[0]["spec"].get("minAvailable") == 1,
            "one PodDisruptionBudget with minAvailable 1 covers the tainter")

    check_bound_rules(docs, TAINTER, TAINTER_RULES, f, TAINTER_EVENT_RULES)
    listed = {(verb, resource) for who, verb, _, resource, _ in API_REQUESTS if who == "tainter"}
    sent = code_requests(source_dir)
    f.check(sent == listed,
            f"the Kubernetes client sends exactly the requests in API_REQUESTS; "
            f"sent but not listed: {sorted(sent - listed)}; listed but not sent: "
            f"{sorted(listed - sent)}")

    agent_cfg, _ = config_of(docs, ds, "agent") if ds else (None, None)
    tainter_cfg, _ = config_of(docs, dep, "tainter")
    if f.check(agent_cfg and tainter_cfg, "agent and tainter configs are rendered"):
        ak, tk = agent_cfg.get("kafka") or {}, tainter_cfg.get("kafka") or {}
        f.check(ak.get("brokers") and ak.get("brokers") == tk.get("brokers"),
                "agent and tainter use the same Kafka brokers")
        f.check(ak.get("topic") and ak.get("topic") == tk.get("topic"),
                "agent and tainter use the same topic")
        f.check(tk.get("dead_letter_topic") and tk.get("dead_letter_topic") != tk.get("topic"),
                "tainter has its own dead-letter topic")
        taint = tainter_cfg.get("taint") or {}
        f.check({k: str(v) for k, v in taint.items() if k in FAULTLINE_TAINT} == FAULTLINE_TAINT,
                "tainter taints faultline.dev/faulty=true:NoSchedule")
        # Default: tainter/daemon/tainter_config.h.
        addr = str(tainter_cfg.get("metrics_address", "0.0.0.0:9400"))
        f.check(addr.rsplit(":", 1)[-1] == "9400", "tainter metrics_address port is the container port")
        # The tainter checks every event against its rule (tainter/intake/rule_check.h):
        # it must load the agents' packs, the same ConfigMap, mounted whole.
        def pack_sources(workload, cfg, container_name):
            tpl = workload["spec"]["template"]
            c = next(c for c in tpl["spec"]["containers"] if c["name"] == container_name)
            mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
            rules = cfg.get("rules") or {}
            sources = {("builtin", bool(rules.get("builtin", True)))}
            for path in rules.get("paths", []):
                m = mounts.get(path)
                sources.add(("configmap", volume_configmap(tpl, m["name"])
                             if m is not None and "subPath" not in m else None))
            return sources
        f.check(pack_sources(ds, agent_cfg, "agent") == pack_sources(dep, tainter_cfg, "tainter"),
                "the tainter loads the agents' rule packs (built-in and the same ConfigMap, "
                f"whole): agent {pack_sources(ds, agent_cfg, 'agent')}, "
                f"tainter {pack_sources(dep, tainter_cfg, 'tainter')}")


def check_strimzi(docs, f):
    topics = find(docs, "KafkaTopic")
    f.check(all(t["apiVersion"] == "kafka.strimzi.io/v1beta2" for t in topics) and topics,
            "KafkaTopics are kafka.strimzi.io/v1beta2")
    dep = one(docs, "Deployment", TAINTER)
    cfg, _ = config_of(docs, dep, "tainter") if dep else (None, None)
    if not f.check(cfg is not None, "tainter config rendered"):
        return
    k = cfg["kafka"]
    names = {t["spec"].get("topicName", t["metadata"]["name"]) for t in topics}
    # Default identity topic: tainter/correlation/correlation_consumer.h.
    identity = (cfg.get("correlation") or {}).get("identity_topic", "faultline.identity")
    f.check(names == {k["topic"], k["dead_letter_topic"], identity},
            f"KafkaTopics {sorted(names)} are the events, dead-letter and identity topics of the config")
    ident = [t for t in topics if t["spec"].get("topicName") == identity]
    f.check(ident and ident[0]["spec"].get("config", {}).get("cleanup.policy") == "compact",
            "the identity topic is compacted (the latest identity of every node is kept)")
    events = [t for t in topics if t["spec"].get("topicName") == k["topic"]]
    span = seconds(k.get("rebuild_span", "24h"))  # default: tainter/README.md
    retention = events and events[0]["spec"].get("config", {}).get("retention.ms")
    f.check(span is not None and retention and span * 1000 <= int(retention),
            f"the tainter's rebuild_span {k.get('rebuild_span', '24h')} is within the events "
            f"topic's retention ({retention} ms), or rebuilt windows miss history")
    m = re.fullmatch(r"([a-z0-9-]+)-kafka-bootstrap\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:\d+",
                     k["brokers"].split(",")[0])
    if f.check(m, f"brokers {k['brokers']} is a Strimzi bootstrap service"):
        for t in topics:
            f.check(t["metadata"].get("labels", {}).get("strimzi.io/cluster") == m.group(1),
                    f"KafkaTopic {t['metadata']['name']} names the Kafka cluster {m.group(1)}")
            f.check(t["metadata"].get("namespace") == m.group(2),
                    f"KafkaTopic {t['metadata']['name']} is in the Kafka namespace {m.group(2)}")


def check_standalone(docs, f):
    f.check(not find(docs, "Deployment"), "no Deployment (no central tainter)")
    f.check(not find(docs, "KafkaTopic"), "no KafkaTopic")
    f.check(one(docs, "ClusterRole", TAINTER) is None, "no tainter ClusterRole")
    f.check(configmap_files(docs, "faultline-tainter-config")[0] is None, "no tainter config")
    for cm in find(docs, "ConfigMap"):
        for key, text in (cm.get("data") or {}).items():
            parsed = yaml.safe_load(text) if key.endswith(".yaml") else None
            f.check(not (isinstance(parsed, dict) and "kafka" in parsed),
                    f"ConfigMap {cm['metadata']['name']}/{key} has no Kafka config")
    ds = one(docs, "DaemonSet", AGENT)
    if not ds:
        return
    c = next(c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == "agent")
    f.check("--standalone" in c.get("args", []), "agent runs --standalone")
    f.check(ds["spec"]["template"]["spec"].get("automountServiceAccountToken") is True,
            "standalone agent mounts its API token")
    check_bound_rules(docs, AGENT, STANDALONE_RULES, f, STANDALONE_EVENT_RULES)
    vap = find(docs, "ValidatingAdmissionPolicy")
    binding = find(docs, "ValidatingAdmissionPolicyBinding")
    f.check(len(vap) == 1 and len(binding) == 1 and
            binding[0]["spec"]["policyName"] == vap[0]["metadata"]["name"] and
            binding[0]["spec"].get("validationActions") == ["Deny"],
            "an admission policy confines the agent to its own node, bound with Deny")
    if vap:
        text = json.dumps(vap[0])
        f.check(f"system:serviceaccount:{NAMESPACE}:{AGENT}" in text and
                "authentication.kubernetes.io/node-name" in text,
                "the policy matches the agent's ServiceAccount and compares its node name")


# --------------------------------------------------------------- admission

# The CEL evaluator for the admission case: an npm package with no
# dependencies, pinned. Kubernetes evaluates with cel-go; the expressions the
# policy uses (has, in, size, ==, ?:) mean the same in both.
CEL_PACKAGE = "@marcbachmann/cel-js@8.0.0"
CEL_ENTRY = "node_modules/@marcbachmann/cel-js/lib/index.js"


def ensure_cel(cel_dir):
    """Installs the evaluator into cel_dir unless it is there; returns None
    or the reason it cannot be had."""
    if os.path.exists(os.path.join(cel_dir, CEL_ENTRY)):
        return None
    if not shutil.which("node") or not shutil.which("npm"):
        return "node or npm is not installed"
    version = subprocess.run(["node", "-e", "console.log(process.versions.node)"],
                             capture_output=True, text=True).stdout.strip()
    parts = [int(p) for p in version.split(".")[:2] if p.isdigit()]
    if parts < [20, 19]:
        return f"node {version} is older than 20.19, which {CEL_PACKAGE} needs"
    os.makedirs(cel_dir, exist_ok=True)
    try:
        out = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", cel_dir,
                              CEL_PACKAGE], capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return f"npm install {CEL_PACKAGE} timed out"
    if out.returncode != 0 or not os.path.exists(os.path.join(cel_dir, CEL_ENTRY)):
        return f"npm install {CEL_PACKAGE} failed: {out.stderr.strip()[-300:]}"
    return None


def check_admission(args, standalone_docs, scoped_docs, f):
    """standalone_docs: overlays/standalone; scoped_docs: the base with
    components/tainter-scope. Each renders one policy and its binding."""
    policies = []
    for what, docs in (("the standalone overlay", standalone_docs),
                       ("components/tainter-scope", scoped_docs)):
        vap = find(docs, "ValidatingAdmissionPolicy")
        binding = find(docs, "ValidatingAdmissionPolicyBinding")
        if f.check(len(vap) == 1 and len(binding) == 1 and
                   binding[0]["spec"]["policyName"] == vap[0]["metadata"]["name"] and
                   binding[0]["spec"].get("validationActions") == ["Deny"],
                   f"{what} renders one ValidatingAdmissionPolicy, bound with Deny"):
            policies.append(vap[0])
    f.check(not find(render(os.path.join(args.source_dir, "deploy", "base")),
                     "ValidatingAdmissionPolicy"),
            "the base has no admission policy (it needs Kubernetes 1.30; the component is opt-in)")
    if f.items:
        return None
    why = ensure_cel(args.cel_dir)
    if why:
        return why
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
        json.dump(policies, tmp)
    try:
        out = subprocess.run(["node", os.path.join(os.path.dirname(__file__),
                                                   "admission_policy_test.mjs"),
                              tmp.name, args.cel_dir], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(tmp.name)
    print(out.stdout, end="")
    f.check(out.returncode == 0, f"the admission policy gives every expected verdict "
                                 f"(admission_policy_test.mjs){': ' + out.stderr if out.stderr else ''}")
    return None


# ------------------------------------------------------------------- image


def dockerfile_runtime(deploy_dir):
    text = open(os.path.join(deploy_dir, "Dockerfile")).read()
    joined = re.sub(r"\\\n", " ", text)
    stages = re.split(r"^FROM ", joined, flags=re.M)
    runtime = stages[-1]
    packages = set()
    for m in re.finditer(r"apt-get install ([^&]*)", runtime):
        packages |= {w for w in m.group(1).split() if not w.startswith("-")}
    copies = [line.split()[1:] for line in runtime.splitlines() if line.startswith("COPY ")]
    copied = {}
    for words in copies:
        words = [w for w in words if not w.startswith("--")]
        dest = words[-1]
        for src in words[:-1]:
            copied[src] = dest
    version = re.search(r"ARG FL_VERSION=(\S+)", runtime)
    return packages, copied, version.group(1) if version else None, text


def cmake_sources(source_dir):
    for root, dirs, files in os.walk(source_dir):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        if "CMakeLists.txt" in files:
            path = os.path.join(root, "CMakeLists.txt")
            yield path, open(path).read()


def check_image(args, docs_by_case, f):
    deploy_dir = os.path.join(args.source_dir, "deploy")
    packages, copied, fl_version, dockerfile = dockerfile_runtime(deploy_dir)
    f.check(fl_version == args.project_version,
            f"Dockerfile FL_VERSION {fl_version} is the project version {args.project_version}")
    f.check("install-deps.sh" in dockerfile, "the build stage reuses deploy/install-deps.sh")
    f.check(re.search(r"^USER 65532(:65532)?$", dockerfile, re.M), "the image's USER is 65532")
    # BuildKit reads <Dockerfile>.dockerignore beside the Dockerfile; the
    # context is the repository root, where build trees live.
    ignore_path = os.path.join(deploy_dir, "Dockerfile.dockerignore")
    ignore = open(ignore_path).read().split() if os.path.exists(ignore_path) else []
    f.check({".git", "build", "build-*"} <= set(ignore),
            "Dockerfile.dockerignore keeps .git and build directories out of the context")

    binaries = set()
    for docs in docs_by_case.values():
        for _, pod in pod_templates(docs):
            for c in containers(pod):
                binaries.add(c["command"][0] if c.get("command") else None)
    for b in sorted(binaries, key=str):
        if not f.check(b and b.startswith("/usr/bin/"), f"manifest command {b} is in /usr/bin"):
            continue
        name = os.path.basename(b)
        f.check(f"/staging{b}" in copied and copied[f"/staging{b}"] == "/usr/bin/",
                f"Dockerfile copies {name} from the install prefix to /usr/bin")
    f.check(copied.get("/staging/usr/share/faultline/rules/") == "/usr/share/faultline/rules/",
            "Dockerfile copies the rule packs to /usr/share/faultline/rules")

    cmake = dict(cmake_sources(args.source_dir))
    all_cmake = "\n".join(cmake.values())
    f.check(re.search(r"DESTINATION\s+\$\{CMAKE_INSTALL_DATADIR\}/faultline/rules",
                      cmake.get(os.path.join(args.source_dir, "rules", "CMakeLists.txt"), "")),
            "rules/CMakeLists.txt installs the packs to share/faultline/rules")
    for name in ("faultline", "faultline-agent", "faultline-tainter"):
        if not re.search(r"add_executable\(\s*" + re.escape(name) + r"\s", all_cmake):
            print(f"NOTE: no CMake target {name} yet; its install rule is not checked")
            continue
        f.check(re.search(r"install\(\s*TARGETS\s+[^)]*\b" + re.escape(name) + r"\b[^)]*"
                          r"(RUNTIME\s+)?DESTINATION\s+(\$\{CMAKE_INSTALL_BINDIR\}|bin)", all_cmake),
                f"CMake installs {name} to bin (the image copies /usr/bin/{name})")

    if shutil.which("apt-cache"):
        # One call: apt-cache takes seconds to start. It prints the packages
        # it knows and an error for the others.
        out = subprocess.run(["apt-cache", "show"] + sorted(packages), capture_output=True,
                             text=True)
        known = set(re.findall(r"^Package: (\S+)$", out.stdout, re.M))
        for p in sorted(packages):
            f.check(p in known, f"runtime package {p} exists in this machine's Debian archive")
        check_shared_libraries(args, packages, f)
    else:
        print("NOTE: apt-cache missing; runtime package names not checked")


def check_shared_libraries(args, packages, f):
    built = [b for b in (args.faultline, args.agent, args.tainter) if b and os.path.exists(b)]
    if not built:
        print("NOTE: binaries not built; their shared libraries are not checked")
        return
    if not shutil.which("dpkg") or not shutil.which("ldd"):
        print("NOTE: dpkg or ldd missing; shared libraries not checked")
        return
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"]
                         + sorted(packages), capture_output=True, text=True)
    provided = set(packages)
    for line in out.stdout.splitlines():
        line = line.strip().lstrip("|")
        if line.startswith(("Depends:", "PreDepends:")):
            provided.add(line.split(":", 1)[1].split()[0].strip("<>").split(":")[0])
        elif line and ":" not in line:
            provided.add(line.split(":")[0])
    # In every debian:bookworm-slim image (Essential: yes, or apt's dependencies).
    provided |= {"libc6", "libgcc-s1", "libstdc++6"}
    needed = {}  # library path -> the binaries that link it
    for binary in built:
        ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        for line in ldd.splitlines():
            m = re.search(r"=>\s+(\S+)", line)
            if m and not SANITIZER_LIBS.search(line):
                needed.setdefault(os.path.realpath(m.group(1)), set()).add(os.path.basename(binary))
    # One dpkg call for all of them: "pkg:arch: /usr/lib/.../libre2.so.9.0.0".
    out = subprocess.run(["dpkg", "-S"] + sorted("*/" + os.path.basename(p) for p in needed),
                         capture_output=True, text=True).stdout
    owners = {}
    for line in out.splitlines():
        pkg, _, path = line.partition(": ")
        owners.setdefault(os.path.basename(path.strip()), set()).add(pkg.split(":")[0])
    for path, binaries in sorted(needed.items()):
        pkgs = owners.get(os.path.basename(path), set())
        f.check(pkgs & provided,
                f"{', '.join(sorted(binaries))} need {path} from {sorted(pkgs) or '?'}, "
                "which the runtime stage does not install")


# ----------------------------------------------------------------- configs


def check_configs(args, docs_by_case, f):
    faultline = args.faultline if args.faultline and os.path.exists(args.faultline) else None
    if not faultline:
        print("SKIPPED: faultline not built; rule packs in ConfigMaps not checked with "
              "`faultline rules check`")
    for case, docs in docs_by_case.items():
        data, name = configmap_files(docs, "faultline-rules")
        if not f.check(data, f"{case}: the faultline-rules ConfigMap is rendered"):
            continue
        with tempfile.TemporaryDirectory(prefix="fl-rules-") as tmp:
            for key, text in data.items():
                with open(os.path.join(tmp, key), "w") as out:
                    out.write(text)
            if faultline:
                files = sorted(os.path.join(tmp, k) for k in data)
                run = subprocess.run([faultline, "rules", "check"] + files,
                                     capture_output=True, text=True)
                f.check(run.returncode == 0, f"{case}: `faultline rules check` rejects the "
                        f"ConfigMap's packs:\n{run.stdout}{run.stderr}")
                check_commented_examples(faultline, data, tmp, case, f)
        for binary, workload, container, kind in (
                (args.agent, AGENT, "agent", "DaemonSet"),
                (args.tainter, TAINTER, "tainter", "Deployment")):
            check_config_with_binary(binary, docs, case, workload, container, kind, f)
        check_config_with_parser(args.agent_config_check, docs, case, AGENT, "agent",
                                 "DaemonSet", f)
        check_config_with_parser(args.tainter_config_check, docs, case, TAINTER, "tainter",
                                 "Deployment", f)


def check_commented_examples(faultline, data, tmp, case, f):
    """The commented-out rule examples (`  # - id: ...` blocks) must load
    once uncommented, so the documentation cannot rot."""
    for key, text in data.items():
        lines = text.splitlines()
        starts = [i for i, l in enumerate(lines) if l.startswith("  # - id: ")]
        for start in starts:
            out, i = list(lines), start
            while i < len(lines) and (i == start or lines[i].startswith("  #   ")):
                out[i] = "  " + lines[i][4:]
                i += 1
            path = os.path.join(tmp, f"example-{start}-{key}")
            with open(path, "w") as fh:
                fh.write("\n".join(out) + "\n")
            run = subprocess.run([faultline, "rules", "check", path], capture_output=True,
                                 text=True)
            f.check(run.returncode == 0, f"{case}: the commented example at {key}:{start + 1}, "
                    f"uncommented, fails `faultline rules check`:\n{run.stdout}{run.stderr}")
            os.unlink(path)


def check_config_with_parser(checker, docs, case, workload, container, kind, f):
    """Runs a daemon's own config parser (ParseAgentConfig / LoadTainterConfig,
    through fl-deploy-{agent,tainter}-config-check) over the config the
    workload mounts."""
    w = one(docs, kind, workload)
    if w is None:
        return
    if not checker or not os.path.exists(checker):
        print(f"SKIPPED: {container} config checker not built; {case} {container} config "
              "checked as YAML only")
        return
    pod = w["spec"]["template"]
    c = next(c for c in pod["spec"]["containers"] if c["name"] == container)
    path = c["args"][c["args"].index("--config") + 1]
    mount = next(m for m in c["volumeMounts"] if m["mountPath"] == os.path.dirname(path))
    data = one(docs, "ConfigMap", volume_configmap(pod, mount["name"]))["data"]
    with tempfile.TemporaryDirectory(prefix="fl-config-") as tmp:
        local = os.path.join(tmp, f"{case}-{os.path.basename(path)}")
        with open(local, "w") as out:
            out.write(data[os.path.basename(path)])
        # The standalone agent parses its config in standalone mode (no kafka).
        mode = "standalone" if (case == "standalone" and container == "agent") else container
        run = subprocess.run([checker, mode, local], capture_output=True, text=True)
        f.check(run.returncode == 0, f"{case}: the {container}'s config parser rejects the "
                f"config its pods mount:\n{run.stdout}{run.stderr}")


def check_config_with_binary(binary, docs, case, workload, container, kind, f):
    w = one(docs, kind, workload)
    if w is None:
        return
    if not binary or not os.path.exists(binary):
        print(f"SKIPPED: {os.path.basename(binary or workload)} not built; {case} config not "
              "checked by it")
        return
    usage = subprocess.run([binary, "--help"], capture_output=True, text=True)
    if "--check-config" not in usage.stdout + usage.stderr:
        print(f"SKIPPED: {os.path.basename(binary)} has no --check-config flag ({case})")
        return
    config, _ = config_of(docs, w, container)
    c = next(c for c in w["spec"]["template"]["spec"]["containers"] if c["name"] == container)
    with tempfile.TemporaryDirectory(prefix="fl-config-") as tmp:
        path = os.path.join(tmp, "config.yaml")
        with open(path, "w") as out:
            yaml.safe_dump(config, out)
        argv = [a for a in c.get("args", []) if a not in ("--config",) and not a.endswith(".yaml")]
        run = subprocess.run([binary] + argv + ["--config", path, "--check-config"],
                             capture_output=True, text=True, env=dict(os.environ, NODE_NAME="n1"))
        f.check(run.returncode == 0, f"{case}: {os.path.basename(binary)} --check-config "
                f"rejects the ConfigMap's config:\n{run.stdout}{run.stderr}")


# -------------------------------------------------------------- monitoring


def check_monitoring(args, f, can_render):
    mon = os.path.join(args.source_dir, "deploy", "monitoring")
    scrape = yaml.safe_load(open(os.path.join(mon, "prometheus-scrape.yaml")))
    jobs = {j["job_name"] for j in scrape.get("scrape_configs", [])}
    f.check(jobs == {"faultline-agent", "faultline-tainter"}, f"scrape jobs {sorted(jobs)}")
    dash = json.load(open(os.path.join(mon, "grafana-dashboard.json")))
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += check_alerts(args, mon, jobs, f)
    if can_render:
        check_operator_objects(args, mon, jobs, f)
    else:
        print("NOTE: kubectl with kustomize v5 is missing; deploy/monitoring not rendered")
    used = {re.sub(r"_(bucket|sum|count)$", "", m)
            for e in exprs for m in re.findall(r"\bfaultline_[a-z0-9_]+", e)}
    f.check(used, "the dashboard queries faultline_* metrics")
    titles = " ".join(p["title"].lower() for p in dash["panels"])
    for needed in ("faults per rule", "tainted nodes", "valve", "lag", "latency", "kmsg lost"):
        f.check(needed in titles, f"the dashboard has a '{needed}' panel")
    # The names the daemons register (string literals in their sources), so
    # a renamed metric breaks this test rather than a dashboard panel.
    exported = set()
    for component in ("collector", "tainter", "matcher", "base", "endpoint"):
        for directory, _, names in os.walk(os.path.join(args.source_dir, component)):
            for name in names:
                if name.endswith(".cc"):
                    exported |= set(re.findall(r'"(faultline_[a-z0-9_]+)"',
                                               open(os.path.join(directory, name)).read()))
    for name in sorted(used):
        f.check(name in exported, f"dashboard or alert metric {name} is registered by the "
                "daemons' code")
    docs = ""
    for readme in ("collector/README.md", "tainter/README.md"):
        path = os.path.join(args.source_dir, readme)
        if os.path.exists(path):
            docs += open(path).read()
    undocumented = sorted(n for n in used if n not in docs)
    if undocumented:
        print(f"NOTE: not (yet) in collector/ or tainter/README.md: {', '.join(undocumented)}")


def alert_rules(groups):
    return [r for g in groups for r in g.get("rules", []) if "alert" in r]


def runbook_headings(source_dir):
    """The `### Name` headings of deploy/README.md's "## Runbooks" section."""
    text = open(os.path.join(source_dir, "deploy", "README.md")).read()
    section = re.search(r"^## Runbooks\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return set(re.findall(r"^### (\S+)\s*$", section.group(1), re.M)) if section else set()


def check_alerts(args, mon, jobs, f):
    """faultline-alerts.yaml: every alert has a severity, a summary, a
    description and a runbook that exists; the PrometheusRule holds the same
    groups. Returns the expressions, whose metric names are checked with the
    dashboard's."""
    plain = yaml.safe_load(open(os.path.join(mon, "faultline-alerts.yaml")))
    rules = alert_rules(plain.get("groups", []))
    f.check(len(rules) >= 10, f"faultline-alerts.yaml has {len(rules)} alerts")
    headings = runbook_headings(args.source_dir)
    for rule in rules:
        name = rule["alert"]
        f.check(rule.get("labels", {}).get("severity") in ("critical", "warning"),
                f"alert {name} has severity critical or warning")
        notes = rule.get("annotations", {})
        for key in ("summary", "description", "runbook_url"):
            f.check(notes.get(key), f"alert {name} has a {key} annotation")
        anchor = notes.get("runbook_url", "").rpartition("#")[2]
        f.check(notes.get("runbook_url", "").split("#")[0].endswith("/deploy/README.md") and
                anchor == name.lower() and name in headings,
                f"alert {name}'s runbook is the section '### {name}' of deploy/README.md")
        for job in re.findall(r'job="([^"]+)"', rule["expr"]):
            f.check(job in jobs, f"alert {name} selects job {job}, which the scrape config has")
    names = {r["alert"] for r in rules}
    f.check(headings <= names, f"runbooks without an alert: {sorted(headings - names)}")
    operator = yaml.safe_load(open(os.path.join(mon, "faultline-prometheusrule.yaml")))
    f.check(operator.get("apiVersion") == "monitoring.coreos.com/v1" and
            operator.get("kind") == "PrometheusRule", "the PrometheusRule is monitoring.coreos.com/v1")
    f.check(operator.get("spec", {}).get("groups") == plain["groups"],
            "faultline-prometheusrule.yaml holds the groups of faultline-alerts.yaml "
            "(run deploy/monitoring/make-prometheusrule.sh)")
    return [r["expr"] for r in rules]


def check_operator_objects(args, mon, jobs, f):
    """deploy/monitoring rendered: the PrometheusRule, and PodMonitors that
    scrape the pods of the base under the job names the alerts use."""
    docs = render(mon)
    f.check(len(find(docs, "PrometheusRule")) == 1, "deploy/monitoring renders one PrometheusRule")
    dash = [d for d in find(docs, "ConfigMap")
            if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    f.check(len(dash) == 1, "deploy/monitoring renders the dashboard for Grafana's sidecar")
    base = render(os.path.join(args.source_dir, "deploy", "base"))
    monitored = set()
    for pm in find(docs, "PodMonitor"):
        spec = pm["spec"]
        want = spec["selector"].get("matchLabels", {})
        pods = [(w, pod) for w, pod in pod_templates(base)
                if want.items() <= w["spec"]["template"]["metadata"].get("labels", {}).items()]
        name = pm["metadata"]["name"]
        if not f.check(len(pods) == 1, f"PodMonitor {name} selects one workload of the base"):
            continue
        workload, pod = pods[0]
        job = workload["spec"]["template"]["metadata"]["labels"].get(spec.get("jobLabel", ""))
        f.check(job in jobs, f"PodMonitor {name} names its job {job} as the scrape config does")
        monitored.add(job)
        ports = {p.get("name") for c in containers(pod) for p in c.get("ports", [])}
        for ep in spec.get("podMetricsEndpoints", []):
            f.check(ep.get("port") in ports, f"PodMonitor {name} scrapes a named port of the pod")
        f.check(workload["metadata"]["namespace"] in
                spec.get("namespaceSelector", {}).get("matchNames", []),
                f"PodMonitor {name} looks in the workload's namespace")
    f.check(monitored == jobs, f"PodMonitors cover the jobs {sorted(jobs)}: {sorted(monitored)}")


# -------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["base", "strimzi", "standalone", "kmsg", "drain", "image",
                                     "configs", "monitoring", "admission"])
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--project-version", required=True)
    ap.add_argument("--faultline")
    ap.add_argument("--agent")
    ap.add_argument("--tainter")
    ap.add_argument("--agent-config-check", help="fl-deploy-agent-config-check")
    ap.add_argument("--tainter-config-check", help="fl-deploy-tainter-config-check")
    ap.add_argument("--cel-dir", default=os.path.join(tempfile.gettempdir(), "faultline-cel"),
                    help="where the admission case installs its CEL evaluator")
    args = ap.parse_args()

    if yaml is None:
        print("SKIPPED: python3-yaml not installed (deploy/install-deps.sh --test)")
        return 0
    needs_kubectl = args.case != "monitoring"
    kustomize = "none"
    if shutil.which("kubectl"):
        # Components and `labels:` need kustomize v4+ (kubectl 1.21+); Debian
        # 12's kubernetes-client (1.20) carries kustomize v2.
        out = subprocess.run(["kubectl", "version", "--client", "-o", "json"],
                             capture_output=True, text=True)
        try:
            kustomize = json.loads(out.stdout).get("kustomizeVersion", "")
        except ValueError:
            kustomize = ""
    major = re.match(r"v?(\d+)", kustomize)
    can_render = bool(major) and int(major.group(1)) >= 5
    if needs_kubectl and kustomize == "none":
        print("SKIPPED: kubectl not installed")
        return 0
    if needs_kubectl and not can_render:
        print(f"SKIPPED: kubectl's kustomize {kustomize or '?'} is older than v5")
        return 0

    deploy = os.path.join(args.source_dir, "deploy")
    image_ref = None
    base_kustomization = yaml.safe_load(open(os.path.join(deploy, "base", "kustomization.yaml")))
    for img in base_kustomization.get("images", []):
        if img["name"] == "faultline":
            image_ref = f"{img['newName']}:{img['newTag']}"
    f = Failures()
    f.check(image_ref and image_ref.endswith(":" + args.project_version),
            f"base image {image_ref} is tagged with the project version {args.project_version}")

    overlays = {"base": os.path.join(deploy, "base"),
                "strimzi": os.path.join(deploy, "overlays", "kafka-strimzi"),
                "standalone": os.path.join(deploy, "overlays", "standalone")}
    if args.case in ("base", "strimzi", "standalone"):
        docs = render(overlays[args.case])
        check_common(docs, f, image_ref)
        if args.case == "standalone":
            check_standalone(docs, f)
        else:
            check_kafka_mode(docs, f, args.source_dir)
        if args.case == "strimzi":
            check_strimzi(docs, f)
        else:
            f.check(not find(docs, "KafkaTopic"), "only the Strimzi overlay has KafkaTopics")
    elif args.case == "kmsg":
        docs = render_with_component(deploy, os.path.join("components", "kmsg"))
        check_common(docs, f, image_ref, privileged_ok=True, extra_host_paths={"/dev/kmsg"})
        ds = one(docs, "DaemonSet", AGENT)
        privileged = [w["metadata"]["name"] for w, pod in pod_templates(docs)
                      for c in containers(pod) if c.get("securityContext", {}).get("privileged")]
        f.check(privileged == [AGENT], f"with components/kmsg the agent alone is privileged; "
                f"privileged: {privileged}")
        kmsg = [v for v in ds["spec"]["template"]["spec"]["volumes"]
                if v.get("hostPath", {}).get("path") == "/dev/kmsg"]
        f.check(kmsg and kmsg[0]["hostPath"].get("type") == "CharDevice",
                "components/kmsg mounts /dev/kmsg as a CharDevice")
        for base_docs_case in ("base", "strimzi", "standalone"):
            rendered = render(overlays[base_docs_case])
            f.check(all(not c.get("securityContext", {}).get("privileged")
                        for _, pod in pod_templates(rendered) for c in containers(pod)),
                    f"{base_docs_case} has no privileged container")
    elif args.case == "drain":
        docs = render_with_component(deploy, os.path.join("components", "drain"))
        check_common(docs, f, image_ref)
        check_bound_rules(docs, TAINTER, TAINTER_DRAIN_RULES, f, TAINTER_EVENT_RULES)
        check_bound_rules(render(overlays["base"]), TAINTER, TAINTER_RULES, f,
                          TAINTER_EVENT_RULES)  # the base itself cannot evict
    elif args.case in ("image", "configs"):
        docs_by_case = {name: render(path) for name, path in overlays.items()}
        if args.case == "image":
            check_image(args, docs_by_case, f)
        else:
            check_configs(args, docs_by_case, f)
    elif args.case == "monitoring":
        check_monitoring(args, f, can_render)
    elif args.case == "admission":
        why = check_admission(args, render(overlays["standalone"]),
                              render_with_component(deploy, os.path.join("components",
                                                                         "tainter-scope")), f)
        if why and not f.items:
            print(f"SKIPPED: {why}; the policy's CEL was not evaluated")
            return 0

    for item in f.items:
        print(f"FAIL: {item}")
    print(f"{args.case}: {'ok' if not f.items else f'{len(f.items)} invariant(s) violated'}")
    return 1 if f.items else 0


if __name__ == "__main__":
    sys.exit(main())
