// ConsumeQueue coverage: whether the ConsumeQueues together index every
// consumable CommitLog record of a range, and which (topic, queue) lacks the
// records they do not.
//
// Every consumable record (all but transaction PREPARED and ROLLBACK ones,
// which dispatch skips) has exactly one ConsumeQueue entry, and a queue's
// entries ascend in CommitLog offset. So merging every queue's entries in
// CommitLog order must tile the log: each entry starts where the previous one
// ended, but for the BLANK padding at a segment's end. A hole means the
// entries of some queue are missing (its files were lost, or one of them);
// the CommitLog records in the hole name that queue.
//
// Recovery uses it for the part of the log before its re-dispatch window: a
// queue lost while the broker was stopped, none of whose records lies inside
// the window, leaves no other trace (RocketMQ 4.x does not notice it either:
// it re-dispatches from the highest offset any queue indexes).
//
// Cost: every ConsumeQueue entry of the range is read once (20 bytes per
// message, in batches), and only the CommitLog bytes inside holes.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::store {

class MessageStore;

struct ConsumeQueueCoverage {
  // The queues missing at least one record of the range, by (topic, queue id).
  std::set<std::pair<std::string, int32_t>> incomplete_queues;
  int64_t entries_read = 0;
  int64_t records_unindexed = 0;  // consumable records in holes
  // Non-empty when a hole could not be read (corruption older than the
  // recovery window): the audit stopped there and says so.
  std::string stopped_at;
};

// Audits [from, to) of store's CommitLog against its ConsumeQueues.
// Requires: commit_log min offset <= from <= to <= the recovered end.
Result<ConsumeQueueCoverage> audit_consume_queue_coverage(MessageStore& store, PhyOffset from, PhyOffset to);

}  // namespace mqlab::store
