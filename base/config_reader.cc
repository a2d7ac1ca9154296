// SPDX-License-Identifier: Apache-2.0
#include "base/config_reader.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/time_format.h"

namespace faultline {

std::optional<YAML::Node> ConfigReader::Load(std::string_view text) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull() || !root.IsDefined()) root = YAML::Node(YAML::NodeType::Map);
    return root;
  } catch (const YAML::Exception& e) {
    diags_.Error("C001", {file_, e.mark.line + 1, e.mark.column + 1},
                 "invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
    return std::nullopt;
  }
}

SourceLocation ConfigReader::At(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

void ConfigReader::Error(const YAML::Node& node, std::string code, std::string message) {
  diags_.Error(std::move(code), At(node), std::move(message));
}

ConfigMap::ConfigMap(ConfigReader& reader, const YAML::Node& node, std::string path,
                     const std::vector<std::string_view>& known)
    : reader_(reader), node_(node), path_(std::move(path)) {
  if (!node_.IsMap()) {
    reader_.Error(
        node_, "C003",
        (path_.empty() ? std::string("the config") : "'" + path_ + "'") + " must be a mapping");
    return;
  }
  valid_ = true;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    reader_.Error(it->first, "C002", "unknown key '" + PathOf(key) + "'; known keys here: " + list);
  }
}

std::string ConfigMap::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

YAML::Node ConfigMap::Get(std::string_view key) const {
  if (!valid_) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key && !it->second.IsNull()) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::optional<ConfigMap> ConfigMap::Sub(std::string_view key,
                                        const std::vector<std::string_view>& known) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined()) return std::nullopt;
  ConfigMap sub(reader_, n, PathOf(key), known);
  if (!sub.valid()) return std::nullopt;
  return sub;
}

void ConfigMap::Error(std::string_view key, std::string code, std::string message) const {
  const YAML::Node n = Get(key);
  reader_.Error(n.IsDefined() ? n : node_, std::move(code), std::move(message));
}

bool ConfigMap::Scalar(const YAML::Node& value, std::string_view key) const {
  if (value.IsScalar()) return true;
  reader_.Error(value, "C003", "'" + PathOf(key) + "' must be a single value");
  return false;
}

void ConfigMap::String(std::string_view key, std::string& out) const {
  const YAML::Node n = Get(key);
  if (n.IsDefined() && Scalar(n, key)) out = n.Scalar();
}

void ConfigMap::Bool(std::string_view key, bool& out) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined() || !Scalar(n, key)) return;
  const std::string& v = n.Scalar();
  if (v == "true" || v == "yes" || v == "on") {
    out = true;
  } else if (v == "false" || v == "no" || v == "off") {
    out = false;
  } else {
    reader_.Error(n, "C003", "'" + PathOf(key) + "' must be true or false, not '" + v + "'");
  }
}

void ConfigMap::Duration(std::string_view key, std::chrono::milliseconds& out,
                         bool allow_zero) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined() || !Scalar(n, key)) return;
  std::optional<std::chrono::milliseconds> d = ParseDuration(n.Scalar());
  if (!d || d->count() < 0 || (!allow_zero && d->count() == 0)) {
    reader_.Error(n, "C003",
                  "'" + PathOf(key) + "' must be a duration such as 500ms, 30s, 10m, 24h" +
                      (allow_zero ? " (0s allowed)" : "") + ", not '" + n.Scalar() + "'");
    return;
  }
  out = *d;
}

void ConfigMap::Duration(std::string_view key, std::chrono::seconds& out, bool allow_zero) const {
  std::chrono::milliseconds ms = out;
  Duration(key, ms, allow_zero);
  out = std::chrono::duration_cast<std::chrono::seconds>(ms);
}

void ConfigMap::Integer(std::string_view key, long long& out, long long min) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined() || !Scalar(n, key)) return;
  const std::string& v = n.Scalar();
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || parsed < min) {
    reader_.Error(n, "C003",
                  "'" + PathOf(key) + "' must be a whole number >= " + std::to_string(min) +
                      ", not '" + v + "'");
    return;
  }
  out = parsed;
}

void ConfigMap::Real(std::string_view key, double& out, double min, double max,
                     std::string_view what) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined() || !Scalar(n, key)) return;
  const std::string& v = n.Scalar();
  char* end = nullptr;
  const double parsed = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(parsed >= min) || !(parsed <= max)) {
    reader_.Error(n, "C003",
                  "'" + PathOf(key) + "' must be " + std::string(what) + ", not '" + v + "'");
    return;
  }
  out = parsed;
}

void ConfigMap::StringList(std::string_view key, std::vector<std::string>& out) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined()) return;
  if (!n.IsSequence()) {
    reader_.Error(n, "C003", "'" + PathOf(key) + "' must be a list");
    return;
  }
  out.clear();
  for (const YAML::Node& item : n) {
    if (Scalar(item, key)) out.push_back(item.Scalar());
  }
}

void ConfigMap::StringMap(std::string_view key, std::map<std::string, std::string>& out) const {
  const YAML::Node n = Get(key);
  if (!n.IsDefined()) return;
  if (!n.IsMap()) {
    reader_.Error(n, "C003", "'" + PathOf(key) + "' must be a mapping");
    return;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.Scalar();
    if (Scalar(it->second, std::string(key) + "." + name)) {
      out[name] = it->second.Scalar();
    }
  }
}

Status ReadConfigText(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot read the config file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return OkStatus();
}

std::string DiagnosticsMessage(const Diagnostics& diags) {
  std::ostringstream out;
  diags.Print(out, {});
  std::string message = out.str();
  if (!message.empty() && message.back() == '\n') message.pop_back();
  return message;
}

}  // namespace faultline
