// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/diagnostics.h"
#include "base/status.h"

namespace faultline {

// Where and how to reach the Kubernetes API server: what an in-cluster
// service account or a kubeconfig context says, with every referenced file
// except the token file already read into memory.
//
// Secrets (token, client key) live only here and in the HTTP layer; nothing
// in the tainter logs them. Use Describe() for log lines.
struct KubeConfig {
  std::string server;  // "https://10.96.0.1:443", no trailing slash

  // TLS. An empty ca_pem means the system trust store. Verification is on
  // unless the config explicitly sets insecure-skip-tls-verify: true.
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;

  // Authentication: a bearer token (static, or a file re-read when it
  // rotates), and/or a client certificate with its key (PEM).
  std::string token;
  std::string token_file;
  std::string client_cert_pem;
  std::string client_key_pem;

  // "in-cluster" or "kubeconfig /path context NAME": for log lines.
  std::string origin;

  // A one-line description that is safe to log (no secrets).
  std::string Describe() const;
};

// The service-account files and environment an in-cluster pod sees. Every
// field is overridable so tests need no real pod.
struct InClusterOptions {
  std::string service_host;  // empty: read $KUBERNETES_SERVICE_HOST
  std::string service_port;  // empty: read $KUBERNETES_SERVICE_PORT
  std::string token_path = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_path = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};

// Builds the in-cluster config: server from the service host/port (IPv6
// hosts are bracketed), the CA bundle read now, the token left as a file
// (the HTTP layer re-reads it, because projected tokens rotate).
// Errors: kFailedPrecondition when not in a cluster (no host/port env, no
// token file); kInvalidArgument when the CA file cannot be read.
Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options = {});

// Parses kubeconfig YAML text (pure: reads no files). `context` selects a
// named context; empty means current-context. Relative file references
// (certificate-authority, client-certificate, client-key, tokenFile) are
// resolved against `base_dir` and returned as paths in the *_file fields of
// the result; *-data fields are base64-decoded into the PEM fields.
// Supported keys:
//   clusters[].cluster: server, certificate-authority, certificate-authority-data,
//                       insecure-skip-tls-verify
//   users[].user:       token, tokenFile, client-certificate, client-certificate-data,
//                       client-key, client-key-data
// Other keys (exec, auth-provider, proxy-url, ...) are rejected with a clear
// error when they are the only credential, ignored otherwise.
// Errors: kInvalidArgument with a message naming the key and the fix.
struct ParsedKubeconfig {
  KubeConfig config;
  std::string ca_file;           // to be read into config.ca_pem
  std::string client_cert_file;  // to be read into config.client_cert_pem
  std::string client_key_file;   // to be read into config.client_key_pem
};
Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         std::string_view context = {});
// The same through the shared config reader (base/config_reader.h): each
// problem is a diagnostic "FILE:LINE:COL: error: kubeconfig: ... [Cxxx]" at
// the offending node; the Result form above carries them in its message.
// Unknown keys are not errors in a kubeconfig.
std::optional<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text,
                                                std::string_view base_dir, std::string_view context,
                                                std::string_view file, Diagnostics& diags);

// Reads the kubeconfig at `path`, parses it and reads the files it names.
// Errors: kNotFound (no such file), kInvalidArgument (bad YAML or keys,
// unreadable referenced file). With `problems`, the parse errors are also
// added there as diagnostics (file:line:col, code), for --format json.
Result<KubeConfig> LoadKubeconfig(const std::string& path, std::string_view context = {},
                                  Diagnostics* problems = nullptr);

// The one order in which faultline-tainter (daemon, `nodes`, `untaint`) and
// `faultline-agent --standalone` look for credentials, controller-runtime's:
//   1. `kubeconfig_path` when set (the config's kubernetes.kubeconfig);
//   2. $KUBECONFIG (its first readable file, as kubectl reads the list);
//   3. in-cluster, when KUBERNETES_SERVICE_HOST is set (or `in_cluster`
//      names a host);
//   4. ~/.kube/config when it exists.
// Errors: those of the loader chosen; kFailedPrecondition when none applies.
// `problems` as for LoadKubeconfig.
Result<KubeConfig> LoadKubeConfigAuto(const std::string& kubeconfig_path,
                                      std::string_view context = {},
                                      const InClusterOptions& in_cluster = {},
                                      Diagnostics* problems = nullptr);

// Standard base64 (padding optional, whitespace ignored); nullopt-like
// error on any other character.
Result<std::string> Base64Decode(std::string_view text);
std::string Base64Encode(std::string_view data);

}  // namespace faultline
