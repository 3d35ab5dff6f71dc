// Status and Result<T>: cheap error values for every path that touches the network, files,
// models or user input.
//
// A Status carries a code and a message written for the person who has to act on it: what was
// wrong, and where possible what to do ("engine.max_batch_size must be in [1, 1024], got 0").
// Library code never throws or exits on bad input; it returns one of these.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace hotline {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // the caller's input is malformed or out of range
  kNotFound,            // a file, key or resource does not exist
  kOutOfRange,          // a read or index past the end of data
  kDataLoss,            // a file or stream is truncated or corrupt
  kFailedPrecondition,  // the system is not in a state to do this (not loaded, closed)
  kResourceExhausted,   // a queue, budget or memory limit is full: back off
  kUnavailable,         // a dependency (Redis, remote server) cannot be reached: retry later
  kDeadlineExceeded,    // a timeout fired
  kCancelled,           // the operation was cancelled (barge-in, hang-up)
  kUnimplemented,       // a feature or format that is not supported
  kInternal,            // a bug: an invariant failed
  kPermissionDenied,    // missing or wrong credentials
};

std::string_view StatusCodeName(StatusCode code);

// Why an error happened, where a caller must tell one cause from another of the same code (the
// code says how to react in general; the reason picks a specific answer, e.g. an API's error
// code). Typed, so no caller inspects message text. Add a value when a caller needs one.
enum class StatusReason : uint8_t {
  kNone = 0,
  kContextLengthExceeded,  // a prompt does not fit the model's context (engine/context_fit.h)
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  StatusReason reason() const { return reason_; }

  // Returns a copy carrying `reason`; OK stays OK (an OK status has no reason).
  Status WithReason(StatusReason reason) const;

  // "INVALID_ARGUMENT: message" (or "OK").
  std::string ToString() const;

  // Returns a copy whose message is "context: message" (code and reason kept); OK stays OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.reason_ == b.reason_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  StatusReason reason_ = StatusReason::kNone;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

inline Status InvalidArgumentError(std::string msg) {
  return Status(StatusCode::kInvalidArgument, std::move(msg));
}
inline Status NotFoundError(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
inline Status OutOfRangeError(std::string msg) {
  return Status(StatusCode::kOutOfRange, std::move(msg));
}
inline Status DataLossError(std::string msg) { return Status(StatusCode::kDataLoss, std::move(msg)); }
inline Status FailedPreconditionError(std::string msg) {
  return Status(StatusCode::kFailedPrecondition, std::move(msg));
}
inline Status ResourceExhaustedError(std::string msg) {
  return Status(StatusCode::kResourceExhausted, std::move(msg));
}
inline Status UnavailableError(std::string msg) {
  return Status(StatusCode::kUnavailable, std::move(msg));
}
inline Status DeadlineExceededError(std::string msg) {
  return Status(StatusCode::kDeadlineExceeded, std::move(msg));
}
inline Status CancelledError(std::string msg) { return Status(StatusCode::kCancelled, std::move(msg)); }
inline Status UnimplementedError(std::string msg) {
  return Status(StatusCode::kUnimplemented, std::move(msg));
}
inline Status InternalError(std::string msg) { return Status(StatusCode::kInternal, std::move(msg)); }
inline Status PermissionDeniedError(std::string msg) {
  return Status(StatusCode::kPermissionDenied, std::move(msg));
}

// Result<T>: either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(v_).ok()) {
      v_ = Status(StatusCode::kInternal, "Result constructed from an OK Status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace hotline

#define HOTLINE_CONCAT_INNER_(a, b) a##b
#define HOTLINE_CONCAT_(a, b) HOTLINE_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::hotline::Status hotline_status_ = (expr);        \
    if (!hotline_status_.ok()) return hotline_status_; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, FunctionReturningResult());
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(HOTLINE_CONCAT_(hotline_result_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()
