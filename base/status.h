// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace faultline {

// The same names and meanings as absl::StatusCode, trimmed to the codes this
// project returns. Each code tells the caller what to do next.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the input is wrong; retrying will not help
  kNotFound,            // e.g. the node no longer exists
  kAlreadyExists,       // e.g. a duplicate rule id
  kAborted,             // lost a race (HTTP 409, failed JSON Patch test): re-read, then retry
  kPermissionDenied,    // refused (RBAC, file mode): a deployment error, not a transient one
  kUnauthenticated,     // bad or missing credentials (HTTP 401)
  kResourceExhausted,   // a bounded queue is full: back off, or shed and count
  kFailedPrecondition,  // called in the wrong state
  kUnavailable,         // transient (broker or API server down, 429, 5xx): retry with backoff
  kDeadlineExceeded,    // ran out of its time budget
  kOutOfRange,          // a finite input is exhausted (end of file): stop reading it
  kDataLoss,            // records were lost or a stored state is corrupt
  kInternal,            // a bug: an invariant does not hold
};

// Lower-case name of a code, for logs and metrics labels: "unavailable".
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "unavailable: broker down", or "ok".
  std::string ToString() const;

  // Explicitly drops a status the caller has decided not to act on.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status AbortedError(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status UnauthenticatedError(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status ResourceExhaustedError(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status FailedPreconditionError(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status OutOfRangeError(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// A T, or the Status saying why there is none. The member names follow C++23
// std::expected so that this class can later become std::expected<T, Status>.
template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit, like std::expected, so that `return value;` and `return error;` both work.
  template <typename U = T, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                        !std::is_same_v<std::decay_t<U>, Status>>>
  Result(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT
  Result(Status error) : v_(std::in_place_index<1>, std::move(error)) {      // NOLINT
    assert(!std::get<1>(v_).ok());
  }

  bool has_value() const { return v_.index() == 0; }
  bool ok() const { return has_value(); }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Status& error() const { return std::get<1>(v_); }
  // OK when there is a value, else the error; handy with FL_RETURN_IF_ERROR.
  Status status() const { return has_value() ? OkStatus() : error(); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

// Returns early from a function returning Status or Result<T>.
#define FL_RETURN_IF_ERROR(expr)                                     \
  do {                                                               \
    if (::faultline::Status fl_status_ = (expr); !fl_status_.ok()) { \
      return fl_status_;                                             \
    }                                                                \
  } while (false)

}  // namespace faultline
