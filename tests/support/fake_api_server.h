// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tests/support/test_pki.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace faultline {

// A Kubernetes API server double for tests, over HTTPS on 127.0.0.1 (port
// 0 by default) with a certificate from a fresh TestPki. It keeps the API
// server's semantics that faultline depends on, as measured against a real
// kube-apiserver (see tainter/README.md):
//
//  Nodes   GET /api/v1/nodes/{name}, GET /api/v1/nodes (labelSelector with =, ==, !=,
//          exists, !exists, in, notin; limit + continue), PATCH, PUT.
//          Every write bumps the global resourceVersion.
//  Watch   GET /api/v1/nodes?watch=true&resourceVersion=RV[&labelSelector=][&timeoutSeconds=]
//          streams (chunked) one JSON line per change after RV: {"type":"ADDED"|
//          "MODIFIED"|"DELETED","object":Node}, as kube-apiserver's watch cache
//          does. Without RV (or "0") it first sends ADDED for every node. With a
//          selector, a node that stops matching is DELETED and one that starts
//          matching is ADDED. An RV older than the kept history (see
//          CompactWatchHistory) gets HTTP 200 and one {"type":"ERROR","object":
//          Status 410 Expired} line, then the stream ends; so does any watch
//          after timeoutSeconds (default 300) or at Stop(). JSON Patch
//          (application/json-patch+json, RFC 6902 with JSON Pointer escaping)
//          is applied atomically; a failed `test` -> 422; `add /spec/taints/-`
//          on a node without spec.taints -> 422; a patch that changes
//          metadata.resourceVersion -> 409. Merge patches (RFC 7386: every
//          list replaced whole) and strategic-merge patches (lists replaced
//          whole, as for taints, except status.conditions: merged by `type`,
//          patchMergeKey of NodeStatus) and PUT with a stale
//          metadata.resourceVersion -> 409. PATCH /api/v1/nodes/{name}/status
//          (the status subresource) changes only status; a write to the node
//          itself keeps the old status, as kube-apiserver's node strategies do. Invalid taints
//          (empty key, unknown effect, duplicate key+effect) and annotations over 256 KiB -> 422.
//  Pods    GET /api/v1/pods (every namespace; fieldSelector with =, ==, != over
//          the fields kube-apiserver selects pods by: metadata.name,
//          metadata.namespace, spec.nodeName, spec.restartPolicy,
//          spec.schedulerName, spec.serviceAccountName, spec.hostNetwork,
//          status.phase, status.podIP, status.nominatedNodeName; any other
//          field -> 400 BadRequest; limit + continue) and its watch
//          (?watch=true, as for nodes: a pod that stops matching the field
//          selector is DELETED, one that starts matching is ADDED). Pods
//          share the one resourceVersion sequence with every other object.
//  Evict   POST /api/v1/namespaces/{ns}/pods/{name}/eviction (policy/v1 Eviction), as
//          kube-apiserver's eviction REST (pkg/registry/core/pod/storage/eviction.go):
//          no such pod -> 404; a body that is not an Eviction for this pod -> 400;
//          a pod that is terminal (Succeeded/Failed), Pending or already deleting
//          is deleted without consulting a budget; more than one budget selecting
//          the pod -> 500; a budget with disruptionsAllowed < 1 -> 429 TooManyRequests
//          "Cannot evict pod as it would violate the pod's disruption budget." with
//          details.causes[{reason: DisruptionBudget}] and no Retry-After header;
//          otherwise the budget's disruptionsAllowed drops by one and the answer
//          is 201 (a Status, status Success). The pod gets metadata.deletionTimestamp
//          and is deleted once its grace period (deleteOptions.gracePeriodSeconds,
//          else spec.terminationGracePeriodSeconds, else 30) is over, as the kubelet
//          would; 0 deletes it at once. Budgets are set with SetDisruptionBudget
//          (the disruption controller is not simulated: disruptionsAllowed only
//          changes by evictions and by SetDisruptionBudget).
//  Events  POST/GET (list, fieldSelector involvedObject.name=) /api/v1/namespaces/{ns}/events,
//          GET/PATCH (merge) .../events/{name}; POST of an existing name -> 409.
//          ValidateEvent's namespace rule: metadata.namespace (the URL's) must
//          equal involvedObject.namespace, or be "default" for an object
//          without one (a Node); a Pod must name its namespace. Else 422.
//  Leases  GET/POST/PUT /apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]:
//          POST of an existing name -> 409 AlreadyExists; PUT with a stale
//          metadata.resourceVersion -> 409 Conflict; GET of none -> 404.
//  Auth    Bearer token: none -> 403 (anonymous), wrong -> 401. A client
//          certificate signed by the test CA also authenticates.
//  Faults  FailNext(): the next N matching requests get 429 (with Retry-After),
//          5xx or 409, or hang, are dropped mid-body, or reset (kHang, kDrop, kReset);
//          BeforeNextNodeWrite(): a hook run before the next node PATCH/PUT is applied (a
//          concurrent writer between a GET and a PATCH).
//  Record  every API request: method, path, query, content type, body, status,
//          time (time_unix_us).
//  Debug   (no auth, not recorded): GET /debug/requests (the record as JSON),
//          DELETE /debug/requests, GET /debug/nodes, GET /debug/events,
//          POST /debug/fail?status=(N|hang|drop|reset)&count=&method=&path=&retry_after=, DELETE
//          /debug/fail (clears every pending fault; with ?status= only those),
//          POST /debug/nodes (a Node JSON body, or ?name=), POST
//          /debug/boot?node=&boot_id= (SetBootId: a reboot), POST /debug/pods (a
//          Pod JSON body, stored as given), DELETE /debug/pods?namespace=&name=,
//          for shell-level tests.
//
// Thread-safety: all methods are safe from any thread; handlers run on the
// server's own threads.
class FakeApiServer {
 public:
  struct Options {
    std::string token = "fl-test-token";  // the accepted bearer token
    int port = 0;                         // 0: any free port
    std::string host = "127.0.0.1";
  };

  struct RecordedRequest {
    std::string method;
    std::string path;   // decoded, without the query
    std::string query;  // raw, as sent ("limit=500&labelSelector=gpu%3Dtrue")
    std::map<std::string, std::string> params;  // decoded query parameters
    std::string content_type;
    std::string body;
    bool bearer_token = false;  // an Authorization: Bearer header was sent (its value is not kept)
    int status = 0;
    // CLOCK_REALTIME in microseconds when the reply was decided (a write is
    // visible from then on); for latency measurements against this double.
    std::int64_t time_unix_us = 0;
  };

  // Generates the PKI and starts serving. Errors: kInternal (PKI, bind).
  static Result<std::unique_ptr<FakeApiServer>> Start(Options options);
  static Result<std::unique_ptr<FakeApiServer>> Start() { return Start(Options{}); }
  ~FakeApiServer();  // Stop()
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  void Stop();

  std::string url() const;  // "https://127.0.0.1:PORT"
  int port() const { return port_; }
  const TestPki& pki() const { return pki_; }
  const std::string& ca_pem() const { return pki_.ca_cert_pem; }
  std::string token() const;
  // Rotates the accepted token: the old one gets 401 from now on.
  void SetToken(std::string token);
  // A kubeconfig (server, certificate-authority-data, token) for this server.
  std::string KubeconfigYaml() const;

  // Nodes. AddNode creates a Node with uid "uid-<name>", the label
  // kubernetes.io/hostname plus `labels`, and spec.taints only if `taints`
  // is not empty (each {"key","value","effect"}).
  void AddNode(const std::string& name, const std::map<std::string, std::string>& labels = {},
               const std::vector<nlohmann::json>& taints = {});
  void PutNodeJson(nlohmann::json node);  // stores as given; bumps resourceVersion
  std::optional<nlohmann::json> GetNodeJson(const std::string& name) const;
  // A foreign writer: changes the node and bumps its resourceVersion.
  // Returns false if there is no such node.
  bool MutateNode(const std::string& name, const std::function<void(nlohmann::json&)>& mutate);
  // A foreign writer adding a taint such as node.kubernetes.io/not-ready:NoSchedule.
  bool AddForeignTaint(const std::string& node, const std::string& key, const std::string& value,
                       const std::string& effect);
  void DeleteNode(const std::string& name);
  // The node rebooted: sets status.nodeInfo.bootID (the kubelet reports
  // /proc/sys/kernel/random/boot_id there after each boot) and bumps the
  // resourceVersion, so a watch sees MODIFIED. False: no such node.
  bool SetBootId(const std::string& node, const std::string& boot_id);
  // Pods (kubelet and scheduler are not simulated: status.podIP and
  // spec.nodeName are as given). Stores or replaces; bumps resourceVersion.
  void PutPodJson(nlohmann::json pod);
  void DeletePod(const std::string& ns, const std::string& name);
  // A PodDisruptionBudget in `ns` selecting the pods whose labels include
  // every pair of `match_labels`, with status.disruptionsAllowed =
  // `disruptions_allowed`. Replaces one of the same name.
  void SetDisruptionBudget(const std::string& ns, const std::string& name,
                           const std::map<std::string, std::string>& match_labels,
                           int disruptions_allowed);
  int DisruptionsAllowed(const std::string& ns, const std::string& name) const;
  std::optional<nlohmann::json> GetPodJson(const std::string& ns, const std::string& name);
  // Forgets the change history (etcd compaction): a watch from any
  // resourceVersion before now gets 410 Gone and must re-list.
  void CompactWatchHistory();
  // Watch streams currently open.
  int OpenWatches() const;

  std::vector<nlohmann::json> Events() const;
  std::optional<nlohmann::json> GetLeaseJson(const std::string& ns, const std::string& name) const;

  // Faults. The next `count` requests whose method equals `method` (empty:
  // any) and whose path starts with `path_prefix` (empty: any) get `status`
  // with a Kubernetes Status body; 429 carries Retry-After: retry_after_seconds.
  // `status` may also be a connection fault (kept in the record's status):
  //   kHang   the request is read and never answered, until ClearFaults() or Stop()
  //           (a stalled apiserver or load balancer); the connection is then reset;
  //   kDrop   the request is processed (a write is applied), its status line,
  //           headers and Content-Length are sent, then the connection closes
  //           half-way through the body; a watch closes right after its headers;
  //   kReset  the request is read, not processed, and the connection is reset
  //           (TCP RST) without a byte of answer.
  static constexpr int kHang = -1;
  static constexpr int kDrop = -2;
  static constexpr int kReset = -3;
  void FailNext(int count, int status, std::string method = {}, std::string path_prefix = {},
                int retry_after_seconds = 1);
  // Clears every pending fault and ends hung requests (DELETE /debug/fail).
  void ClearFaults();
  // Runs `hook` (once, without the server lock held, so it may call
  // MutateNode) when the next PATCH or PUT to a node arrives, before it is
  // applied.
  void BeforeNextNodeWrite(std::function<void(FakeApiServer&)> hook);

  std::vector<RecordedRequest> Requests() const;
  // Requests with this method whose path starts with `path_prefix`.
  int CountRequests(const std::string& method, const std::string& path_prefix = "/") const;
  void ClearRequests();
  nlohmann::json RequestsJson() const;

 private:
  struct Fault {
    int remaining;
    int status;
    std::string method;
    std::string path_prefix;
    int retry_after_seconds;
  };

  explicit FakeApiServer(Options options, TestPki pki);
  void Routes();
  // GET /api/v1/nodes?watch=true: called with mu_ held; streams from the
  // server's thread after the handler returns.
  void ReplyList(const httplib::Request& req, httplib::Response& res,
                 const std::map<std::string, nlohmann::json>& objects, std::string_view list_kind,
                 const std::function<bool(const nlohmann::json&)>& matches);
  void Watch(const httplib::Request& req, httplib::Response& res,
             const std::string& resource = "nodes");
  nlohmann::json NewNode(const std::string& name, const std::map<std::string, std::string>& labels,
                         const std::vector<nlohmann::json>& taints) const;
  std::string BumpLocked(nlohmann::json& object);
  // Records a node change for watchers (after BumpLocked) and wakes them.
  void RecordNodeChangeLocked(const std::string& type, const nlohmann::json& object,
                              std::optional<nlohmann::json> previous,
                              const std::string& resource = "nodes");
  struct DisruptionBudget {
    std::string ns;
    std::map<std::string, std::string> match_labels;
    int disruptions_allowed = 0;
  };
  // Deletes the pods whose eviction grace period is over (the kubelet's part).
  void ReapEvictedLocked();
  struct NodeChangeRecord {
    std::int64_t rv;
    std::string resource;  // "nodes" or "pods"
    std::string type;
    nlohmann::json object;
    std::optional<nlohmann::json> previous;
  };

  const Options options_;
  const TestPki pki_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::string token_;
  std::int64_t resource_version_ = 1000;
  std::int64_t uid_counter_ = 0;
  std::map<std::string, nlohmann::json> nodes_;
  std::map<std::string, nlohmann::json> pods_;    // "ns/name" -> Pod
  std::map<std::string, nlohmann::json> events_;  // "ns/name" -> Event
  std::map<std::string, nlohmann::json> leases_;  // "ns/name" -> Lease
  std::deque<Fault> faults_;
  std::map<std::string, DisruptionBudget> budgets_;  // "ns/name" -> budget
  // "ns/name" of evicted pods -> when the kubelet would have deleted them
  std::map<std::string, std::chrono::steady_clock::time_point> evicted_;
  std::uint64_t fault_epoch_ = 0;  // bumped by ClearFaults(): hung requests end
  std::function<void(FakeApiServer&)> before_node_write_;
  std::vector<RecordedRequest> requests_;
  std::deque<NodeChangeRecord> node_history_;
  std::int64_t history_floor_ = 0;  // a watch from an RV below this gets 410
  std::condition_variable changed_;
  bool stopping_ = false;
  int open_watches_ = 0;
};

}  // namespace faultline
