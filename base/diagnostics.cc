// SPDX-License-Identifier: Apache-2.0
#include "base/diagnostics.h"

#include <algorithm>
#include <string_view>

namespace faultline {
namespace {

// The 1-based line `line` of `text`, without its newline; empty if absent.
std::string_view LineOf(std::string_view text, int line) {
  if (line < 1) return {};
  std::size_t start = 0;
  for (int i = 1; i < line; ++i) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  std::size_t end = text.find('\n', start);
  std::string_view out =
      text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

const char* LevelName(Diagnostic::Level level) {
  return level == Diagnostic::Level::kError ? "error" : "warning";
}

}  // namespace

void Diagnostics::Error(std::string code, SourceLocation where, std::string message) {
  all_.push_back(
      {Diagnostic::Level::kError, std::move(code), std::move(where), std::move(message)});
}

void Diagnostics::Warning(std::string code, SourceLocation where, std::string message) {
  all_.push_back(
      {Diagnostic::Level::kWarning, std::move(code), std::move(where), std::move(message)});
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

std::size_t Diagnostics::error_count() const {
  return static_cast<std::size_t>(std::count_if(all_.begin(), all_.end(), [](const Diagnostic& d) {
    return d.level == Diagnostic::Level::kError;
  }));
}

std::size_t Diagnostics::warning_count() const { return all_.size() - error_count(); }

void Diagnostics::Append(const Diagnostics& other) {
  all_.insert(all_.end(), other.all_.begin(), other.all_.end());
}

void Diagnostics::Print(std::ostream& out, const SourceTexts& texts) const {
  for (const Diagnostic& d : all_) {
    out << (d.where.file.empty() ? "<unknown>" : d.where.file);
    if (d.where.line > 0) {
      out << ':' << d.where.line;
      if (d.where.column > 0) out << ':' << d.where.column;
    }
    out << ": " << LevelName(d.level) << ": " << d.message << " [" << d.code << "]\n";
    auto it = texts.find(d.where.file);
    if (it == texts.end() || d.where.line < 1) continue;
    std::string_view line = LineOf(it->second, d.where.line);
    std::string number = std::to_string(d.where.line);
    std::string gutter(std::max<std::size_t>(number.size(), 4), ' ');
    out << gutter.substr(number.size()) << number << " | " << line << '\n';
    if (d.where.column > 0) {
      // Keep tabs so that the caret lines up under the same column in a terminal.
      std::string pad;
      for (int i = 0; i + 1 < d.where.column && i < static_cast<int>(line.size()); ++i) {
        pad += line[static_cast<std::size_t>(i)] == '\t' ? '\t' : ' ';
      }
      out << gutter << " | " << pad << "^\n";
    }
  }
}

nlohmann::json Diagnostics::ToJson() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const Diagnostic& d : all_) {
    arr.push_back({{"file", d.where.file},
                   {"line", d.where.line},
                   {"column", d.where.column},
                   {"level", LevelName(d.level)},
                   {"code", d.code},
                   {"message", d.message}});
  }
  return arr;
}

}  // namespace faultline
