// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_settings.h"

namespace faultline {

void ReadKubernetesSection(const ConfigMap& parent, KubernetesSettings& out) {
  auto k = parent.Sub("kubernetes", {"kubeconfig", "context", "qps", "burst", "request_timeout"});
  if (!k) return;
  k->String("kubeconfig", out.kubeconfig);
  k->String("context", out.context);
  k->Real("qps", out.qps, 0, 1e9, "a number >= 0");
  k->Number("burst", out.burst, 1);
  k->Duration("request_timeout", out.request_timeout, false);
}

}  // namespace faultline
