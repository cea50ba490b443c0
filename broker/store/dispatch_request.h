// DispatchRequest: what the dispatcher (ReputMessageService) learns from one
// CommitLog record and hands to the ConsumeQueue and the IndexFile. Built from
// the record's bytes as they are on disk, so a rebuild after recovery sees
// exactly what a live dispatch saw.
#pragma once

#include <cstdint>
#include <string>

#include "broker/common/types.h"

namespace mqlab::store {

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
};

}  // namespace mqlab::store
