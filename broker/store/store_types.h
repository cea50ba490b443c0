// The MessageStore's result types, with RocketMQ's status names so a
// remoting processor maps them to response codes one for one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "broker/common/inline_function.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/store/commit_log.h"

namespace mqlab::store {

enum class PutMessageStatus {
  PUT_OK,
  FLUSH_DISK_TIMEOUT,       // stored in memory, not confirmed durable in time
  FLUSH_SLAVE_TIMEOUT,      // stored, the slave did not confirm in time
  SLAVE_NOT_AVAILABLE,      // stored, no slave to confirm
  SERVICE_NOT_AVAILABLE,    // not stored: shut down, slave role, disk full or failed
  CREATE_MAPEDFILE_FAILED,  // not stored: next segment could not be created
  MESSAGE_ILLEGAL,          // not stored: topic or body out of limits
  PROPERTIES_SIZE_EXCEEDED, // not stored: properties over 32767 bytes
  OS_PAGECACHE_BUSY,
  UNKNOWN_ERROR,            // not stored: the device failed the write
};
const char* put_message_status_name(PutMessageStatus status);
// Whether the message is in the store (the first four statuses).
bool put_message_stored(PutMessageStatus status);

struct PutMessageResult {
  PutMessageStatus status = PutMessageStatus::UNKNOWN_ERROR;
  AppendMessageResult append;  // valid when put_message_stored(status)
  std::string remark;          // why, when not PUT_OK
};
// Hears how one put went. Move-only and inline for the broker's own
// callers, where std::function allocated once per put: a send's processor
// guards a capture of its response channel, the message's destination and
// the put's start (112 bytes), past the default room, which allocated it.
using PutCallback = InlineFunction<void(PutMessageResult), 112>;

enum class GetMessageStatus {
  FOUND,
  NO_MATCHED_MESSAGE,     // every scanned entry was filtered out
  MESSAGE_WAS_REMOVING,   // the CommitLog file was deleted by retention
  OFFSET_FOUND_NULL,      // a hole in the ConsumeQueue
  OFFSET_OVERFLOW_BADLY,  // offset > max
  OFFSET_OVERFLOW_ONE,    // offset == max: nothing new yet
  OFFSET_TOO_SMALL,       // offset < min: retention removed it
  NO_MATCHED_LOGIC_QUEUE, // no such queue
  NO_MESSAGE_IN_QUEUE,    // the queue is empty
};
const char* get_message_status_name(GetMessageStatus status);

// A stored record as a region of a CommitLog segment file: what a pull
// response sends (sendfile for real, a copy in the simulator).
struct FileRegion {
  std::shared_ptr<env::File> file;
  uint64_t position = 0;  // inside the file
  uint32_t length = 0;
  PhyOffset phy_offset;   // the record's CommitLog offset
};

struct GetMessageResult {
  GetMessageStatus status = GetMessageStatus::NO_MATCHED_LOGIC_QUEUE;
  QueueOffset next_begin_offset;
  QueueOffset min_offset;
  QueueOffset max_offset;
  std::vector<FileRegion> messages;
  int64_t total_bytes = 0;
  bool suggest_pulling_from_slave = false;
};

// What start() found and did, for logs, tests and mqsim reports.
struct RecoveryReport {
  bool abnormal = false;           // the abort file was present
  PhyOffset scan_from;             // where verification started
  PhyOffset recovered_end;         // end of the last valid record
  int64_t truncated_bytes = 0;     // bytes dropped past recovered_end (segments' written extent)
  std::string stop_reason;         // why the scan stopped, "" at a clean end
  int64_t records_verified = 0;
  int64_t records_dispatched = 0;  // re-dispatched into ConsumeQueues at start
};

struct StoreStats {
  uint64_t puts_ok = 0;
  uint64_t puts_failed = 0;
  uint64_t flush_timeouts = 0;
  uint64_t bytes_appended = 0;
  uint64_t commit_log_flushes = 0;
  // Records the dispatcher took as the put path described them, without
  // reading them back from the CommitLog (dispatch_request.h).
  uint64_t records_dispatched_unread = 0;
  uint64_t segments_deleted = 0;
  // The retention rule that deleted the last segments, in broker.conf terms
  // (CleanCommitLogService), so an audit can tell expiry from loss.
  std::string retention_rule;
  uint64_t slave_timeouts = 0;          // SYNC_MASTER: FLUSH_SLAVE_TIMEOUT replies
  uint64_t slave_not_available = 0;     // SYNC_MASTER: SLAVE_NOT_AVAILABLE replies
  uint64_t replica_bytes_appended = 0;  // SLAVE: bytes received from the master
  uint64_t replica_bytes_dropped = 0;   // SLAVE: partial-record tails and refused chunks
};

}  // namespace mqlab::store
