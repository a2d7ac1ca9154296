// SPDX-License-Identifier: Apache-2.0
// The node watch: KubeNodeApi::ListNodesAt/WatchNodes and the NodeInformer
// against the HTTPS API double.
//
// API-server semantics these tests rely on (kube-apiserver's watch cache,
// which the double reproduces):
//  - a list's metadata.resourceVersion is where a watch of the same
//    collection resumes: the watch sends every change after it, in order;
//  - a watch is a chunked stream of JSON lines {"type","object"} with type
//    ADDED, MODIFIED or DELETED (BOOKMARK only when asked for);
//  - with a labelSelector, a node that stops matching arrives as DELETED and
//    one that starts matching as ADDED;
//  - a watch from a resourceVersion that was compacted away gets HTTP 200
//    and one ERROR event carrying a Status with code 410 (Expired); the
//    client must list again;
//  - the server ends a watch after timeoutSeconds; the client watches again
//    from the last resourceVersion it saw.
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/log.h"
#include "base/log_testing.h"
#include "tainter/watch/node_informer.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::seconds;

std::string Names(const std::vector<NodeWatchEvent>& events) {
  std::string out;
  for (const NodeWatchEvent& e : events) {
    const char* type = e.type == NodeWatchEvent::Type::kAdded      ? "ADDED"
                       : e.type == NodeWatchEvent::Type::kModified ? "MODIFIED"
                       : e.type == NodeWatchEvent::Type::kDeleted  ? "DELETED"
                                                                   : "BOOKMARK";
    out += std::string(type) + ":" + e.node.name + " ";
  }
  return out;
}

TEST_CASE("a watch from a list's resourceVersion sends every later change, in order") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {{"gpu", "true"}});
  f.server->AddNode("gpu-2");
  Result<NodeListing> listing = f.Api().ListNodesAt("gpu=true");
  REQUIRE(listing.ok());
  REQUIRE(listing->nodes.size() == 1);
  REQUIRE_FALSE(listing->resource_version.empty());

  // Someone lifts a taint on gpu-1, gpu-2 joins the selector, gpu-1 leaves it.
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["annotations"] = {{"a", "b"}}; });
  f.server->MutateNode("gpu-2", [](json& n) { n["metadata"]["labels"]["gpu"] = "true"; });
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["labels"].erase("gpu"); });

  std::vector<NodeWatchEvent> seen;
  Status s = f.Api().WatchNodes(
      "gpu=true", listing->resource_version, seconds(10),
      [&](const NodeWatchEvent& e) {
        seen.push_back(e);
        return seen.size() < 3;
      },
      nullptr);
  CHECK(s.ok());
  CHECK(Names(seen) == "MODIFIED:gpu-1 ADDED:gpu-2 DELETED:gpu-1 ");
  CHECK(seen[0].node.annotations.at("a") == "b");
  CHECK(seen[2].node.resource_version ==
        f.server->GetNodeJson("gpu-1")->at("metadata").at("resourceVersion"));
  auto requests = f.server->Requests();
  CHECK(requests.back().params.at("watch") == "true");
  CHECK(requests.back().params.at("resourceVersion") == listing->resource_version);
}

TEST_CASE("a watch from a compacted resourceVersion is 410 Gone (kOutOfRange)") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  Result<NodeListing> listing = f.Api().ListNodesAt("");
  REQUIRE(listing.ok());
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["labels"]["x"] = "y"; });
  f.server->CompactWatchHistory();
  Status s = f.Api().WatchNodes(
      "", listing->resource_version, seconds(10), [](const NodeWatchEvent&) { return true; },
      nullptr);
  CHECK(s.code() == StatusCode::kOutOfRange);
}

TEST_CASE("a watch streams a change made while it is open, and stops when asked") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  Result<NodeListing> listing = f.Api().ListNodesAt("");
  REQUIRE(listing.ok());
  std::vector<NodeWatchEvent> seen;
  std::atomic<int> count{0};
  std::atomic<bool> stop{false};
  Status s = OkStatus();
  std::thread watcher([&] {
    s = f.Api().WatchNodes(
        "", listing->resource_version, seconds(20),
        [&](const NodeWatchEvent& e) {
          seen.push_back(e);
          ++count;
          return true;
        },
        &stop);
  });
  for (int i = 0; i < 200 && f.server->OpenWatches() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(f.server->OpenWatches() == 1);
  f.server->AddForeignTaint("gpu-1", "example.com/maint", "", "NoSchedule");
  // The event arrives on the stream; then the watcher is told to stop.
  for (int i = 0; i < 400 && count.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  stop = true;
  watcher.join();
  CHECK(s.ok());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].type == NodeWatchEvent::Type::kModified);
  CHECK(seen[0].node.taints.size() == 1);
}

TEST_CASE("the informer lists, follows the watch, and lists again after 410 Gone") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {{"gpu", "true"}});
  f.server->AddNode("gpu-2");
  // The informer's own client, with real waits (it runs on its own thread).
  KubeNodeApi::Options o;
  auto api = KubeNodeApi::Create(f.config, o, RealClock(), f.metrics);
  REQUIRE(api.ok());
  NodeInformer informer(**api,
                        {.selector = "gpu=true",
                         .watch_timeout = seconds(1),
                         .retry_delay = std::chrono::milliseconds(100)},
                        f.metrics);
  informer.Start();
  std::vector<NodeInformer::Change> changes;
  auto wait_for = [&](auto done) { return TakeChangesUntil(informer, changes, done); };
  auto lists = [&] {
    int n = 0;
    for (const auto& c : changes) n += c.kind == NodeInformer::Change::Kind::kList ? 1 : 0;
    return n;
  };
  REQUIRE(wait_for([&] { return lists() == 1; }));
  CHECK(changes[0].objects.size() == 1);
  CHECK(informer.synced());

  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["annotations"] = {{"k", "v"}}; });
  REQUIRE(wait_for([&] {
    return !changes.empty() && changes.back().kind == NodeInformer::Change::Kind::kUpsert &&
           changes.back().objects[0].annotations.count("k") == 1;
  }));

  // A change the informer does not see (gpu-2 is outside its selector)
  // moves the server past the informer's last version; then the history
  // goes. The next watch (after the 1 s timeout) from that version gets
  // 410 and the informer lists again.
  f.server->MutateNode("gpu-2", [](json& n) { n["metadata"]["annotations"] = {{"k", "v"}}; });
  f.server->CompactWatchHistory();
  REQUIRE(wait_for([&] { return lists() == 2; }));
  CHECK(f.metrics.CounterValue("faultline_tainter_node_watch_restarts_total", {{"why", "gone"}}) ==
        1);
  informer.Stop();
}

// Counts the informer's log lines while alive (one per line it writes).
class WatchLogCount {
 public:
  WatchLogCount() {
    SetLogSinkForTest([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~WatchLogCount() { SetLogSinkForTest(nullptr); }
  int Count(std::string_view level, std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& line : lines_) {
      const json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("level", "") == level &&
          j.value("msg", "").find(text) != std::string::npos) {
        ++n;
      }
    }
    return n;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// Issue 28, item 7: with the API server down, the node and pod watches
// retried every second each and warned every time (108 warnings from three
// replicas in 17 s). Now they back off with jitter like every other call,
// warn once for the streak and say when it ends.
TEST_CASE("with the API server down, the watch backs off and warns once per failure streak") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  KubeNodeApi::Options o;
  auto api = KubeNodeApi::Create(f.config, o, RealClock(), f.metrics);
  REQUIRE(api.ok());
  WatchLogCount logs;
  // A 100 ms first retry (the daemon's is 1 s), so the window is short.
  NodeInformer informer(**api,
                        {.watch_timeout = seconds(1),
                         .retry_delay = std::chrono::milliseconds(100),
                         .max_retry_delay = std::chrono::milliseconds(3'000),
                         .jitter_seed = 7},
                        f.metrics);
  informer.Start();
  std::vector<NodeInformer::Change> changes;
  REQUIRE(TakeChangesUntil(informer, changes, [&] { return informer.synced(); }));

  // The server goes away: every request from now on is reset without a
  // byte of answer (the open watch ends at its 1 s timeout).
  f.server->FailNext(1'000'000, FakeApiServer::kReset);
  auto resets = [&] {
    int n = 0;
    for (const auto& r : f.server->Requests()) n += r.status == FakeApiServer::kReset ? 1 : 0;
    return n;
  };
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const int attempts = resets();
  // A fixed 100 ms pause made ~40 attempts in these 4 s of outage; the
  // backoff's ceiling doubles from 100 ms to 3 s, so it makes about 8.
  CHECK(attempts >= 2);
  CHECK(attempts <= 12);
  CHECK(informer.failing());
  CHECK(logs.Count("warn", "node watch") == 1);

  // A change while the server is away for the informer; then the server is
  // back: the next watch resumes from the last version seen, the change
  // arrives, and the streak's end is logged once with its length.
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["annotations"] = {{"k", "v"}}; });
  f.server->ClearFaults();
  REQUIRE(TakeChangesUntil(informer, changes, [&] {
    return !changes.empty() && changes.back().kind == NodeInformer::Change::Kind::kUpsert &&
           changes.back().objects[0].annotations.count("k") == 1;
  }));
  CHECK_FALSE(informer.failing());
  CHECK(logs.Count("info", "node watch works again") == 1);
  CHECK(logs.Count("warn", "node watch") == 1);
  informer.Stop();
}

}  // namespace
}  // namespace faultline
