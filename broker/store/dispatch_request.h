// DispatchRequest: what the dispatcher (ReputMessageService) learns from one
// CommitLog record and hands to the ConsumeQueue and the IndexFile.
//
// Two ways to one request. A record the put path just appended is described
// by what the put wrote (dispatch_request_of_put): the dispatcher takes it
// as it is, with no read and no decode. Every other record (recovery, a
// slave's replicated bytes, a put whose properties do not read back as they
// were written) is read back and decoded (dispatch_request_of_record), so a
// rebuild after recovery sees exactly what a live dispatch saw. Both give
// the same request for the same record: dispatch_request_test.cc checks it
// over random messages.
#pragma once

#include <cstdint>
#include <string>

#include "broker/common/types.h"

namespace mqlab::store {

struct DecodedMessage;
struct MessageToStore;
struct AppendMessageResult;

struct DispatchRequest {
  std::string topic;
  int32_t queue_id = 0;
  PhyOffset commit_log_offset;     // where the record starts
  int32_t msg_size = 0;            // TOTALSIZE
  int64_t tags_code = 0;           // tags_code(TAGS), 0 when none
  int64_t store_timestamp_ms = 0;
  QueueOffset consume_queue_offset;  // QUEUEOFFSET field of the record
  std::string keys;                // KEYS property (space-separated), may be empty
  std::string uniq_key;            // UNIQ_KEY property, may be empty
  int32_t sysflag = 0;
  int64_t prepared_transaction_offset = 0;

  PhyOffset end_offset() const { return commit_log_offset + msg_size; }
  bool operator==(const DispatchRequest&) const = default;
};

// Both fill `request` in place, keeping its strings' capacity: a request
// reused from record to record costs no allocation for a topic or key longer
// than the small-string buffer (every UNIQ_KEY is 32 characters).
// The schedule topic's tags code (a deliver time) is the MessageStore's to
// set: it needs the delay levels.

// From the record at `offset`, decoded (its TOTALSIZE is message.total_size).
void dispatch_request_of_record(const DecodedMessage& message, PhyOffset offset, DispatchRequest& request);

// From a put the CommitLog appended: the message as it was written and
// where. Requires: message is what write_record wrote (unchanged since) and
// properties_round_trip(message.properties): otherwise the record's bytes
// would not say the same, and only they count.
void dispatch_request_of_put(const MessageToStore& message, const AppendMessageResult& appended,
                             DispatchRequest& request);

}  // namespace mqlab::store
