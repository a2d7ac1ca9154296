// SPDX-License-Identifier: Apache-2.0
#include "tests/support/fake_api_server.h"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <sstream>

#include <httplib.h>

#include "base/time_format.h"

namespace faultline {
namespace {

using nlohmann::json;

json StatusBody(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

const char* ReasonFor(int status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "Unknown";
  }
}

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void Fail(httplib::Response& res, int status, const std::string& message) {
  Reply(res, status, StatusBody(status, ReasonFor(status), message));
}

// The real API server's answer to a write whose resourceVersion is stale
// (409 Conflict, reason Conflict), word for word: clients match on it.
void Conflict(httplib::Response& res, const std::string& resource, const std::string& name) {
  Fail(res, 409,
       "Operation cannot be fulfilled on " + resource + " \"" + name +
           "\": the object has been modified; please apply your changes to the latest version "
           "and try again");
}

std::string Base64(const std::string& data) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                 (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += {kChars[(v >> 18) & 63], kChars[(v >> 12) & 63], kChars[(v >> 6) & 63], kChars[v & 63]};
  }
  if (i < data.size()) {
    unsigned v = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += i + 1 < data.size() ? kChars[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// ---- label selectors (the subset kubectl and client-go write) ----

std::string Trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> SplitSelector(const std::string& selector) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(Trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!Trim(current).empty()) parts.push_back(Trim(current));
  return parts;
}

std::set<std::string> ParseSet(const std::string& text) {
  std::set<std::string> values;
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return values;
  std::stringstream in(text.substr(open + 1, close - open - 1));
  std::string v;
  while (std::getline(in, v, ',')) values.insert(Trim(v));
  return values;
}

// The value of a pod's selectable field as kube-apiserver's
// PodToSelectableFields gives it (a missing field is ""); nullopt: the
// field cannot be selected on.
std::optional<std::string> PodField(const json& pod, const std::string& field) {
  static const std::set<std::string> kFields = {
      "metadata.name",      "metadata.namespace",      "spec.nodeName",    "spec.restartPolicy",
      "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
      "status.podIP",       "status.nominatedNodeName"};
  if (!kFields.count(field)) return std::nullopt;
  const std::size_t dot = field.find('.');
  const std::string top = field.substr(0, dot);
  const std::string key = field.substr(dot + 1);
  if (key == "hostNetwork") {
    const bool host =
        pod.contains("spec") && pod["spec"].is_object() && pod["spec"].contains("hostNetwork") &&
        pod["spec"]["hostNetwork"].is_boolean() && pod["spec"]["hostNetwork"].get<bool>();
    return host ? "true" : "false";
  }
  if (!pod.contains(top) || !pod[top].is_object() || !pod[top].contains(key) ||
      !pod[top][key].is_string()) {
    return std::string();
  }
  return pod[top][key].get<std::string>();
}

// A field selector ("status.podIP!=,spec.nodeName=gpu-1"): every term must
// hold. `error` is set for a field pods cannot be selected on.
bool MatchesFieldSelector(const json& pod, const std::string& selector,
                          std::string* error = nullptr) {
  std::stringstream in(selector);
  std::string term;
  while (std::getline(in, term, ',')) {
    term = Trim(term);
    if (term.empty()) continue;
    const std::size_t ne = term.find("!=");
    const std::size_t eq = term.find('=');
    if (eq == std::string::npos) {
      // NOLINTNEXTLINE(performance-inefficient-string-concatenation): once, for a bad selector
      if (error) *error = "invalid selector: '" + term + "'; can't understand '" + term + "'";
      return false;
    }
    const bool negate = ne != std::string::npos && ne < eq;
    const std::string field = Trim(term.substr(0, negate ? ne : eq));
    std::string value = term.substr(negate ? ne + 2 : eq + 1);
    if (!negate && !value.empty() && value[0] == '=') value = value.substr(1);  // "=="
    value = Trim(value);
    auto actual = PodField(pod, field);
    if (!actual) {
      if (error) *error = "field label not supported: " + field;
      return false;
    }
    if ((*actual == value) == negate) return false;
  }
  return true;
}

// kube-apiserver's ValidateEvent (pkg/apis/core/validation/events.go) on
// the namespaces of a core/v1 Event: without eventTime (the legacy form
// faultline sends), an involvedObject without a namespace (a Node) needs the
// Event in "default" (or ""), one with a namespace needs the Event in that
// same namespace; with eventTime, an involvedObject without a namespace needs
// "default" or "kube-system". A namespaced kind (Pod, ...) must name its
// namespace. Empty: valid; else the field error.
std::string EventNamespaceError(const json& event, const std::string& ns) {
  const json& involved = event["involvedObject"];
  const std::string inv_ns = involved.value("namespace", "");
  const std::string kind = involved.value("kind", "");
  static const std::set<std::string> kNamespaced = {
      "Pod", "ReplicationController", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim"};
  if (kNamespaced.count(kind) != 0 && involved.value("apiVersion", "v1") == "v1" &&
      inv_ns.empty()) {
    return "involvedObject.namespace: Required value: required for kind " + kind;
  }
  const bool legacy = !event.contains("eventTime") || event["eventTime"].is_null();
  std::string bad =
      "involvedObject.namespace: Invalid value: \"" + inv_ns + "\": does not match event.namespace";
  if (legacy) {
    if (inv_ns.empty() ? (!ns.empty() && ns != "default") : ns != inv_ns) return bad;
  } else if (inv_ns.empty() && ns != "default" && ns != "kube-system") {
    return bad;
  }
  return {};
}

bool MatchesSelector(const json& node, const std::string& selector) {
  std::map<std::string, std::string> labels;
  if (node["metadata"].contains("labels")) {
    for (const auto& [k, v] : node["metadata"]["labels"].items()) labels[k] = v.get<std::string>();
  }
  for (const std::string& req : SplitSelector(selector)) {
    if (req.empty()) continue;
    if (req.front() == '!') {
      if (labels.count(Trim(req.substr(1))) != 0) return false;
      continue;
    }
    if (auto pos = req.find(" notin "); pos != std::string::npos) {
      auto it = labels.find(Trim(req.substr(0, pos)));
      if (it != labels.end() && ParseSet(req.substr(pos)).count(it->second) != 0) return false;
      continue;
    }
    if (auto pos = req.find(" in "); pos != std::string::npos) {
      auto it = labels.find(Trim(req.substr(0, pos)));
      if (it == labels.end() || ParseSet(req.substr(pos)).count(it->second) == 0) return false;
      continue;
    }
    if (auto pos = req.find("!="); pos != std::string::npos) {
      auto it = labels.find(Trim(req.substr(0, pos)));
      if (it != labels.end() && it->second == Trim(req.substr(pos + 2))) return false;
      continue;
    }
    if (auto pos = req.find('='); pos != std::string::npos) {
      std::string value = req.substr(pos + 1);
      if (!value.empty() && value.front() == '=') value.erase(value.begin());
      auto it = labels.find(Trim(req.substr(0, pos)));
      if (it == labels.end() || it->second != Trim(value)) return false;
      continue;
    }
    if (labels.count(req) == 0) return false;
  }
  return true;
}

// kube-apiserver's strategic merge patch, for the parts of a Node faultline
// writes: maps merge key by key (null deletes), lists are replaced whole
// (spec.taints has no patch strategy) except status.conditions, which
// core/v1 NodeStatus declares `patchStrategy:"merge" patchMergeKey:"type"`:
// each patch entry is merged into the entry of the same type (or appended),
// `{"type":T,"$patch":"delete"}` removes T, and entries of other types stay.
void StrategicMerge(json& target, const json& patch, const std::string& path) {
  if (!patch.is_object() || !target.is_object()) {
    target = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) {
    // NOLINTNEXTLINE(performance-inefficient-string-concatenation): a short path per key
    const std::string here = path.empty() ? key : path + "." + key;
    if (value.is_null()) {
      target.erase(key);
    } else if (here == "status.conditions" && value.is_array() && target.contains(key) &&
               target[key].is_array()) {
      json& list = target[key];
      for (const json& item : value) {
        if (!item.is_object() || !item.contains("type")) continue;
        auto it = std::find_if(list.begin(), list.end(), [&](const json& c) {
          return c.is_object() && c.value("type", json()) == item["type"];
        });
        if (item.value("$patch", "") == "delete") {
          if (it != list.end()) list.erase(it);
        } else if (it != list.end()) {
          StrategicMerge(*it, item, here + "[]");
        } else {
          list.push_back(item);
        }
      }
    } else if (value.is_object() && target.contains(key) && target[key].is_object()) {
      StrategicMerge(target[key], value, here);
    } else {
      target[key] = value;
    }
  }
}

// What a real API server's validation would refuse in a Node we care about.
std::string ValidateNode(const json& node) {
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) {
    return "metadata: Required value";
  }
  const json& meta = node["metadata"];
  if (meta.contains("annotations")) {
    if (!meta["annotations"].is_object()) return "metadata.annotations: must be a map";
    std::size_t total = 0;
    for (const auto& [k, v] : meta["annotations"].items()) {
      if (!v.is_string()) return "metadata.annotations." + k + ": must be a string";
      total += k.size() + v.get<std::string>().size();
    }
    if (total > 256UL * 1024) {
      return "metadata.annotations: Too long: must have at most 262144 bytes";
    }
  }
  if (node.contains("spec") && node["spec"].contains("taints")) {
    const json& taints = node["spec"]["taints"];
    if (taints.is_null()) return {};
    if (!taints.is_array()) return "spec.taints: must be a list";
    std::set<std::string> seen;
    for (const auto& t : taints) {
      if (!t.is_object() || !t.contains("key") || !t["key"].is_string() ||
          t["key"].get<std::string>().empty()) {
        return "spec.taints.key: Required value";
      }
      const std::string effect = t.value("effect", "");
      if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
        return "spec.taints.effect: Unsupported value: \"" + effect + "\"";
      }
      if (!seen.insert(t["key"].get<std::string>() + ":" + effect).second) {
        return "spec.taints: Duplicate value: taints must be unique by key and effect pair";
      }
    }
  }
  return {};
}

std::string RvOf(const json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return {};
  }
  const json& meta = object["metadata"];
  if (!meta.contains("resourceVersion") || !meta["resourceVersion"].is_string()) return {};
  return meta["resourceVersion"].get<std::string>();
}

std::string Now() { return FormatRfc3339(std::chrono::system_clock::now()).substr(0, 19) + "Z"; }

}  // namespace

Result<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(Options options) {
  auto pki = GenerateTestPki();
  if (!pki) return pki.error();
  std::unique_ptr<FakeApiServer> server(new FakeApiServer(std::move(options), std::move(*pki)));
  if (!server->server_->is_valid()) return InternalError("fake API server: bad TLS setup");
  server->Routes();
  // Idle keep-alive connections hold a worker thread, and Stop() waits for
  // them: keep that wait short.
  server->server_->set_keep_alive_timeout(2);
  // As the real kube-apiserver (Go's net package sets TCP_NODELAY on every
  // connection, and HTTP/1.1 keep-alive has no request limit there):
  // cpp-httplib writes a response's headers and body separately, and with
  // Nagle on, the body waited for the client's delayed ACK (40 ms per
  // request on loopback: most of the latency bench's standalone figure).
  // Its default of 5 requests per connection added a TLS handshake every
  // fifth request.
  server->server_->set_tcp_nodelay(true);
  server->server_->set_keep_alive_max_count(1000000);
  // Hung requests (FailNext(kHang)) and watches each hold a worker thread:
  // enough of them that the /debug endpoints still answer during a hang.
  server->server_->new_task_queue = [] { return new httplib::ThreadPool(64); };
  const std::string& host = server->options_.host;
  if (server->options_.port == 0) {
    server->port_ = server->server_->bind_to_any_port(host);
  } else if (server->server_->bind_to_port(host, server->options_.port)) {
    server->port_ = server->options_.port;
  } else {
    server->port_ = -1;
  }
  if (server->port_ <= 0) return InternalError("fake API server: cannot bind " + host);
  httplib::Server* raw = server->server_.get();
  server->thread_ = std::thread([raw] { raw->listen_after_bind(); });
  // Bounded wait until the accept loop runs.
  for (int i = 0; i < 500 && !raw->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return server;
}

FakeApiServer::FakeApiServer(Options options, TestPki pki)
    : options_(std::move(options)), pki_(std::move(pki)), token_(options_.token) {
  const TestPki* p = &pki_;
  server_ = std::make_unique<httplib::SSLServer>([p](SSL_CTX& ctx) {
    BIO* cert_bio = BIO_new_mem_buf(p->server_cert_pem.data(), -1);
    BIO* key_bio = BIO_new_mem_buf(p->server_key_pem.data(), -1);
    BIO* ca_bio = BIO_new_mem_buf(p->ca_cert_pem.data(), -1);
    X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    X509* ca = PEM_read_bio_X509(ca_bio, nullptr, nullptr, nullptr);
    bool ok = cert != nullptr && key != nullptr && ca != nullptr &&
              SSL_CTX_use_certificate(&ctx, cert) == 1 && SSL_CTX_use_PrivateKey(&ctx, key) == 1;
    if (ok) {
      // Ask for a client certificate but do not require one: bearer tokens
      // are the usual way in; a presented certificate must chain to our CA.
      X509_STORE_add_cert(SSL_CTX_get_cert_store(&ctx), ca);
      SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
      SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
      // With SSL_VERIFY_PEER, OpenSSL refuses to resume a session without a
      // session id context: every reconnect of a client that offered its
      // cached TLS session (libcurl does) failed with "tlsv1 alert internal
      // error" and cost the client a retry. kube-apiserver resumes them.
      static constexpr unsigned char kSessionContext[] = "fl-fake-apiserver";
      SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof(kSessionContext) - 1);
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    X509_free(ca);
    BIO_free(cert_bio);
    BIO_free(key_bio);
    BIO_free(ca_bio);
    return ok;
  });
}

FakeApiServer::~FakeApiServer() { Stop(); }

void FakeApiServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeApiServer::url() const {
  return "https://" + options_.host + ":" + std::to_string(port_);
}

std::string FakeApiServer::token() const {
  std::lock_guard<std::mutex> lock(mu_);
  return token_;
}

void FakeApiServer::SetToken(std::string token) {
  std::lock_guard<std::mutex> lock(mu_);
  token_ = std::move(token);
}

std::string FakeApiServer::KubeconfigYaml() const {
  std::ostringstream out;
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: " << url()
      << "\n    certificate-authority-data: " << Base64(pki_.ca_cert_pem)
      << "\nusers:\n- name: faultline\n  user:\n    token: " << token()
      << "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: faultline\n"
      << "current-context: fake\n";
  return out.str();
}

std::string FakeApiServer::BumpLocked(json& object) {
  std::string rv = std::to_string(++resource_version_);
  object["metadata"]["resourceVersion"] = rv;
  return rv;
}

json FakeApiServer::NewNode(const std::string& name,
                            const std::map<std::string, std::string>& labels,
                            const std::vector<json>& taints) const {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", name},
                 {"uid", "uid-" + name},
                 {"creationTimestamp", Now()},
                 {"labels", {{"kubernetes.io/hostname", name}}}}},
               {"spec", json::object()},
               {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  for (const auto& [k, v] : labels) node["metadata"]["labels"][k] = v;
  if (!taints.empty()) node["spec"]["taints"] = taints;
  return node;
}

void FakeApiServer::AddNode(const std::string& name,
                            const std::map<std::string, std::string>& labels,
                            const std::vector<json>& taints) {
  PutNodeJson(NewNode(name, labels, taints));
}

bool FakeApiServer::SetBootId(const std::string& node, const std::string& boot_id) {
  return MutateNode(node, [&](json& n) { n["status"]["nodeInfo"]["bootID"] = boot_id; });
}

void FakeApiServer::PutNodeJson(json node) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = node["metadata"]["name"].get<std::string>();
  BumpLocked(node);
  std::optional<json> previous;
  if (auto it = nodes_.find(name); it != nodes_.end()) previous = it->second;
  RecordNodeChangeLocked(previous ? "MODIFIED" : "ADDED", node, previous);
  nodes_[name] = std::move(node);
}

void FakeApiServer::RecordNodeChangeLocked(const std::string& type, const json& object,
                                           std::optional<json> previous,
                                           const std::string& resource) {
  // Bounded like the API server's watch cache: older changes are forgotten
  // and a watch from before them gets 410 Gone.
  constexpr std::size_t kMaxHistory = 10'000;
  node_history_.push_back({resource_version_, resource, type, object, std::move(previous)});
  while (node_history_.size() > kMaxHistory) {
    history_floor_ = node_history_.front().rv;
    node_history_.pop_front();
  }
  changed_.notify_all();
}

// One page of a list, paged the way kube-apiserver pages one: at most
// `limit` items (0: all) in key order, from after the key a `continue` token
// names; a page cut short carries the token of its last key. A token this
// server did not make is 410, as a real server answers an expired one.
void FakeApiServer::ReplyList(const httplib::Request& req, httplib::Response& res,
                              const std::map<std::string, json>& objects,
                              std::string_view list_kind,
                              const std::function<bool(const json&)>& matches) {
  std::size_t limit = 0;
  if (req.has_param("limit")) limit = std::stoul(req.get_param_value("limit"));
  std::string after;
  if (req.has_param("continue")) {
    after = req.get_param_value("continue");
    if (after.rfind("after:", 0) != 0) return Fail(res, 410, "continue token is invalid");
    after = after.substr(6);
  }
  json items = json::array();
  std::string next;
  std::string last_key;
  for (auto it = after.empty() ? objects.begin() : objects.upper_bound(after); it != objects.end();
       ++it) {
    if (!matches(it->second)) continue;
    if (limit != 0 && items.size() == limit) {
      next = "after:" + last_key;
      break;
    }
    items.push_back(it->second);
    last_key = it->first;
  }
  json list = {{"kind", list_kind},
               {"apiVersion", "v1"},
               {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
               {"items", items}};
  if (!next.empty()) list["metadata"]["continue"] = next;
  Reply(res, 200, list);
}

void FakeApiServer::Watch(const httplib::Request& req, httplib::Response& res,
                          const std::string& resource) {
  struct Stream {
    std::int64_t cursor = 0;
    std::string selector;
    std::string resource;
    std::function<bool(const json&)> matches;
    std::chrono::steady_clock::time_point deadline;
    std::string pending;  // lines to send before waiting
    bool ending = false;  // send `pending`, then end the stream
  };
  auto st = std::make_shared<Stream>();
  st->resource = resource;
  if (resource == "pods") {
    st->selector = req.get_param_value("fieldSelector");
    st->matches = [sel = st->selector](const json& o) { return MatchesFieldSelector(o, sel); };
  } else {
    st->selector = req.get_param_value("labelSelector");
    st->matches = [sel = st->selector](const json& o) { return MatchesSelector(o, sel); };
  }
  int timeout_s = 300;
  if (req.has_param("timeoutSeconds")) timeout_s = std::stoi(req.get_param_value("timeoutSeconds"));
  st->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  const std::string rv = req.get_param_value("resourceVersion");
  if (rv.empty() || rv == "0") {
    // "Start at most recent": the current state as ADDED, then the changes.
    for (const auto& [name, node] : resource == "pods" ? pods_ : nodes_) {
      if (!st->matches(node)) continue;
      st->pending += json({{"type", "ADDED"}, {"object", node}}).dump() + "\n";
    }
    st->cursor = resource_version_;
  } else {
    st->cursor = std::stoll(rv);
    if (st->cursor < history_floor_) {
      // What kube-apiserver's watch cache answers to a compacted version:
      // HTTP 200 and one ERROR event carrying a 410 Status.
      json status = {{"kind", "Status"},
                     {"apiVersion", "v1"},
                     {"metadata", json::object()},
                     {"status", "Failure"},
                     {"message", "too old resource version: " + rv + " (" +
                                     std::to_string(history_floor_) + ")"},
                     {"reason", "Expired"},
                     {"code", 410}};
      st->pending = json({{"type", "ERROR"}, {"object", status}}).dump() + "\n";
      st->ending = true;
    }
  }
  res.status = 200;
  ++open_watches_;
  res.set_chunked_content_provider(
      "application/json",
      [this, st](std::size_t /*offset*/, httplib::DataSink& sink) {
        std::string out;
        out.swap(st->pending);
        if (out.empty() && !st->ending) {
          std::unique_lock<std::mutex> lock(mu_);
          changed_.wait_for(lock, std::chrono::milliseconds(200), [&] {
            return stopping_ || (!node_history_.empty() && node_history_.back().rv > st->cursor);
          });
          if (stopping_ || std::chrono::steady_clock::now() >= st->deadline) {
            st->ending = true;
          } else {
            for (const NodeChangeRecord& c : node_history_) {
              if (c.rv <= st->cursor) continue;
              st->cursor = c.rv;
              if (c.resource != st->resource) continue;
              const bool now_matches = c.type != "DELETED" && st->matches(c.object);
              const bool matched = c.previous && st->matches(*c.previous);
              std::string type = c.type;
              if (c.type == "DELETED") {
                if (!matched) continue;
              } else if (now_matches && !matched) {
                type = "ADDED";
              } else if (!now_matches && matched) {
                type = "DELETED";
              } else if (!now_matches) {
                continue;
              }
              out += json({{"type", type}, {"object", c.object}}).dump() + "\n";
            }
          }
        }
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (st->ending && st->pending.empty()) sink.done();
        return true;
      },
      [this](bool /*success*/) {
        std::lock_guard<std::mutex> lock(mu_);
        --open_watches_;
      });
}

void FakeApiServer::CompactWatchHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  node_history_.clear();
  history_floor_ = resource_version_;
}

int FakeApiServer::OpenWatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_watches_;
}

std::optional<json> FakeApiServer::GetNodeJson(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

bool FakeApiServer::MutateNode(const std::string& name, const std::function<void(json&)>& mutate) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  json previous = it->second;
  mutate(it->second);
  BumpLocked(it->second);
  RecordNodeChangeLocked("MODIFIED", it->second, std::move(previous));
  return true;
}

bool FakeApiServer::AddForeignTaint(const std::string& node, const std::string& key,
                                    const std::string& value, const std::string& effect) {
  return MutateNode(node, [&](json& n) {
    json taint = {{"key", key}, {"effect", effect}};
    if (!value.empty()) taint["value"] = value;
    if (!n["spec"].contains("taints") || !n["spec"]["taints"].is_array()) {
      n["spec"]["taints"] = json::array();
    }
    n["spec"]["taints"].push_back(taint);
  });
}

void FakeApiServer::DeleteNode(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  json last = it->second;
  BumpLocked(last);  // a DELETED event carries the object at the deletion's revision
  RecordNodeChangeLocked("DELETED", last, it->second);
  nodes_.erase(it);
}

void FakeApiServer::PutPodJson(json pod) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = pod["metadata"].value("namespace", "default") + "/" +
                          pod["metadata"]["name"].get<std::string>();
  pod["metadata"]["namespace"] = key.substr(0, key.find('/'));
  BumpLocked(pod);
  std::optional<json> previous;
  if (auto it = pods_.find(key); it != pods_.end()) previous = it->second;
  RecordNodeChangeLocked(previous ? "MODIFIED" : "ADDED", pod, previous, "pods");
  pods_[key] = std::move(pod);
}

void FakeApiServer::SetDisruptionBudget(const std::string& ns, const std::string& name,
                                        const std::map<std::string, std::string>& match_labels,
                                        int disruptions_allowed) {
  std::lock_guard<std::mutex> lock(mu_);
  budgets_[ns + "/" + name] = {ns, match_labels, disruptions_allowed};
}

int FakeApiServer::DisruptionsAllowed(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = budgets_.find(ns + "/" + name);
  return it == budgets_.end() ? 0 : it->second.disruptions_allowed;
}

std::optional<json> FakeApiServer::GetPodJson(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  ReapEvictedLocked();
  auto it = pods_.find(ns + "/" + name);
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

void FakeApiServer::ReapEvictedLocked() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = evicted_.begin(); it != evicted_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    if (auto pod = pods_.find(it->first); pod != pods_.end()) {
      json last = pod->second;
      BumpLocked(last);
      RecordNodeChangeLocked("DELETED", last, pod->second, "pods");
      pods_.erase(pod);
    }
    it = evicted_.erase(it);
  }
}

void FakeApiServer::DeletePod(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pods_.find(ns + "/" + name);
  if (it == pods_.end()) return;
  json last = it->second;
  BumpLocked(last);
  RecordNodeChangeLocked("DELETED", last, it->second, "pods");
  pods_.erase(it);
}

std::vector<json> FakeApiServer::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<json> out;
  for (const auto& [key, e] : events_) out.push_back(e);
  return out;
}

std::optional<json> FakeApiServer::GetLeaseJson(const std::string& ns,
                                                const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = leases_.find(ns + "/" + name);
  if (it == leases_.end()) return std::nullopt;
  return it->second;
}

void FakeApiServer::FailNext(int count, int status, std::string method, std::string path_prefix,
                             int retry_after_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back(
      {count, status, std::move(method), std::move(path_prefix), retry_after_seconds});
}

void FakeApiServer::ClearFaults() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.clear();
    ++fault_epoch_;  // hung requests end
  }
  changed_.notify_all();
}

void FakeApiServer::BeforeNextNodeWrite(std::function<void(FakeApiServer&)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  before_node_write_ = std::move(hook);
}

std::vector<FakeApiServer::RecordedRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int FakeApiServer::CountRequests(const std::string& method, const std::string& path_prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& r : requests_) {
    if (r.method == method && r.path.rfind(path_prefix, 0) == 0) ++n;
  }
  return n;
}

void FakeApiServer::ClearRequests() {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.clear();
}

json FakeApiServer::RequestsJson() const {
  json out = json::array();
  for (const auto& r : Requests()) {
    out.push_back({{"method", r.method},
                   {"path", r.path},
                   {"query", r.query},
                   {"params", r.params},
                   {"content_type", r.content_type},
                   {"body", r.body},
                   {"bearer_token", r.bearer_token},
                   {"status", r.status},
                   {"time_unix_us", r.time_unix_us}});
  }
  return out;
}

void FakeApiServer::Routes() {
  // Wraps an API handler: fault injection, authentication, recording.
  // `handler` runs with the server lock held.
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  auto api = [this](const Handler& handler, bool node_write = false) {
    return [this, handler, node_write](const httplib::Request& req, httplib::Response& res) {
      if (node_write) {
        std::function<void(FakeApiServer&)> hook;
        {
          std::lock_guard<std::mutex> lock(mu_);
          hook.swap(before_node_write_);
        }
        if (hook) hook(*this);
      }
      std::unique_lock<std::mutex> lock(mu_);
      ReapEvictedLocked();
      RecordedRequest record;
      record.method = req.method;
      record.path = req.path;
      if (auto q = req.target.find('?'); q != std::string::npos) {
        record.query = req.target.substr(q + 1);
      }
      for (const auto& [k, v] : req.params) record.params[k] = v;
      record.content_type = req.get_header_value("Content-Type");
      record.body = req.body;
      const std::string auth = req.get_header_value("Authorization");
      record.bearer_token = auth.rfind("Bearer ", 0) == 0;

      bool faulted = false;
      int connection_fault = 0;  // kHang, kDrop or kReset
      for (auto& fault : faults_) {
        if (fault.remaining <= 0) continue;
        if (!fault.method.empty() && fault.method != req.method) continue;
        if (req.path.rfind(fault.path_prefix, 0) != 0) continue;
        --fault.remaining;
        if (fault.status < 0) {
          connection_fault = fault.status;
          break;
        }
        if (fault.status == 429) {
          res.set_header("Retry-After", std::to_string(fault.retry_after_seconds));
        }
        Fail(res, fault.status, "injected fault");
        faulted = true;
        break;
      }
      while (!faults_.empty() && faults_.front().remaining <= 0) faults_.pop_front();

      if (connection_fault == kHang || connection_fault == kReset) {
        record.status = connection_fault;
        record.time_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
        requests_.push_back(std::move(record));
        if (connection_fault == kHang) {
          // Accepted, read, never answered: until the faults are cleared or
          // the server stops (bounded, so a forgotten fault ends).
          const std::uint64_t epoch = fault_epoch_;
          changed_.wait_for(lock, std::chrono::minutes(10),
                            [&] { return stopping_ || fault_epoch_ != epoch; });
        }
        lock.unlock();
        // Not a byte of answer: RST (SO_LINGER 0) and shut the socket down;
        // cpp-httplib's write of its reply then fails and it closes the fd.
        const int fd = req.ssl != nullptr ? SSL_get_fd(req.ssl) : -1;
        if (fd >= 0) {
          linger hard{1, 0};
          setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
          shutdown(fd, SHUT_RDWR);
        }
        res.set_chunked_content_provider("application/json",
                                         [](std::size_t, httplib::DataSink&) { return false; });
        return;
      }
      const bool watch =
          req.get_param_value("watch") == "true" || req.get_param_value("watch") == "1";
      if (connection_fault == kDrop && watch) {
        // A watch is dropped right after its headers.
        res.status = 200;
        res.set_chunked_content_provider("application/json",
                                         [](std::size_t, httplib::DataSink&) { return false; });
        faulted = true;
      }

      if (!faulted) {
        const bool has_cert = req.ssl != nullptr && SSL_get0_peer_certificate(req.ssl) != nullptr;
        if (record.bearer_token && auth.substr(7) != token_) {
          Fail(res, 401, "Unauthorized");
        } else if (!record.bearer_token && !has_cert) {
          Fail(res, 403,
               "nodes is forbidden: User \"system:anonymous\" cannot access this resource");
        } else {
          handler(req, res);
        }
      }
      if (connection_fault == kDrop && !watch) {
        // Processed (a write is applied), answered with its status and
        // Content-Length, then the connection closes half-way through the
        // body: the client cannot tell whether its write happened.
        auto body = std::make_shared<std::string>(std::move(res.body));
        res.body.clear();
        const std::string type = res.get_header_value("Content-Type");
        res.set_content_provider(body->size(), type.empty() ? "application/json" : type,
                                 [body](std::size_t, std::size_t, httplib::DataSink& sink) {
                                   sink.write(body->data(), body->size() / 2);
                                   return false;
                                 });
      }
      record.status = connection_fault != 0 ? connection_fault : res.status;
      record.time_unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
      requests_.push_back(std::move(record));
    };
  };

  auto& s = *server_;

  s.Get("/api/v1/nodes", api([this](const httplib::Request& req, httplib::Response& res) {
          const std::string selector = req.get_param_value("labelSelector");
          const std::string watch = req.get_param_value("watch");
          if (watch == "true" || watch == "1") return Watch(req, res);
          ReplyList(req, res, nodes_, "NodeList",
                    [&selector](const json& node) { return MatchesSelector(node, selector); });
        }));

  s.Get("/api/v1/pods", api([this](const httplib::Request& req, httplib::Response& res) {
          const std::string selector = req.get_param_value("fieldSelector");
          // An unknown field is refused before anything is listed or watched.
          std::string error;
          MatchesFieldSelector(json::object(), selector, &error);
          if (!error.empty()) return Fail(res, 400, error);
          const std::string watch = req.get_param_value("watch");
          if (watch == "true" || watch == "1") return Watch(req, res, "pods");
          ReplyList(req, res, pods_, "PodList",
                    [&selector](const json& pod) { return MatchesFieldSelector(pod, selector); });
        }));

  s.Get(R"(/api/v1/nodes/([^/]+))",
        api([this](const httplib::Request& req, httplib::Response& res) {
          auto it = nodes_.find(req.matches[1]);
          if (it == nodes_.end()) {
            return Fail(res, 404, "nodes \"" + std::string(req.matches[1]) + "\" not found");
          }
          Reply(res, 200, it->second);
        }));

  auto write_node = [this](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1];
    // PATCH /api/v1/nodes/{name}/status: the status subresource.
    const bool status_subresource = req.path.size() > 7 && req.path.ends_with("/status");
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return Fail(res, 404, "nodes \"" + name + "\" not found");
    const std::string current_rv = RvOf(it->second);
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      return Fail(res, 400, std::string("invalid JSON: ") + e.what());
    }
    json updated;
    const std::string type = req.get_header_value("Content-Type");
    if (req.method == "PUT") {
      const std::string rv = RvOf(body);
      if (!rv.empty() && rv != current_rv) {
        return Conflict(res, "nodes", name);
      }
      updated = body;
    } else if (type.rfind("application/json-patch+json", 0) == 0) {
      if (!body.is_array()) return Fail(res, 400, "JSON Patch must be an array");
      try {
        updated = it->second.patch(body);
      } catch (const json::exception& e) {
        // A real API server answers 422 to a failed test and to a path that
        // does not exist (`add /spec/taints/-` without spec.taints).
        return Fail(res, 422,
                    std::string("the server rejected our request due to an error in "
                                "our request: ") +
                        e.what());
      }
    } else if (type.rfind("application/strategic-merge-patch+json", 0) == 0) {
      const std::string rv = RvOf(body);
      if (!rv.empty() && rv != current_rv) {
        return Fail(res, 409,
                    "Operation cannot be fulfilled on nodes \"" + name +
                        "\": the object has been modified; please apply your changes to the "
                        "latest version and try again");
      }
      updated = it->second;
      StrategicMerge(updated, body, "");
    } else if (type.rfind("application/merge-patch+json", 0) == 0) {
      const std::string rv = RvOf(body);
      if (!rv.empty() && rv != current_rv) {
        return Conflict(res, "nodes", name);
      }
      updated = it->second;
      updated.merge_patch(body);
    } else {
      return Fail(res, 415, "the body of the request was in an unknown format: " + type);
    }
    const std::string new_rv = RvOf(updated);
    if (req.method != "PUT" && new_rv != current_rv) {
      return Conflict(res, "nodes", name);
    }
    if (!updated.contains("metadata") || !updated["metadata"].is_object() ||
        updated["metadata"].value("name", "") != name) {
      return Fail(res, 400, "metadata.name must be " + name);
    }
    // The node and its status subresource each write only their part, as
    // kube-apiserver's node strategies do: a write to the node keeps the
    // old status (nodeStrategy.PrepareForUpdate), a write to nodes/status
    // keeps the old spec and metadata (nodeStatusStrategy).
    if (status_subresource) {
      json only_status = it->second;
      if (updated.contains("status")) {
        only_status["status"] = updated["status"];
      } else {
        only_status.erase("status");
      }
      updated = std::move(only_status);
    } else if (it->second.contains("status")) {
      updated["status"] = it->second["status"];
    } else {
      updated.erase("status");
    }
    if (std::string invalid = ValidateNode(updated); !invalid.empty()) {
      return Fail(res, 422, "Node \"" + name + "\" is invalid: " + invalid);
    }
    if (updated.contains("spec") && updated["spec"].contains("taints") &&
        updated["spec"]["taints"].is_null()) {
      updated["spec"].erase("taints");
    }
    updated["metadata"]["uid"] = it->second["metadata"]["uid"];
    BumpLocked(updated);
    RecordNodeChangeLocked("MODIFIED", updated, it->second);
    it->second = updated;
    Reply(res, 200, updated);
  };
  s.Patch(R"(/api/v1/nodes/([^/]+))", api(write_node, /*node_write=*/true));
  s.Patch(R"(/api/v1/nodes/([^/]+)/status)", api(write_node, /*node_write=*/true));
  s.Put(R"(/api/v1/nodes/([^/]+))", api(write_node, /*node_write=*/true));

  s.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction)",
         api([this](const httplib::Request& req, httplib::Response& res) {
           const std::string ns = req.matches[1];
           const std::string name = req.matches[2];
           auto pod = pods_.find(ns + "/" + name);
           if (pod == pods_.end()) return Fail(res, 404, "pods \"" + name + "\" not found");
           json body;
           try {
             body = json::parse(req.body);
           } catch (const json::exception& e) {
             return Fail(res, 400, std::string("invalid JSON: ") + e.what());
           }
           if (!body.is_object() || body.value("kind", "") != "Eviction" ||
               !body.contains("metadata") || !body["metadata"].is_object() ||
               body["metadata"].value("name", "") != name) {
             return Fail(res, 400, "name in URL does not match name in Eviction object");
           }
           const json& p = pod->second;
           const std::string phase = p.contains("status") && p["status"].is_object()
                                         ? p["status"].value("phase", "")
                                         : "";
           const bool deleting = p["metadata"].contains("deletionTimestamp");
           // kube-apiserver lets a pod that cannot count against a budget go
           // without looking at one (terminal, not yet running, or leaving).
           const bool ignore_budget =
               phase == "Succeeded" || phase == "Failed" || phase == "Pending" || deleting;
           if (!ignore_budget) {
             std::map<std::string, std::string> labels;
             if (p["metadata"].contains("labels") && p["metadata"]["labels"].is_object()) {
               for (const auto& [k, v] : p["metadata"]["labels"].items()) {
                 if (v.is_string()) labels[k] = v.get<std::string>();
               }
             }
             std::vector<std::pair<std::string, DisruptionBudget*>> matching;
             for (auto& [key, budget] : budgets_) {
               if (budget.ns != ns) continue;
               bool all = true;
               for (const auto& [k, v] : budget.match_labels) {
                 auto l = labels.find(k);
                 if (l == labels.end() || l->second != v) all = false;
               }
               if (all) matching.emplace_back(key, &budget);
             }
             if (matching.size() > 1) {
               return Fail(res, 500,
                           "This pod has more than one PodDisruptionBudget, which the eviction "
                           "subresource does not support.");
             }
             if (matching.size() == 1) {
               DisruptionBudget& budget = *matching.front().second;
               if (budget.disruptions_allowed < 1) {
                 json status = StatusBody(
                     429, "TooManyRequests",
                     "Cannot evict pod as it would violate the pod's disruption budget.");
                 const std::string pdb = matching.front().first.substr(ns.size() + 1);
                 status["details"] = {
                     {"causes",
                      {{{"reason", "DisruptionBudget"},
                        {"message", "The disruption budget " + pdb +
                                        " needs more healthy pods; 0 disruptions allowed"}}}}};
                 return Reply(res, 429, status);  // no Retry-After: the client chooses
               }
               --budget.disruptions_allowed;
             }
           }
           long long grace = 30;
           if (p.contains("spec") && p["spec"].is_object() &&
               p["spec"].contains("terminationGracePeriodSeconds") &&
               p["spec"]["terminationGracePeriodSeconds"].is_number_integer()) {
             grace = p["spec"]["terminationGracePeriodSeconds"].get<long long>();
           }
           if (body.contains("deleteOptions") && body["deleteOptions"].is_object() &&
               body["deleteOptions"].contains("gracePeriodSeconds") &&
               body["deleteOptions"]["gracePeriodSeconds"].is_number_integer()) {
             grace = body["deleteOptions"]["gracePeriodSeconds"].get<long long>();
           }
           const std::string key = ns + "/" + name;
           if (!deleting) {
             json updated = pod->second;
             updated["metadata"]["deletionTimestamp"] = Now();
             updated["metadata"]["deletionGracePeriodSeconds"] = grace;
             BumpLocked(updated);
             RecordNodeChangeLocked("MODIFIED", updated, pod->second, "pods");
             pod->second = std::move(updated);
             evicted_[key] = std::chrono::steady_clock::now() + std::chrono::seconds(grace);
           }
           json ok = StatusBody(201, "", "");
           ok["status"] = "Success";
           ok.erase("reason");
           ok.erase("message");
           Reply(res, 201, ok);
           ReapEvictedLocked();  // grace 0: gone at once
         }));

  s.Post(R"(/api/v1/namespaces/([^/]+)/events)",
         api([this](const httplib::Request& req, httplib::Response& res) {
           const std::string ns = req.matches[1];
           json event;
           try {
             event = json::parse(req.body);
           } catch (const json::exception& e) {
             return Fail(res, 400, std::string("invalid JSON: ") + e.what());
           }
           if (!event.is_object()) return Fail(res, 400, "an Event must be an object");
           json& meta = event["metadata"];
           if (meta.contains("namespace") && meta["namespace"] != ns) {
             return Fail(res, 400, "the namespace of the provided object does not match");
           }
           meta["namespace"] = ns;
           std::string name = meta.value("name", "");
           if (name.empty()) {
             const std::string prefix = meta.value("generateName", "");
             if (prefix.empty()) return Fail(res, 422, "Event is invalid: metadata.name: Required");
             name = prefix + std::to_string(++uid_counter_);
           }
           if (event.value("reason", "").empty() || !event.contains("involvedObject") ||
               !event["involvedObject"].is_object()) {
             return Fail(res, 422, "Event is invalid: reason and involvedObject are required");
           }
           if (std::string why = EventNamespaceError(event, ns); !why.empty()) {
             return Fail(res, 422, "Event \"" + name + "\" is invalid: " + why);
           }
           const std::string key = ns + "/" + name;
           if (events_.count(key) != 0) {
             return Reply(
                 res, 409,
                 StatusBody(409, "AlreadyExists", "events \"" + name + "\" already exists"));
           }
           meta["name"] = name;
           meta["uid"] = "event-uid-" + std::to_string(++uid_counter_);
           meta["creationTimestamp"] = Now();
           BumpLocked(event);
           events_[key] = event;
           Reply(res, 201, event);
         }));

  s.Get(R"(/api/v1/namespaces/([^/]+)/events)",
        api([this](const httplib::Request& req, httplib::Response& res) {
          const std::string ns = req.matches[1];
          std::string involved;
          const std::string field_selector = req.get_param_value("fieldSelector");
          if (field_selector.rfind("involvedObject.name=", 0) == 0) {
            involved = field_selector.substr(std::string("involvedObject.name=").size());
          }
          json items = json::array();
          for (const auto& [key, e] : events_) {
            if (key.rfind(ns + "/", 0) != 0) continue;
            if (!involved.empty() && e["involvedObject"].value("name", "") != involved) continue;
            items.push_back(e);
          }
          Reply(res, 200,
                {{"kind", "EventList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                 {"items", items}});
        }));

  s.Get(R"(/api/v1/namespaces/([^/]+)/events/([^/]+))",
        api([this](const httplib::Request& req, httplib::Response& res) {
          auto it = events_.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
          if (it == events_.end()) return Fail(res, 404, "event not found");
          Reply(res, 200, it->second);
        }));

  // coordination.k8s.io/v1 Leases: create, read, replace with optimistic
  // concurrency (what the tainter's shared valve record needs).
  s.Post(R"(/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases)",
         api([this](const httplib::Request& req, httplib::Response& res) {
           json lease;
           try {
             lease = json::parse(req.body);
           } catch (const json::exception& e) {
             return Fail(res, 400, std::string("invalid JSON: ") + e.what());
           }
           const std::string name = lease["metadata"].value("name", "");
           if (name.empty()) return Fail(res, 422, "metadata.name is required");
           const std::string key = std::string(req.matches[1]) + "/" + name;
           if (leases_.count(key) != 0) {
             return Fail(res, 409, "leases.coordination.k8s.io \"" + name + "\" already exists");
           }
           lease["metadata"]["namespace"] = std::string(req.matches[1]);
           lease["metadata"]["uid"] = "uid-lease-" + name;
           BumpLocked(lease);
           leases_[key] = lease;
           Reply(res, 201, lease);
         }));
  s.Get(R"(/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases/([^/]+))",
        api([this](const httplib::Request& req, httplib::Response& res) {
          auto it = leases_.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
          if (it == leases_.end()) {
            return Fail(
                res, 404,
                "leases.coordination.k8s.io \"" + std::string(req.matches[2]) + "\" not found");
          }
          Reply(res, 200, it->second);
        }));
  s.Put(R"(/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases/([^/]+))",
        api([this](const httplib::Request& req, httplib::Response& res) {
          auto it = leases_.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
          if (it == leases_.end()) return Fail(res, 404, "lease not found");
          json lease;
          try {
            lease = json::parse(req.body);
          } catch (const json::exception& e) {
            return Fail(res, 400, std::string("invalid JSON: ") + e.what());
          }
          const std::string rv = RvOf(lease);
          if (!rv.empty() && rv != RvOf(it->second)) {
            return Conflict(res, "leases.coordination.k8s.io", req.matches[2]);
          }
          lease["metadata"]["uid"] = it->second["metadata"]["uid"];
          lease["metadata"]["namespace"] = std::string(req.matches[1]);
          BumpLocked(lease);
          it->second = lease;
          Reply(res, 200, lease);
        }));

  s.Patch(
      R"(/api/v1/namespaces/([^/]+)/events/([^/]+))",
      api([this](const httplib::Request& req, httplib::Response& res) {
        auto it = events_.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
        if (it == events_.end()) return Fail(res, 404, "event not found");
        try {
          json body = json::parse(req.body);
          if (req.get_header_value("Content-Type").rfind("application/json-patch+json", 0) == 0) {
            it->second = it->second.patch(body);
          } else {
            it->second.merge_patch(body);
          }
        } catch (const json::exception& e) {
          return Fail(res, 422, e.what());
        }
        BumpLocked(it->second);
        Reply(res, 200, it->second);
      }));

  // ---- debug endpoints: no auth, not recorded ----
  s.Get("/debug/requests", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, RequestsJson());
  });
  s.Delete("/debug/requests", [this](const httplib::Request&, httplib::Response& res) {
    ClearRequests();
    Reply(res, 200, json::object());
  });
  s.Get("/debug/nodes", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    json items = json::array();
    for (const auto& [name, node] : nodes_) items.push_back(node);
    Reply(res, 200, {{"items", items}});
  });
  s.Get("/debug/events", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, {{"items", Events()}});
  });
  s.Post("/debug/fail", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const std::string mode = req.get_param_value("status");
      const int status = mode == "hang"    ? kHang
                         : mode == "drop"  ? kDrop
                         : mode == "reset" ? kReset
                                           : std::stoi(mode);
      const int count = req.has_param("count") ? std::stoi(req.get_param_value("count")) : 1;
      const int retry_after =
          req.has_param("retry_after") ? std::stoi(req.get_param_value("retry_after")) : 1;
      FailNext(count, status, req.get_param_value("method"), req.get_param_value("path"),
               retry_after);
    } catch (const std::exception&) {
      return Fail(
          res, 400,
          "usage: /debug/fail?status=N|hang|drop|reset[&count=N&method=M&path=P&retry_after=S]");
    }
    Reply(res, 200, json::object());
  });
  s.Delete("/debug/fail", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("status")) {
      // Only the faults of that status (hang|drop|reset|N): one failure mode
      // handed over to another queued behind it without a gap.
      const std::string mode = req.get_param_value("status");
      const int status = mode == "hang"    ? kHang
                         : mode == "drop"  ? kDrop
                         : mode == "reset" ? kReset
                                           : std::atoi(mode.c_str());
      {
        std::lock_guard<std::mutex> lock(mu_);
        std::erase_if(faults_, [&](const Fault& f) { return f.status == status; });
        ++fault_epoch_;
      }
      changed_.notify_all();
      return Reply(res, 200, json::object());
    }
    ClearFaults();  // the outage is over
    Reply(res, 200, json::object());
  });
  s.Post("/debug/pdb", [this](const httplib::Request& req, httplib::Response& res) {
    std::map<std::string, std::string> labels;
    const std::string sel = req.get_param_value("selector");  // k=v[,k=v]
    std::size_t start = 0;
    while (start < sel.size()) {
      std::size_t comma = sel.find(',', start);
      if (comma == std::string::npos) comma = sel.size();
      const std::string pair = sel.substr(start, comma - start);
      if (auto eq = pair.find('='); eq != std::string::npos) {
        labels[pair.substr(0, eq)] = pair.substr(eq + 1);
      }
      start = comma + 1;
    }
    SetDisruptionBudget(req.get_param_value("namespace"), req.get_param_value("name"), labels,
                        std::atoi(req.get_param_value("allowed").c_str()));
    res.status = 204;
  });
  s.Post("/debug/pods", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      json pod = json::parse(req.body);
      if (!pod.contains("metadata") || !pod["metadata"].contains("name")) {
        return Fail(res, 400, "a Pod with metadata.name");
      }
      PutPodJson(std::move(pod));
    } catch (const json::exception& e) {
      return Fail(res, 400, e.what());
    }
    Reply(res, 201, json::object());
  });
  s.Delete("/debug/pods", [this](const httplib::Request& req, httplib::Response& res) {
    DeletePod(req.get_param_value("namespace"), req.get_param_value("name"));
    Reply(res, 200, json::object());
  });
  s.Post("/debug/boot", [this](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("node") || !req.has_param("boot_id")) {
      return Fail(res, 400, "usage: /debug/boot?node=NAME&boot_id=ID");
    }
    if (!SetBootId(req.get_param_value("node"), req.get_param_value("boot_id"))) {
      return Fail(res, 404, "no such node");
    }
    Reply(res, 200, json::object());
  });
  s.Post("/debug/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("name")) {
      AddNode(req.get_param_value("name"));
      return Reply(res, 201, json::object());
    }
    try {
      json node = json::parse(req.body);
      if (!node.contains("metadata") || !node["metadata"].contains("name")) {
        return Fail(res, 400, "a Node with metadata.name, or ?name=");
      }
      PutNodeJson(std::move(node));
    } catch (const json::exception& e) {
      return Fail(res, 400, e.what());
    }
    Reply(res, 201, json::object());
  });
}

}  // namespace faultline
