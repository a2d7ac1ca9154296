// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/slurm_names.h"

namespace faultline {

Result<SlurmNames> SlurmNames::Create(std::string pattern, std::map<std::string, std::string> map) {
  constexpr std::string_view kName = "{name}";
  SlurmNames names;
  if (pattern.empty()) pattern = kName;
  const std::size_t at = pattern.find(kName);
  if (at == std::string::npos || pattern.find(kName, at + 1) != std::string::npos) {
    return InvalidArgumentError("the node name pattern '" + pattern +
                                "' must hold '{name}' exactly once");
  }
  names.prefix_ = pattern.substr(0, at);
  names.suffix_ = pattern.substr(at + kName.size());
  for (const auto& [node, slurm] : map) {
    if (node.empty() || slurm.empty()) return InvalidArgumentError("an empty name in the node map");
    auto [it, fresh] = names.to_faultline_.emplace(slurm, node);
    if (!fresh) {
      std::string message = "the node map sends both '";
      message += it->second;
      message += "' and '";
      message += node;
      message += "' to Slurm node '";
      message += slurm;
      message += "'";
      return InvalidArgumentError(std::move(message));
    }
  }
  names.to_slurm_ = std::move(map);
  return names;
}

std::optional<std::string> SlurmNames::ToSlurm(std::string_view node) const {
  if (auto it = to_slurm_.find(std::string(node)); it != to_slurm_.end()) return it->second;
  std::string slurm = prefix_ + std::string(node) + suffix_;
  if (to_faultline_.contains(slurm)) return std::nullopt;  // the map's, for another node
  return slurm;
}

std::optional<std::string> SlurmNames::ToFaultline(std::string_view slurm_name) const {
  if (auto it = to_faultline_.find(std::string(slurm_name)); it != to_faultline_.end()) {
    return it->second;
  }
  if (slurm_name.size() <= prefix_.size() + suffix_.size() || !slurm_name.starts_with(prefix_) ||
      !slurm_name.ends_with(suffix_)) {
    return std::nullopt;
  }
  std::string node(
      slurm_name.substr(prefix_.size(), slurm_name.size() - prefix_.size() - suffix_.size()));
  // A mapped node answers to its mapped Slurm name only.
  if (to_slurm_.contains(node)) return std::nullopt;
  return node;
}

}  // namespace faultline
