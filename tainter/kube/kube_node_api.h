// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "tainter/kube/kube_config.h"
#include "tainter/kube/kube_http.h"
#include "tainter/kube/kube_metrics.h"
#include "tainter/kube/kube_node_json.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// Every page of a list: GET `path` with limit=`page_size` and continue, each
// item handed to `on_item`; returns the list's resourceVersion. Errors as
// node_api.h (a non-200 answer through StatusFromResponse).
Result<std::string> ListPages(KubeHttpClient& http, const std::string& path,
                              const std::string& what, std::size_t page_size,
                              const std::function<void(const nlohmann::json&)>& on_item);

// NodeApi over HTTPS to a real API server (KubeHttpClient underneath: TLS,
// token, QPS/burst limit, retries with backoff on 429/5xx/connection errors).
//
//   GetNode     GET  /api/v1/nodes/{name}
//   WatchNodes  GET  /api/v1/nodes?watch=true&resourceVersion=..  (a stream of JSON lines)
//   ListNodes   GET  /api/v1/nodes?labelSelector=..&limit=..&continue=..  (all pages)
//   UpdateNode  GET the node, then PATCH application/json-patch+json built by
//               BuildNodePatch (first op: test /metadata/resourceVersion). The GET
//               is skipped when the change's expected_resource_version is that of
//               the node the last GetNode read (the tainter reads the node right
//               before it writes: a second GET only spent a request of the QPS
//               budget; the patch's test still refuses a node changed since), and
//               when the change carries the caller's picture of the node at that
//               version (NodeChange::base, the daemon's watch): the patch is built
//               from it, and a 409/422 answer is kAborted at once (the caller
//               reads, merges and writes again). Otherwise, on 409,
//               or 422 when the node's resourceVersion has moved (a stale test),
//               re-read and retry, at most `max_update_attempts` times. A 422
//               while the node is unchanged is a malformed patch: kInvalidArgument.
//               A change already in effect sends nothing.
//   CreateEvent POST /api/v1/namespaces/{ns}/events with a deterministic name ({ns}:
//               the subject's namespace for a Pod's or a job's Event, else the
//               event namespace); when
//               the same event (node, type, reason, message) repeats, PATCH its
//               count and lastTimestamp instead (also after a 409 AlreadyExists).
//
// Errors follow node_api.h. Metrics besides KubeHttpClient's:
//   faultline_kube_conflicts_total   409/stale-test answers that caused a re-read
//   faultline_kube_patches_total     node patches sent
//
// Thread-safety: one thread at a time. `clock` and `metrics` must outlive it.
// It has every capability of node_api.h.
class KubeNodeApi final : public NodeApi,
                          public NodeWatchApi,
                          public PodApi,
                          public EventApi,
                          public ValveRecordApi {
 public:
  struct Options {
    KubeHttpClient::Options http;
    int max_update_attempts = 5;
    std::size_t list_page_size = 500;
    EventOptions events;
    std::size_t max_remembered_events = 4096;
    std::string valve_lease = "faultline-valve";
  };

  // Errors: kInvalidArgument (bad server URL).
  static Result<std::unique_ptr<KubeNodeApi>> Create(KubeConfig config, Options options,
                                                     const Clock& clock, MetricsRegistry& metrics);

  // NodeApi, NodeWatchApi, PodApi, EventApi, ValveRecordApi
  Result<NodeInfo> GetNode(std::string_view name) override;
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Result<NodeListing> ListNodesAt(std::string_view label_selector) override;
  // GET /api/v1/nodes?watch=true&resourceVersion=..&allowWatchBookmarks=true&timeoutSeconds=..
  // JSON lines; an ERROR line with code 410 (or an HTTP 410) is kOutOfRange.
  Status WatchNodes(std::string_view label_selector, std::string_view resource_version,
                    std::chrono::seconds timeout,
                    const std::function<bool(const NodeWatchEvent&)>& on_event,
                    const std::atomic<bool>* stop) override;
  // GET /api/v1/pods?fieldSelector=..[&watch=true..]: every namespace.
  Result<PodListing> ListPodsAt(std::string_view field_selector) override;
  Status WatchPods(std::string_view field_selector, std::string_view resource_version,
                   std::chrono::seconds timeout,
                   const std::function<bool(const PodWatchEvent&)>& on_event,
                   const std::atomic<bool>* stop) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  Status CreateEvent(const NodeEvent& event) override;
  // PATCH /api/v1/nodes/{name}/status, application/strategic-merge-patch+json
  // (BuildConditionsPatch). No resourceVersion precondition: the merge is by
  // condition type, so a concurrent writer of another type loses nothing.
  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override;
  // The Lease `valve_lease` in the event namespace; the value is its
  // annotation faultline.dev/new-taints. GET, then POST (create) or PUT with
  // metadata.resourceVersion (409: kAborted).
  //
  // After this client's own write, the next GetValveRecord returns what was
  // written, at the version the server answered, without a GET: in a storm
  // one replica writes the Lease for every taint, and the read cost one
  // request of the client's QPS each. If another replica wrote since, the PUT
  // at that version gets 409 (kAborted) and the caller reads again, which
  // then GETs. A refusal from the remembered record is a refusal from the
  // live one too: the record only gains entries (each replica's new taints)
  // until they age out of the window, which the valve computes from time.
  Result<SharedRecord> GetValveRecord() override;
  Status PutValveRecord(const std::string& value, const std::string& expected_version) override;

  KubeHttpClient& http() { return *http_; }

 private:
  KubeNodeApi(std::unique_ptr<KubeHttpClient> http, Options options, const Clock& clock,
              MetricsRegistry& metrics);
  Result<nlohmann::json> GetNodeJson(std::string_view name);
  Status PatchEventCount(const std::string& ns, const std::string& name, int count,
                         const std::string& time);
  // A watch stream of JSON lines: `on_object(type, object)` for each event
  // but ERROR (410: kOutOfRange, else kUnavailable); false stops it.
  using WatchObject = std::function<bool(const std::string& type, const nlohmann::json& object)>;
  Status StreamWatch(const std::string& path, const std::string& what, std::chrono::seconds timeout,
                     const WatchObject& on_object, const std::atomic<bool>* stop);

  std::unique_ptr<KubeHttpClient> http_;
  const Options options_;
  const Clock& clock_;
  KubeMetrics metrics_;
  std::map<std::string, int> event_counts_;  // "namespace/event name" -> count we last wrote
  // The node the last GetNode read, for UpdateNode (see above).
  std::optional<SharedRecord> valve_written_;  // our last write of the Lease (see above)
  std::string last_read_name_;
  nlohmann::json last_read_;
};

// Percent-encodes a query value or path segment (RFC 3986 unreserved kept).
std::string UrlEncode(std::string_view text);

}  // namespace faultline
