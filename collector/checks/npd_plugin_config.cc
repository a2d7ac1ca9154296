// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/npd_plugin_config.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace faultline {
namespace {

Status Bad(std::string_view file, const std::string& what) {
  return InvalidArgumentError(std::string(file) + ": " + what);
}

// Check names are tokens: keep letters, digits, '-', '.', '_'.
std::string NameToken(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += (std::isalnum(u) || c == '-' || c == '.' || c == '_') ? c : '_';
  }
  return out;
}

}  // namespace

std::optional<std::chrono::milliseconds> ParseGoDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::milliseconds(0);
  double total_ms = 0;
  while (!text.empty()) {
    std::size_t i = 0;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == 0) return std::nullopt;
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, number);
    if (ec != std::errc() || ptr != text.data() + i) return std::nullopt;
    text.remove_prefix(i);
    std::size_t u = 0;
    while (u < text.size() && std::isalpha(static_cast<unsigned char>(text[u]))) ++u;
    const std::string_view unit = text.substr(0, u);
    text.remove_prefix(u);
    if (unit == "h") {
      total_ms += number * 3'600'000;
    } else if (unit == "m") {
      total_ms += number * 60'000;
    } else if (unit == "s") {
      total_ms += number * 1000;
    } else if (unit == "ms") {
      total_ms += number;
    } else if (unit == "us" || unit == "µs") {
      total_ms += number / 1000;
    } else if (unit == "ns") {
      total_ms += number / 1e6;
    } else {
      return std::nullopt;
    }
  }
  return std::chrono::milliseconds(static_cast<long long>(std::llround(total_ms)));
}

Result<NpdPluginConfig> ParseNpdPluginConfig(std::string_view json, std::string_view file,
                                             const std::map<std::string, std::string>& env,
                                             const std::string& working_dir) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Bad(file, "not a JSON object");
  NpdPluginConfig config;
  auto string_at = [](const nlohmann::json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (std::string plugin = string_at(doc, "plugin"); plugin != "custom") {
    return Bad(file, "plugin is '" + plugin +
                         "', not 'custom' (only custom-plugin-monitor configs run as checks)");
  }
  config.source = string_at(doc, "source");
  if (config.source.empty()) return Bad(file, "no source");

  std::chrono::milliseconds timeout{5000};
  std::size_t max_output = 80;
  if (auto pc = doc.find("pluginConfig"); pc != doc.end() && pc->is_object()) {
    if (std::string s = string_at(*pc, "invoke_interval"); !s.empty()) {
      auto d = ParseGoDuration(s);
      if (!d || d->count() <= 0) {
        return Bad(file, "pluginConfig.invoke_interval '" + s + "' is not a positive duration");
      }
      config.invoke_interval = *d;
    }
    if (std::string s = string_at(*pc, "timeout"); !s.empty()) {
      auto d = ParseGoDuration(s);
      if (!d || d->count() <= 0) {
        return Bad(file, "pluginConfig.timeout '" + s + "' is not a positive duration");
      }
      timeout = *d;
    }
    if (auto m = pc->find("max_output_length"); m != pc->end()) {
      if (!m->is_number_unsigned() || m->get<std::uint64_t>() == 0) {
        return Bad(file, "pluginConfig.max_output_length must be a positive integer");
      }
      max_output = static_cast<std::size_t>(m->get<std::uint64_t>());
    }
    if (auto c = pc->find("concurrency"); c != pc->end()) {
      if (!c->is_number_unsigned() || c->get<std::uint64_t>() == 0) {
        return Bad(file, "pluginConfig.concurrency must be a positive integer");
      }
      config.concurrency = static_cast<std::size_t>(c->get<std::uint64_t>());
    }
  }
  auto rules = doc.find("rules");
  if (rules == doc.end() || !rules->is_array() || rules->empty()) return Bad(file, "no rules");
  std::size_t n = 0;
  for (const nlohmann::json& rule : *rules) {
    const std::string where = "rules[" + std::to_string(n) + "]";
    if (!rule.is_object()) return Bad(file, where + " is not an object");
    ExecCheck::Options o;
    o.type = string_at(rule, "type");
    if (o.type != "temporary" && o.type != "permanent") {
      return Bad(file, where + ".type must be temporary or permanent, not '" + o.type + "'");
    }
    o.condition = string_at(rule, "condition");
    if (o.type == "permanent" && o.condition.empty()) {
      return Bad(file, where + " is permanent but names no condition");
    }
    o.reason = string_at(rule, "reason");
    o.path = string_at(rule, "path");
    if (o.path.empty()) return Bad(file, where + " has no path");
    if (auto args = rule.find("args"); args != rule.end()) {
      if (!args->is_array()) return Bad(file, where + ".args must be a list of strings");
      for (const nlohmann::json& a : *args) {
        if (!a.is_string()) return Bad(file, where + ".args must be a list of strings");
        o.args.push_back(a.get<std::string>());
      }
    }
    std::chrono::milliseconds rule_timeout = timeout;
    if (std::string s = string_at(rule, "timeout"); !s.empty()) {
      auto d = ParseGoDuration(s);
      if (!d || d->count() <= 0) {
        std::string what = where;
        what += ".timeout '";
        what += s;
        what += "' is not a positive duration";
        return Bad(file, what);
      }
      rule_timeout = *d;
    }
    o.name = "npd." + NameToken(config.source) + "." + std::to_string(n) +
             (o.reason.empty() ? "" : "." + NameToken(o.reason));
    o.env = env;
    o.working_dir = working_dir;
    o.max_output_length = max_output;
    config.rules.push_back(std::move(o));
    config.timeouts.push_back(rule_timeout);
    ++n;
  }
  return config;
}

}  // namespace faultline
