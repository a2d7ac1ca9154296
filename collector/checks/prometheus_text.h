// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace faultline {

// One sample line of the Prometheus text exposition format (version 0.0.4):
//   name{label="value",...} value [timestamp]
struct PrometheusSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written
  double value = 0;

  std::string Label(std::string_view key) const;  // "" when absent
};

// Parses a whole exposition (what a /metrics endpoint returns), strictly:
// metric and label names as the format defines them ([a-zA-Z_:][a-zA-Z0-9_:]*
// and [a-zA-Z_][a-zA-Z0-9_]*), label values in double quotes with only the
// escapes \\, \" and \n, a value that is a float, NaN, +Inf or -Inf, an
// optional integer timestamp, and '#' lines (HELP, TYPE, comments) and blank
// lines skipped. Whitespace around label pairs is tolerated, as Prometheus's
// own parser does (dcgm-exporter 2.x wrote `{gpu="0", UUID="..."}`).
//
// kInvalidArgument naming the first bad line (1-based) and what is wrong
// with it; nothing is returned then, since a half-read exposition could
// hide a GPU. Pure: no I/O.
Result<std::vector<PrometheusSample>> ParsePrometheusText(std::string_view text);

}  // namespace faultline
