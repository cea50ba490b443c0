#include "broker/client/send_result.h"

#include "broker/remoting/response_code.h"

namespace mqlab::client {

using remoting::ResponseCode;

std::string_view send_status_name(SendStatus status) {
  switch (status) {
    case SendStatus::SEND_OK: return "SEND_OK";
    case SendStatus::FLUSH_DISK_TIMEOUT: return "FLUSH_DISK_TIMEOUT";
    case SendStatus::FLUSH_SLAVE_TIMEOUT: return "FLUSH_SLAVE_TIMEOUT";
    case SendStatus::SLAVE_NOT_AVAILABLE: return "SLAVE_NOT_AVAILABLE";
    case SendStatus::FAILED: return "FAILED";
    case SendStatus::UNKNOWN: return "UNKNOWN";
  }
  MQ_UNREACHABLE("SendStatus " + std::to_string(static_cast<int>(status)));
}

bool is_stored(SendStatus status) { return status != SendStatus::FAILED && status != SendStatus::UNKNOWN; }

bool never_written(const Status& transport_failure) {
  MQ_ASSERT(!transport_failure.ok());
  if (transport_failure.code() == StatusCode::kInvalidArgument) return true;  // a bad address: nothing sent
  const std::string& text = transport_failure.message();
  // RemotingClient fails the requests queued behind a connect that did not
  // open with "connect to <address> failed: ...": none of them went out.
  if (text.starts_with("connect to ")) return true;
  return text.find("connection refused") != std::string::npos || text.find("connect timed out") != std::string::npos;
}

AttemptOutcome classify_send_response(const Result<remoting::RemotingCommand>& response) {
  AttemptOutcome outcome;
  if (!response.ok()) {
    outcome.verdict = AttemptVerdict::kRetry;
    outcome.may_be_stored = !never_written(response.status());
    outcome.remark = response.status().to_string();
    return outcome;
  }
  outcome.code = response->code;
  if (response->code == ResponseCode::SUCCESS && response->remark.empty()) {
    // SEND_OK needs no why: the one outcome of nearly every send, whose
    // remark nothing reads, is not worth formatting.
    outcome.verdict = AttemptVerdict::kStored;
    outcome.stored_status = SendStatus::SEND_OK;
    return outcome;
  }
  outcome.remark = remoting::describe_response_code(response->code);
  if (!response->remark.empty()) outcome.remark += ": " + response->remark;
  switch (response->code) {
    case ResponseCode::SUCCESS: outcome.stored_status = SendStatus::SEND_OK; break;
    case ResponseCode::FLUSH_DISK_TIMEOUT: outcome.stored_status = SendStatus::FLUSH_DISK_TIMEOUT; break;
    case ResponseCode::FLUSH_SLAVE_TIMEOUT: outcome.stored_status = SendStatus::FLUSH_SLAVE_TIMEOUT; break;
    case ResponseCode::SLAVE_NOT_AVAILABLE: outcome.stored_status = SendStatus::SLAVE_NOT_AVAILABLE; break;
    case ResponseCode::SYSTEM_ERROR:
    case ResponseCode::SERVICE_NOT_AVAILABLE:
    case ResponseCode::NO_PERMISSION:
    case ResponseCode::TOPIC_NOT_EXIST:
    case ResponseCode::NO_BUYER_ID:
    case ResponseCode::NOT_IN_CURRENT_UNIT:
      outcome.verdict = AttemptVerdict::kRetry;
      return outcome;
    default:
      outcome.verdict = AttemptVerdict::kStop;
      return outcome;
  }
  outcome.verdict = AttemptVerdict::kStored;
  return outcome;
}

}  // namespace mqlab::client
