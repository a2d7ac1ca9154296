// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace faultline {

// A place in a rule pack or config file. 1-based, as compilers and editors
// count; yaml-cpp's Mark is 0-based, so convert once, where the Mark is read.
struct SourceLocation {
  std::string file;
  int line = 0;    // 0: unknown
  int column = 0;  // 0: unknown
};

struct Diagnostic {
  enum class Level { kError, kWarning };
  Level level = Level::kError;
  std::string code;  // stable, documented in rules/README.md: "E104"
  SourceLocation where;
  std::string message;  // lower case, no final period (GNU style)
};

// File name -> file content, for the source-line snippets under each message.
using SourceTexts = std::map<std::string, std::string>;

// Collects every problem found while loading rule packs (or a config), rather
// than stopping at the first one, so that one run shows them all. Not
// thread-safe; one Diagnostics per load.
class Diagnostics {
 public:
  void Error(std::string code, SourceLocation where, std::string message);
  void Warning(std::string code, SourceLocation where, std::string message);

  bool has_errors() const;
  std::size_t error_count() const;
  std::size_t warning_count() const;
  const std::vector<Diagnostic>& all() const { return all_; }
  void Append(const Diagnostics& other);

  // Writes "file:line:column: error: message [code]", then the offending
  // source line with a caret under the column, for each diagnostic.
  void Print(std::ostream& out, const SourceTexts& texts) const;

  // The same, as a JSON array of {file,line,column,level,code,message}.
  nlohmann::json ToJson() const;

 private:
  std::vector<Diagnostic> all_;
};

}  // namespace faultline
