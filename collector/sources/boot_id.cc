// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/boot_id.h"

#include <fstream>

namespace faultline {

Result<std::string> ReadBootId(const std::string& path) {
  std::ifstream in(path);
  if (!in) return UnavailableError("cannot read boot id from " + path);
  std::string id;
  std::getline(in, id);
  while (!id.empty() && (id.back() == ' ' || id.back() == '\r')) id.pop_back();
  // ':' separates the boot id from the sequence in the kmsg cursor.
  if (id.empty() || id.find(':') != std::string::npos) {
    return UnavailableError("no usable boot id in " + path);
  }
  return id;
}

}  // namespace faultline
