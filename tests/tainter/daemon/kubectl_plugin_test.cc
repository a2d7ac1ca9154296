// SPDX-License-Identifier: Apache-2.0
// kubectl-faultline (`kubectl faultline nodes|explain|untaint`), run as a
// process against the HTTPS Kubernetes API double with the user's
// kubeconfig, and through kubectl itself where it is installed.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/time_format.h"
#include "tainter/core/reasons.h"
#include "tainter/core/recovery.h"
#include "tests/support/fake_api_server.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

const std::string kPlugin = FL_BINARY_DIR "/tainter/kubectl-faultline";
const std::string kTainter = FL_BINARY_DIR "/tainter/faultline-tainter";

struct Run {
  int status = -1;
  std::string out, err;
};

// Runs `command` through sh with `env` ("K=V K=V") before it, stdout and
// stderr apart.
Run Exec(const TempDir& dir, const std::string& env, const std::string& command) {
  const std::string out = dir / "out", err = dir / "err";
  Run r;
  const int status =
      std::system((env + " " + command + " >" + out + " 2>" + err + " </dev/null").c_str());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileForTest(out);
  r.err = ReadFileForTest(err);
  return r;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::chrono::system_clock::time_point Seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::time_point_cast<std::chrono::seconds>(t);
}

// A node as the tainter leaves it: faultline's taint beside a foreign one,
// and the reasons annotation.
nlohmann::json TaintedNode(const std::string& name, const std::vector<Reason>& reasons) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"labels", {{"kubernetes.io/hostname", name}}},
            {"annotations", {{"faultline.dev/reasons", EncodeReasons(reasons)}}}}},
          {"spec",
           {{"taints",
             {{{"key", "faultline.dev/faulty"}, {"value", "true"}, {"effect", "NoSchedule"}},
              {{"key", "example.com/maintenance"}, {"effect", "PreferNoSchedule"}}}}}}};
}

// The API double with gpu-1 (a hardware Xid: by hand only, plus an expiring
// IB flap), gpu-2 (one expiring reason) and gpu-3 (clean); a kubeconfig for
// it in $KUBECONFIG and nothing in $HOME.
struct Cluster {
  Cluster() {
    auto started = FakeApiServer::Start();
    REQUIRE(started.ok());
    api = std::move(*started);
    kubeconfig = dir.Write("kubeconfig", api->KubeconfigYaml());
    env = "HOME=" + (dir / "home") + " KUBECONFIG=" + kubeconfig;
    const auto now = Seconds(std::chrono::system_clock::now());
    xid.rule = "nvidia.xid";
    xid.summary = "Xid 79 on 0000:3b:00: GPU has fallen off the bus; reset or RMA";
    xid.message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1912, name=python3, GPU has fallen off";
    xid.event_id = "0123456789abcdef0123456789abcdef";
    xid.evidence = {"pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received",
                    "nvidia 0000:3b:00.0: AER: can't recover (no error_detected callback)"};
    xid.first_seen = now - hours(3);
    xid.last_seen = now - hours(1);
    flap.rule = "ib.port-flap";
    flap.summary = "mlx5_0 port 1 went down 5 times";
    flap.message = "mlx5_core 0000:5e:00.0: Port 1 link down";
    flap.first_seen = now - hours(4);
    flap.last_seen = now - minutes(30);
    flap.expires_at = now + hours(2);
    Reason later = flap;
    later.expires_at = now + hours(5);
    api->PutNodeJson(TaintedNode("gpu-1", {xid, flap}));
    api->PutNodeJson(TaintedNode("gpu-2", {later}));
    api->AddNode("gpu-3");
    gpu2_lifts = *later.expires_at;
    api->ClearRequests();
  }

  // Every request the commands sent was a read.
  bool OnlyReads() const {
    for (const auto& r : api->Requests()) {
      if (r.method != "GET") return false;
    }
    return !api->Requests().empty();
  }

  TempDir dir;
  std::unique_ptr<FakeApiServer> api;
  std::string kubeconfig, env;
  Reason xid, flap;
  std::chrono::system_clock::time_point gpu2_lifts;
};

TEST_CASE("explain NODE gives each reason and says a hardware fault is lifted only by hand") {
  Cluster c;
  Run r = Exec(c.dir, c.env, kPlugin + " explain gpu-1");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  INFO(r.out);
  CHECK(Has(r.out,
            "Node gpu-1 is tainted by faultline (faultline.dev/faulty=true:NoSchedule) since " +
                FormatRfc3339(c.flap.first_seen)));
  for (const Reason& reason : {c.xid, c.flap}) {
    CHECK(Has(r.out, ": " + reason.rule + "\n"));
    CHECK(Has(r.out, "summary:    " + reason.summary + "\n"));
    CHECK(Has(r.out, "log line:   " + reason.message + "\n"));
    CHECK(Has(r.out, "first seen: " + FormatRfc3339(reason.first_seen) + "\n"));
    CHECK(Has(r.out, "last seen:  " + FormatRfc3339(reason.last_seen) + "\n"));
  }
  CHECK(Has(r.out, "lines before it (same source, oldest first):\n    " + c.xid.evidence[0] +
                       "\n    " + c.xid.evidence[1] + "\n"));
  CHECK(Has(r.out, "expires:    never"));
  CHECK(Has(r.out, "expires:    " + FormatRfc3339(*c.flap.expires_at) + " (in "));
  CHECK(Has(r.out, "event id:   " + c.xid.event_id));
  CHECK(Has(r.out, "What lifts the taint: only by hand: kubectl faultline untaint gpu-1\n"));
  CHECK(c.OnlyReads());
}

TEST_CASE("explain NODE shows what a rebooted node waits for, and its history") {
  // Return to service (issue 28): gpu-5 faulted in boot-a, rebooted into
  // boot-b, and the first check round of boot-b failed.
  Cluster c;
  Reason xid = c.xid;
  xid.boot_id = "boot-a";
  xid.recover = "reboot";
  const auto now = Seconds(std::chrono::system_clock::now());
  std::vector<Recovery> history = {
      {"boot", "rebooted", "boot id boot-a -> boot-b", now - minutes(20), {}, {}, "boot-b", false},
      {"check.round", "validation", "gpu-inventory: 7 of 8 nvidia accelerators on the PCI bus",
       now - minutes(18), now - minutes(18), now - minutes(18), "boot-b", false}};
  nlohmann::json node = TaintedNode("gpu-5", {xid});
  node["metadata"]["annotations"]["faultline.dev/recoveries"] = EncodeRecoveries(history);
  node["status"]["nodeInfo"]["bootID"] = "boot-b";
  c.api->PutNodeJson(node);
  Run r = Exec(c.dir, c.env, kPlugin + " explain gpu-5");
  CHECK(r.status == 0);
  INFO(r.out);
  CHECK(Has(r.out,
            "waits for:  a passing check round in boot boot-b; the last failed: "
            "gpu-inventory: 7 of 8 nvidia accelerators on the PCI bus [ValidationFailed]\n"));
  CHECK(Has(r.out, "History (faultline.dev/recoveries, oldest first; node boot id boot-b):\n"));
  CHECK(Has(r.out, " rebooted boot: boot id boot-a -> boot-b\n"));
  CHECK(Has(r.out, " validation check.round failed (boot boot-b): gpu-inventory: 7 of 8"));
  CHECK(Has(r.out, "a passing round of the node's checks in the new boot"));
  CHECK(c.OnlyReads());
}

TEST_CASE("explain NODE says when faultline lifts a taint whose every reason expires") {
  Cluster c;
  Run r = Exec(c.dir, c.env, kPlugin + " explain gpu-2");
  CHECK(r.status == 0);
  INFO(r.out);
  CHECK(Has(r.out, "What lifts the taint: faultline itself at " + FormatRfc3339(c.gpu2_lifts)));
  CHECK(Has(r.out, "earlier by hand: kubectl faultline untaint gpu-2"));
  // The same code behind faultline-tainter names itself in its hint.
  Run same = Exec(c.dir, c.env, kTainter + " explain gpu-2");
  CHECK(same.status == 0);
  CHECK(Has(same.out, "earlier by hand: faultline-tainter untaint gpu-2"));
}

TEST_CASE("explain says a clean node is not tainted, and a missing node is an error") {
  Cluster c;
  Run clean = Exec(c.dir, c.env, kPlugin + " explain gpu-3");
  CHECK(clean.status == 0);
  CHECK(
      clean.out ==
      "Node gpu-3 is not tainted by faultline (no faultline.dev/faulty=true:NoSchedule taint).\n");
  Run missing = Exec(c.dir, c.env, kPlugin + " explain gpu-404");
  CHECK(missing.status == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err == "kubectl faultline: explain gpu-404: no such node\n");
  CHECK(c.OnlyReads());
}

TEST_CASE("nodes lists only faultline's tainted nodes, reading only") {
  Cluster c;
  Run r = Exec(c.dir, c.env, kPlugin + " nodes");
  CHECK(r.status == 0);
  INFO(r.out);
  CHECK(r.out.rfind("NODE ", 0) == 0);
  CHECK(Has(r.out, "\ngpu-1 "));
  CHECK(Has(r.out, "\ngpu-2 "));
  CHECK(!Has(r.out, "gpu-3"));
  CHECK(Has(r.out, "nvidia.xid (" + c.xid.summary + ")"));
  CHECK(c.OnlyReads());
  // One list, in pages of 1,000 (10,000 nodes within the client's burst).
  const auto requests = c.api->Requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/api/v1/nodes");
  CHECK(requests[0].params.at("limit") == "1000");
}

TEST_CASE("untaint lifts only faultline's taint, and explain then says the node is clean") {
  Cluster c;
  Run r = Exec(c.dir, c.env, kPlugin + " untaint gpu-1 --reason 'GPU replaced'");
  CHECK(r.status == 0);
  CHECK(r.out == "gpu-1: faultline's taint lifted\n");
  auto node = c.api->GetNodeJson("gpu-1");
  REQUIRE(node);
  CHECK((*node)["spec"]["taints"].size() == 1);
  CHECK((*node)["spec"]["taints"][0]["key"] == "example.com/maintenance");
  Run after = Exec(c.dir, c.env, kPlugin + " explain gpu-1");
  CHECK(Has(after.out, "Node gpu-1 is not tainted by faultline"));
}

TEST_CASE("credentials: the first readable $KUBECONFIG entry, --kubeconfig, or a clear error") {
  Cluster c;
  const std::string home = "HOME=" + (c.dir / "home");
  Run list = Exec(c.dir, home + " KUBECONFIG=" + (c.dir / "absent") + ":" + c.kubeconfig,
                  kPlugin + " explain gpu-3");
  CHECK(list.status == 0);
  Run flag =
      Exec(c.dir, home + " KUBECONFIG=", kPlugin + " explain gpu-3 --kubeconfig " + c.kubeconfig);
  CHECK(flag.status == 0);
  CHECK(Has(flag.out, "is not tainted"));
  Run none = Exec(c.dir, home + " KUBECONFIG= KUBERNETES_SERVICE_HOST=", kPlugin + " nodes");
  CHECK(none.status == 2);
  CHECK(none.out.empty());
  CHECK(none.err.rfind("kubectl faultline: ", 0) == 0);
}

TEST_CASE("kubectl finds the plugin on PATH: kubectl faultline explain NODE") {
  if (access("/usr/bin/kubectl", X_OK) != 0) {
    MESSAGE("SKIPPED: /usr/bin/kubectl is not installed");
    return;
  }
  Cluster c;
  const std::string path = std::string("PATH=") + FL_BINARY_DIR "/tainter:/usr/bin:/bin";
  Run r = Exec(c.dir, c.env + " " + path, "/usr/bin/kubectl faultline explain gpu-1");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(Has(r.out, "Node gpu-1 is tainted by faultline"));
  CHECK(Has(r.out, "only by hand: kubectl faultline untaint gpu-1"));
  Run missing = Exec(c.dir, c.env + " " + path, "/usr/bin/kubectl faultline explain gpu-404");
  CHECK(missing.status == 1);
  CHECK(Has(missing.err, "no such node"));
  Run plugins = Exec(c.dir, c.env + " " + path, "/usr/bin/kubectl plugin list");
  CHECK(Has(plugins.out, FL_BINARY_DIR "/tainter/kubectl-faultline"));
}

}  // namespace
}  // namespace faultline
