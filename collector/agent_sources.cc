// SPDX-License-Identifier: Apache-2.0
#include "collector/agent_sources.h"

namespace faultline {
namespace {

template <typename T>
Status Add(Result<std::unique_ptr<T>> opened, std::string_view what,
           std::vector<std::unique_ptr<Source>>& out) {
  if (!opened) {
    return Status(opened.error().code(),
                  "source " + std::string(what) + ": " + opened.error().message());
  }
  out.push_back(std::move(*opened));
  return OkStatus();
}

}  // namespace

Result<std::vector<std::unique_ptr<Source>>> OpenSources(const AgentConfig& config,
                                                         const Clock& clock) {
  std::vector<std::unique_ptr<Source>> sources;
  if (config.kmsg_enabled) {
    FL_RETURN_IF_ERROR(Add(KmsgSource::Open(config.kmsg, clock), "kmsg", sources));
  }
  if (config.journal_enabled) {
    FL_RETURN_IF_ERROR(Add(JournalSource::Open(config.journal), "journal", sources));
  }
  if (config.podlog_enabled) {
    FL_RETURN_IF_ERROR(Add(PodLogSource::Open(config.podlog), "podlog", sources));
  }
  if (config.ibcounters.enabled) {
    return FailedPreconditionError("source ibcounters is not available in this build yet");
  }
  if (!config.files.empty()) {
    return FailedPreconditionError("source file is not available in this build yet");
  }
  return sources;
}

}  // namespace faultline
