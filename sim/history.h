// History: everything a run's clients did and saw, with virtual timestamps.
// The checker (sim/checker.h) computes every figure of a run from it alone,
// so a real run that records the same history gets the same figures.
//
// Messages are identified by a producer-assigned sequence number carried in
// the message (property "SEQ"), so a receipt can always be matched to the
// send that produced it, whatever the broker did in between.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/common/types.h"

namespace mqlab::sim {

enum class SendOutcome {
  kPending,             // no answer by the end of the run
  kOk,                  // SEND_OK: acknowledged
  kFlushDiskTimeout,    // stored, durability not confirmed
  kFlushSlaveTimeout,   // stored, replication not confirmed
  kSlaveNotAvailable,   // stored on the master only
  kFailed,              // definitely not stored
  kUnknown,             // may or may not be stored (timeout, broken connection)
};
const char* send_outcome_name(SendOutcome outcome);

struct SendRecord {
  uint64_t seq = 0;
  std::string producer;
  Nanos invoked_at = 0;
  Nanos completed_at = 0;  // 0 while pending
  SendOutcome outcome = SendOutcome::kPending;
  std::string broker_name;  // the group that stored it (or was last tried)
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  std::string msg_id;
  std::string key;
  uint32_t body_crc = 0;  // CRC-32 of the body sent
  int32_t attempts = 0;
};

struct ReceiptRecord {
  uint64_t seq = 0;
  std::string group;
  std::string consumer;
  Nanos at = 0;
  std::string broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  bool body_intact = true;  // CRC of the received body equals the sent one
  int32_t reconsume_times = 0;
};

// A fault starting or ending, and process restarts, for attribution and timelines.
struct WorldEvent {
  Nanos at = 0;
  std::string what;       // "fault_start", "fault_end", "process_start", "process_ready", "process_stop"
  std::string target;     // machine or process
  std::string detail;     // FaultEvent::describe(), a recovery report, ...
  int fault_index = -1;   // into the run's FaultSchedule, for fault events
};

class History {
 public:
  // A new send; returns its seq.
  uint64_t begin_send(const std::string& producer, Nanos at, const std::string& key, uint32_t body_crc);
  void complete_send(uint64_t seq, Nanos at, SendOutcome outcome, const std::string& broker_name, int32_t queue_id,
                     int64_t queue_offset, const std::string& msg_id, int32_t attempts);
  void receive(ReceiptRecord receipt) { receipts_.push_back(std::move(receipt)); }
  void record(WorldEvent event) { events_.push_back(std::move(event)); }

  const std::vector<SendRecord>& sends() const { return sends_; }
  const std::vector<ReceiptRecord>& receipts() const { return receipts_; }
  const std::vector<WorldEvent>& events() const { return events_; }
  const SendRecord* send(uint64_t seq) const { return seq < sends_.size() ? &sends_[seq] : nullptr; }

 private:
  std::vector<SendRecord> sends_;  // index == seq
  std::vector<ReceiptRecord> receipts_;
  std::vector<WorldEvent> events_;
};

}  // namespace mqlab::sim
