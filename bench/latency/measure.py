#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Detection latency: a write to /dev/kmsg -> faultline's taint on the Node.

Driven by bench/latency/latency.sh, which starts the processes. For each
injection this writes a fake Xid 79 with a unique marker to /dev/kmsg (a
fresh fd, `<4>`, ending in a newline) and takes the time just before the
write; it then polls the API double's request log until the PATCH that adds
faultline's taint and carries the marker (the reasons annotation holds the
line) has been answered 200, and takes that request's server-side time
(`time_unix_us`). Latency = PATCH time - write time (same host, same clock).

The bench rule pack gives Xid 79 a short `expire`, so the Tainter lifts its
own taint a moment later; the next injection waits for the lift (and its
Event) so that every injection is a new taint decision.

usage: measure.py --api URL --ca CA --node NODE --count N --out FILE [--label L]
Writes "latency_us write_time_us marker" per sample to FILE; prints progress.
"""
import argparse
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse

TAINT_KEY = "faultline.dev/faulty"


class Api:
    """Keep-alive HTTPS client for the API double's /debug endpoints."""

    def __init__(self, url, ca):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def request(self, method, path):
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(
                        self.host, self.port, context=self.ctx, timeout=5)
                self.conn.request(method, path)
                resp = self.conn.getresponse()
                body = resp.read()
                return json.loads(body) if body else None
            except (OSError, http.client.HTTPException):
                # The double closes idle connections quickly: reconnect.
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        return None


def kmsg_write(line):
    fd = os.open("/dev/kmsg", os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, ("<4>" + line + "\n").encode())
    finally:
        os.close(fd)


def node_tainted(api, node):
    for n in api.request("GET", "/debug/nodes")["items"]:
        if n["metadata"]["name"] == node:
            return any(t.get("key") == TAINT_KEY for t in n.get("spec", {}).get("taints") or [])
    raise SystemExit(f"node {node} not on the API double")


def untaint_events(api, node):
    # A repeated Event is the same object with a higher count.
    return sum(e.get("count", 1) for e in api.request("GET", "/debug/events")["items"]
               if e.get("involvedObject", {}).get("name") == node
               and e.get("reason") == "FaultlineUntainted")


def wait(pred, timeout, interval=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(interval)
    return False


def taint_patch_time(api, node, marker):
    """Server time of the 200 PATCH on the node adding our taint with `marker`."""
    for r in api.request("GET", "/debug/requests"):
        if (r["method"] == "PATCH" and r["path"] == f"/api/v1/nodes/{node}"
                and r["status"] == 200 and marker in r["body"]):
            try:
                ops = json.loads(r["body"])
            except ValueError:
                continue
            for op in ops if isinstance(ops, list) else []:
                # add /spec/taints (a list), add /spec/taints/- (one), or replace.
                if (op.get("op") in ("add", "replace")
                        and op.get("path", "").startswith("/spec/taints")
                        and TAINT_KEY in json.dumps(op.get("value"))):
                    return r["time_unix_us"]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--timeout", type=float, default=15.0)
    ap.add_argument("--gap", type=float, default=2.0,
                    help="seconds of quiet after each lift, before the next injection")
    args = ap.parse_args()

    api = Api(args.api, args.ca)
    run = f"{os.getpid():x}{time.time_ns() & 0xffffff:x}"
    lifts = untaint_events(api, args.node)
    latencies, discarded = [], 0
    with open(args.out, "w") as out:
        for i in range(args.count):
            # Idle: no faultline taint, the previous lift's Event written.
            if not wait(lambda: not node_tainted(api, args.node), 30, 0.05):
                raise SystemExit("the taint was not lifted (expire in the bench pack?)")
            api.request("DELETE", "/debug/requests")
            marker = f"flbench-{run}-{i}"
            line = (f"NVRM: Xid (PCI:0000:{(i % 200) + 16:02x}:00): 79, pid={10000 + i}, "
                    f"name={marker}, GPU has fallen off the bus.")
            t0 = time.time_ns() // 1000
            kmsg_write(line)
            found = []

            def landed():
                t = taint_patch_time(api, args.node, marker)
                if t is not None:
                    found.append(t)
                return bool(found)

            if not wait(landed, args.timeout, 0.01):
                # Another process's Xid on the shared /dev/kmsg may have tainted the
                # node first: then ours only updates the reasons. Not a sample.
                discarded += 1
                print(f"{args.label} injection {i}: no taint patch within {args.timeout} s; "
                      "discarded; node writes seen:", file=sys.stderr)
                for r in api.request("GET", "/debug/requests"):
                    if r["method"] == "PATCH":
                        print(f"  {r['status']} {r['path']} {r['body'][:400]}", file=sys.stderr)
            else:
                lat = found[0] - t0
                latencies.append(lat)
                out.write(f"{lat} {t0} {marker}\n")
                out.flush()
            lifts += 1
            if not wait(lambda: untaint_events(api, args.node) >= lifts, 30, 0.05):
                lifts = untaint_events(api, args.node)
            # Quiet before the next fault, as between real ones: each cycle
            # here is a new taint and its lift, ~13 Kubernetes requests in
            # ~2.3 s, and back to back that outruns the tainter's client-side
            # limiter (qps 5, burst 10: the shipped defaults) by itself, so
            # every request of the next taint would queue behind the last
            # cycle's. The shipped valve (5 new taints per 10 min) never lets
            # taints come this fast; the bench turns it off to sample more.
            time.sleep(args.gap)
            if (i + 1) % 10 == 0:
                print(f"{args.label}: {i + 1}/{args.count} injections", file=sys.stderr)
    if discarded:
        print(f"{args.label}: {discarded} injection(s) discarded", file=sys.stderr)
    if not latencies:
        raise SystemExit("no sample")


if __name__ == "__main__":
    main()
