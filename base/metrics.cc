// SPDX-License-Identifier: Apache-2.0
#include "base/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace faultline {
namespace {

void AtomicAdd(std::atomic<double>& target, double delta) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + delta, std::memory_order_relaxed)) {
  }
}

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  // The shortest form that reads back as the same double: "0.1", not
  // "0.10000000000000001", so bucket labels stay readable.
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string RenderLabels(const MetricLabels& labels, const std::string& extra_name = "",
                         const std::string& extra_value = "") {
  if (labels.empty() && extra_name.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out += ",";
    first = false;
    out += k + "=\"" + EscapeLabelValue(v) + "\"";
  }
  if (!extra_name.empty()) {
    if (!first) out += ",";
    out += extra_name + "=\"" + extra_value + "\"";
  }
  return out + "}";
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Gauge::Add(double d) { AtomicAdd(value_, d); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      buckets_(new std::atomic<std::uint64_t>[bounds_.size() + 1]) {
  for (std::size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  std::size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> out;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out.push_back(total);
  }
  return out;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(const std::string& name,
                                                    const std::string& help, Type type) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  }
  return it->second;
}

Counter& MetricsRegistry::GetCounter(const std::string& name, const std::string& help,
                                     const MetricLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = FamilyFor(name, help, Type::kCounter).series[labels];
  if (!s.counter) s.counter = std::make_unique<Counter>();
  return *s.counter;
}

Gauge& MetricsRegistry::GetGauge(const std::string& name, const std::string& help,
                                 const MetricLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = FamilyFor(name, help, Type::kGauge).series[labels];
  if (!s.gauge) s.gauge = std::make_unique<Gauge>();
  return *s.gauge;
}

Histogram& MetricsRegistry::GetHistogram(const std::string& name, const std::string& help,
                                         const std::vector<double>& upper_bounds,
                                         const MetricLabels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = FamilyFor(name, help, Type::kHistogram).series[labels];
  if (!s.histogram) s.histogram = std::make_unique<Histogram>(upper_bounds);
  return *s.histogram;
}

void MetricsRegistry::SetGaugeCallback(const std::string& name, const std::string& help,
                                       const MetricLabels& labels, std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mu_);
  FamilyFor(name, help, Type::kGauge).series[labels].callback = std::move(read);
}

std::uint64_t MetricsRegistry::CounterValue(const std::string& name,
                                            const MetricLabels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto s = f->second.series.find(labels);
  if (s == f->second.series.end() || !s->second.counter) return 0;
  return s->second.counter->value();
}

double MetricsRegistry::GaugeValue(const std::string& name, const MetricLabels& labels) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto s = f->second.series.find(labels);
  if (s == f->second.series.end()) return 0;
  if (s->second.callback) return s->second.callback();
  return s->second.gauge ? s->second.gauge->value() : 0;
}

std::string MetricsRegistry::RenderPrometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  for (const auto& [name, family] : families_) {
    const char* type = family.type == Type::kCounter ? "counter"
                       : family.type == Type::kGauge ? "gauge"
                                                     : "histogram";
    out << "# HELP " << name << ' ' << family.help << '\n';
    out << "# TYPE " << name << ' ' << type << '\n';
    for (const auto& [labels, s] : family.series) {
      if (s.counter) {
        out << name << RenderLabels(labels) << ' ' << s.counter->value() << '\n';
      } else if (s.callback) {
        out << name << RenderLabels(labels) << ' ' << FormatValue(s.callback()) << '\n';
      } else if (s.gauge) {
        out << name << RenderLabels(labels) << ' ' << FormatValue(s.gauge->value()) << '\n';
      } else if (s.histogram) {
        const auto counts = s.histogram->cumulative_counts();
        const auto& bounds = s.histogram->upper_bounds();
        for (std::size_t i = 0; i < counts.size(); ++i) {
          const std::string le = i < bounds.size() ? FormatValue(bounds[i]) : "+Inf";
          out << name << "_bucket" << RenderLabels(labels, "le", le) << ' ' << counts[i] << '\n';
        }
        out << name << "_sum" << RenderLabels(labels) << ' ' << FormatValue(s.histogram->sum())
            << '\n';
        out << name << "_count" << RenderLabels(labels) << ' ' << s.histogram->count() << '\n';
      }
    }
  }
  return out.str();
}

}  // namespace faultline
