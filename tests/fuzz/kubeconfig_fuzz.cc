// SPDX-License-Identifier: Apache-2.0
// ParseKubeconfig on arbitrary YAML (the tainter CLI reads whatever
// $KUBECONFIG points at) and Base64Decode, which decodes its *-data fields.
// Beyond "no crash": an accepted config has a server URL, and base64 text we
// encode decodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tainter/kube/kube_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = faultline::ParseKubeconfig(text, "/fuzz");
  if (parsed.ok()) {
    if (parsed->config.server.empty()) std::abort();
    (void)parsed->config.Describe();
  } else if (parsed.error().message().empty()) {
    std::abort();
  }
  // A named context that may or may not exist takes the other lookup path.
  (void)faultline::ParseKubeconfig(text, "", "fuzz");

  (void)faultline::Base64Decode(text);
  auto decoded = faultline::Base64Decode(faultline::Base64Encode(text));
  if (!decoded.ok() || *decoded != text) std::abort();
  return 0;
}
