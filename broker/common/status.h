// Status and Result<T>: how mqlab reports what the world did to it.
//
// Errors from outside (disk full, short read, CRC mismatch, a bad config line)
// are values the caller decides about; our own mistakes are MQ_ASSERTs. A
// Status is cheap when ok (no allocation) and carries a precise message
// otherwise: which file, which offset, what was expected.
//
// A Status is one pointer, null when ok (as absl::Status and LevelDB's):
// most are ok and are moved through callbacks, SimNet's arrivals and every
// Result, and a code beside an empty std::string made each of those moves
// cost a string's move (about 20 instructions, close to a million of them
// in a two-minute simulated run, most in SimNet) instead of a pointer's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "broker/common/assert.h"

namespace mqlab {

enum class StatusCode : uint8_t {
  kOk = 0,
  kNotFound,         // a file, key or offset that does not exist
  kAlreadyExists,    // create-exclusive of an existing file
  kInvalidArgument,  // bad input from a caller or a user (config, request)
  kCorruption,       // bytes read from disk or wire that fail validation
  kIoError,          // the device said no (EIO, a failed disk)
  kNoSpace,          // ENOSPC
  kTimeout,          // a deadline passed before completion
  kUnavailable,      // service shut down, not writable, not ready
  kAborted,          // the operation was cancelled (shutdown, crash)
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message)
      : state_(std::make_unique<const State>(State{code, std::move(message)})) {
    MQ_ASSERT(code != StatusCode::kOk);
  }
  // Copies copy an error's message (rare: errors are mostly moved); a
  // moved-from Status is ok.
  Status(const Status& other) : state_(other.state_ ? std::make_unique<const State>(*other.state_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) state_ = other.state_ ? std::make_unique<const State>(*other.state_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status NoSpace(std::string m) { return {StatusCode::kNoSpace, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // Empty when ok.
  const std::string& message() const;

  // "NoSpace: commitlog/00000000000000000000: pwrite at 4096: no space left"
  std::string to_string() const;
  // Prefixes context, keeping the code: status.with_context("recovering commitlog").
  Status with_context(std::string_view context) const;

 private:
  struct State {
    StatusCode code;  // never kOk
    std::string message;
  };
  std::unique_ptr<const State> state_;  // null: ok
};

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  // By rvalue reference and by const reference, not by value: a value
  // parameter is one more move and destruction. A response handed to its
  // callback (RemotingClient::on_command) was moved twice on its way in:
  // about 70 instructions a response in the simulator's standard run.
  Result(T&& value) : value_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(const T& value) : value_(std::in_place_index<0>, value) {}       // NOLINT
  Result(Status status) : value_(std::move(status)) {  // NOLINT
    MQ_ASSERT(!std::get<Status>(value_).ok());  // an ok Result must carry a value
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(value_);
  }
  T& value() & {
    MQ_ASSERT(ok());
    return std::get<T>(value_);
  }
  const T& value() const& {
    MQ_ASSERT(ok());
    return std::get<T>(value_);
  }
  // By value, so `for (auto& x : fs.list(d).value())` cannot dangle.
  T value() && {
    MQ_ASSERT(ok());
    return std::get<T>(std::move(value_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace mqlab

// Returns early with the Status of an expression when it is not ok.
#define MQ_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    ::mqlab::Status mq_status_ = (expr);            \
    if (!mq_status_.ok()) return mq_status_;        \
  } while (0)

#define MQ_CONCAT_INNER(a, b) a##b
#define MQ_CONCAT(a, b) MQ_CONCAT_INNER(a, b)
// MQ_ASSIGN_OR_RETURN(auto file, fs.open(path, mode));
#define MQ_ASSIGN_OR_RETURN(lhs, expr) MQ_ASSIGN_OR_RETURN_IMPL(MQ_CONCAT(mq_result_, __LINE__), lhs, expr)
#define MQ_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
