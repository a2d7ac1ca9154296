// SPDX-License-Identifier: Apache-2.0
// ParseTainterConfig on arbitrary YAML (a ConfigMap). Beyond "no crash": a
// refusal names the file, as "FILE:LINE:COL: error: ..." promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tainter/daemon/tainter_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = faultline::ParseTainterConfig(text, "tainter.yaml");
  if (!config.ok() && config.error().message().rfind("tainter.yaml", 0) != 0) std::abort();
  return 0;
}
