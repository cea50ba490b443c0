#include "broker/store/consume_queue_coverage.h"

#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include "broker/store/commit_log.h"
#include "broker/store/consume_queue.h"
#include "broker/store/message_store.h"

namespace mqlab::store {
namespace {

constexpr int32_t kCoverageEntriesPerRead = 1024;  // 20 KiB of ConsumeQueue per read

// One queue's real entries in [from, to) of the CommitLog, in order, read in batches.
class EntryCursor {
 public:
  EntryCursor(const ConsumeQueue& queue, PhyOffset from, PhyOffset to)
      : queue_(queue), from_(from), to_(to), next_read_(queue.min_offset()) {}

  // The current entry, or nullopt when the queue has none left in range.
  Result<std::optional<ConsumeQueueEntry>> peek() {
    while (index_ >= batch_.size()) {
      if (done_ || next_read_ >= queue_.max_offset()) return std::optional<ConsumeQueueEntry>();
      MQ_ASSIGN_OR_RETURN(batch_, queue_.read(next_read_, kCoverageEntriesPerRead));
      index_ = 0;
      if (batch_.empty()) return std::optional<ConsumeQueueEntry>();
      next_read_ = batch_.back().queue_offset + 1;
      // Placeholders stand for no record; entries below `from` point at
      // records outside the audit (deleted by retention, or before it).
      std::erase_if(batch_, [&](const ConsumeQueueEntry& e) { return e.is_placeholder() || e.offset < from_; });
      if (!batch_.empty() && batch_.back().offset >= to_) {
        std::erase_if(batch_, [&](const ConsumeQueueEntry& e) { return e.offset >= to_; });
        done_ = true;  // entries ascend: nothing further is in range
      }
    }
    return std::optional<ConsumeQueueEntry>(batch_[index_]);
  }
  void pop() {
    MQ_ASSERT(index_ < batch_.size());
    ++index_;
  }
 private:
  const ConsumeQueue& queue_;
  PhyOffset from_;
  PhyOffset to_;
  QueueOffset next_read_;
  std::vector<ConsumeQueueEntry> batch_;
  size_t index_ = 0;
  bool done_ = false;
};

bool consumable(const DecodedMessage& message) {
  return !is_prepared_or_rollback(message.sysflag);  // as dispatch() skips them
}

// Names the queues of the consumable records in [from, to), which no entry
// covers. False when the log could not be read there.
bool scan_hole(const CommitLog& log, PhyOffset from, PhyOffset to, ConsumeQueueCoverage& coverage) {
  MQ_ASSERT(from < to);
  CommitLogScanner scanner(log, from, to, /*check_crc=*/false);
  while (std::optional<ScannedRecord> scanned = scanner.next()) {
    const DecodedMessage& message = scanned->record.message;
    if (scanned->record.kind != RecordKind::kMessage || !consumable(message)) continue;
    coverage.incomplete_queues.emplace(std::string(message.topic), message.queue_id);
    ++coverage.records_unindexed;
  }
  if (!scanner.stopped_on_corruption()) return true;
  coverage.stopped_at = scanner.stop_reason();
  return false;
}

}  // namespace

Result<ConsumeQueueCoverage> audit_consume_queue_coverage(MessageStore& store, PhyOffset from, PhyOffset to) {
  MQ_ASSERT(store.min_phy_offset() <= from);
  MQ_ASSERT(from <= to);
  ConsumeQueueCoverage coverage;
  std::vector<std::unique_ptr<EntryCursor>> cursors;
  for (const auto& [topic, queue_id] : store.queues()) {
    ConsumeQueue* queue = store.find_consume_queue(topic, queue_id);
    MQ_ASSERT(queue != nullptr);
    cursors.push_back(std::make_unique<EntryCursor>(*queue, from, to));
  }
  // Min-heap of (offset of each cursor's current entry, cursor index):
  // offsets are unique, so the order is total and deterministic.
  using Head = std::pair<PhyOffset, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < cursors.size(); ++i) {
    MQ_ASSIGN_OR_RETURN(std::optional<ConsumeQueueEntry> entry, cursors[i]->peek());
    if (entry) heads.emplace(entry->offset, i);
  }
  PhyOffset covered_to = from;  // every record before it is indexed (or was checked)
  const CommitLog& log = store.commit_log();
  while (!heads.empty()) {
    const size_t i = heads.top().second;
    heads.pop();
    MQ_ASSIGN_OR_RETURN(std::optional<ConsumeQueueEntry> entry, cursors[i]->peek());
    MQ_ASSERT(entry.has_value());
    ++coverage.entries_read;
    // A gap before this entry is BLANK padding at a segment's end, or records no queue indexes.
    if (entry->offset > covered_to && !scan_hole(log, covered_to, entry->offset, coverage)) return coverage;
    covered_to = std::max(covered_to, entry->end_offset());
    cursors[i]->pop();
    MQ_ASSIGN_OR_RETURN(std::optional<ConsumeQueueEntry> next, cursors[i]->peek());
    if (next) {
      MQ_ASSERT(next->offset > entry->offset);  // recover() keeps a queue's entries ascending
      heads.emplace(next->offset, i);
    }
  }
  if (covered_to < to) scan_hole(log, covered_to, to, coverage);
  MQ_ASSERT(coverage.records_unindexed == 0 || !coverage.incomplete_queues.empty());
  return coverage;
}

}  // namespace mqlab::store
