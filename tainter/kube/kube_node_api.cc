// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_node_api.h"

#include <cctype>
#include <cstdio>

#include "base/log.h"
#include "tainter/kube/node_pods.h"

namespace faultline {
namespace {

using nlohmann::json;

constexpr char kJsonPatch[] = "application/json-patch+json";
constexpr char kMergePatch[] = "application/merge-patch+json";

Result<json> ParseBody(const KubeResponse& response, std::string_view what) {
  try {
    return json::parse(response.body);
  } catch (const json::exception& e) {
    // nlohmann's message quotes the token it read last, which for an
    // unterminated string is the rest of the body: cut it, because this
    // message is logged.
    constexpr std::size_t kMaxDetail = 200;
    std::string detail = e.what();
    if (detail.size() > kMaxDetail) detail = detail.substr(0, kMaxDetail) + "...";
    return InternalError(std::string(what) + ": response is not JSON: " + detail);
  }
}

std::string ResourceVersionOf(const json& object) {
  if (!object.is_object() || !object.contains("metadata")) return {};
  const json& meta = object["metadata"];
  if (!meta.is_object() || !meta.contains("resourceVersion") ||
      !meta["resourceVersion"].is_string()) {
    return {};
  }
  return meta["resourceVersion"].get<std::string>();
}

}  // namespace

std::string UrlEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

Result<std::unique_ptr<KubeNodeApi>> KubeNodeApi::Create(KubeConfig config, Options options,
                                                         const Clock& clock,
                                                         MetricsRegistry& metrics) {
  auto http = KubeHttpClient::Create(std::move(config), options.http, clock, metrics);
  if (!http) return http.error();
  return std::unique_ptr<KubeNodeApi>(
      new KubeNodeApi(std::move(*http), std::move(options), clock, metrics));
}

KubeNodeApi::KubeNodeApi(std::unique_ptr<KubeHttpClient> http, Options options, const Clock& clock,
                         MetricsRegistry& metrics)
    : http_(std::move(http)), options_(std::move(options)), clock_(clock), metrics_(metrics) {}

Result<json> KubeNodeApi::GetNodeJson(std::string_view name) {
  if (name.empty()) return InvalidArgumentError("get node: empty name");
  auto response = http_->Send({.verb = "get",
                               .method = "GET",
                               .path = "/api/v1/nodes/" + UrlEncode(name),
                               .content_type = {},
                               .body = {}});
  if (!response) return response.error();
  const std::string what = "get node " + std::string(name);
  if (response->status != 200) return StatusFromResponse(*response, what);
  return ParseBody(*response, what);
}

Result<NodeInfo> KubeNodeApi::GetNode(std::string_view name) {
  auto node = GetNodeJson(name);
  if (!node) return node.error();
  Result<NodeInfo> info = NodeInfoFromJson(*node);
  if (info) {
    last_read_name_ = std::string(name);
    last_read_ = std::move(*node);
  }
  return info;
}

Result<std::vector<NodeInfo>> KubeNodeApi::ListNodes(std::string_view label_selector) {
  Result<NodeListing> listing = ListNodesAt(label_selector);
  if (!listing) return listing.error();
  return std::move(listing->nodes);
}

Status KubeNodeApi::StreamWatch(const std::string& path, const std::string& what,
                                std::chrono::seconds timeout, const WatchObject& on_object,
                                const std::atomic<bool>* stop) {
  std::string buffer;
  Status failure = OkStatus();
  constexpr std::size_t kMaxLine = 16u << 20;  // one object; a bound, not a limit in practice
  std::function<bool(std::string_view)> on_data = [&](std::string_view data) {
    buffer.append(data);
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(buffer.data() + start, nl - start);
      if (line.empty()) continue;
      json event;
      try {
        event = json::parse(line);
      } catch (const json::exception& e) {
        failure = InternalError(what + ": a line is not JSON: " + e.what());
        return false;
      }
      const std::string type = event.value("type", "");
      const json& object = event.contains("object") ? event["object"] : json();
      if (type == "ERROR") {
        const int code = object.is_object() ? object.value("code", 0) : 0;
        const std::string message = object.is_object() ? object.value("message", "") : "";
        failure = code == 410
                      ? OutOfRangeError(std::string(what).append(": 410 Gone: ").append(message))
                      : UnavailableError(std::string(what)
                                             .append(": error ")
                                             .append(std::to_string(code))
                                             .append(": ")
                                             .append(message));
        return false;
      }
      if (!on_object(type, object)) return false;
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxLine) {
      failure = InternalError(what + ": a line longer than 16 MiB");
      return false;
    }
    return true;
  };
  auto response = http_->Stream(
      {.verb = "watch", .method = "GET", .path = path, .content_type = {}, .body = {}},
      std::chrono::duration_cast<std::chrono::milliseconds>(timeout) + std::chrono::seconds(30),
      on_data, stop);
  if (!failure.ok()) return failure;
  if (!response) return response.error();
  if (response->status == 410) return OutOfRangeError(what + ": 410 Gone");
  if (response->status != 200) return StatusFromResponse(*response, what.c_str());
  return OkStatus();
}

Result<std::string> ListPages(KubeHttpClient& http, const std::string& path,
                              const std::string& what, std::size_t page_size,
                              const std::function<void(const json&)>& on_item) {
  std::string resource_version;
  std::string continue_token;
  const char* sep = path.find('?') == std::string::npos ? "?" : "&";
  // A bound on pages, so a server that keeps handing out continue tokens
  // cannot keep us here forever.
  for (int page = 0; page < 10'000; ++page) {
    std::string url = path + sep + "limit=" + std::to_string(page_size);
    if (!continue_token.empty()) url += "&continue=" + UrlEncode(continue_token);
    auto response =
        http.Send({.verb = "list", .method = "GET", .path = url, .content_type = {}, .body = {}});
    if (!response) return response.error();
    if (response->status != 200) return StatusFromResponse(*response, what.c_str());
    auto body = ParseBody(*response, what.c_str());
    if (!body) return body.error();
    if (!body->is_object() || !body->contains("items") || !(*body)["items"].is_array()) {
      return InternalError(what + ": response has no items array");
    }
    for (const auto& item : (*body)["items"]) on_item(item);
    continue_token.clear();
    if (body->contains("metadata") && (*body)["metadata"].is_object()) {
      const json& meta = (*body)["metadata"];
      // Every page is read at the first page's version; the last one names it.
      if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string()) {
        resource_version = meta["resourceVersion"].get<std::string>();
      }
      if (meta.contains("continue") && meta["continue"].is_string()) {
        continue_token = meta["continue"].get<std::string>();
      }
    }
    if (continue_token.empty()) return resource_version;
  }
  return InternalError(what + ": more than 10000 pages");
}

Status KubeNodeApi::WatchNodes(std::string_view label_selector, std::string_view resource_version,
                               std::chrono::seconds timeout,
                               const std::function<bool(const NodeWatchEvent&)>& on_event,
                               const std::atomic<bool>* stop) {
  std::string path = "/api/v1/nodes?watch=true&allowWatchBookmarks=true&timeoutSeconds=" +
                     std::to_string(timeout.count());
  if (!resource_version.empty()) path += "&resourceVersion=" + UrlEncode(resource_version);
  if (!label_selector.empty()) path += "&labelSelector=" + UrlEncode(label_selector);
  return StreamWatch(
      path, "watch nodes", timeout,
      [&](const std::string& type, const json& object) {
        NodeWatchEvent e;
        if (type == "BOOKMARK") {
          e.type = NodeWatchEvent::Type::kBookmark;
          e.node.resource_version = ResourceVersionOf(object);
        } else {
          auto info = NodeInfoFromJson(object);
          if (!info) return true;
          e.node = std::move(*info);
          e.type = type == "ADDED"     ? NodeWatchEvent::Type::kAdded
                   : type == "DELETED" ? NodeWatchEvent::Type::kDeleted
                                       : NodeWatchEvent::Type::kModified;
        }
        return on_event(e);
      },
      stop);
}

Result<NodeListing> KubeNodeApi::ListNodesAt(std::string_view label_selector) {
  NodeListing listing;
  std::string path = "/api/v1/nodes";
  if (!label_selector.empty()) path += "?labelSelector=" + UrlEncode(label_selector);
  auto version =
      ListPages(*http_, path, "list nodes", options_.list_page_size, [&](const json& item) {
        auto info = NodeInfoFromJson(item);
        if (info) listing.nodes.push_back(std::move(*info));
      });
  if (!version) return version.error();
  listing.resource_version = std::move(*version);
  return listing;
}

Result<PodListing> KubeNodeApi::ListPodsAt(std::string_view field_selector) {
  return ListPods(*http_, field_selector, options_.list_page_size);
}

Status KubeNodeApi::WatchPods(std::string_view field_selector, std::string_view resource_version,
                              std::chrono::seconds timeout,
                              const std::function<bool(const PodWatchEvent&)>& on_event,
                              const std::atomic<bool>* stop) {
  std::string path = "/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=" +
                     std::to_string(timeout.count());
  if (!resource_version.empty()) path += "&resourceVersion=" + UrlEncode(resource_version);
  if (!field_selector.empty()) path += "&fieldSelector=" + UrlEncode(field_selector);
  return StreamWatch(
      path, "watch pods", timeout,
      [&](const std::string& type, const json& object) {
        PodWatchEvent e;
        if (type == "BOOKMARK") {
          e.type = PodWatchEvent::Type::kBookmark;
          e.pod.resource_version = ResourceVersionOf(object);
        } else {
          auto info = PodInfoFromJson(object);
          if (!info) return true;
          e.pod = std::move(*info);
          e.type = type == "ADDED"     ? PodWatchEvent::Type::kAdded
                   : type == "DELETED" ? PodWatchEvent::Type::kDeleted
                                       : PodWatchEvent::Type::kModified;
        }
        return on_event(e);
      },
      stop);
}

Status KubeNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  const std::string what = "patch node " + std::string(name);
  // The node the caller just read, when the change is to apply to exactly
  // that version: no second GET (the patch tests the version regardless).
  const bool just_read = !change.expected_resource_version.empty() && last_read_name_ == name &&
                         ResourceVersionOf(last_read_) == change.expected_resource_version;
  // Or the caller's picture of the node (the daemon's watch), at that version.
  bool pictured = !just_read && change.base != nullptr &&
                  !change.expected_resource_version.empty() &&
                  change.base->node.resource_version == change.expected_resource_version;
  Result<json> node = just_read  ? Result<json>(std::move(last_read_))
                      : pictured ? Result<json>(NodeBaseToJson(*change.base))
                                 : GetNodeJson(name);
  last_read_name_.clear();
  last_read_ = nullptr;
  if (!node) return node.error();
  const auto moved = [&] {
    return !change.expected_resource_version.empty() &&
           ResourceVersionOf(*node) != change.expected_resource_version;
  };
  for (int attempt = 1;; ++attempt) {
    if (moved()) return AbortedError(what + ": the node changed since it was read");
    const json patch = BuildNodePatch(*node, change);
    if (patch.empty() && pictured) {
      // In effect on the picture only says so of that version: read the node
      // (a picture never ends a write without the server's word).
      pictured = false;
      node = GetNodeJson(name);
      if (!node) return node.error();
      continue;  // the version test at the top judges the node read
    }
    if (patch.empty()) return OkStatus();  // already in effect: nothing to send
    const std::string sent_version = ResourceVersionOf(*node);
    metrics_.patches.Inc();
    auto response = http_->Send({.verb = "patch",
                                 .method = "PATCH",
                                 .path = "/api/v1/nodes/" + UrlEncode(name),
                                 .content_type = kJsonPatch,
                                 .body = patch.dump()});
    if (!response) return response.error();
    if (response->status >= 200 && response->status < 300) return OkStatus();
    if (response->status != 409 && response->status != 422) {
      return StatusFromResponse(*response, what);
    }
    if (pictured && attempt == 1) {
      // Built from a picture: the node moved since (kube-apiserver answers a
      // failed `test` with 422, a conflict with 409), or the picture lacked
      // something the patch needed. Either way the caller reads the node
      // and merges again; a read here would be one request more, and a
      // patch that is malformed on the live node too is found by that write.
      metrics_.conflicts.Inc();
      return AbortedError(what + ": the node changed since it was seen");
    }
    // 409, or 422 which is what a failed `test` gets: re-read. The status
    // code and the node's version decide, never the message text.
    node = GetNodeJson(name);
    if (!node) return node.error();
    if (response->status == 422 && ResourceVersionOf(*node) == sent_version) {
      // Nothing moved, so our test held and the patch itself is invalid.
      return StatusFromResponse(*response, what);
    }
    metrics_.conflicts.Inc();
    if (attempt >= options_.max_update_attempts) {
      return AbortedError(what + ": still conflicting after " + std::to_string(attempt) +
                          " attempts");
    }
    LogDebug("kube", "node changed under us; re-read and retrying",
             {{"node", std::string(name)}, {"attempt", attempt}});
  }
}

namespace {
constexpr char kValveAnnotation[] = "faultline.dev/new-taints";
}  // namespace

Result<SharedRecord> KubeNodeApi::GetValveRecord() {
  if (valve_written_) {
    SharedRecord mine = std::move(*valve_written_);
    valve_written_.reset();  // once: a retry after a conflict reads the live one
    return mine;
  }
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/" +
                           UrlEncode(options_.events.namespace_name) + "/leases/" +
                           UrlEncode(options_.valve_lease);
  auto response =
      http_->Send({.verb = "get", .method = "GET", .path = path, .content_type = {}, .body = {}});
  if (!response) return response.error();
  if (response->status == 404) return SharedRecord{};
  if (response->status != 200) return StatusFromResponse(*response, "get valve lease");
  auto body = ParseBody(*response, "get valve lease");
  if (!body) return body.error();
  SharedRecord record;
  record.resource_version = ResourceVersionOf(*body);
  const json& meta = (*body)["metadata"];
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    record.value = meta["annotations"].value(kValveAnnotation, "");
  }
  return record;
}

Status KubeNodeApi::PutValveRecord(const std::string& value, const std::string& expected_version) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/" +
                           UrlEncode(options_.events.namespace_name) + "/leases";
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata",
                 {{"name", options_.valve_lease},
                  {"namespace", options_.events.namespace_name},
                  {"annotations", {{kValveAnnotation, value}}}}},
                {"spec", json::object()}};
  Result<KubeResponse> response = InternalError("unreachable");
  if (expected_version.empty()) {  // the first write: create it (409 if another replica did)
    response = http_->Send({.verb = "create",
                            .method = "POST",
                            .path = base,
                            .content_type = "application/json",
                            .body = lease.dump()});
  } else {  // replace it at the version read (409 if it moved)
    lease["metadata"]["resourceVersion"] = expected_version;
    response = http_->Send({.verb = "update",
                            .method = "PUT",
                            .path = base + "/" + UrlEncode(options_.valve_lease),
                            .content_type = "application/json",
                            .body = lease.dump()});
  }
  valve_written_.reset();
  if (!response) return response.error();
  if (response->status >= 200 && response->status < 300) {
    // The Lease as written, with its new version, is the next read.
    if (auto body = ParseBody(*response, "write valve lease"); body) {
      const std::string version = ResourceVersionOf(*body);
      if (!version.empty()) valve_written_ = SharedRecord{value, version};
    }
    return OkStatus();
  }
  return StatusFromResponse(*response, "write valve lease");  // 409: kAborted
}

Status KubeNodeApi::PatchEventCount(const std::string& ns, const std::string& name, int count,
                                    const std::string& time) {
  const json patch = {{"count", count}, {"lastTimestamp", time}};
  auto response =
      http_->Send({.verb = "patch",
                   .method = "PATCH",
                   .path = "/api/v1/namespaces/" + UrlEncode(ns) + "/events/" + UrlEncode(name),
                   .content_type = kMergePatch,
                   .body = patch.dump()});
  if (!response) return response.error();
  if (response->status >= 200 && response->status < 300) {
    event_counts_[ns + "/" + name] = count;
    return OkStatus();
  }
  return StatusFromResponse(*response, "patch event " + name);
}

Status KubeNodeApi::PatchNodeConditions(std::string_view name,
                                        const std::vector<NodeCondition>& conditions) {
  if (conditions.empty()) return OkStatus();
  // Strategic merge, not JSON merge patch: NodeStatus.conditions is
  // declared patchStrategy=merge, patchMergeKey=type, so the server merges
  // our entries into the list by type. A JSON merge patch (RFC 7386)
  // replaces the whole array and would drop the kubelet's Ready; a JSON
  // patch addresses entries by index, which moves under other writers.
  auto response = http_->Send({.verb = "patch",
                               .method = "PATCH",
                               .path = "/api/v1/nodes/" + UrlEncode(name) + "/status",
                               .content_type = "application/strategic-merge-patch+json",
                               .body = BuildConditionsPatch(conditions).dump()});
  if (!response) return response.error();
  if (response->status >= 200 && response->status < 300) return OkStatus();
  return StatusFromResponse(*response, "patch node " + std::string(name) + " status");
}

Status KubeNodeApi::CreateEvent(const NodeEvent& event) {
  const json body = BuildEventJson(event, clock_.Now(), options_.events);
  const std::string name = body["metadata"]["name"].get<std::string>();
  const std::string time = body["lastTimestamp"].get<std::string>();
  // A Pod's or a job's Event lives in its namespace, a Node's in the event
  // namespace (BuildEventJson).
  const std::string ns = EventNamespace(event, options_.events);
  const std::string key = ns + "/" + name;
  const std::string events_path = "/api/v1/namespaces/" + UrlEncode(ns) + "/events";

  if (auto it = event_counts_.find(key); it != event_counts_.end()) {
    Status s = PatchEventCount(ns, name, it->second + 1, time);
    if (s.code() != StatusCode::kNotFound) return s;
    event_counts_.erase(key);  // expired (events live about an hour): create it again
  }
  if (event_counts_.size() >= options_.max_remembered_events) event_counts_.clear();

  auto response = http_->Send({.verb = "create",
                               .method = "POST",
                               .path = events_path,
                               .content_type = "application/json",
                               .body = body.dump()});
  if (!response) return response.error();
  if (response->status >= 200 && response->status < 300) {
    event_counts_[key] = 1;
    return OkStatus();
  }
  if (response->status != 409) return StatusFromResponse(*response, "create event " + name);

  // It exists already (another replica, or us before a restart): count it.
  auto existing = http_->Send({.verb = "get",
                               .method = "GET",
                               .path = events_path + "/" + UrlEncode(name),
                               .content_type = {},
                               .body = {}});
  if (!existing) return existing.error();
  if (existing->status != 200) return StatusFromResponse(*existing, "get event " + name);
  auto current = ParseBody(*existing, "get event " + name);
  if (!current) return current.error();
  int count = 1;
  if (current->contains("count") && (*current)["count"].is_number_integer()) {
    count = (*current)["count"].get<int>();
  }
  return PatchEventCount(ns, name, count + 1, time);
}

}  // namespace faultline
