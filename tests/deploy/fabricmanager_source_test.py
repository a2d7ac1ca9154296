#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shipped Kubernetes agent config's Fabric Manager log source, end to end.

    fabricmanager_source_test.py --agent BIN --config deploy/base/config/agent.yaml

Takes the `sources.file` entry for /var/log/fabricmanager.log from the shipped
config (it must follow the file with kernel origin), points it at a path that
does not exist yet, and runs `faultline-agent --standalone --dry-run` with it
and every other source off. The agent must start (a node without Fabric
Manager has no such file), and once the file appears with a Fabric Manager
"detected NVSwitch fatal error" line, the taint decision must be printed; a
non-fatal line before it must not taint. SIGTERM must then stop it with exit 0.
Prints "SKIPPED: ..." and passes without python3-yaml.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

FM_PATH = "/var/log/fabricmanager.log"
# Lines of the Fabric Manager log as quoted in public issues (the real-line set's
# r3-nvidia.tsv carries them with their URLs).
NONFATAL = ("[Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 "
            "on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61")
FATAL = ("[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 "
         "on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33")
TAINT = "detected nvidia.fabricmanager-nvswitch-error (critical, action taint)"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(path, text, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, encoding="utf-8", errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--config", required=True)
    args = ap.parse_args()
    try:
        import yaml
    except ImportError:
        print("SKIPPED: python3-yaml not installed (deploy/install-deps.sh --test)")
        return 0

    shipped = yaml.safe_load(open(args.config))
    entries = [f for f in (shipped.get("sources", {}).get("file") or []) if f.get("path") == FM_PATH]
    if len(entries) != 1:
        print("FAIL: %s has %d sources.file entries for %s, want 1" % (args.config, len(entries), FM_PATH))
        return 1
    entry = dict(entries[0])
    if entry.get("follow") is not True or entry.get("origin") != "kernel":
        print("FAIL: the Fabric Manager source must be {follow: true, origin: kernel}, is %s" % entry)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        log_dir = os.path.join(tmp, "var-log")  # absent too: nothing exists yet
        entry["path"] = os.path.join(log_dir, "fabricmanager.log")
        config = {
            "node_name": "fm-node",
            "state_dir": os.path.join(tmp, "state"),
            "metrics_address": "127.0.0.1:%d" % free_port(),
            "rules": {"builtin": True, "paths": []},
            "sources": {"kmsg": {"enabled": False}, "journal": {"enabled": False},
                        "podlog": {"enabled": False}, "ibcounters": {"enabled": False},
                        "file": [entry]},
            "standalone": {"dry_run": True},
        }
        os.makedirs(config["state_dir"])
        config_path = os.path.join(tmp, "agent.yaml")
        with open(config_path, "w") as f:
            json.dump(config, f)  # JSON is YAML
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["HOME"] = tmp  # no ~/.kube/config: a dry run whatever the machine has
        with open(out_path, "w") as out, open(err_path, "w") as err:
            agent = subprocess.Popen([args.agent, "--standalone", "--dry-run", "--config", config_path],
                                     stdout=out, stderr=err, env=env)
        failures = []
        try:
            if not wait_for(err_path, '"msg":"started"', 10):
                failures.append("the agent did not start with the file absent")
            elif not wait_for(err_path, "file does not exist yet", 1):
                failures.append("no 'file does not exist yet' log line")
            else:
                os.makedirs(log_dir)
                with open(entry["path"], "a") as f:
                    f.write(NONFATAL + "\n")
                time.sleep(0.5)
                with open(out_path) as f:
                    if TAINT in f.read():
                        failures.append("a non-fatal NVSwitch error tainted")
                with open(entry["path"], "a") as f:
                    f.write(FATAL + "\n")
                if not wait_for(out_path, TAINT, 10):
                    failures.append("no taint decision for the fatal NVSwitch error")
        finally:
            agent.send_signal(signal.SIGTERM)
            try:
                rc = agent.wait(10)
            except subprocess.TimeoutExpired:
                agent.kill()
                rc = agent.wait()
        if rc != 0:
            failures.append("exit status %d after SIGTERM, want 0" % rc)
        if failures:
            for failure in failures:
                print("FAIL: " + failure)
            print("--- stdout\n" + open(out_path).read()[-3000:])
            print("--- stderr\n" + open(err_path).read()[-3000:])
            return 1
    print("ok: the Fabric Manager source waits for an absent file and taints on a fatal NVSwitch error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
