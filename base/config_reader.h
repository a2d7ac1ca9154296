// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/diagnostics.h"
#include "base/status.h"

namespace faultline {

// The one reader of faultline's YAML config files (the agent's, the
// tainter's, kubeconfig): every problem goes to a Diagnostics at its 1-based
// place and reading carries on, so one run shows them all, printed as the
// rule packs' are ("file:line:col: error: message [code]", the line and a
// caret; Diagnostics::ToJson for --format json). yaml-cpp's exceptions stop
// here. The codes, documented in collector/README.md and tainter/README.md:
//   C000  the file cannot be read (line and column 0)
//   C001  YAML syntax
//   C002  unknown key (a typo must not silently become a default)
//   C003  invalid value
//   C004  missing value
class ConfigReader {
 public:
  ConfigReader(std::string file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  // Parses `text`; an empty document is an empty mapping. nullopt after a
  // C001 error.
  std::optional<YAML::Node> Load(std::string_view text);

  SourceLocation At(const YAML::Node& node) const;
  void Error(const YAML::Node& node, std::string code, std::string message);
  const std::string& file() const { return file_; }
  Diagnostics& diags() { return diags_; }

 private:
  std::string file_;
  Diagnostics& diags_;
};

// One mapping of a config file at `path` ("" for the root, "kafka",
// "sources.kmsg"): typed reads of its keys. A key that is absent or null
// keeps the caller's default; a value of the wrong kind is a C003 error
// naming the full path ("'valve.window' must be a duration ...").
class ConfigMap {
 public:
  // C003 if `node` is not a mapping (then valid() is false), C002 for each
  // key not in `known`.
  ConfigMap(ConfigReader& reader, const YAML::Node& node, std::string path,
            const std::vector<std::string_view>& known);

  bool valid() const { return valid_; }
  const YAML::Node& node() const { return node_; }
  ConfigReader& reader() const { return reader_; }
  // "kafka.brokers" for key "brokers" in "kafka".
  std::string PathOf(std::string_view key) const;
  // The value of `key`; Undefined when absent or null.
  YAML::Node Get(std::string_view key) const;
  // The mapping under `key`, checked against `known`; nullopt when absent
  // (or not a mapping, which is reported).
  std::optional<ConfigMap> Sub(std::string_view key,
                               const std::vector<std::string_view>& known) const;
  // An error at the value of `key` (at the mapping when the key is absent).
  void Error(std::string_view key, std::string code, std::string message) const;

  void String(std::string_view key, std::string& out) const;
  void Bool(std::string_view key, bool& out) const;
  // A duration such as 500ms, 30s, 10m, 24h; 0s only when `allow_zero`.
  void Duration(std::string_view key, std::chrono::milliseconds& out, bool allow_zero) const;
  void Duration(std::string_view key, std::chrono::seconds& out, bool allow_zero) const;
  void Integer(std::string_view key, long long& out, long long min) const;
  template <typename Int>
  void Number(std::string_view key, Int& out, Int min) const {
    long long v = static_cast<long long>(out);
    if (Integer(key, v, static_cast<long long>(min)); v >= static_cast<long long>(min)) {
      out = static_cast<Int>(v);
    }
  }
  // A real number in [min, max]; `what` says it in words for the error.
  void Real(std::string_view key, double& out, double min, double max, std::string_view what) const;
  void StringList(std::string_view key, std::vector<std::string>& out) const;
  // A mapping of plain values (librdkafka properties).
  void StringMap(std::string_view key, std::map<std::string, std::string>& out) const;

 private:
  // True if `value` is a single value; C003 otherwise.
  bool Scalar(const YAML::Node& value, std::string_view key) const;

  ConfigReader& reader_;
  YAML::Node node_;
  std::string path_;
  bool valid_ = false;
};

// Reads the whole file at `path` into `text`. kNotFound: it cannot be read.
Status ReadConfigText(const std::string& path, std::string& text);

// The diagnostics as one Status message, one "file:line:col: error: message
// [code]" per line (no source line: for callers that return a Status).
std::string DiagnosticsMessage(const Diagnostics& diags);

}  // namespace faultline
