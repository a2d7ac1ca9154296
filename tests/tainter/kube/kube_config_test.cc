// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_config.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

constexpr char kTwoContexts[] = R"yaml(
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmNhCg==
- name: lab-cluster
  cluster:
    server: https://lab.example:443
    certificate-authority: certs/lab-ca.crt
- name: insecure-cluster
  cluster:
    server: https://127.0.0.1:8443
    insecure-skip-tls-verify: true
users:
- name: tainter
  user:
    token: abc.def
- name: cert-user
  user:
    client-certificate: certs/client.crt
    client-key: /abs/client.key
- name: data-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: file-user
  user:
    tokenFile: token
- name: exec-user
  user:
    exec:
      command: aws
- name: half-user
  user:
    client-certificate-data: Q0VSVA==
contexts:
- name: prod
  context: {cluster: prod-cluster, user: tainter}
- name: lab
  context: {cluster: lab-cluster, user: cert-user}
- name: data
  context: {cluster: prod-cluster, user: data-user}
- name: files
  context: {cluster: lab-cluster, user: file-user}
- name: insecure
  context: {cluster: insecure-cluster, user: tainter}
- name: exec
  context: {cluster: prod-cluster, user: exec-user}
- name: half
  context: {cluster: prod-cluster, user: half-user}
- name: dangling
  context: {cluster: nowhere, user: tainter}
)yaml";

TEST_CASE("kubeconfig: the current context gives server, decoded CA data and token") {
  auto parsed = ParseKubeconfig(kTwoContexts, "/home/me/.kube");
  REQUIRE(parsed.ok());
  const KubeConfig& c = parsed->config;
  CHECK(c.server == "https://10.0.0.1:6443");  // trailing slash dropped
  CHECK(c.ca_pem == "-----BEGIN CERTIFICATE-----\nca\n");
  CHECK(c.token == "abc.def");
  CHECK_FALSE(c.insecure_skip_tls_verify);
  CHECK(parsed->ca_file.empty());
  CHECK(c.Describe().find("abc.def") == std::string::npos);
}

TEST_CASE(
    "kubeconfig: a named context with file references resolved against the kubeconfig's dir") {
  auto parsed = ParseKubeconfig(kTwoContexts, "/home/me/.kube", "lab");
  REQUIRE(parsed.ok());
  CHECK(parsed->config.server == "https://lab.example:443");
  CHECK(parsed->ca_file == "/home/me/.kube/certs/lab-ca.crt");
  CHECK(parsed->client_cert_file == "/home/me/.kube/certs/client.crt");
  CHECK(parsed->client_key_file == "/abs/client.key");
  CHECK(parsed->config.token.empty());
}

TEST_CASE("kubeconfig: client certificate and key data, token files, insecure flag") {
  auto data = ParseKubeconfig(kTwoContexts, "/k", "data");
  REQUIRE(data.ok());
  CHECK(data->config.client_cert_pem == "CERT");
  CHECK(data->config.client_key_pem == "KEY");

  auto files = ParseKubeconfig(kTwoContexts, "/k", "files");
  REQUIRE(files.ok());
  CHECK(files->config.token_file == "/k/token");

  auto insecure = ParseKubeconfig(kTwoContexts, "/k", "insecure");
  REQUIRE(insecure.ok());
  CHECK(insecure->config.insecure_skip_tls_verify);
  CHECK(insecure->config.Describe().find("insecure-skip-verify") != std::string::npos);
}

TEST_CASE("kubeconfig: mistakes are kInvalidArgument with a message naming the problem") {
  auto error = [](const char* context, std::string_view text = kTwoContexts) {
    auto parsed = ParseKubeconfig(text, "/k", context);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code() == StatusCode::kInvalidArgument);
    return parsed.error().message();
  };
  CHECK(error("nope").find("context 'nope' not found") != std::string::npos);
  CHECK(error("dangling").find("cluster 'nowhere'") != std::string::npos);
  CHECK(error("exec").find("exec") != std::string::npos);
  CHECK(error("half").find("both a client certificate and a client key") != std::string::npos);
  CHECK(error("", "clusters: []\n").find("no current-context") != std::string::npos);
  CHECK(error("", "a: [unclosed\n").find("invalid YAML at line") != std::string::npos);
  CHECK(error("",
              "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
              "clusters:\n- name: c\n  cluster: {server: 'ftp://x'}\n")
            .find("must start with https://") != std::string::npos);
  CHECK(error("",
              "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
              "clusters:\n- name: c\n  cluster: {server: 'https://x', "
              "certificate-authority-data: '!!!'}\n")
            .find("not base64") != std::string::npos);
}

TEST_CASE("LoadKubeconfig reads the files the kubeconfig names") {
  TempDir dir;
  dir.Write("certs/lab-ca.crt", "LAB CA PEM");
  dir.Write("certs/client.crt", "CLIENT CERT PEM");
  const std::string key = dir.Write("client.key", "CLIENT KEY PEM");
  std::string text = kTwoContexts;
  text.replace(text.find("/abs/client.key"), std::string("/abs/client.key").size(), key);
  const std::string path = dir.Write("config", text);

  auto config = LoadKubeconfig(path, "lab");
  REQUIRE(config.ok());
  CHECK(config->ca_pem == "LAB CA PEM");
  CHECK(config->client_cert_pem == "CLIENT CERT PEM");
  CHECK(config->client_key_pem == "CLIENT KEY PEM");
  CHECK(config->origin == "kubeconfig " + path + " context lab");

  CHECK(LoadKubeconfig(dir / "missing").error().code() == StatusCode::kNotFound);
  std::filesystem::remove(dir / "certs/lab-ca.crt");
  auto broken = LoadKubeconfig(path, "lab");
  CHECK(broken.error().code() == StatusCode::kInvalidArgument);
  CHECK(broken.error().message().find("lab-ca.crt") != std::string::npos);
}

TEST_CASE("in-cluster config: service host and port, CA read now, token left as a file") {
  TempDir dir;
  InClusterOptions options;
  options.service_host = "10.96.0.1";
  options.service_port = "443";
  options.token_path = dir.Write("token", "tok");
  options.ca_path = dir.Write("ca.crt", "CA PEM");
  auto config = LoadInClusterConfig(options);
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.96.0.1:443");
  CHECK(config->ca_pem == "CA PEM");
  CHECK(config->token_file == options.token_path);
  CHECK(config->token.empty());
  CHECK_FALSE(config->insecure_skip_tls_verify);

  SUBCASE("an IPv6 service address is bracketed") {
    options.service_host = "fd00::1";
    CHECK(LoadInClusterConfig(options)->server == "https://[fd00::1]:443");
  }
  SUBCASE("no token file: not in a cluster") {
    options.token_path = dir / "none";
    CHECK(LoadInClusterConfig(options).error().code() == StatusCode::kFailedPrecondition);
  }
  SUBCASE("unreadable CA") {
    options.ca_path = dir / "none";
    CHECK(LoadInClusterConfig(options).error().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("base64 round-trips and rejects junk") {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "-----BEGIN CERTIFICATE-----\n"}) {
    auto back = Base64Decode(Base64Encode(s));
    REQUIRE(back.ok());
    CHECK(*back == s);
  }
  CHECK(*Base64Decode("YWJj\nZA==") == "abcd");
  CHECK_FALSE(Base64Decode("YW*j").ok());
}

}  // namespace
}  // namespace faultline

namespace faultline {
namespace {

TEST_CASE("LoadKubeConfigAuto prefers an explicit kubeconfig, then in-cluster") {
  TempDir dir;
  const std::string kubeconfig =
      dir.Write("kc",
                "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://k:6443'}\n"
                "users:\n- name: u\n  user: {token: t}\n");
  CHECK(LoadKubeConfigAuto(kubeconfig)->server == "https://k:6443");
  InClusterOptions in_cluster;
  in_cluster.service_host = "10.0.0.1";
  in_cluster.service_port = "443";
  in_cluster.token_path = dir.Write("token", "t");
  in_cluster.ca_path = dir.Write("ca.crt", "CA");
  CHECK(LoadKubeConfigAuto(kubeconfig, {}, in_cluster)->server == "https://k:6443");
  auto auto_config = LoadKubeConfigAuto("", {}, in_cluster);
  REQUIRE(auto_config.ok());
  CHECK(auto_config->origin == "in-cluster");
}

}  // namespace
}  // namespace faultline

namespace faultline {
namespace {

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;  // NOLINT(concurrency-mt-unsafe)
    if (value) {
      setenv(name, value, 1);  // NOLINT(concurrency-mt-unsafe)
    } else {
      unsetenv(name);  // NOLINT(concurrency-mt-unsafe)
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    } else {
      unsetenv(name_);  // NOLINT(concurrency-mt-unsafe)
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string KubeconfigFor(const std::string& server) {
  return "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
         "clusters:\n- name: c\n  cluster: {server: '" +
         server + "'}\nusers:\n- name: u\n  user: {token: t}\n";
}

TEST_CASE("credentials: the named kubeconfig, then $KUBECONFIG, then in-cluster, then ~/.kube") {
  TempDir dir;
  const std::string named = dir.Write("named", KubeconfigFor("https://named:6443"));
  const std::string env = dir.Write("env", KubeconfigFor("https://env:6443"));
  dir.Write("home/.kube/config", KubeconfigFor("https://home:6443"));
  dir.Write("empty/.keep", "");
  InClusterOptions in_cluster;
  in_cluster.service_host = "10.0.0.1";
  in_cluster.service_port = "443";
  in_cluster.token_path = dir.Write("token", "t");
  in_cluster.ca_path = dir.Write("ca.crt", "CA");
  ScopedEnv no_host("KUBERNETES_SERVICE_HOST", nullptr);
  ScopedEnv home("HOME", (dir / "home").c_str());
  {
    ScopedEnv kubeconfig("KUBECONFIG", (env + ":" + named).c_str());
    CHECK(LoadKubeConfigAuto(named, {}, in_cluster)->server == "https://named:6443");
    CHECK(LoadKubeConfigAuto("", {}, in_cluster)->server == "https://env:6443");
  }
  ScopedEnv no_kubeconfig("KUBECONFIG", nullptr);
  CHECK(LoadKubeConfigAuto("", {}, in_cluster)->origin == "in-cluster");
  CHECK(LoadKubeConfigAuto("")->server == "https://home:6443");
  ScopedEnv empty_home("HOME", (dir / "empty").c_str());
  CHECK(LoadKubeConfigAuto("").error().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("kubeconfig problems are diagnostics at their place, with a code") {
  Diagnostics diags;
  CHECK_FALSE(ParseKubeconfig(KubeconfigFor("ftp://x"), "/k", {}, "/k/config", diags));
  REQUIRE(diags.all().size() == 1);
  const Diagnostic& d = diags.all()[0];
  CHECK(d.code == "C003");
  CHECK(d.where.file == "/k/config");
  CHECK(d.where.line == 7);
  CHECK(d.where.column == 21);
  CHECK(d.message.find("must start with https://") != std::string::npos);

  Diagnostics syntax;
  CHECK_FALSE(ParseKubeconfig("a: [unclosed\n", "/k", {}, "/k/config", syntax));
  REQUIRE(syntax.all().size() == 1);
  CHECK(syntax.all()[0].code == "C001");
}

}  // namespace
}  // namespace faultline
