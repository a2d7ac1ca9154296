#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Deterministic corpus of realistic GPU-node logs for faultline's benchmarks and tests.

    python3 bench/gen_corpus.py --size-mb 256 --fault-rate 0.001 --seed 1 \
        --out corpus.log --truth corpus.truth.json

The corpus mixes the plain-text shapes faultline scan reads: raw kmsg text, dmesg
("[ 1234.567890] "), dmesg -T ("[Sun Nov 22 07:02:53 2026] "), syslog/journalctl -o short
("Nov 22 07:02:53 gpu-17 kernel: ", "... systemd-networkd[1021]: "), CRI pod-log lines
("2026-11-22T07:02:53.17905Z stderr F ") and ibcounters records. Noise covers systemd,
kubelet, containerd, sshd, CRON, NCCL INFO, training progress and near misses that must
not match any rule ("Xid" in unrelated text, mlx5 ACCESS_REG failures from monitoring
tools, ENA admin-queue text, NCCL INFO "Connection refused, retrying", ...).

With --near-misses every noise line is such a near miss: the worst case for a prefilter,
which then finds a candidate on every line.

A --fault-rate fraction of lines comes from fault templates covering every built-in
rule (and most Xid codes of the catalog). Each template knows which rule ids its line
matches when every rule applies (`faultline scan --source any`), so the truth file is
exact:

    {"seed": 1, "bytes": N, "lines": N, "noise_lines": N,
     "fault_lines": N,          # lines that match at least one rule
     "context_lines": N,        # non-matching lines emitted inside multi-line faults
     "matches": N,              # sum of per_rule (a line may match several rules)
     "per_rule": {"nvidia.xid": N, ...},
     "rule_lines": {"nvidia.xid": [line numbers], ...}}   # only with --truth-lines

Same arguments, same bytes: the generator uses only its own random.Random(seed).
Standard library only; writes about 100-200 MB/s.
"""

import argparse
import json
import random
import sys

HOSTS = ["gpu-17", "gpu-a100-042", "dgx-h100-07", "gb200-n17", "node-3"]
HOST = "gpu-17"
MONTHS = ["Nov"]
DAYS = ["Sun"]
PCI_GPU = ["0000:18:00", "0000:2a:00", "0000:3a:00", "0000:5d:00", "0000:9a:00", "0000:ab:00",
           "0000:ba:00", "0000:db:00", "0009:01:00", "0018:01:00"]
PCI_NIC = ["0000:0c:00.0", "0000:1f:00.0", "0000:3b:00.0", "0000:4d:00.0", "0000:86:00.1",
           "0000:b5:00.0", "0000:c1:00.0", "0000:d2:00.0"]
NETDEVS = ["enp12s0np0", "enp31s0np0", "enp59s0f0np0", "ibp77s0", "eth2", "eth3"]
HCAS = ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"]
PROCS = ["python", "python3", "pt_main_thread", "torchrun", "nv-hostengine", "ffmpeg"]


class Prefixer:
    """Renders the per-origin line prefixes with a slowly advancing clock."""

    def __init__(self, rng):
        self.rng = rng
        self.t = 1800.0  # seconds since boot
        self.wall = 7 * 3600 + 2 * 60 + 53  # 07:02:53

    def tick(self):
        step = self.rng.random() * 0.02
        self.t += step
        self.wall += step

    def hms(self):
        w = int(self.wall) % 86400
        return "%02d:%02d:%02d" % (w // 3600, w // 60 % 60, w % 60)

    def kernel(self, text):
        r = self.rng.random()
        if r < 0.35:
            return "[%12.6f] %s" % (self.t, text)
        if r < 0.55:
            return "[Sun Nov 22 %s 2026] %s" % (self.hms(), text)
        if r < 0.85:
            return "Nov 22 %s %s kernel: %s" % (self.hms(), HOST, text)
        return text

    def journal(self, ident, text):
        if self.rng.random() < 0.8:
            return "Nov 22 %s %s %s: %s" % (self.hms(), HOST, ident, text)
        return "%s: %s" % (ident, text)

    def pod(self, text):
        r = self.rng.random()
        frac = ("%09d" % self.rng.randrange(10**9)).rstrip("0") or "0"
        if r < 0.6:
            return "2026-11-22T%s.%sZ %s F %s" % (self.hms(), frac, self.rng.choice(["stdout", "stderr"]), text)
        if r < 0.8:
            return "2026-11-22T%s.%09d+00:00 stderr F %s" % (self.hms(), self.rng.randrange(10**9), text)
        return text

    def ib(self, text):
        return text


# ---------------------------------------------------------------- noise
def noise_pool(rng, px, n, near_misses=False):
    R = rng.randrange
    C = rng.choice

    def k_usb():
        return px.kernel("usb 1-%d: new high-speed USB device number %d using xhci_hcd" % (R(1, 9), R(2, 40)))

    def k_audit():
        return px.kernel('audit: type=1400 audit(1763794973.%03d:%d): apparmor="STATUS" operation="profile_replace" profile="unconfined" name="cri-containerd.apparmor.d" pid=%d comm="apparmor_parser"' % (R(1000), R(100, 9999), R(1000, 99999)))

    def k_veth():
        return px.kernel("cni0: port %d(veth%08x) entered %s state" % (R(1, 60), R(1 << 32), C(["forwarding", "blocking", "disabled"])))

    def k_nvrm_attach():
        return px.kernel("NVRM: GPU at PCI:%s: GPU-%08x-%04x-%04x-%04x-%012x" % (C(PCI_GPU), R(1 << 32), R(65536), R(65536), R(65536), R(1 << 48)))

    def k_nvrm_load():
        return px.kernel("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 03:22:07 UTC 2024")

    def k_modeset():
        return px.kernel("nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.127.05")

    def k_access_reg():  # mlxlink / DCGM probing registers the firmware refuses: noise
        return px.kernel("mlx5_core %s: mlx5_cmd_out_err:%d:(pid %d): ACCESS_REG(0x805) op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x%06x), err(-22)" % (C(PCI_NIC), R(700, 900), R(1000, 60000), R(1 << 24)))

    def k_mlx_fw():
        return px.kernel("mlx5_core %s: firmware version: 28.39.%d" % (C(PCI_NIC), R(1000, 3000)))

    def k_mlx_port():
        return px.kernel("mlx5_core %s: Port: 1 Link %s" % (C(PCI_NIC), C(["ACTIVE", "INACTIVE"])))

    def k_ena():  # ENA prints admin-queue text like EFA's: must not match the EFA rule
        return px.kernel(C([
            "ena 0000:00:05.0: The ena device didn't send a completion for the admin cmd %d status 0" % R(1, 20),
            "ena 0000:00:05.0: The ena device sent a completion but the driver didn't receive a MSI-X interrupt (cmd %d), autopolling mode is OFF" % R(1, 20),
            "ena 0000:00:05.0: Failed to process command %d (opcode %d) comp_status 1 err -5" % (R(1, 20), R(1, 20)),
            "ena 0000:00:06.0 eth1: Found a Tx that wasn't completed on time, qid %d, index %d." % (R(8), R(1024)),
        ]))

    def k_fs():
        return px.kernel(C([
            "EXT4-fs (nvme0n1p%d): mounted filesystem with ordered data mode. Quota mode: none." % R(1, 4),
            "XFS (nvme%dn1): Mounting V5 Filesystem %08x-0e9c-4a37-9a42-7e3c1b2d4f60" % (R(8), R(1 << 32)),
            "XFS (nvme%dn1): Ending clean mount" % R(8),
            "EXT4-fs (sda1): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
        ]))

    def k_misc():
        return px.kernel(C([
            "IPv6: ADDRCONF(NETDEV_CHANGE): %s: link becomes ready" % C(NETDEVS),
            "pcieport 0000:%02x:01.0: AER: enabled with IRQ %d" % (R(256), R(24, 300)),
            "mce: CPU%d: Thermal monitoring enabled (TM1)" % R(128),
            "EDAC MC%d: Giving out device to module skx_edac controller Skylake Socket#0 IMC#0: DEV 0000:2e:0a.0 (INTERRUPT)" % R(4),
            "oom_reaper: reaped process %d (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB" % R(1000, 99999),
            "python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999",
            "IPVS: rr: TCP 10.96.%d.%d:443 - no destination available" % (R(256), R(256)),
            "nvidia-nvswitch%d: SXid (PCI:0000:%02x:00.0): 12028, Severity 0 Engine instance %d Sub-engine instance 00" % (R(6), R(256), R(64)),
            "NVRM: _kgspLogXid119: Note: Please also check logs above.",
            "nvidia-peermem: loading out-of-tree module taints kernel.",
            "pcieport 0000:00:1c.0: AER: Corrected error received: 0000:00:1c.0",
            "NFS: Registering the id_resolver key type",
            "ata%d: SATA link down (SStatus 0 SControl 300)" % R(1, 32),
            "bond0: making interface %s the new active one" % C(NETDEVS),
            "faultline: kmsg reader started at seq %d" % R(1, 10**6),
            "I/O error, dev loop%d, sector 0 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2" % R(16),
            "nvidia_peermem: module verification failed: signature and/or required key missing - tainting kernel",
            "Memory cgroup stats for /kubepods.slice/kubepods-burstable.slice:",
            "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        ]))

    def j_systemd():
        return px.journal("systemd[1]", C([
            "Started Session %d of User root." % R(1, 9999),
            "Starting Cleanup of Temporary Directories...",
            "run-containerd-runc-k8s.io-%016x-runc.%06x.mount: Deactivated successfully." % (R(1 << 64), R(1 << 24)),
            "kubelet.service: Main process exited, code=exited, status=1/FAILURE" if R(50) == 0 else "Reloading finished in %d ms." % R(50, 400),
            "var-lib-kubelet-pods-%08x\\x2dvolumes.mount: Deactivated successfully." % R(1 << 32),
        ]))

    def j_kubelet():
        return px.journal("kubelet[2211]", C([
            'I1122 %s.%06d    2211 kubelet.go:2451] "SyncLoop (PLEG): event for pod" pod="train/job-%d-worker-%d" event={"ID":"%08x","Type":"ContainerStarted"}' % (px.hms(), R(10**6), R(1000), R(64), R(1 << 32)),
            'I1122 %s.%06d    2211 prober.go:107] "Probe failed" probeType="Readiness" pod="monitoring/dcgm-exporter-%05x" containerName="exporter"' % (px.hms(), R(10**6), R(1 << 20)),
            'E1122 %s.%06d    2211 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \\"StartContainer\\" with CrashLoopBackOff" pod="dev/notebook-%d"' % (px.hms(), R(10**6), R(100)),
        ]))

    def j_containerd():
        return px.journal("containerd[1190]", 'time="2026-11-22T%s.%09dZ" level=info msg="shim disconnected" id=%016x namespace=k8s.io' % (px.hms(), R(10**9), R(1 << 64)))

    def j_sshd():
        return px.journal("sshd[%d]" % R(1000, 60000), C([
            "Accepted publickey for ops from 10.%d.%d.%d port %d ssh2: ED25519 SHA256:%s" % (R(256), R(256), R(256), R(1024, 65535), "x" * 10),
            "pam_unix(sshd:session): session closed for user ops",
            "Connection closed by 10.%d.%d.%d port %d [preauth]" % (R(256), R(256), R(256), R(1024, 65535)),
        ]))

    def j_cron():
        return px.journal("CRON[%d]" % R(1000, 60000), "(root) CMD (/usr/local/bin/gpu-healthcheck --quiet >/dev/null 2>&1)")

    def j_misc():
        return C([
            px.journal("systemd-networkd[1021]", "%s: Gained IPv6LL" % C(NETDEVS)),
            px.journal("xid-exporter[2231]", "scraped %d Xid events from 8 GPUs" % R(3)),
            px.journal("nv-fabricmanager[2213]", "Successfully configured all the available NVSwitches to route GPU NVLink traffic."),
            px.journal("nv-hostengine[4021]", "Detected %d volatile single-bit ECC error(s) in GPU %d." % (R(1, 99), R(8))),
            px.journal("nvidia-persistenced[1301]", "device 0000:%02x:00.0 - persistence mode enabled." % R(256)),
            px.journal("node-exporter[1533]", 'level=info collector=infiniband msg="port counters" device=%s port=1' % C(HCAS)),
            px.journal("kernel", "Xid watch: runbook for Xid 79 is at https://wiki/gpu/Xid-79"),
            px.journal("systemd-networkd[1021]", "veth%07x: %s carrier" % (R(1 << 28), C(["Lost", "Gained"]))),
            px.journal("systemd-networkd[1021]", "cali%011x: Lost carrier" % R(1 << 44)),
        ])

    def p_nccl_info():
        rank = R(8)
        pid = R(1000, 99999)
        return px.pod(C([
            "%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB ; OOB eth0:10.0.%d.%d<0>" % (C(HOSTS), pid, pid, rank, R(256), R(256)),
            "%s:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA" % (C(HOSTS), pid, pid + R(99), rank, R(32), rank, rank, R(64), rank, rank),
            "%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x - Init COMPLETE" % (C(HOSTS), pid, pid, rank, R(1 << 40), R(512), 512, rank, R(1 << 20)),
            "%s:%d:%d [%d] NCCL INFO Call to connect returned Connection refused, retrying" % (C(HOSTS), pid, pid, rank),
            "%s:%d:%d [%d] NCCL INFO NET/IB: Dev %d Port 1 qpn %d mtu 5 LID 0 subnet-prefix 0 FLID 0 fn 0 hca %s" % (C(HOSTS), pid, pid, rank, rank, R(1 << 16), C(HCAS)),
            "%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:10.0.%d.%d<0>" % (C(HOSTS), pid, pid, rank, R(256), R(256)),
            "%s:%d:%d [%d] NCCL INFO [Service thread] Connection closed by localRank %d" % (C(HOSTS), pid, pid, rank, R(8)),
            "%s:%d:%d [%d] NCCL INFO cudaDriverVersion 12040" % (C(HOSTS), pid, pid, rank),
        ]))

    def p_train():
        return px.pod(C([
            "step %d/50000 | loss %.4f | lr %.1e | %.1f TFLOPs | grad_norm %.3f" % (R(50000), rng.random() * 4, rng.random() * 1e-3, 300 + rng.random() * 200, rng.random() * 3),
            "[rank%d]:[I1122 %s.%09d ProcessGroupNCCL.cpp:2051] [PG ID 0 PG GUID 0 Rank %d] ProcessGroupNCCL created ncclComm_ 0x%x on CUDA device:" % (R(8), px.hms(), R(10**9), R(8), R(1 << 40)),
            "epoch %d: checked Xid counters on all GPUs: none" % R(100),
            "INFO:root:saving checkpoint to /ckpt/run-%d/step-%d (%.1f GB)" % (R(100), R(50000), rng.random() * 900),
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB" % (rng.random() * 8),
            "wandb: Run summary: loss %.4f" % (rng.random() * 4),
            "timeout(ms)=600000 for collectives; watchdog enabled",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
        ]))

    def k_amd():  # amdgpu boot and reset chatter that must not match the amd-gpu pack
        pci = "0000:%02x:00.0" % R(256)
        return px.kernel(C([
            "amdgpu %s: amdgpu: ring gfx_0.0.0 uses VM inv eng 0 on hub 0" % pci,
            "amdgpu %s: amdgpu: SMU is initialized successfully!" % pci,
            "amdgpu %s: amdgpu: RAS: optional ras ta ucode is not available" % pci,
            "amdgpu %s: amdgpu: GPU reset succeeded, trying to resume" % pci,
            "amdgpu %s: amdgpu: no uncorrectable hardware errors detected in umc block" % pci,
            "amdgpu %s: amdgpu: MODE1 reset" % pci,
            "amdgpu %s: {1}[Hardware Error]: aca entry[00].STATUS=0x98000800003e0000" % pci,
            "[drm] PCIE GART of 512M enabled.",
            "amdgpu %s: amdgpu:  Process python3 pid %d thread python3 pid %d" % (pci, R(1000, 99999), R(1000, 99999)),
        ]))

    def k_habana():  # habanalabs boot and reset chatter
        hl = "hl%d" % R(8)
        return px.kernel(C([
            "habanalabs %s: Successfully loaded firmware to device" % hl,
            "habanalabs 0000:%02x:00.0: Habana Labs Gaudi2 device detected" % R(256),
            "habanalabs %s: Driver version: 1.23.0-2eae87a" % hl,
            "habanalabs %s: Successfully finished resetting the 0000:%02x:00.0 device" % (hl, R(256)),
            "habanalabs %s: Killing user process pid=%d" % (hl, R(1000, 99999)),
        ]))

    def ib_noise():
        return px.ib("%s port 1 %s +%d (total %d)" % (C(HCAS), C(["port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets"]), R(1, 10**6), R(10**6, 10**10)))

    def near_miss():
        return C([
            px.kernel("nvidia-nvswitch%d: SXid (PCI:0000:%02x:00.0): 12028, Severity 0 Engine instance %d Sub-engine instance 00" % (R(6), R(256), R(64))),
            px.kernel("NVRM: _kgspLogXid119: Note: Please also check logs above."),
            px.kernel("I/O error, dev loop%d, sector 0 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2" % R(16)),
            px.kernel("nvidia_peermem: module verification failed: signature and/or required key missing - tainting kernel"),
            px.kernel("pcieport 0000:00:1c.0: AER: Corrected error received: 0000:00:1c.0"),
            px.kernel("python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999"),
            px.journal("kernel", "Xid watch: runbook for Xid %d is at https://wiki/gpu/Xid-%d" % (R(1, 160), R(1, 160))),
            px.journal("xid-exporter[2231]", "scraped %d Xid events from 8 GPUs" % R(3)),
            px.journal("nv-hostengine[4021]", "Detected %d volatile single-bit ECC error(s) in GPU %d." % (R(1, 99), R(8))),
            px.journal("systemd-networkd[1021]", "veth%07x: %s carrier" % (R(1 << 28), C(["Lost", "Gained"]))),
            px.journal("systemd-networkd[1021]", "cali%011x: Lost carrier" % R(1 << 44)),
            px.pod("%s:%d:%d [%d] NCCL INFO Call to connect returned Connection refused, retrying" % (C(HOSTS), R(1000, 99999), R(1000, 99999), R(8))),
            px.pod("%s:%d:%d [%d] NCCL INFO [Service thread] Connection closed by localRank %d" % (C(HOSTS), R(1000, 99999), R(1000, 99999), R(8), R(8))),
            px.pod("epoch %d: checked Xid counters on all GPUs: none" % R(100)),
            px.pod("RuntimeError: CUDA error: an illegal memory access was encountered"),
            px.pod("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB" % (rng.random() * 8)),
        ])

    makers = [(k_usb, 2), (k_audit, 3), (k_veth, 4), (k_nvrm_attach, 1), (k_nvrm_load, 1), (k_modeset, 1),
              (k_access_reg, 3), (k_amd, 2), (k_habana, 1), (k_mlx_fw, 1), (k_mlx_port, 1), (k_ena, 2), (k_fs, 2), (k_misc, 6),
              (j_systemd, 8), (j_kubelet, 12), (j_containerd, 8), (j_sshd, 3), (j_cron, 2), (j_misc, 5),
              (p_nccl_info, 14), (p_train, 16), (ib_noise, 4)]
    if near_misses:
        # The worst case for a prefilter: every noise line holds a rule's
        # literal (or most of its words) and matches no rule.
        makers = [(k_nvrm_attach, 2), (k_nvrm_load, 1), (k_access_reg, 3), (k_ena, 3), (k_amd, 2),
                  (k_habana, 2), (k_mlx_port, 1), (near_miss, 12)]
    fns = [f for f, w in makers for _ in range(w)]
    pool = []
    for _ in range(n):
        px.tick()
        pool.append(rng.choice(fns)())
    return pool


# ---------------------------------------------------------------- faults
XID_TEXT = {
    13: "Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): Out Of Range Address",
    31: "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_0 faulted @ 0x7f2c_8a000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    43: "Ch 00000002",
    45: "Ch 00000010",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 3, subpartition 0.",
    63: "Row Remapper: New row (0x0000000e9b9107e0) marked for remapping, reset gpu to activate.",
    64: "Row Remapper: Failed to mark row for remapping.",
    74: "NVLink: fatal error detected on link 7(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
    79: "GPU has fallen off the bus.",
    94: "Contained: CE User Channel (0x9). RST: No, D-RST: No",
    95: "Uncontained: FBHUB. RST: Yes, D-RST: No",
    109: "Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x3c054",
    119: "Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801348 0x410).",
    120: "GSP task exception: instruction access page fault @ pc:0x6a3b005e",
}
NVLINK5_UNITS = {144: "SAW_MVB", 145: "RLW_SRC_TRACK", 146: "TLW_RX", 147: "TREX", 148: "NVLPW_CTRL", 149: "NETIR_LINK_EVT", 150: "MSE_WATCHDOG"}
RECOVERY = ["0x0 (None)", "0x1 (GPU Reset Required)", "0x2 (Node Reboot Required)", "0x3 (Drain P2P)", "0x4 (Drain and Reset)"]


def fault_templates(rng, px):
    R = rng.randrange
    C = rng.choice
    K = px.kernel
    P = px.pod
    J = px.journal
    I = px.ib

    # A family's templates are dealt like cards (each shuffled and drawn through
    # before it is shuffled again), not drawn at random: enough groups of a family
    # hold each of its templates, so adding a template cannot push another rule's
    # only one out of a test corpus (rules.generated_corpus_... lost one twice so).
    decks = {}

    def deal(family, templates):
        deck = decks.setdefault(family, [])
        if not deck:
            deck.extend(range(len(templates)))
            rng.shuffle(deck)
        return templates[deck.pop()]

    def nic():
        return C(PCI_NIC)

    def xid():
        code = C(list(range(1, 173)) + [13, 31, 43, 45, 48, 63, 79, 79, 94, 95, 119, 149, 154, 154, 199, 231])
        pci = C(PCI_GPU)
        shape = R(6)
        where = "PCI:%s" % pci if shape else pci  # the older shape has no "PCI:"
        if shape == 5:
            where = "PCI:%s GPU-I:%02d" % (pci, R(1, 8))
        if code in NVLINK5_UNITS:
            body = "%s %s XC0 i0 Link %02d (0x%08x 0x%08x 0x00000000 0x00000000 0x00000000 0x00000000)" % (
                NVLINK5_UNITS[code], C(["Fatal", "Nonfatal", " Fatal  ", "Non-fatal", "FATAL", "NON_FATAL"]).strip(), R(18), R(1 << 32), R(1 << 32))
        elif code == 154:
            frm, to = rng.sample(RECOVERY, 2)
            body = "GPU recovery action changed from %s to %s" % (frm, to)
        else:
            text = XID_TEXT.get(code, "Unexpected status 0x%x for Xid %d" % (R(1 << 16), code))
            pid = C(["%d" % R(100, 99999), "'<unknown>'", "'%d'" % R(100, 99999)])
            body = "pid=%s, name=%s, %s" % (pid, C(PROCS + ["<unknown>"]), text) if R(4) else text
        return [(K("NVRM: Xid (%s): %d, %s" % (where, code, body)), ["nvidia.xid"])]

    def nv_gpu():
        pci = C(PCI_GPU) + ".0"
        return deal("nv_gpu", [
            [(K("NVRM: GPU %s: GPU has fallen off the bus." % pci), ["nvidia.gpu-fallen-off-bus"])],
            [(K("NVRM: GPU at PCI:%s has fallen off the bus." % pci), ["nvidia.gpu-fallen-off-bus"])],
            [(K("NVRM: The NVIDIA GPU %s" % pci), []),
             (K("NVRM: (PCI ID: 10de:2330) installed in this system has"), []),
             (K("NVRM: fallen off the bus and is not responding to commands."), ["nvidia.gpu-not-responding"])],
            [(K("NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:%d" % R(1000, 4000)), ["nvidia.reset-required"])],
            [(K("NVRM: GPU %s: RmInitAdapter failed! (0x%x:0x65:%d)" % (pci, C([0x22, 0x24, 0x25, 0x62]), R(100, 3000))), ["nvidia.rminit-failed"])],
            [(K("NVRM: nvAssertFailedNoLog: Assertion failed: Back to back GSP RPC timeout detected! GPU marked for reset @ kernel_gsp.c:2459"), ["nvidia.gsp-reset-marked"])],
            [(K("NVRM: GPU%d _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn %d sequence %d!" % (R(8), R(1, 100), R(10000))), ["nvidia.gsp-rpc-failure"])],
            [(K("NVRM: _kgspLogXid119: ********************************* GSP Timeout **********************************"), [])],  # banner only (issue 29)
            [(K("nvidia-nvswitch%d: SXid (PCI:0000:%02x:00.0): %s" % (R(6), R(256), C([
                "24007, Fatal, Link %d sourcetrack TCEN0 crumbstore ECC DBE Error" % R(64),
                "12028, Non-fatal, Link %d egress non-posted PRIV error (First)" % R(64),
                "19049, Non-fatal, Link %d NVLDL RX SHORT ERROR RATE" % R(64),
                "20034, Fatal, Link %d LTSSM Fault Up" % R(64)]))), ["nvidia.sxid"])],
            [(K("nvidia-nvswitch%d: SXid (PCI:0000:%02x:00.0): %s" % (R(6), R(256), C([
                "26006, SOE HALTED", "26008, SOE Watchdog error"]))), ["nvidia.nvswitch-soe"])],
            [(K("nvidia-nvswitch%d: SXid (PCI:0000:%02x:00.0): 26006, SOE HALT data[%d] = 0x         ff02c1a" % (R(6), R(256), R(8))), [])],  # the trace dump after a halt
            [(J("nv-hostengine[4021]", "GPU %d had uncorrectable memory errors and row remapping failed." % R(8)), ["nvidia.dcgm-row-remap-failure"])],
            [(J("nv-hostengine[4021]", "GPU %d had memory errors and row remappings are pending" % R(8)), ["nvidia.dcgm-row-remap-pending"])],
            [(J("nv-hostengine[4021]", "Detected %d volatile double-bit ECC error(s) in GPU %d." % (R(1, 9), R(8))), ["nvidia.dcgm-volatile-dbe"])],
            [(K("nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"), ["nvidia.peermem-error"])],
            [(K("nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)"), ["nvidia.peermem-error"])],
        ])

    def nccl():
        host, pid, rank = C(HOSTS), R(1000, 99999), R(8)
        pre = "%s:%d:%d [%d] " % (host, pid, pid + R(1, 999), rank)
        peer = "10.0.%d.%d<%d>" % (R(256), R(256), R(1024, 65535))
        warn = ["nccl.warn"]
        return deal("nccl", [
            [(P(pre + "NCCL WARN NET/IB : Got completion from peer %s with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.4.11 remoteGids::ffff:10.0.4.12 hca %s" % (peer, C(HCAS))), warn + ["nccl.ib-completion-error"])],
            [(P(pre + "NCCL WARN NET/IB: Got completion from peer %s with status=transport retry counter exceeded(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca %s" % (peer, C(HCAS))), warn + ["nccl.ib-completion-error"])],
            [(P(pre + "NCCL WARN NET/IB : Got completion from peer %s with error 13, opcode 129, len 0, vendor err 136" % peer), warn + ["nccl.ib-completion-error"])],
            [(P(pre + "NCCL WARN NET/IB : Got async event : port error"), warn + ["nccl.ib-async-event"])],
            [(P("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3"), ["nccl.backend-error", "nccl.system-error"])],
            [(P("RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1"), ["nccl.backend-error", "nccl.cuda-error"])],
            [(P("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:%d, %s, NCCL version 2.14.3" % (R(1000, 3000), C(["internal error", "invalid usage", "invalid argument"]))), ["nccl.backend-error"])],
            [(P("ncclInternalError: Internal check failed."), ["nccl.internal-error"])],
            [(P("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."), ["nccl.remote-error"])],
            [(P(pre + "NCCL WARN socketStartConnect: Connect to %s failed : Software caused connection abort" % peer), warn + ["nccl.socket-error"])],
            [(P(pre + "NCCL WARN Net : Connect to %s failed : Connection refused" % peer), warn + ["nccl.socket-error"])],
            [(P(pre + "NCCL WARN Cuda failure 'an illegal memory access was encountered'"), warn)],
            [(P("[rank%d]:[E1122 %s.%09d ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for %d milliseconds before timing out." % (rank, px.hms(), R(10**9), rank, R(10**6), C(["ALLREDUCE", "ALLGATHER", "BROADCAST", "REDUCE_SCATTER"]), 600000 + R(1, 999))), ["nccl.watchdog-timeout"])],
            [(P("RuntimeError: CUDA error: uncorrectable ECC error encountered"), ["nccl.cuda-uncorrectable"])],
            [(P("torch.AcceleratorError: CUDA error: uncorrectable NVLink error detected during the execution"), ["nccl.cuda-uncorrectable"])],
            [(K("pt_main_thread[%d]: segfault at %x ip 00007f3b91a2c4e1 sp 00007f3a5fffe9c0 error 4 in libnccl.so.2.19.3[7f3b91800000+1f4b000]" % (R(1000, 99999), R(1 << 40))), ["nccl.segfault"])],
        ])

    def ib():
        dev, port = C(HCAS), 1
        return deal("ib", [
            [(K("mlx5_core %s: poll_health:815:(pid 0): device's health compromised - reached miss count" % nic()), ["mlx5.health-compromised"])],
            [(K("mlx5_core %s: poll_health:739:(pid 0): Fatal error 1 detected" % nic()), ["mlx5.health-compromised"])],
            [(K("mlx5_core %s: print_health_info:424:(pid 0): synd 0x1: firmware internal error" % nic()), ["mlx5.fw-syndrome"])],
            [(K("mlx5_core %s: wait_func:1054:(pid %d): CREATE_MKEY(0x200) timeout. Will cause a leak of a command resource" % (nic(), R(1000, 60000))), ["mlx5.cmd-timeout"])],
            [(K("mlx5_core %s: Port module event[error]: module %d, Cable error, %s" % (nic(), R(2), C(["High Temperature", "Bus stuck (I2C or data shorted)", "Power Budget Exceeded"]))), ["mlx5.port-module-error"])],
            [(K("mlx5_core %s: Port module event: module %d, Cable unplugged" % (nic(), R(2))), ["mlx5.port-module-event"])],
            [(K("mlx5_core %s: Port module event: module %d, Cable plugged" % (nic(), R(2))), ["mlx5.port-module-event"])],  # matched, classified ignore (issue 29)
            [(K("mlx5_core %s: mlx5_pcie_event:301:(pid 0): Detected insufficient power on the PCIe slot (27W)." % nic()), ["mlx5.pcie-insufficient-power"])],
            [(K("mlx5_core %s %s: Link down" % (nic(), C(NETDEVS))), ["net.netdev-link-down"])],
            [(K("mlx5_core %s %s: Link up" % (nic(), C(NETDEVS))), ["net.netdev-link-up"])],
            [(J("systemd-networkd[1021]", "%s: Lost carrier" % C(["ib0", "ib1"] + NETDEVS)), ["net.carrier-lost"])],
            [(J("systemd-networkd[1021]", "%s: Gained carrier" % C(["ib0", "ib1"] + NETDEVS)), ["net.carrier-gained"])],
            [(J("systemd-networkd[260]", "%-16s: %s carrier" % (C(NETDEVS), "lost")), ["net.carrier-lost"])],
            [(K("%s %s %s: NIC Link is Down" % (C(["ixgbe", "i40e", "ice", "bnxt_en", "igc"]), nic(), C(NETDEVS))), ["net.netdev-link-down"])],
            [(K("%s %s %s: NIC Link is Up 100 Gbps, Flow Control: None" % (C(["ixgbe", "i40e", "ice", "bnxt_en"]), nic(), C(NETDEVS))), ["net.netdev-link-up"])],
            [(K("bond0: (slave %s): link status definitely down, disabling slave" % C(NETDEVS)), ["net.bond-slave-down"])],
            [(K("bond0: link status definitely down for interface %s, disabling it" % C(NETDEVS)), ["net.bond-slave-down"])],
            [(K("bond%d: now running without any active interface!" % R(4)), ["net.bond-no-active"])],
            [(K("%s %s %s: Detected %s Unit Hang" % (C(["e1000e", "igb", "ixgbe"]), nic(), C(NETDEVS), C(["Hardware", "Tx"]))), ["net.netdev-watchdog"])],
            [(K("NETDEV WATCHDOG: %s (mlx5_core): transmit queue %d timed out %d ms" % (C(NETDEVS), R(64), R(5000, 9000))), ["net.netdev-watchdog"])],
            [(K("mlx5_core %s %s: NETDEV WATCHDOG: CPU: %d: transmit queue %d timed out %d ms" % (nic(), C(NETDEVS), R(128), R(64), R(5000, 9000))), ["net.netdev-watchdog"])],
            [(K("efa 0000:%02x:1c.0 efa_0: The device didn't send any completion for admin cmd CREATE_QP(1) status 0 (ctx: 0x00000000c4f2b3e1, sq producer: %d, sq consumer: %d, cq consumer: %d)" % (R(256), R(1000), R(1000), R(1000))), ["efa.admin-queue-timeout"])],
            [(K("efa 0000:%02x:1c.0 efa_0: Failed to process command CREATE_QP (opcode 1) comp_status 3 err -12" % R(256)), ["efa.admin-command-failed"])],
            [(K("efa 0000:%02x:1b.0 rdmap%ds27: Wait for completion (polling) timeout" % (R(256), R(256))), ["efa.admin-queue-timeout"])],
            [(K("efa 0000:%02x:1b.0 rdmap%ds27: %s" % (R(256), R(256), C(["Admin queue is closed", "Failed to submit command CREATE_QP (opcode 1) err -19", "Completion context[%d] is used[2]" % R(64)]))), ["efa.admin-queue-closed"])],
            [(K("efa 0000:%02x:1b.0 rdmap%ds27: Failed to process command CREATE_AH (opcode 5) err -12" % (R(256), R(256))), ["efa.admin-command-failed"])],
            [(K("efa 0000:%02x:1b.0: %s" % (R(256), C(["Device isn't ready, abort com init 0x0", "EFA device init failed"]))), ["efa.device-init-failed"])],
            [(I("%s port %d state ACTIVE -> DOWN" % (dev, port)), ["ib.port-down"])],
            [(I("%s port %d state INIT -> ACTIVE" % (dev, port)), ["ib.port-up"])],
            [(I("%s port %d phys_state %s" % (dev, port, C(["LinkUp -> Polling", "Polling -> LinkUp", "LinkUp -> Disabled"]))), ["ib.phys-state"])],
            [(I("%s port %d link_downed +1 (total %d)" % (dev, port, R(1, 50))), ["ib.link-downed"])],
            [(I("%s port %d link_error_recovery +%d (total %d)" % (dev, port, R(1, 5), R(5, 90))), ["ib.link-error-recovery"])],
            [(I("%s port %d symbol_error +%d (total %d)" % (dev, port, R(1, 500), R(500, 9000))), ["ib.port-errors"])],
        ])

    def host():
        pci = "0000:%02x:00.0" % R(256)
        return deal("host", [
            [(K("nvidia %s: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)" % pci), ["host.pcie-aer-fatal"])],
            [(K("pcieport %s: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)" % pci), ["host.pcie-aer-nonfatal"])],
            [(K("pcieport %s: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" % pci), ["host.pcie-aer-corrected"])],
            [(K("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000" % pci), ["host.pcie-dpc"])],
            [(K("pcieport %s: pciehp: Slot(%d): Card not present" % (pci, R(1, 16))), ["host.pciehp-removed"])],
            [(K("mce: [Hardware Error]: CPU %d: Machine Check Exception: 5 Bank 7: be00000000800400" % R(128)), ["host.mce-fatal", "host.mce-uncorrected-status"])],
            [(K("mce: [Hardware Error]: Machine check events logged"), ["host.mce-corrected"])],
            [(K("{%d}[Hardware Error]: event severity: %s" % (R(1, 9), C(["fatal", "corrected", "recoverable"]))), ["host.hw-error-severity"])],
            [(K("EDAC MC%d: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#%d_DIMM#0 (channel:1 slot:0 page:0x%x offset:0x0 grain:32 syndrome:0x0)" % (R(4), R(8), R(1 << 20))), ["host.edac-ue"])],
            [(K("EDAC MC%d: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#%d_DIMM#0 (channel:1 slot:0 page:0x%x offset:0x0 grain:32 syndrome:0x0)" % (R(4), R(8), R(1 << 20))), ["host.edac-ce"])],
            [(K("EDAC MC%d: %d CE on mc#%dcsrow#%dchannel#%d (csrow:3 channel:1 page:0x%x offset:0x80 grain:64 syndrome:0x41)" % (R(4), R(1, 4), R(4), R(8), R(2), R(1 << 20))), ["host.edac-ce"]), (K("EDAC MC1: CE page 0x7f00, offset 0x10, grain 8, syndrome 0x12, row 0, channel 1, label \"\": amd64_edac"), ["host.edac-ce-page"])],
            [(K("INFO: task %s:%d blocked for more than %d seconds." % (C(["python", "kworker/u256:3", "containerd-shim"]), R(100, 99999), C([120, 122, 245]))), ["host.hung-task"])],
            [(K("watchdog: BUG: soft lockup - CPU#%d stuck for %ds! [python:%d]" % (R(128), R(21, 60), R(100, 99999))), ["host.soft-lockup"])],
            [(K("EXT4-fs (nvme0n1p%d): Remounting filesystem read-only" % R(1, 4)), ["host.ext4-readonly"])],
            [(K("EXT4-fs error (device nvme0n1p%d): ext4_find_entry:1455: inode #2: comm ls: reading directory lblock 0" % R(1, 4)), ["host.ext4-error"])],
            [(K("XFS (nvme%dn1): Filesystem has been shut down due to log error (0x2)." % R(8)), ["host.xfs-shutdown"])],
            [(K("blk_update_request: I/O error, dev nvme%dn1, sector %d op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0" % (R(8), R(1 << 30))), ["host.io-error"])],
            [(K("nfs: server 10.0.0.%d not responding, still trying" % R(256)), ["host.nfs-not-responding"])],
            [(K("nfs: server 10.0.0.%d OK" % R(256)), ["host.nfs-ok"])],
            [(K("Memory cgroup out of memory: Killed process %d (python) total-vm:98123456kB, anon-rss:64123456kB, file-rss:10240kB, shmem-rss:0kB, UID:1000 pgtables:131072kB oom_score_adj:999" % R(100, 99999)), ["host.oom-kill"])],
            [(J("systemd[1]", "%s: Failed with result 'exit-code'." % C(["kubelet.service", "mnt-datasets.mount"])), ["host.unit-failed"])],
            [(J("systemd[1]", "nvidia-fabricmanager.service: Failed with result '%s'." % C(["exit-code", "signal"])), ["host.unit-failed", "nvidia.fabricmanager-failed"])],
            [(K("faultline: kmsg ring buffer overrun: %d records lost" % R(1, 5000)), ["faultline.kmsg-overrun"])],
        ])

    def amd():  # amdgpu kernel lines and ROCm runtime lines (rules/amd-gpu.yaml)
        pci = "0000:%02x:00.0" % R(256)
        dev = "amdgpu %s: %s" % (pci, C(["amdgpu: ", "", "amdgpu: {%d}" % R(1, 20)]))
        sock = C(["", "socket: %d, die: %d, " % (R(8), R(4))])
        return deal("amd", [
            [(K("%s%s%d %suncorrectable hardware errors detected in %s block" % (dev, sock, R(1, 9), C(["", "new "]), C(["umc", "gfx", "xgmi_wafl", "sdma"]))), ["amd.ras-uncorrectable"])],
            [(K("%suncorrectable hardware error(ERREVENT_ATHUB_INTERRUPT) detected!" % dev), ["amd.ras-fatal-interrupt"])],
            [(K("%s%s%d %s hardware errors detected in %s block" % (dev, sock, R(1, 2000), C(["correctable", "new correctable", "new deferred"]), C(["umc", "gfx", "xgmi_wafl"]))), ["amd.ras-correctable"])],
            [(K("%spoison is consumed by client %d, kick off gpu reset flow" % (dev, R(1, 20))), ["amd.poison-consumed"])],
            [(K("%sPoison is created" % dev), ["amd.poison-created"])],
            [(K("amdgpu %s: amdgpu: Saved bad pages %d reaches threshold value 128" % (pci, R(128, 200))), ["amd.bad-page-threshold"])],
            [(K("amdgpu %s: amdgpu: Error Address(PA):0x%x  Row:0x%x Col:0x0  Bank:0x%x Channel:0x%x" % (pci, R(1 << 36), R(1 << 14), R(16), R(128))), ["amd.page-retired"])],
            [(K("gim error libgv: [0:%x:0:0][PF][amdgv_reset_gpu:142] Issuing Whole GPU reset." % R(256)), ["amd.gim-error"])],
            [(K("amdgpu %s: amdgpu: GPU reset begin!%s" % (pci, C(["", ". Source:  %d" % R(1, 4)]))), ["amd.gpu-reset"])],
            [(K("amdgpu %s: amdgpu: GPU reset(%d) failed" % (pci, R(1, 9))), ["amd.gpu-reset-failed"])],
            [(K(C(["[drm] VRAM is lost due to GPU reset!", "amdgpu %s: VRAM is lost due to GPU reset!" % pci])), ["amd.vram-lost"])],
            [(K("amdgpu %s: amdgpu: ring %s timeout, signaled seq=%d, emitted seq=%d" % (pci, C(["gfx_0.0.0", "comp_1.2.0", "sdma0"]), R(10**6), R(10**6))), ["amd.ring-timeout"])],
            [(K("amdgpu %s: amdgpu: Ring gfx_0.0.0 reset failed" % pci), ["amd.ring-reset-failed"])],
            [(K("amdgpu %s: amdgpu: [%s] no-retry page fault (src_id:0 ring:%d vmid:%d pasid:%d)" % (pci, C(["gfxhub0", "mmhub0"]), R(256), R(16), R(32768, 40000))), ["amd.page-fault"])],
            [(K("[drm:gfx_v9_0_priv_reg_irq [amdgpu]] *ERROR* Illegal %s in command stream" % C(["register access", "instruction", "opcode"])), ["amd.illegal-command"])],
            [(K("amdgpu %s: amdgpu: SMU: I'm not done with your previous command: SMN_C2PMSG_66:0x00000012 SMN_C2PMSG_82:0x00000005" % pci), ["amd.firmware-busy"])],
            [(K("amdgpu %s: SMU: No response msg_reg: %d resp_reg: 0" % (pci, R(1, 60))), ["amd.smu-hang"])],
            [(K("amdgpu %s: amdgpu: Fatal error during GPU init" % pci), ["amd.init-failed"])],
            [(P("Memory access fault by GPU node-%d (Agent handle: 0x55d0c8a0b2c0) on address 0x7f0c%08x. Reason: Page not present or supervisor privilege." % (R(2, 10), R(1 << 32))), ["amd.rocm-memory-fault"])],
            [(P("HW Exception by GPU node-%d (Agent handle: 0x5624b3e1f2c0) reason :GPU Hang" % R(2, 10)), ["amd.rocm-gpu-hang"])],
            [(P("RuntimeError: HIP error: uncorrectable ECC error encountered"), ["amd.hip-uncorrectable-ecc"])],
            # session 21's generalisation pass: amdgpu, from the driver's formats
            [(K(C(["amdgpu %s: amdgpu: device lost from bus!" % pci, "amdgpu %s: amdgpu: SMU: response:0xFFFFFFFF for index:%d param:0x00000000 message:%s?" % (pci, R(1, 60), C(["GetSmuVersion", "Mode1Reset"])), "amdgpu %s: [drm] device wedged, needs recovery" % pci])), ["amd.device-lost"])],
            [(K(C(["amdgpu %s: amdgpu: GPU mode1 reset failed" % pci, "amdgpu %s: [drm] *ERROR* GPU reset(%d) failed" % (pci, R(1, 9))])), ["amd.gpu-reset-failed"])],
            [(K(C(["amdgpu %s: amdgpu: asic reset on init failed" % pci, "amdgpu %s: amdgpu: XGMI: Failed to add node %d, hive 0x%x ret: -22" % (pci, R(8), R(1 << 60))])), ["amd.init-failed"])],
            [(K("amdgpu %s: amdgpu: %s PCS %s detected" % (pci, C(["XGMI", "WAFL", "XGMI3X16"]), C(["DataLossErr", "TrainingErr", "CRCErr", "BERExceededErr"]))), ["amd.xgmi-pcs-error"])],
        ])

    def habana():  # habanalabs kernel lines (rules/habanalabs.yaml)
        hl = "hl%d" % R(8)
        pci = "0000:%02x:00.0" % R(256)
        return deal("habana", [
            [(K("habanalabs %s: Failed to initialize %s. Device is NOT usable !" % (pci, hl)), ["habana.device-unusable"])],
            [(K("habanalabs %s: %s Failed to reset! Device is NOT usable" % (hl, pci)), ["habana.device-unusable"])],
            [(K("habanalabs %s: Failed to communicate with Device CPU (CPU-CP timeout)" % hl), ["habana.cpu-cp-timeout"])],
            [(K("habanalabs %s: Going to reset device" % hl), ["habana.hard-reset"])],
            # session 21's generalisation pass: habanalabs, from the driver's formats
            [(K("habanalabs %s: Device boot error - %s" % (hl, C(["DRAM initialization failed", "FIT image corrupted", "PLL failure", "unknown ERR0 error 0x%08x" % R(1 << 31)]))), ["habana.boot-error"])],
            [(K("habanalabs %s: %s page fault on va 0x%x" % (hl, C(["PMMU", "HMMU", "MMU"]), R(1 << 40))), ["habana.mmu-page-fault"])],
            [(K("habanalabs %s: Device heartbeat failed! PCI link is %s" % (hl, C(["healthy", "broken"]))), ["habana.heartbeat-failed"])],
            [(K("habanalabs %s: DEC%d_SPI: ECC error detected. address: 0x%x. Syndrome: 0x%x. wrapper id %d. block id 0x%x. critical %d." % (hl, R(8), R(1 << 32), R(16), R(8), R(64), R(2))), ["habana.ecc-error"])],
        ])

    def round3():  # rules added by issue 29 (shapes of the public lines in tests/data/real-lines/r3-*.tsv)
        gpu = C(PCI_GPU) + ".0"
        pci = "0000:%02x:00.0" % R(256)
        fm = "[%s] [ERROR] [tid %d] " % (px.hms(), R(1000, 99999))
        return deal("round3", [
            [(K("NVRM: GPU%d _kgspRpcGspEventPmuHalted: Received signal from GSP that PMU has halted." % R(8)), ["nvidia.gsp-pmu-halted"])],
            [(K("NVRM: GPU %s: RmInitAdapter failed! (0x62:0x65:%d)" % (gpu, R(100, 3000))), ["nvidia.rminit-failed"]),
             (K("NVRM: GPU %s: rm_init_adapter failed, device minor number %d" % (gpu, R(8))), ["nvidia.probe-failed"])],
            [(K("NVRM: The NVIDIA probe routine failed for %d device(s)." % R(1, 8)), ["nvidia.probe-failed"])],
            [(K("NVRM: GPU%d RmInitAdapter: Cannot initialize GSP firmware RM" % R(8)), ["nvidia.gsp-boot-failed"])],
            [(K(fm + "detected NVSwitch %s error %d on fid 0 on NVSwitch pci bus id 00000000:%02x:00.0 physical id %d port %d" % (C(["fatal", "non-fatal"]), C([12028, 24007, 20034]), R(256), R(8), R(64))), ["nvidia.fabricmanager-nvswitch-error"])],
            [(J("nv-fabricmanager[%d]" % R(1000, 99999), "fabric manager NVIDIA GPU driver interface version 550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package."), ["nvidia.fabricmanager-driver-mismatch"])],
            [(K("gdrdrv:nvidia_p2p_get_pages(va=%x len=4194304 p2p_token=0 va_space=0) failed [ret = -22]" % R(1 << 40)), ["nvidia.gpudirect-error"])],
            [(J("containerd[%d]" % R(1000, 99999), 'time="2026-11-22T07:02:53.738797825Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:gpu-feature-discovery-qfjgk,Namespace:gpu-operator,Attempt:2,} failed, error" error="failed to get sandbox runtime: no runtime for \\"nvidia\\" is configured"'), ["nvidia.container-runtime-missing"])],
            [(K("%s %s: AER: can't recover (no error_detected callback)" % (C(["nvidia", "snd_hda_intel"]), pci)), ["host.pcie-aer-no-recovery"])],
            [(K("pcieport %s: AER: device recovery failed" % pci), ["host.pcie-aer-no-recovery"])],
            [(K("pcieport %s: AER: %sUncorrected (%s) error received: %s" % (pci, C(["", "Multiple "]), C(["Fatal", "Non-Fatal"]), pci)), ["host.pcie-aer-uncorrected-received"])],
            [(K("mce: [Hardware Error]: CPU %d: Machine Check: 0 Bank %d: %s" % (R(128), R(1, 20), C(["a600000000020408", "be00000000800400", "fa00000000010135"]))), ["host.mce-uncorrected-status"])],
            [(J("mcelog[%d]" % R(1000, 99999), "STATUS %s MCGSTATUS %d" % (C(["b200000000070f0f", "be00000000800400", "fa00000000010135"]), R(8))), ["host.mcelog-uncorrected-status"])],
            [(K("{%d}[Hardware Error]:   error_type: 3, multi-bit ECC" % R(1, 9)), ["host.ghes-multibit-ecc"])],
            [(K("Memory failure: 0x%x: recovery action for %s: %s" % (R(1 << 28), C(["dirty LRU page", "reserved kernel page", "huge page"]), C(["Recovered", "Failed", "Ignored"]))), ["host.memory-failure"])],
            [(K("NMI watchdog: Watchdog detected hard LOCKUP on cpu %d" % R(128)), ["host.hard-lockup"])],
            [(K("Uhhuh. NMI received for unknown reason %02x on CPU %d." % (C([0x2d, 0x3d, 0x30, 0xb1]), R(128))), ["host.unknown-nmi"])],
            [(P("E1122 07:02:%02d.%06d       1 utils.go:58] GRPC call: /csi.v1.Node/Node%sVolume, GRPC error: rpc error: code = %s desc = mount failed: exit status %d" % (R(60), R(1000000), C(["Stage", "Publish"]), C(["Internal", "DeadlineExceeded"]), R(1, 33))), ["host.csi-mount-failed"])],
            [(P(C(["[ERROR] Failed to get new memory reference with rc: %d" % R(1, 120), "[ERROR] Received import response from node id %d with failure status %d" % (R(18), R(1, 9))])), ["nvidia.imex-error"])],
            [(K("ixgbe %s: Warning firmware error detected FWSM: 0x%08X" % (nic(), C([0, 0xFFFFFFFF, 0x0118801F]))), ["net.nic-firmware-error"])],
            [(P("Failed, NCCL error %s:%d '%s'" % (C(["all_reduce.cu", "/src/plugins/ncclPlugin/allreducePlugin.cpp"]), R(40, 400), C(["unknown result code", "invalid usage (run with NCCL_DEBUG=WARN for details)", "invalid argument (run with NCCL_DEBUG=WARN for details)"]))), ["nccl.check-failed"])],
            [(P("Accelerator Fatal Error: call to %s returned error %d: Other" % (C(["cuCtxCreate", "cuMemcpyDtoHAsync", "cuStreamSynchronize"]), C([214, 220]))), ["nccl.cuda-fatal-code"])],
            [(J("nhc[%d]" % (4000 + R(9000)), "ERROR:  nhc:  Health check failed:  %s" % C(["check_gpu_count: Expected 8 GPUs, found 7", "check_hw_ib:  No IB port mlx5_%d:1 is ACTIVE (LinkUp 400 Gb/sec)." % R(8)])), ["host.nhc-check-failed"])],
            [(K("amdgpu %s: amdgpu: amdgpu_device_ip_init failed" % pci), ["amd.init-failed"])],
            [(K("amdgpu: probe of %s failed with error -22" % pci), ["amd.init-failed"])],
            [(K("[drm:amdgpu_device_ip_init [amdgpu]] *ERROR* %s of IP block <%s> failed -%d" % (C(["sw_init", "hw_init", "resume"]), C(["psp", "smu", "gmc_v9_0", "gfx_v9_0"]), C([2, 22, 62]))), ["amd.ip-block-failed"])],
            [(K("[drm:psp_hw_start [amdgpu]] *ERROR* PSP load tmr failed!"), ["amd.psp-discovery-failed"])],
            [(K("amdgpu %s: amdgpu: get invalid ip discovery binary signature from vram" % pci), ["amd.psp-discovery-failed"])],
            [(K("amdgpu %s: [drm] device wedged, but recovered through reset" % pci), ["amd.device-wedged-recovered"])],
            [(P(":0:rocdevice.cpp :2672: %010d us: %d : [tid:0x7f676e4c7640] Device::callbackQueue aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29" % (R(10**9), R(100, 99999))), ["amd.hsa-queue-error"])],
            [(K("mlx5_core %s: print_health_info:429:(pid 0): Health issue observed, firmware internal error, severity(2) CRITICAL:" % nic()), ["mlx5.health-issue"])],
            [(K("mlx5_core %s: mlx5_load_one failed with error code -22" % nic()), ["mlx5.init-failed"])],
            [(K("mlx5_core: probe of %s failed with error -22" % nic()), ["mlx5.init-failed"])],
            [(P("[%s:%d:0:%d] ib_mlx5_log.c:139  Transport retry count exceeded on %s:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)" % (C(HOSTS), R(1000, 99999), R(1000, 99999), C(HCAS))), ["ib.transport-retry-exceeded", "ib.ucx-completion-error"])],
            [(P("Unable to write to EQ: Missing or unavailable event queue. err: Input/output error (5) prov_errno: Unknown error -%d (-%d) prov/efa/src/rxr/rxr.h:1343" % ((lambda e: (e, e))(R(10, 13)))), ["efa.libfabric-eq-error"])],
            [(P("[rank%d]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank %d] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1" % ((lambda r: (r, r))(R(256)))), ["nccl.watchdog-hang"])],
            [(P("torch.AcceleratorError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"), ["nccl.cuda-device-unavailable"])],
            [(P("nrtd[1]: [NRTD:InitTongas] Failed to initialize devices, error:%d" % R(1, 3)), ["neuron.device-init-failed"])],
            [(P("%d-Nov-01 06:02:18.0992 %d:%d ERROR  NMGR:dlr_infer                               Inference completed with err: %d" % (R(2021, 2026), R(1000, 60000), R(1000, 60000), C([1002, 1004, 1006]))), ["neuron.execution-error"])],
            [(P("E1122 07:02:53.%06d       1 main.go:62] Error to get IB device: %s" % (R(1000000), C(["open /run/infa-map.json: no such file or directory", "no RDMA device found"]))), ["ib.rdma-device-plugin-error"])],
            # round 4 of the real-line rules (rules/README.md, "Held-out evidence (round 4)")
            [(K("XFS (vda%d): Metadata corruption detected at xfs_bmap_validate_extent+0x2d/0xa0 [xfs], inode 0x%x xfs_iformat_extents(2)" % (R(1, 8), R(1 << 24))), ["host.xfs-corruption"])],
            [(K("Memory failure: 0x%x: %s" % (R(1 << 28), C(["unhandlable page.", "already hardware poisoned"]))), ["host.memory-failure-page"])],
            [(K("[Hardware Error]: %s" % C(["Corrected error, no action required.", "Deferred error, no action required."])), ["host.mce-error-status"])],
            [(K("rcu: INFO: %s detected stalls on CPUs/tasks:" % C(["rcu_sched", "rcu_preempt"])), ["host.rcu-stall"])],
            [(K("BTRFS error (device nvme%dn1): bdev /dev/nvme%dn1 errs: wr %d, rd 0, flush 0, corrupt %d, gen 0" % ((lambda d: (d, d))(R(8)) + (R(200), R(200)))), ["host.btrfs-error"])],
            [(K("BTRFS: error (device nvme%dn1) in btrfs_commit_transaction:2564: errno=-5 IO failure" % R(8)), ["host.btrfs-aborted"])],
            # session 21: the NVIDIA driver's probe and NVSwitch init failures (rules/README.md,
            # "Generalisation pass (session 21): the NVIDIA driver and services")
            [(K(C(["NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
                   "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\\x0aNVRM: BAR%d is 0M @ 0x0 (PCI:%s.0)" % (C([0, 1]), C(PCI_GPU))])), ["nvidia.pci-bar-invalid"])],
            [(K(C(["NVRM: installed in this system is not supported by the %d.%d.%02d" % (C([470, 535, 550]), R(40, 130), R(100)),
                   "NVRM: ignoring the legacy GPU %s.0" % C(PCI_GPU)])), ["nvidia.gpu-unsupported"])],
            [(K(C(["nvidia-nvswitch%d: Failed to initialize device : -%d" % (R(8), C([4, 5, 12, 19])),
                   "nvidia-nvswitch%d: Blacklisted nvswitch device" % R(8),
                   "nvidia-nvswitch%d: Interrupts disabled to avoid a storm" % R(8)])), ["nvidia.nvswitch-init-failed"])],
            [(K(C(["JBD2: Invalid checksum recovering data block %d in journal block %d" % (R(1 << 20), R(1 << 16)), "JBD2: recovery failed", "EXT4-fs (nvme%dn1p2): error loading journal" % R(8)])), ["host.ext4-journal-error"])],
            [(K("BUG: workqueue lockup - pool cpus=%d node=0 flags=0x0 nice=0 stuck for %ds!" % (R(64), R(31, 120))), ["host.workqueue-lockup"])],
            [(K("mlx5_core %s %s: Port: 1 Link %s" % (nic(), C(HCAS), C(["ACTIVE", "DOWN"]))), ["ib.port-link-state"])],
            [(K("NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:%d" % R(100, 999)), ["nvidia.gpu-lost"])],
            [(K(fm + "detected number of NVSwitches don't match with any supported system topology, aborting fabric manager"), ["nvidia.fabricmanager-topology"])],
            [(K(fm + "failed to find the GPU handle %d in the multicast team request setup %d." % (R(1 << 62), R(1 << 62))), ["nvidia.fabricmanager-multicast-error"])],
            [(P("W0301 08:12:44.201733 %d worker_pool.cpp:399] Worker: Received context async event local work queue catastrophic error for context mlx5_%d" % (R(1, 99999), R(8))), ["ib.verbs-app-error"])],
            [(P("libfabric:%d:1730211122::efa:domain:efa_hmem_info_init_cuda():201<warn> Failed to register CUDA buffer with the EFA device, FI_HMEM transfers that require peer to peer support will fail." % R(1, 99999)), ["efa.hmem-p2p-unavailable"])],
            [(P("[rank%d]: NET/OFI Request 0x%x completed with error. RC: %d. Error: 2 (UNDELIVERABLE). Completed length: 0" % (R(256), R(1 << 44), C([21, 113]))), ["efa.ofi-nccl-error"])],
            [(P("libfabric:%d:%d::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:%d" % (R(1000, 99999), R(10**9, 2 * 10**9), R(10**9))), ["efa.libfabric-cq-error"])],
            # round 5 of the real-line rules (rules/README.md, "Held-out evidence (round 5)")
            [(K('XFS (nvme%dn1): metadata I/O error in "xfs_trans_read_buf_map+0x1d0/0x2c0 [xfs]" at daddr 0x%x len 8 error 5' % (R(8), R(1 << 32))), ["host.xfs-io-error"])],
            [(K("EXT4-fs warning (device nvme%dn1p1): __ext4_read_dirblock:%d: error reading directory block (ino %d, block 0)" % (R(8), R(100, 999), R(1 << 24))), ["host.ext4-read-error"])],
            [(K("nvme nvme%d: Device not ready; aborting reset, CSTS=0x1" % R(8)), ["host.nvme-controller-failed"])],
            [(K("md/raid1:md%d: Disk failure on nvme%dn1p1, disabling device." % (R(128), R(8))), ["host.md-disk-failed"])],
            [(K("[Hardware Error]: Northbridge Error (node %d): DRAM ECC error detected on the NB." % R(8)), ["host.amd-nb-ecc"])],
            [(K("infiniband %s: mlx5_poll_one:527:(pid 0): %s error cqe on cqn 0x%x:" % (C(HCAS), C(["Requestor", "Responder"]), R(1 << 20))), ["mlx5.error-cqe"])],
            # round 5's held-out misses, covered after the measurement from the kernel's formats
            [(K("mce: [Hardware Error]: CPU %d: Machine Check: 0 Bank %d: %s" % (R(128), R(1, 20), C(["8c00004000010092", "9c00004000010090", "cc0000400001009f"]))), ["host.mce-corrected-status"])],
            [(K("CMCI storm detected: switching to poll mode"), ["host.cmci-storm"])],
            [(K("nvme nvme%d: I/O tag %d (%04x) opcode 0x1 (I/O Cmd) QID %d timeout, aborting req_op:WRITE(1) size:4096" % (R(8), R(1024), R(1 << 16), R(1, 64))), ["host.nvme-timeout"])],
            # round 6 of the real-line rules (rules/README.md, "Held-out evidence (round 6)")
            [(P("RuntimeError: NCCL communicator was aborted on rank %d." % R(256)), ["nccl.comm-aborted"])],
            [(K(C(["BUG: unable to handle page fault for address: ffffb1d0%08x" % R(1 << 32), "BUG: kernel NULL pointer dereference, address: %016x" % R(4096), "Oops: 0002 [#%d] SMP PTI" % R(1, 4)])), ["host.kernel-oops"])],
            [(J("kubelet[%d]" % R(1000, 99999), 'E1122 07:02:53.882190    1823 kubelet.go:2408] "Skipping pod synchronization" err="PLEG is not healthy: pleg was last seen active %dm%d.%ds ago; threshold is 3m0s"' % (R(3, 9), R(60), R(10))), ["host.kubelet-runtime-unhealthy"])],
            [(P("WARNING: infoROM is corrupted at gpu %s.0" % C(PCI_GPU)), ["nvidia.inforom-corrupted"])],
            [(P("Unable to determine the device handle for GPU %s.0: %s" % (C(PCI_GPU), C(["Unknown Error", "GPU is lost.  Reboot the system to recover this GPU"]))), ["nvidia.smi-device-handle"])],
            [(J("nvidia-persistenced[%d]" % R(1000, 99999), "nvidia-persistenced failed to initialize. Check syslog for more details."), ["nvidia.persistenced-failed"])],
            [(P("I0412 08:15:02.%06d       1 health.go:175] XidCriticalError: Xid=%d on Device=GPU-%08x-eeb9-1214-1526-f93c9ea826a8; marking device as unhealthy." % (R(10**6), C([48, 79, 94, 119]), R(1 << 32))), ["nvidia.device-plugin-unhealthy"])],
            [(P(C(["2018/11/08 02:58:%02d Failed to initialize NVML: %s." % (R(60), C(["could not load NVML library", "ERROR_LIBRARY_NOT_FOUND"])), 'time=2026-11-22T07:02:53.543Z level=ERROR msg="Cannot init NVML library; err: %s"' % C(["ERROR_LIBRARY_NOT_FOUND", "ERROR_DRIVER_NOT_LOADED"])])), ["nvidia.nvml-init-failed"])],
            [(J("containerd[%d]" % R(1000, 99999), 'time="2026-11-22T07:02:53.738797825Z" level=error msg="StartContainer failed" error="failed to create shim task: OCI runtime create failed: error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: %s error: nvml error: %s: unknown"' % (C(["initialization", "detection"]), C(["driver not loaded", "unknown error"]))), ["nvidia.container-cli-error"])],
            [(K("NVRM: API mismatch: the client has the version 550.%d.%02d, but" % (R(40, 130), R(100))), ["nvidia.api-mismatch"])],
            [(K("Kernel panic - not syncing: %s" % C(["Fatal hardware error!", "GHES: Fatal hardware error"])), ["host.ghes-fatal", "host.kernel-oops"])],
            [(K("Lustre: scratch-OST%04x-osc-ffff8d2a3c5e0800: Connection to scratch-OST%04x (at 10.0.%d.%d@o2ib) was lost; in progress operations using this service will wait for recovery to complete" % (R(64), R(64), R(256), R(256))), ["host.lustre-connection-lost"])],
            [(K("mlx5_core %s: mlx5_eq_int:556:(pid 0): CQ error on CQN 0x%x, syndrom%s 0x1" % (C(PCI_NIC), R(1 << 20), C(["", "e"]))), ["mlx5.cq-error"])],
            [(P("[%s:%d:0:%d] ib_mlx5_log.c:177  %s on %s:1/IB (synd 0x%x vend 0x%x hw_synd 0/0)" % (C(HOSTS), R(1000, 99999), R(1000, 99999), C(["Local protection", "Remote access", "Local QP operation"]), C(HCAS), C([4, 2, 0x13]), R(256))), ["ib.ucx-completion-error"])],
            [(P("W1122 07:02:53.%06d %d rdma_io.cc:412] poll_once - channel_id: %d, CQE error, wr_id=%d, status=%s" % (R(1000000), R(1000, 99999), R(16), R(1 << 20), C(["10 (remote access error)", "5 (Work Request Flushed Error)", "11 (remote operation error)"]))), ["ib.uccl-completion-error"])],
            # round 12's held-out misses, covered after the measurement from the drivers' formats
            [(K("NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!  Notify Timeout Seconds: %d" % R(5, 10)), ["nvidia.rc-watchdog"])],
            # session 21's generalisation pass: NICs and storage controllers, from the drivers' formats
            [(K(C(["ixgbe %s: Adapter removed" % nic(), "igb %s %s: PCIe link lost" % (nic(), C(NETDEVS)), "bnxt_en %s %s: Firmware reset aborted, rc = -%d" % (nic(), C(NETDEVS), R(1, 120)), "ice %s: Rebuild failed, unload and reload driver" % nic(), "ena %s: Reset attempt failed. Can not reset the device" % nic()])), ["net.nic-failed"])],
            [(K(C(["megaraid_sas %s: Reset failed, killing adapter scsi%d." % (nic(), R(4)), "mpt3sas_cm%d: fault_state(0x%04x)!" % (R(4), R(1 << 16)), "mpt3sas_cm%d: SAS host is non-operational !!!!" % R(4), "smartpqi %s: controller offline" % nic(), "ata%d: reset failed, giving up" % R(1, 9)])), ["host.storage-controller-failed"])],
            # session 22's generalisation pass: accelerator user-space stacks, from the programs' formats
            [(J("nv-hostengine[4021]", C(["Pending page retirements together with a DBE were detected on GPU %d." % R(8), "CUDA APIs have indicated that a double-bit ECC error has occured on GPU %d." % R(8), "GPU had an uncontained error (XID 95)"])), ["nvidia.dcgm-volatile-dbe"])],
            [(P(C(["2024/06/06 09:12:%02d ERROR XidCriticalError: the device will go unhealthy xid=%d aip=01P0-HL2080A0-15-TNZ%02d-07-02" % (R(60), R(1, 4), R(100)), "2023/11/06 16:40:%02d XidCriticalError: Xid=%d on AIP=01P0-HL2080A0-15-TNZ%02d-07-02, the device will go unhealthy" % (R(60), R(1, 4), R(100))])), ["habana.device-plugin-unhealthy"])],
            [(P("RuntimeError: synStatus=%d [%s] Device acquire failed." % C([(8, "Device not found"), (17, "Device reset"), (20, "Device already acquired"), (26, "Generic failure")])), ["habana.synapse-error"])],
            [(P(C(["[rank%d]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting %dms for %s operation to complete" % (R(64), C([300000, 1800000]), C(["recv", "send"])), "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.0.4.%d]:%d" % (R(256), R(1024, 65536)), "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (10.0.4.%d, 29500)." % R(256)])), ["torch.c10d-network-error"])],
            # session 22's generalisation pass: GPU-node health checkers and Slurm, from Slurm's and DCGM's formats
            [(J("slurmctld[%d]" % R(1000, 99999), "error: Setting node gpu-%02d state to INVAL with reason:%s" % (R(64), C(["gres/gpu count reported lower than configured (%d < 8)" % R(8), "gres/gpu count too low (%d < 8)" % R(8), "gpu:h100 count too low (%d < 8)" % R(8)]))), ["host.slurm-gres-invalid"])],
            [(J("slurmd[%d]" % R(1000, 99999), "error: health_check failed: rc:%d output:%s" % (R(1, 3), C(["gpu-check: 7 of 8 GPUs visible", "ib port mlx5_%d down" % R(8)]))), ["host.slurm-health-check-failed"])],
            [(J("slurmd[%d]" % R(1000, 99999), "error: Failed to get device handle for GPU %d: %s" % (R(8), C(["Unknown Error", "GPU is lost"]))), ["nvidia.smi-device-handle"])],
            [(P(C(["GPU %d's NvLink link %d is currently down" % (R(8), R(18)), "NvSwitch physical ID %d's NvLink port %d is currently down." % (R(4), R(64)), "NvSwitch %d - Only %d NvLinks are up out of the expected 18" % (R(4), R(10, 18)), "Detected fatal errors on NvSwitch %d link %d" % (R(4), R(64))])), ["nvidia.dcgm-nvlink-down"])],
            # session 22's generalisation pass: file systems and block storage, from the kernel's, OpenZFS's, multipath-tools', Lustre's and Ceph's formats
            [(K("md/%s: %s" % (C(["raid0md%d" % R(128), "raid1:md%d" % R(128), "raid:md%d" % R(128)]), C(["Disk failure on nvme%dn1 detected, failing array." % R(8), "Cannot continue operation (%d/%d failed)." % (R(2, 4), R(4, 9))]))), ["host.md-array-failed"])],
            [(K("device-mapper: multipath: 253:%d: Failing path %d:%d." % (R(16), C([8, 65, 259]), R(256))), ["host.multipath-path-failed"])],
            [(J("multipathd[%d]" % R(1000, 99999), "mpath%s: remaining active paths: 0" % C("abcdef")), ["host.multipath-no-paths"])],
            [(K("device-mapper: verity: 259:%d: %s block %d is corrupted" % (R(16), C(["data", "metadata"]), R(1 << 20))), ["host.dm-verity-corrupted"])],
            [(K("WARNING: Pool '%s' has encountered an uncorrectable I/O failure and has been suspended." % C(["tank", "scratch", "data"])), ["host.zfs-pool-suspended"])],
            [(J("zed", "eid=%d class=%s pool='tank' vdev=nvme%dn1p1" % (R(1, 999), C(["checksum", "io", "data"]), R(8))), ["host.zfs-vdev-error"])],
            [(K("Lustre: %d:0:(client.c:2141:ptlrpc_expire_one_request()) @@@ Request sent has timed out for slow reply: [sent 1763794973/real 1763794973]  req@ffff8d2a3c5e%04x x%d/t0(0) o400->scratch-OST%04x-osc-ffff8d2a3c5e0800@10.0.%d.%d@o2ib:28/4 lens 224/224 e 0 to 1 dl 1763794980 ref 1 fl Rpc:XNQr/0/ffffffff rc 0/-1" % (R(1000, 9999), R(1 << 16), R(1 << 40), R(64), R(256), R(256))), ["host.lustre-rpc-timeout"])],
            [(K(C(["ceph: mds%d %s" % (R(4), C(["hung", "closed our session", "reconnect denied"])), "libceph: mon%d (1)10.0.3.%d:6789 session lost, hunting for new mon" % (R(3), R(256))])), ["host.cephfs-session-lost"])],
            [(K(C(["BTRFS error (device nvme%dn1 state EA): level verify failed on logical %d mirror 1 wanted 1 found 0" % (R(8), R(1 << 40)), "BTRFS error (device nvme%dn1): scrub: unable to fixup (regular) error at logical %d on dev /dev/nvme1n1 physical %d" % (R(8), R(1 << 40), R(1 << 40))])), ["host.btrfs-error"])],
            [(K("XFS (nvme%dn1): Metadata I/O Error (0x1) detected at xfs_trans_read_buf_map+0x1d0/0x2c0 [xfs] (fs/xfs/xfs_trans_buf.c:296).  Shutting down filesystem." % R(8)), ["host.xfs-shutdown"])],
        ])


    def checks():  # the agent's check records (rules/checks.yaml, collector/checks)
        pci = C(PCI_GPU) + ".0"
        n = R(1, 8)
        was = C(["start", "fail", "unknown", "hung"])
        X = px.ib  # records of a source that writes them whole, as the ibcounters ones
        return deal("checks", [
            [(X("check=gpu-inventory status=fail device=node counter=%s value=%d expected=8 missing=%s msg=%d of 8 accelerators on the PCI bus" % (C(["nvidia", "amd", "habana", "neuron"]), n - 1, pci, n - 1)), ["check.gpu-count"])],
            [(X("check=gpu-inventory status=ok device=node counter=nvidia value=8 expected=8 was=%s msg=8 of 8 nvidia accelerators on the PCI bus" % was), ["check.gpu-count-ok"])],
            [(X("check=nvml status=fail device=node counter=gpu_count value=%d expected=8 msg=%d of 8 GPUs visible to NVML" % (n - 1, n - 1)), ["check.nvml-gpu-count"])],
            [(X("check=nvml status=ok device=node counter=gpu_count value=8 expected=8 was=%s msg=8 of 8 GPUs visible to NVML" % was), ["check.nvml-gpu-count-ok"])],
            [(X("check=nvml status=fail device=%s counter=gpu value=%s msg=GPU %d: GPU is lost" % (pci, C(["lost", "Invalid_Argument"]), n)), ["check.nvml-gpu-lost"])],
            [(X("check=nvml status=ok device=node counter=gpu value=8 expected=8 was=%s msg=8 of 8 GPUs pass gpu" % was), ["check.nvml-gpu-ok"])],
            [(X("check=nvml status=fail device=%s counter=nvlink value=%d expected=18 inactive=%d msg=%d of 18 NVLink links active" % (pci, 17, R(18), 17)), ["check.nvlink-inactive"])],
            [(X("check=nvml status=ok device=node counter=nvlink value=8 expected=8 was=%s msg=8 of 8 GPUs pass nvlink" % was), ["check.nvlink-ok"])],
            [(X("check=nvml status=fail device=%s counter=ecc_volatile_uncorrected value=%d msg=uncorrectable ECC errors since the driver loaded" % (pci, n)), ["check.ecc-volatile-uncorrected"])],
            [(X("check=nvml status=fail device=%s counter=ecc_aggregate_uncorrected value=%d expected=<=0 msg=uncorrectable ECC errors over the GPU's life" % (pci, n)), ["check.ecc-aggregate-uncorrected"])],
            [(X("check=nvml status=fail device=%s counter=remap_failure value=1 uncorrectable=%d msg=row remapping failed: the GPU needs replacing" % (pci, n)), ["check.remap-failure"])],
            [(X("check=nvml status=fail device=%s counter=remap_pending value=1 msg=a row remap is pending: the GPU needs a reset" % pci), ["check.remap-pending"])],
            [(X("check=nvml status=ok device=node counter=remap_pending value=8 expected=8 was=%s msg=8 of 8 GPUs pass remap_pending" % was), ["check.remap-pending-ok"])],
            [(X("check=nvml status=fail device=%s counter=clocks value=0x48 reasons=hw_slowdown,hw_thermal msg=clocks slowed down: hw_slowdown,hw_thermal" % pci), ["check.clocks-slowdown"])],
            [(X("check=nvml status=ok device=node counter=clocks value=8 expected=8 was=%s msg=8 of 8 GPUs pass clocks" % was), ["check.clocks-ok"])],
            [(X("check=pcie-link status=fail device=%s counter=pcie_width value=x8 expected=x16 role=nvidia msg=PCIe link trained at x8 of x16" % pci), ["check.pcie-width-low"])],
            [(X("check=pcie-link status=fail device=%s counter=pcie_speed value=16.0_GT/s expected=32.0_GT/s role=nic msg=PCIe link trained at 16.0 GT/s PCIe of 32.0 GT/s PCIe" % pci), ["check.pcie-speed-low"])],
            [(X("check=pcie-link status=ok device=node counter=pcie_width value=16 expected=16 was=%s msg=16 of 16 devices pass pcie_width" % was), ["check.pcie-link-ok"])],
            [(X("check=pcie-aer status=fail device=%s counter=aer_fatal value=%d expected=0 role=nvidia msg=%d new fatal PCIe errors since the agent started" % (pci, n, n)), ["check.aer-fatal"])],
            [(X("check=pcie-aer status=fail device=%s counter=aer_nonfatal value=%d expected=0 role=nic msg=%d new non-fatal PCIe errors since the agent started" % (pci, n, n)), ["check.aer-nonfatal"])],
            [(X("check=nvidia-driver status=fail device=node counter=driver value=missing expected=loaded msg=8 NVIDIA GPUs on the PCI bus but no /proc/driver/nvidia/version"), ["check.nvidia-driver-missing"])],
            [(X("check=nvidia-driver status=fail device=%s counter=driver_gpu value=absent expected=present msg=on the PCI bus but not in /proc/driver/nvidia/gpus: the driver did not initialise it" % pci), ["check.nvidia-gpu-not-initialised"])],
            [(X("check=nvidia-driver status=ok device=node counter=driver_gpu value=8 expected=8 was=%s msg=8 of 8 NVIDIA GPUs initialised by the driver" % was), ["check.nvidia-driver-ok"])],
            [(X("check=npd.gpu-count-custom-plugin-monitor.0.GPUCountMismatch status=fail device=node counter=exit value=1 type=permanent condition=GPUMissing reason=GPUCountMismatch msg=GPU count mismatch: expected 8, found %d" % (n - 1)), ["check.exec-permanent"])],
            [(X("check=nhc status=fail device=node counter=exit value=1 msg=ERROR:  nhc:  Health check failed:  Check check_fs_mount_rw / failed"), ["check.exec-problem"])],
            [(X("check=amd-ras status=fail device=%s counter=%s_ue value=%d expected=0 block=%s msg=%d uncorrectable errors since the driver loaded" % ((lambda b: (pci, b, n, b, n))(C(["umc", "gfx", "xgmi_wafl", "sdma"])))), ["check.amd-ras-uncorrectable"])],
            [(X("check=amd-ras status=fail device=%s counter=umc_ce value=%d expected=0 block=umc msg=%d new correctable umc errors since the previous run" % (pci, n, n)), ["check.amd-ras-correctable"])],
            [(X("check=nvml-xid status=fail device=%s counter=xid value=%d xid=%s xids=%s msg=Xid (NVML event)" % ((lambda x: (pci, n, x, x))(C(["79", "48", "13", "94"])))), ["check.nvml-xid"])],
            [(X("check=nvml status=fail device=%s counter=retired_pages value=%d expected=0 sbe=0 dbe=%d msg=%d pages retired since the agent started" % (pci, n, n, n)), ["check.retired-pages"])],
            [(X("check=nvml status=fail device=%s counter=retired_pages_pending value=1 msg=a page retirement is pending: it takes effect when the driver reloads (a reboot)" % pci), ["check.retired-pages-pending"])],
            [(X("check=nvml status=ok device=node counter=retired_pages_pending value=8 expected=8 was=%s msg=8 of 8 GPUs pass retired_pages_pending" % was), ["check.retired-pages-pending-ok"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=xid value=%s expected=0 gpu=%d hostname=gpu-node msg=Xid" % (pci, C(["79", "48", "13", "94"]), n)), ["check.dcgm-xid"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=row_remap_failure value=1 expected=0 gpu=%d msg=row remapping failed: the GPU needs replacing" % (pci, n)), ["check.dcgm-row-remap-failure"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=ecc_dbe_volatile value=%d expected=0 gpu=%d msg=%d uncorrectable (double-bit) ECC errors since the driver loaded" % (pci, n, n, n)), ["check.dcgm-ecc-dbe-volatile"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=uncorrectable_remapped_rows value=%d expected=%d delta=1 gpu=%d msg=1 new since the previous scrape" % (pci, n + 1, n, n)), ["check.dcgm-remapped-rows"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=pcie_replay value=%d expected=%d delta=%d gpu=%d msg=%d new since the previous scrape" % (pci, 10 + n, 10, n, n, n)), ["check.dcgm-pcie-replay"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=%s value=%d expected=0 delta=%d gpu=%d msg=%d new since the previous scrape" % (pci, C(["nvlink_crc_flit", "nvlink_crc_data", "nvlink_replay", "nvlink_recovery"]), n, n, n, n)), ["check.dcgm-nvlink-errors"])],
            [(X("check=dcgm-exporter status=fail device=%s counter=clocks value=0x48 reasons=hw_slowdown,hw_thermal gpu=%d msg=clocks slowed down: hw_slowdown,hw_thermal" % (pci, n)), ["check.dcgm-clocks-slowdown"])],
            [(X("check=dcgm-exporter status=ok device=node counter=clocks value=8 expected=8 was=%s msg=8 of 8 GPUs pass clocks" % was), ["check.dcgm-clocks-ok"])],
            [(X("check=nvml status=hung device=node counter=run value=10s msg=the check did not finish within its timeout"), ["check.not-conclusive"])],
            [(X("check=round status=fail device=node counter=round value=4 expected=5 checks=gpu-inventory,pcie-link,pcie-aer,nvidia-driver,nvml failed=nvml msg=nvml: %d of 8 GPUs visible to NVML (node gpu_count %d)" % (n - 1, n - 1)), ["check.round"])],
        ])

    # Weighted so every rule shows up many times in a few MiB; Xids are the most common.
    # round3 holds the most rules (54 after round 7): at weight 5 a 20 MiB corpus at 1%
    # faults drew about 4 lines a rule, and one rule none at seed 7 once a template was added.
    return [(xid, 6), (nv_gpu, 3), (nccl, 3), (ib, 4), (host, 4), (amd, 3), (habana, 2), (round3, 10),
            (checks, 6)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, required=True, help="corpus size in MiB")
    ap.add_argument("--fault-rate", type=float, default=0.001, help="fraction of lines drawn from fault templates")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="corpus file ('-' = stdout)")
    ap.add_argument("--truth", help="write the ground truth JSON here")
    ap.add_argument("--pool", type=int, default=60000, help="distinct noise lines to draw from")
    ap.add_argument("--near-misses", action="store_true",
                    help="worst case: draw every noise line from near misses (lines holding a rule's "
                         "literal that match no rule)")
    ap.add_argument("--truth-lines", action="store_true",
                    help="also list, per rule, the 1-based line numbers of its matches in the truth file")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    px = Prefixer(rng)
    pool = noise_pool(rng, px, args.pool, args.near_misses)
    templates = fault_templates(rng, px)
    tfns = [f for f, w in templates for _ in range(w)]
    # Fault templates are dealt like cards, the weighted list shuffled and drawn
    # through before it is shuffled again, not drawn at random: a corpus with at
    # least as many fault groups as the list holds has every template in it, so
    # adding a template cannot push another rule's only one out of a test corpus.
    deck = []

    def deal():
        if not deck:
            deck.extend(tfns)
            rng.shuffle(deck)
        return deck.pop()

    target = int(args.size_mb * 1024 * 1024)
    out = sys.stdout.buffer if args.out == "-" else open(args.out, "wb")
    per_rule = {}
    rule_lines = {}
    written = lines = noise = faults = context = 0
    acc = 0.0
    chunk = 8192
    while written < target:
        # A block is noise lines (str) with fault groups (lists of (text, rules)) spliced in.
        block = rng.choices(pool, k=chunk)
        acc += args.fault_rate * chunk
        nfault = int(acc)
        acc -= nfault
        inserts = []
        for _ in range(nfault):
            px.tick()
            inserts.append((rng.randrange(chunk + 1), deal()()))
        inserts.sort(key=lambda x: x[0], reverse=True)
        for pos, group in inserts:
            block.insert(pos, group)
        texts = []
        size = 0
        for entry in block:
            if isinstance(entry, str):
                n = len(entry) + 1
                if written + size + n > target:
                    break
                texts.append(entry)
                noise += 1
            else:
                n = sum(len(t) + 1 for t, _ in entry)
                if written + size + n > target:
                    break
                for text, rules in entry:
                    texts.append(text)
                    if rules:
                        faults += 1
                        for r in rules:
                            per_rule[r] = per_rule.get(r, 0) + 1
                            if args.truth_lines:
                                rule_lines.setdefault(r, []).append(lines + len(texts))
                    else:
                        context += 1
            size += n
        else:
            size = -1  # block complete
        data = ("\n".join(texts) + "\n").encode() if texts else b""
        lines += len(texts)
        written += len(data)
        out.write(data)
        if size != -1:
            break
    if out is not sys.stdout.buffer:
        out.close()

    if args.truth:
        truth = {
            "seed": args.seed, "fault_rate": args.fault_rate, "near_misses": args.near_misses, "bytes": written, "lines": lines,
            "noise_lines": noise, "fault_lines": faults, "context_lines": context,
            "matches": sum(per_rule.values()), "per_rule": dict(sorted(per_rule.items())),
        }
        if args.truth_lines:
            truth["rule_lines"] = dict(sorted(rule_lines.items()))
        with open(args.truth, "w") as f:
            json.dump(truth, f, indent=1)
            f.write("\n")
    print("wrote %d bytes, %d lines, %d fault lines (%d rules matched %d times)" % (
        written, lines, faults, len(per_rule), sum(per_rule.values())), file=sys.stderr)


if __name__ == "__main__":
    main()
