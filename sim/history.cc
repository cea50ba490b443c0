#include "sim/history.h"

#include "broker/common/assert.h"

namespace mqlab::sim {

const char* send_outcome_name(SendOutcome outcome) {
  switch (outcome) {
    case SendOutcome::kPending: return "PENDING";
    case SendOutcome::kOk: return "SEND_OK";
    case SendOutcome::kFlushDiskTimeout: return "FLUSH_DISK_TIMEOUT";
    case SendOutcome::kFlushSlaveTimeout: return "FLUSH_SLAVE_TIMEOUT";
    case SendOutcome::kSlaveNotAvailable: return "SLAVE_NOT_AVAILABLE";
    case SendOutcome::kFailed: return "FAILED";
    case SendOutcome::kUnknown: return "UNKNOWN";
  }
  return "?";
}

uint64_t History::begin_send(const std::string& producer, Nanos at, const std::string& key, uint32_t body_crc) {
  SendRecord record;
  record.seq = sends_.size();
  record.producer = producer;
  record.invoked_at = at;
  record.key = key;
  record.body_crc = body_crc;
  sends_.push_back(std::move(record));
  return sends_.back().seq;
}

void History::complete_send(uint64_t seq, Nanos at, SendOutcome outcome, const std::string& broker_name,
                            int32_t queue_id, int64_t queue_offset, const std::string& msg_id, int32_t attempts) {
  MQ_ASSERT(seq < sends_.size());
  SendRecord& record = sends_[seq];
  MQ_ASSERT(record.outcome == SendOutcome::kPending);  // a send completes once
  MQ_ASSERT(outcome != SendOutcome::kPending);
  MQ_ASSERT(at >= record.invoked_at);
  record.completed_at = at;
  record.outcome = outcome;
  record.broker_name = broker_name;
  record.queue_id = queue_id;
  record.queue_offset = queue_offset;
  record.msg_id = msg_id;
  record.attempts = attempts;
}

}  // namespace mqlab::sim
