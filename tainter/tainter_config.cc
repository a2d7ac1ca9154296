// SPDX-License-Identifier: Apache-2.0
#include "tainter/tainter_config.h"

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/time_format.h"
#include "tainter/label_selector.h"

namespace faultline {
namespace {

// Collects every problem with its position; yaml-cpp's marks are 0-based.
class Errors {
 public:
  explicit Errors(std::string_view file) : file_(file) {}
  void Add(const YAML::Mark& mark, const std::string& message) {
    std::ostringstream out;
    out << file_ << ':' << (mark.line >= 0 ? mark.line + 1 : 1) << ':'
        << (mark.column >= 0 ? mark.column + 1 : 1) << ": error: " << message;
    lines_.push_back(out.str());
  }
  bool empty() const { return lines_.empty(); }
  std::string Join() const {
    std::string out;
    for (const std::string& l : lines_) out += (out.empty() ? "" : "\n") + l;
    return out;
  }

 private:
  std::string file_;
  std::vector<std::string> lines_;
};

using Handler = std::function<void(const YAML::Node& value, const std::string& path)>;

// Walks a mapping, calling the handler of each known key; unknown keys and
// non-mappings are errors.
void Walk(const YAML::Node& node, const std::string& path,
          const std::map<std::string, Handler>& keys, Errors& errors) {
  if (!node.IsMap()) {
    errors.Add(node.Mark(), "'" + path + "' must be a mapping");
    return;
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    auto it = keys.find(key);
    if (it == keys.end()) {
      std::string known;
      for (const auto& [k, h] : keys) known += (known.empty() ? "" : ", ") + k;
      errors.Add(kv.first.Mark(), "unknown key '" + (path.empty() ? "" : path + ".") + key +
                                      "'; known keys here: " + known);
      continue;
    }
    it->second(kv.second, path.empty() ? key : path + "." + key);
  }
}

struct Reader {
  Errors& errors;

  Handler String(std::string* out) {
    return [this, out](const YAML::Node& v, const std::string& path) {
      if (!v.IsScalar()) return errors.Add(v.Mark(), "'" + path + "' must be a string");
      *out = v.as<std::string>();
    };
  }
  Handler Bool(bool* out) {
    return [this, out](const YAML::Node& v, const std::string& path) {
      bool b = false;
      if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) {
        return errors.Add(v.Mark(), "'" + path + "' must be true or false");
      }
      *out = b;
    };
  }
  Handler Int(int* out, int min) {
    return [this, out, min](const YAML::Node& v, const std::string& path) {
      int i = 0;
      if (!v.IsScalar() || !YAML::convert<int>::decode(v, i) || i < min) {
        return errors.Add(v.Mark(), "'" + path + "' must be an integer >= " + std::to_string(min));
      }
      *out = i;
    };
  }
  Handler Int64(std::int64_t* out, std::int64_t min) {
    return [this, out, min](const YAML::Node& v, const std::string& path) {
      long long i = 0;
      if (!v.IsScalar() || !YAML::convert<long long>::decode(v, i) || i < min) {
        return errors.Add(v.Mark(), "'" + path + "' must be an integer >= " + std::to_string(min));
      }
      *out = i;
    };
  }
  Handler Fraction(double* out) {
    return [this, out](const YAML::Node& v, const std::string& path) {
      double d = 0;
      if (!v.IsScalar() || !YAML::convert<double>::decode(v, d) || d < 0 || d > 1) {
        return errors.Add(v.Mark(), "'" + path + "' must be a number between 0 and 1 (0.1 = 10%)");
      }
      *out = d;
    };
  }
  Handler Positive(double* out) {
    return [this, out](const YAML::Node& v, const std::string& path) {
      double d = 0;
      if (!v.IsScalar() || !YAML::convert<double>::decode(v, d) || d < 0) {
        return errors.Add(v.Mark(), "'" + path + "' must be a number >= 0");
      }
      *out = d;
    };
  }
  template <typename D>
  Handler Duration(D* out) {
    return [this, out](const YAML::Node& v, const std::string& path) {
      std::optional<std::chrono::milliseconds> d;
      if (v.IsScalar()) d = ParseDuration(v.as<std::string>());
      if (!d || d->count() <= 0) {
        return errors.Add(v.Mark(), "'" + path + "' must be a duration such as 90s, 10m, 24h");
      }
      *out = std::chrono::duration_cast<D>(*d);
    };
  }
};

}  // namespace

Result<TainterConfig> ParseTainterConfig(std::string_view yaml_text, std::string_view file_name) {
  Errors errors(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    errors.Add(e.mark, e.msg);
    return InvalidArgumentError(errors.Join());
  }
  TainterConfig c;
  if (!root || root.IsNull()) return c;  // an empty file: every default
  Reader r{errors};
  std::string log_level = "info";
  std::string effect = c.tainter.taint.effect;
  Policy::Options& valve = c.tainter.policy;

  try {
    Walk(root, "",
         {
             {"kafka",
              [&](const YAML::Node& v, const std::string& path) {
                Walk(v, path,
                     {{"brokers", r.String(&c.kafka.brokers)},
                      {"topic", r.String(&c.kafka.topic)},
                      {"group", r.String(&c.kafka.group)},
                      {"dead_letter_topic", r.String(&c.kafka.dead_letter_topic)},
                      {"rebuild_span", r.Duration(&c.kafka.rebuild_span)},
                      {"rebuild_max_messages", r.Int64(&c.kafka.rebuild_max_messages, 0)},
                      {"properties",
                       [&](const YAML::Node& p, const std::string& ppath) {
                         if (!p.IsMap())
                           return errors.Add(p.Mark(), "'" + ppath + "' must be a mapping");
                         for (const auto& kv : p) {
                           if (!kv.second.IsScalar()) {
                             errors.Add(kv.second.Mark(), "'" + ppath + "." +
                                                              kv.first.as<std::string>() +
                                                              "' must be a string");
                             continue;
                           }
                           c.kafka.properties[kv.first.as<std::string>()] =
                               kv.second.as<std::string>();
                         }
                       }}},
                     errors);
              }},
             {"kubernetes",
              [&](const YAML::Node& v, const std::string& path) {
                Walk(v, path,
                     {{"kubeconfig", r.String(&c.kubernetes.kubeconfig)},
                      {"context", r.String(&c.kubernetes.context)},
                      {"qps", r.Positive(&c.kubernetes.qps)},
                      {"burst", r.Int(&c.kubernetes.burst, 1)},
                      {"request_timeout", r.Duration(&c.kubernetes.request_timeout)}},
                     errors);
              }},
             {"taint",
              [&](const YAML::Node& v, const std::string& path) {
                Walk(v, path,
                     {{"key", r.String(&c.tainter.taint.key)},
                      {"value", r.String(&c.tainter.taint.value)},
                      {"effect",
                       [&](const YAML::Node& e, const std::string& epath) {
                         r.String (&effect)(e, epath);
                         if (effect != "NoSchedule" && effect != "PreferNoSchedule" &&
                             effect != "NoExecute") {
                           errors.Add(e.Mark(), "'" + epath +
                                                    "' must be NoSchedule, "
                                                    "PreferNoSchedule or NoExecute, not '" +
                                                    effect + "'");
                         }
                       }}},
                     errors);
              }},
             {"annotation", r.String(&c.tainter.annotation_key)},
             {"max_annotation_bytes",
              [&](const YAML::Node& v, const std::string& path) {
                std::int64_t n = 0;
                r.Int64(&n, 1024)(v, path);
                if (n >= 1024) c.tainter.max_annotation_bytes = static_cast<std::size_t>(n);
              }},
             {"node_selector",
              [&](const YAML::Node& v, const std::string& path) {
                r.String (&c.tainter.node_selector)(v, path);
                if (auto s = LabelSelector::Parse(c.tainter.node_selector); !s) {
                  errors.Add(v.Mark(), "'" + path + "': " + s.error().message());
                }
              }},
             {"opt_out_label",
              [&](const YAML::Node& v, const std::string& path) {
                r.String (&c.tainter.opt_out_label)(v, path);
                if (auto s = LabelMatch::Parse(c.tainter.opt_out_label); !s) {
                  errors.Add(v.Mark(), "'" + path + "': " + s.error().message());
                }
              }},
             {"valve",
              [&](const YAML::Node& v, const std::string& path) {
                Walk(v, path,
                     {{"max_fraction", r.Fraction(&valve.max_fraction)},
                      {"per_rule_max_fraction", r.Fraction(&valve.per_rule_max_fraction)},
                      {"min_allowed", r.Int(&valve.min_allowed, 0)},
                      {"max_new_taints", r.Int(&valve.max_new_taints, 0)},
                      {"window", r.Duration(&valve.new_taint_window)},
                      {"event_interval", r.Duration(&valve.event_interval)}},
                     errors);
              }},
             {"dedupe",
              [&](const YAML::Node& v, const std::string& path) {
                std::int64_t capacity = static_cast<std::int64_t>(valve.dedupe_capacity);
                Walk(v, path,
                     {{"capacity", r.Int64(&capacity, 1)}, {"ttl", r.Duration(&valve.dedupe_ttl)}},
                     errors);
                valve.dedupe_capacity = static_cast<std::size_t>(capacity);
              }},
             {"resync_interval", r.Duration(&c.tainter.resync_interval)},
             {"max_pending",
              [&](const YAML::Node& v, const std::string& path) {
                std::int64_t n = static_cast<std::int64_t>(c.tainter.max_pending);
                r.Int64(&n, 1)(v, path);
                c.tainter.max_pending = static_cast<std::size_t>(n);
              }},
             {"dry_run", r.Bool(&c.tainter.dry_run)},
             {"metrics_address", r.String(&c.metrics_address)},
             {"log_level",
              [&](const YAML::Node& v, const std::string& path) {
                r.String (&log_level)(v, path);
                if (!ParseLogLevel(log_level, &c.log_level)) {
                  errors.Add(v.Mark(), "'" + path + "' must be debug, info, warn or error");
                }
              }},
         },
         errors);
  } catch (const YAML::Exception& e) {
    errors.Add(e.mark, e.msg);
  }
  c.tainter.taint.effect = effect;
  if (!errors.empty()) return InvalidArgumentError(errors.Join());
  return c;
}

Result<TainterConfig> LoadTainterConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot read the config file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseTainterConfig(text, path);
}

}  // namespace faultline
