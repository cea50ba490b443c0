// SendResult: how a send ended, in the terms a caller can act on, and the
// classification of one attempt's response that the retry loop runs on
// (RocketMQ's SendStatus, MQClientAPIImpl.processSendResponse and
// DefaultMQProducerImpl.sendDefaultImpl's exception handling).
//
// | status              | stored?   | from                                         |
// |---------------------|-----------|----------------------------------------------|
// | SEND_OK             | yes       | SUCCESS (0)                                  |
// | FLUSH_DISK_TIMEOUT  | yes       | 10: stored, not yet flushed (SYNC_FLUSH)      |
// | SLAVE_NOT_AVAILABLE | yes       | 11: stored, no slave to copy it (SYNC_MASTER) |
// | FLUSH_SLAVE_TIMEOUT | yes       | 12: stored, the slave did not ack in time     |
// | FAILED              | no        | every attempt ended in an error response or  |
// |                     |           | a connect that never opened                  |
// | UNKNOWN             | maybe     | some attempt timed out or lost its connection|
// |                     |           | after the request was written                |
//
// One attempt's response sorts into:
//   stored      0, 10, 11, 12: the loop ends (unless retryAnotherBrokerWhenNotStoreOK
//               and not SEND_OK);
//   retry       transport failures, and the codes Java retries on another
//               broker: 1 SYSTEM_ERROR, 14 SERVICE_NOT_AVAILABLE, 16 NO_PERMISSION,
//               17 TOPIC_NOT_EXIST, 204 NO_BUYER_ID, 205 NOT_IN_CURRENT_UNIT;
//   stop        any other code (2 SYSTEM_BUSY, 13 MESSAGE_ILLEGAL, ...): a
//               broker refused the message itself, retrying will not help.
// A transport failure may have stored the message unless the request never
// left: RemotingClient fails the requests queued behind a connect that did not
// open with "connect to <address> failed: ..." (carrying the network's
// "connection refused" or "connect timed out"), and only those (and a bad
// address) count as never written. A request whose timeout fired while its
// connect was still pending is reported as a plain Timeout, so it counts as
// "maybe": when unsure, say so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "broker/client/message_queue.h"
#include "broker/common/status.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::client {

enum class SendStatus { SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, FAILED, UNKNOWN };

std::string_view send_status_name(SendStatus status);
// The first four: the broker stored the message.
bool is_stored(SendStatus status);

struct SendResult {
  SendStatus status = SendStatus::FAILED;
  std::string msgId;        // the client's UNIQ_KEY (Java's SendResult.msgId)
  std::string offsetMsgId;  // the broker's offset msgId ("" unless stored)
  MessageQueue messageQueue;  // of the last attempt (the storing one when stored)
  int64_t queueOffset = -1;
  int32_t attempts = 0;  // attempts that reached the network or were refused by it
  std::string remark;    // why, when not SEND_OK
};

enum class AttemptVerdict { kStored, kRetry, kStop };

struct AttemptOutcome {
  AttemptVerdict verdict = AttemptVerdict::kStop;
  SendStatus stored_status = SendStatus::SEND_OK;  // when kStored
  bool may_be_stored = false;  // for kRetry/kStop: the broker might have the message
  int32_t code = -1;           // the response code; -1 for a transport failure
  std::string remark;          // why; empty for SUCCESS without a remark (SEND_OK needs none)
};

// Classifies one SEND_MESSAGE_V2 attempt by its response (or the transport's
// Status when there is none).
AttemptOutcome classify_send_response(const Result<remoting::RemotingCommand>& response);

// Whether a transport failure happened before the request was written.
bool never_written(const Status& transport_failure);

}  // namespace mqlab::client
