// SPDX-License-Identifier: Apache-2.0
#include "base/vocabulary.h"

namespace faultline {

std::string_view OriginName(Origin origin) {
  switch (origin) {
    case Origin::kKernel:
      return "kernel";
    case Origin::kJournal:
      return "journal";
    case Origin::kPod:
      return "pod";
    case Origin::kIbCounters:
      return "ibcounters";
    case Origin::kCheck:
      return "check";
    case Origin::kAny:
      return "any";
  }
  return "any";
}

std::string_view ActionName(Action action) {
  switch (action) {
    case Action::kIgnore:
      return "ignore";
    case Action::kEvent:
      return "event";
    case Action::kTaint:
      return "taint";
  }
  return "event";
}

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
    case Severity::kCritical:
      return "critical";
  }
  return "warning";
}

std::optional<Origin> ParseOrigin(std::string_view name) {
  if (name == "kernel") return Origin::kKernel;
  if (name == "journal") return Origin::kJournal;
  if (name == "pod") return Origin::kPod;
  if (name == "ibcounters") return Origin::kIbCounters;
  if (name == "check") return Origin::kCheck;
  if (name == "any") return Origin::kAny;
  return std::nullopt;
}

std::optional<Action> ParseAction(std::string_view name) {
  if (name == "ignore") return Action::kIgnore;
  if (name == "event") return Action::kEvent;
  if (name == "taint") return Action::kTaint;
  return std::nullopt;
}

std::optional<Severity> ParseSeverity(std::string_view name) {
  if (name == "info") return Severity::kInfo;
  if (name == "warning") return Severity::kWarning;
  if (name == "error") return Severity::kError;
  if (name == "critical") return Severity::kCritical;
  return std::nullopt;
}

}  // namespace faultline
