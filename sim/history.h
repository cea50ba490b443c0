// History: everything a run's clients did and saw, with virtual timestamps.
// The checker (sim/checker.h) computes every figure of a run from it alone,
// so a real run that records the same history gets the same figures.
//
// Messages are identified by a producer-assigned sequence number carried in
// the message (property "SEQ"), so a receipt can always be matched to the
// send that produced it, whatever the broker did in between.
//
// A long run records millions of sends and receipts, so the records are
// compact: names (producers, consumers, groups, brokers, keys) are
// InternedNames of 4 bytes and a message id is held inline (MessageIdText);
// both read as strings. A SendRecord is 104 bytes, a ReceiptRecord 48
// (pinned below), against about 250 and 150 with std::strings. And they
// are not kept in memory: all but the newest go to a temporary file
// (SpilledRecords, sim/history_spill.h), so a run's memory does not grow
// with its length; what it keeps per message is a bit per consumer group
// (received_by_group_).
#pragma once

#include <cstdint>
#include <deque>
#include <type_traits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/types.h"
#include "sim/history_spill.h"
#include "sim/interned_name.h"

namespace mqlab::sim {

enum class SendOutcome : uint8_t {
  kPending,             // no answer by the end of the run
  kOk,                  // SEND_OK: acknowledged
  kFlushDiskTimeout,    // stored, durability not confirmed
  kFlushSlaveTimeout,   // stored, replication not confirmed
  kSlaveNotAvailable,   // stored on the master only
  kFailed,              // definitely not stored
  kUnknown,             // may or may not be stored (timeout, broken connection)
};
const char* send_outcome_name(SendOutcome outcome);
// The inverse of send_outcome_name ("SEND_OK" -> kOk), for history files.
std::optional<SendOutcome> parse_send_outcome(std::string_view name);

// A message id as the broker returned it (offsetMsgId: 32 hex digits for an
// IPv4 broker), inline; a longer one (IPv6: 56) is interned instead, which
// is rare enough not to matter. Reads as a string_view.
class MessageIdText {
 public:
  static constexpr size_t kInlineBytes = 32;

  MessageIdText() = default;
  MessageIdText(std::string_view text) { assign(text); }  // NOLINT: as a string would
  MessageIdText& operator=(std::string_view text) {
    assign(text);
    return *this;
  }
  MessageIdText& operator=(const std::string& text) { return *this = std::string_view(text); }

  std::string_view view() const { return long_.empty() ? std::string_view(inline_, size_) : std::string_view(long_); }
  operator std::string_view() const { return view(); }  // NOLINT: reads as a string
  std::string str() const { return std::string(view()); }
  bool empty() const { return view().empty(); }
  friend bool operator==(const MessageIdText& a, const MessageIdText& b) { return a.view() == b.view(); }
  friend bool operator==(const MessageIdText& a, std::string_view b) { return a.view() == b; }

 private:
  void assign(std::string_view text);

  char inline_[kInlineBytes] = {};
  uint8_t size_ = 0;
  InternedName long_;  // set only when text is longer than kInlineBytes
};

struct SendRecord {
  uint64_t seq = 0;
  Nanos invoked_at = 0;
  Nanos completed_at = 0;  // 0 while pending
  int64_t queue_offset = -1;
  InternedName producer;
  InternedName broker_name;  // the group that stored it (or was last tried)
  InternedName key;          // keys come from a small set (device ids), so interning stays bounded
  uint32_t body_crc = 0;     // CRC-32 of the body sent
  int32_t queue_id = -1;
  int32_t attempts = 0;
  MessageIdText msg_id;
  SendOutcome outcome = SendOutcome::kPending;
};

// Field order is kept for the aggregate initialisers of tests.
struct ReceiptRecord {
  uint64_t seq = 0;
  InternedName group;
  InternedName consumer;
  Nanos at = 0;
  InternedName broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  bool body_intact = true;  // CRC of the received body equals the sent one
  // Set by History::receive, whatever the caller gave: whether this is its
  // group's first receipt of seq. The checker reads it (duplicates and
  // reordering) instead of keeping a table of its own, a bit per message
  // and group (in the byte body_intact's padding leaves: no bigger record).
  bool first_of_group = true;
  int32_t reconsume_times = 0;
};

static_assert(sizeof(SendRecord) <= 104, "a SendRecord per message sent: keep it compact");
static_assert(std::is_trivially_copyable_v<SendRecord>, "spilled to a file as bytes");
static_assert(std::is_trivially_copyable_v<ReceiptRecord>, "spilled to a file as bytes");
static_assert(sizeof(ReceiptRecord) <= 48, "a ReceiptRecord per message received: keep it compact");

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
  History() = default;
  // Moves only: a copy would keep last_received_ pointing into the
  // original's table (a move takes the table's nodes along).
  History(const History&) = delete;
  History& operator=(const History&) = delete;
  History(History&&) = default;
  History& operator=(History&&) = default;
  // For tests: keep only tail_records sends and receipts in memory, so a
  // small history reaches the spill file.
  explicit History(size_t tail_records)
      : sends_(tail_records),
        receipts_(tail_records),
        first_receipt_at_(tail_records),
        earliest_receipt_at_(tail_records) {}

  // A new send; returns its seq.
  uint64_t begin_send(const std::string& producer, Nanos at, const std::string& key, uint32_t body_crc);
  void complete_send(uint64_t seq, Nanos at, SendOutcome outcome, const std::string& broker_name, int32_t queue_id,
                     int64_t queue_offset, const std::string& msg_id, int32_t attempts);
  void receive(ReceiptRecord receipt);
  void record(WorldEvent event) { events_.push_back(std::move(event)); }

  // Read like const deques: operator[] returns a copy, iteration reads the
  // spill file a block at a time.
  const SpilledRecords<SendRecord>& sends() const { return sends_; }
  const SpilledRecords<ReceiptRecord>& receipts() const { return receipts_; }
  // Whether each receipt was recorded no earlier than the one before it, as
  // a run and a loaded history record them (a hand-made one may not): the
  // readers that walk receipts in time order rely on it or sort.
  bool receipts_in_time_order() const { return receipts_in_time_order_; }
  const std::vector<WorldEvent>& events() const { return events_; }
  std::optional<SendRecord> send(uint64_t seq) const {
    if (seq >= sends_.size()) return std::nullopt;
    return sends_[seq];
  }
  // Per send (index == seq), when a group first received it: the earliest
  // of each group's first receipt (the checker's end-to-end latency and
  // read availability), and the earliest receipt of all (RunSeries' e2e
  // histogram); -1 while nobody has. They are the same whenever receipts
  // are recorded in time order, as a run and a loaded history record them.
  // Kept as receipts arrive, so the checker needs no table over the sends.
  const SpilledRecords<Nanos>& first_receipt_at() const { return first_receipt_at_; }
  const SpilledRecords<Nanos>& earliest_receipt_at() const { return earliest_receipt_at_; }

  // Bytes the History holds in memory (not its spilled records): what a run
  // keeps per message, measured by tests and sim_bench.
  size_t memory_bytes() const;

  // Whether group received seq (a send's, or a stray seq past them).
  bool received(std::string_view group, uint64_t seq) const;
  // received(group, seq) for one group and many seqs: the group's entry
  // looked up once, not by its name per seq (a map lookup per send and
  // group was the largest cost of the checker's pass over the sends).
  // Valid until the History changes.
  class GroupReceived {
   public:
    bool operator()(uint64_t seq) const {
      if (seqs_ != nullptr && seq < seqs_->size() && (*seqs_)[seq]) return true;
      return history_->received_as_stray(group_, seq);  // false at once when there are none
    }

   private:
    friend class History;
    GroupReceived(const History& history, std::string_view group);
    const History* history_;
    std::string group_;
    const std::vector<bool>* seqs_ = nullptr;
  };
  GroupReceived received_by(std::string_view group) const { return GroupReceived(*this, group); }

  // Whether every acknowledged send so far was received by each of groups.
  // The liveness phase asks every simulated second: the answer is kept
  // incrementally (received seqs per group as receipts arrive, and a prefix
  // of sends already settled), so asking costs nothing once it holds.
  bool all_acknowledged_received_by(const std::vector<std::string>& groups) const;

 private:
  // Spilled to a temporary file past their newest records (history_spill.h):
  // held in memory, they were the run's peak (1.1 GiB at 600 simulated
  // minutes of the standard scenario).
  SpilledRecords<SendRecord> sends_;  // index == seq
  SpilledRecords<ReceiptRecord> receipts_;
  bool receipts_in_time_order_ = true;
  SpilledRecords<Nanos> first_receipt_at_;     // index == seq
  SpilledRecords<Nanos> earliest_receipt_at_;  // index == seq
  std::vector<WorldEvent> events_;
  // Per group, whether it received seq (index); grown by receive().
  std::map<std::string, std::vector<bool>, std::less<>> received_by_group_;
  // The entry of the group receive() saw last (a map node, which stays put;
  // it moves with the map): receipts come in long runs of one group.
  InternedName last_receiving_group_;
  std::vector<bool>* last_received_ = nullptr;
  // Per group, the seqs it received that were past the sends when they
  // came (a stray receipt in a real run's history file): few.
  std::map<std::string, std::set<uint64_t>, std::less<>> stray_received_;
  // Sends [0, settled_sends_) other than those in unsettled_pending_ are
  // final and, when acknowledged, received by every one of settled_groups_
  // (the groups of the last question).
  // Sends still pending when passed are listed to be looked at again.
  mutable size_t settled_sends_ = 0;
  mutable std::vector<uint64_t> unsettled_pending_;
  mutable std::vector<std::string> settled_groups_;

  bool received_as_stray(std::string_view group, uint64_t seq) const;
};

}  // namespace mqlab::sim
