#include "broker/common/status.h"

namespace mqlab {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "Ok";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kIoError: return "IoError";
    case StatusCode::kNoSpace: return "NoSpace";
    case StatusCode::kTimeout: return "Timeout";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kAborted: return "Aborted";
  }
  return "Unknown";
}

const std::string& Status::message() const {
  static const std::string kNone;
  return ok() ? kNone : state_->message;
}

std::string Status::to_string() const {
  if (ok()) return "Ok";
  std::string text(status_code_name(state_->code));
  text += ": ";
  text += state_->message;
  return text;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  std::string message(context);
  message += ": ";
  message += state_->message;
  return Status(state_->code, std::move(message));
}

}  // namespace mqlab
