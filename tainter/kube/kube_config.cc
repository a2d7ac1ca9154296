// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "base/config_reader.h"

namespace faultline {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

Result<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError(std::string(what) + ": cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

// Finds the entry named `name` in a kubeconfig list (clusters, users,
// contexts) and returns its inner map (`cluster`, `user`, `context`).
YAML::Node FindNamed(const YAML::Node& list, const std::string& name, const char* inner) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item[inner];
  }
  return YAML::Node();
}

std::string Str(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap() || !map[key] || map[key].IsNull()) return {};
  return map[key].as<std::string>();
}

// The first readable file of a kubectl-style $KUBECONFIG list ("a:b:c");
// when none is readable, the first, so that the error names it.
std::string FirstKubeconfig(std::string_view list) {
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t colon = list.find(':', start);
    if (colon == std::string_view::npos) colon = list.size();
    std::string path(list.substr(start, colon - start));
    if (!path.empty() && access(path.c_str(), R_OK) == 0) return path;
    start = colon + 1;
  }
  return std::string(list.substr(0, list.find(':')));
}

// `<key>-data` (base64 PEM, decoded into `pem`) or `<key>` (a file, resolved
// against `base_dir` into `file`). False, with a C003 diagnostic, when the
// data is not base64.
bool PemOrFile(ConfigReader& reader, const YAML::Node& map, const std::string& key,
               std::string_view base_dir, std::string& pem, std::string& file) {
  const std::string data_key = key + "-data";
  if (std::string data = Str(map, data_key.c_str()); !data.empty()) {
    Result<std::string> decoded = Base64Decode(data);
    if (!decoded) {
      reader.Error(map[data_key], "C003", data_key + " is not base64");
      return false;
    }
    pem = std::move(*decoded);
  } else {
    file = Resolve(base_dir, Str(map, key.c_str()));
  }
  return true;
}

}  // namespace

std::string KubeConfig::Describe() const {
  std::string auth;
  if (!client_cert_pem.empty()) auth = "client-certificate";
  if (!token_file.empty()) {
    auth += auth.empty() ? "token-file " + token_file : "+token-file";
  } else if (!token.empty()) {
    auth += auth.empty() ? "token" : "+token";
  }
  if (auth.empty()) auth = "none";
  return "server=" + server + " origin=" + origin + " auth=" + auth + " tls=" +
         (insecure_skip_tls_verify ? "insecure-skip-verify"
                                   : (ca_pem.empty() ? "system-ca" : "ca-bundle"));
}

Result<std::string> Base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned buffer = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const char* at = (c == '\0') ? nullptr : strchr(kB64, c);
    if (at == nullptr || padding) return InvalidArgumentError("invalid base64 data");
    buffer = (buffer << 6) | static_cast<unsigned>(at - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

std::string Base64Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                 (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < data.size()) {
    unsigned v = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += (i + 1 < data.size()) ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options) {
  std::string host = options.service_host;
  std::string port = options.service_port;
  // getenv is read once at startup, before any thread exists.
  if (host.empty()) {
    const char* h = getenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe)
    if (h != nullptr) host = h;
  }
  if (port.empty()) {
    const char* p = getenv("KUBERNETES_SERVICE_PORT");  // NOLINT(concurrency-mt-unsafe)
    if (p != nullptr) port = p;
  }
  if (host.empty() || port.empty()) {
    return FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset; "
        "pass a kubeconfig instead");
  }
  std::error_code ec;
  if (!std::filesystem::exists(options.token_path, ec)) {
    return FailedPreconditionError("not running in a cluster: no service-account token at " +
                                   options.token_path);
  }
  KubeConfig config;
  // An IPv6 service address needs brackets in a URL.
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  config.server = "https://" + host + ":" + port;
  config.token_file = options.token_path;
  auto ca = ReadWholeFile(options.ca_path, "service-account CA bundle");
  if (!ca) return ca.error();
  config.ca_pem = std::move(*ca);
  config.origin = "in-cluster";
  return config;
}

std::optional<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text,
                                                std::string_view base_dir, std::string_view context,
                                                std::string_view file, Diagnostics& diags) {
  const std::size_t errors_before = diags.error_count();
  ConfigReader reader{std::string(file), diags};
  std::optional<YAML::Node> loaded = reader.Load(yaml_text);
  if (!loaded) return std::nullopt;
  const YAML::Node& root = *loaded;
  // kubeconfig has many keys faultline does not use (preferences, proxy-url,
  // extensions): unlike faultline's own files, unknown keys are not errors.
  auto fail = [&](const YAML::Node& at, const char* code, const std::string& message) {
    reader.Error(at, code, message);
    return std::nullopt;
  };
  if (!root.IsMap()) return fail(root, "C003", "not a YAML mapping");
  try {
    std::string context_name(context);
    if (context_name.empty()) context_name = Str(root, "current-context");
    if (context_name.empty()) {
      return fail(root, "C004", "no current-context set; name a context");
    }
    YAML::Node ctx = FindNamed(root["contexts"], context_name, "context");
    if (!ctx || !ctx.IsMap()) {
      return fail(root["contexts"] ? root["contexts"] : root, "C003",
                  "context '" + context_name + "' not found");
    }
    const std::string cluster_name = Str(ctx, "cluster");
    const std::string user_name = Str(ctx, "user");
    YAML::Node cluster = FindNamed(root["clusters"], cluster_name, "cluster");
    if (!cluster || !cluster.IsMap()) {
      return fail(ctx, "C003",
                  "cluster '" + cluster_name + "' of context '" + context_name + "' not found");
    }

    ParsedKubeconfig parsed;
    KubeConfig& config = parsed.config;
    config.origin = "kubeconfig context " + context_name;
    config.server = Str(cluster, "server");
    if (config.server.empty()) {
      return fail(cluster, "C004", "cluster '" + cluster_name + "' has no server");
    }
    while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
    if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
      return fail(cluster["server"], "C003",
                  "server '" + config.server + "' must start with https://");
    }
    if (cluster["insecure-skip-tls-verify"]) {
      config.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>();
    }
    if (!PemOrFile(reader, cluster, "certificate-authority", base_dir, config.ca_pem,
                   parsed.ca_file)) {
      return std::nullopt;
    }

    if (!user_name.empty()) {
      YAML::Node user = FindNamed(root["users"], user_name, "user");
      if (!user) {
        return fail(ctx, "C003",
                    "user '" + user_name + "' of context '" + context_name + "' not found");
      }
      if (user.IsMap()) {
        config.token = Str(user, "token");
        config.token_file = Resolve(base_dir, Str(user, "tokenFile"));
        if (!PemOrFile(reader, user, "client-certificate", base_dir, config.client_cert_pem,
                       parsed.client_cert_file) ||
            !PemOrFile(reader, user, "client-key", base_dir, config.client_key_pem,
                       parsed.client_key_file)) {
          return std::nullopt;
        }
        const bool has_cert = !config.client_cert_pem.empty() || !parsed.client_cert_file.empty();
        const bool has_key = !config.client_key_pem.empty() || !parsed.client_key_file.empty();
        if (has_cert != has_key) {
          return fail(user, "C004",
                      "user '" + user_name + "' needs both a client certificate and a client key");
        }
        const bool has_any = has_cert || !config.token.empty() || !config.token_file.empty();
        if (!has_any && (user["exec"] || user["auth-provider"])) {
          return fail(user["exec"] ? user["exec"] : user["auth-provider"], "C003",
                      "user '" + user_name +
                          "' uses exec/auth-provider, which faultline does not run; use a "
                          "token, tokenFile or client certificate");
        }
      }
    }
    if (diags.error_count() != errors_before) return std::nullopt;
    return parsed;
  } catch (const YAML::Exception& e) {
    diags.Error("C003", {std::string(file), e.mark.line + 1, e.mark.column + 1},
                "unexpected value: " + e.msg);
    return std::nullopt;
  }
}

Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         std::string_view context) {
  Diagnostics diags;
  std::optional<ParsedKubeconfig> parsed =
      ParseKubeconfig(yaml_text, base_dir, context, "kubeconfig", diags);
  if (!parsed) return InvalidArgumentError(DiagnosticsMessage(diags));
  return std::move(*parsed);
}

Result<KubeConfig> LoadKubeconfig(const std::string& path, std::string_view context,
                                  Diagnostics* problems) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFoundError("kubeconfig not found: " + path);
  auto text = ReadWholeFile(path, "kubeconfig");
  if (!text) return text.error();
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  Diagnostics diags;
  std::optional<ParsedKubeconfig> parsed = ParseKubeconfig(*text, base_dir, context, path, diags);
  if (!parsed) {
    if (problems != nullptr) problems->Append(diags);
    return InvalidArgumentError(DiagnosticsMessage(diags));
  }
  KubeConfig config = std::move(parsed->config);
  config.origin =
      "kubeconfig " + path + " " + config.origin.substr(std::string("kubeconfig ").size());
  if (!parsed->ca_file.empty()) {
    auto pem = ReadWholeFile(parsed->ca_file, "kubeconfig certificate-authority");
    if (!pem) return pem.error();
    config.ca_pem = std::move(*pem);
  }
  if (!parsed->client_cert_file.empty()) {
    auto pem = ReadWholeFile(parsed->client_cert_file, "kubeconfig client-certificate");
    if (!pem) return pem.error();
    config.client_cert_pem = std::move(*pem);
  }
  if (!parsed->client_key_file.empty()) {
    auto pem = ReadWholeFile(parsed->client_key_file, "kubeconfig client-key");
    if (!pem) return pem.error();
    config.client_key_pem = std::move(*pem);
  }
  return config;
}

Result<KubeConfig> LoadKubeConfigAuto(const std::string& kubeconfig_path, std::string_view context,
                                      const InClusterOptions& in_cluster, Diagnostics* problems) {
  // The order of controller-runtime's GetConfig, documented in
  // tainter/README.md: what the operator named wins; a pod's own service
  // account beats a kubeconfig left in the image's home directory.
  if (!kubeconfig_path.empty()) return LoadKubeconfig(kubeconfig_path, context, problems);
  // Read once at startup, before any thread exists.
  const char* env = getenv("KUBECONFIG");  // NOLINT(concurrency-mt-unsafe)
  if (env != nullptr && *env != '\0') {
    return LoadKubeconfig(FirstKubeconfig(env), context, problems);
  }
  const char* host = getenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe)
  if (!in_cluster.service_host.empty() || (host != nullptr && *host != '\0')) {
    return LoadInClusterConfig(in_cluster);
  }
  const char* home = getenv("HOME");  // NOLINT(concurrency-mt-unsafe)
  if (home != nullptr && *home != '\0') {
    const std::string path = std::string(home) + "/.kube/config";
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) return LoadKubeconfig(path, context, problems);
  }
  return FailedPreconditionError(
      "no Kubernetes config: no kubeconfig named, no $KUBECONFIG, not in a cluster, no "
      "~/.kube/config");
}

}  // namespace faultline
