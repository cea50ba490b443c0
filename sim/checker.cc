#include "sim/checker.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <tuple>

#include "sim/history_order.h"

namespace mqlab::sim {
namespace {

bool stored_unconfirmed(SendOutcome outcome) {
  return outcome == SendOutcome::kFlushDiskTimeout || outcome == SendOutcome::kFlushSlaveTimeout ||
         outcome == SendOutcome::kSlaveNotAvailable;
}

// Merges overlapping windows of the same broker and sums their lengths.
double merge_windows(std::vector<Window>& windows) {
  std::sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) {
    return std::tie(a.broker_name, a.from, a.to) < std::tie(b.broker_name, b.from, b.to);
  });
  std::vector<Window> merged;
  for (const Window& w : windows) {
    if (!merged.empty() && merged.back().broker_name == w.broker_name && w.from <= merged.back().to) {
      merged.back().to = std::max(merged.back().to, w.to);
    } else {
      merged.push_back(w);
    }
  }
  windows = std::move(merged);
  Nanos total = 0;
  for (const Window& w : windows) total += w.length();
  return static_cast<double>(total) / kNanosPerSecond;
}

// Sends to a broker group fail from a failed send until the next send it
// stores, in invocation order (SendsInOrder: streamed from the spilled
// sends, not sorted in memory).
std::vector<Window> write_windows(const History& history, Nanos run_end) {
  std::map<std::string, Nanos> down_since;
  std::vector<Window> windows;
  SendsInOrder in_order(history.sends(), invoked_at_of);
  while (const std::optional<SendRecord> s = in_order.next()) {
    if (s->outcome == SendOutcome::kPending || s->broker_name.empty()) continue;
    const bool stored = s->outcome == SendOutcome::kOk || stored_unconfirmed(s->outcome);
    auto it = down_since.find(s->broker_name);
    if (!stored && it == down_since.end()) down_since[s->broker_name] = s->invoked_at;
    if (stored && it != down_since.end()) {
      windows.push_back(Window{it->second, std::max(it->second, s->completed_at), s->broker_name});
      down_since.erase(it);
    }
  }
  for (const auto& [broker, since] : down_since) windows.push_back(Window{since, std::max(since, run_end), broker});
  return windows;
}

// Faults that can destroy stored data, as opposed to ones that only delay it
// (a partition, a pause, a slow disk: the data is still there afterwards).
bool destroys_data(faults::FaultKind kind) {
  using faults::FaultKind;
  return kind == FaultKind::kKillProcess || kind == FaultKind::kCrashMachine || kind == FaultKind::kPowerLossAll ||
         kind == FaultKind::kDestroyMachine || kind == FaultKind::kFailDisk || kind == FaultKind::kPromoteSlave;
}

// The fault that destroyed an acknowledged message the loss bound did not
// foresee (or of a run without a bound): the first
// data-destroying fault at or after its ack that hit its broker group. When
// none follows the ack, the last such fault before it: after a power loss
// under ASYNC_FLUSH the recovered queues reuse queue offsets a consumer had
// already passed, so messages acknowledged after the restart can be skipped.
int attribute(const SendRecord& send, const CheckerOptions& options) {
  const auto& events = options.schedule.events;
  int before = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    const faults::FaultEvent& e = events[i];
    if (!destroys_data(e.kind)) continue;
    bool hits = e.kind == faults::FaultKind::kPowerLossAll;
    if (!hits) {
      auto it = options.broker_group_of.find(e.target);
      hits = it != options.broker_group_of.end() && it->second == send.broker_name;
    }
    if (!hits) continue;
    if (e.at >= send.completed_at) return static_cast<int>(i);
    before = static_cast<int>(i);
  }
  return before;
}

// The fault that, by the run's loss bound, may destroy this message, if any:
// the bound knows what each fault's instant left at risk (sim/loss_bound.h).
std::optional<int> foreseen_by(const SendRecord& send, const CheckerOptions& options) {
  if (!options.loss_at_risk) return std::nullopt;
  auto it = options.loss_at_risk->find(send.seq);
  if (it == options.loss_at_risk->end()) return std::nullopt;
  MQ_ASSERT(it->second >= 0 && static_cast<size_t>(it->second) < options.schedule.events.size());
  return it->second;
}

// A broker group's messages cannot be read by anyone while every broker of
// the group is down, from its first acknowledged message on (the world
// records broker_down / broker_up events).
std::vector<Window> group_down_windows(const History& history, Nanos run_end) {
  std::map<std::string, Nanos> first_ack;
  for (const SendRecord& s : history.sends()) {
    if (s.outcome != SendOutcome::kOk) continue;
    auto [it, inserted] = first_ack.emplace(s.broker_name, s.completed_at);
    if (!inserted) it->second = std::min(it->second, s.completed_at);
  }
  std::map<std::string, std::set<std::string>> up;  // group -> brokers up
  std::map<std::string, Nanos> down_since;
  std::vector<Window> windows;
  for (const WorldEvent& e : history.events()) {
    if (e.what == "broker_up") {
      up[e.target].insert(e.detail);
      if (auto it = down_since.find(e.target); it != down_since.end()) {
        windows.push_back(Window{it->second, e.at, e.target});
        down_since.erase(it);
      }
    } else if (e.what == "broker_down") {
      up[e.target].erase(e.detail);
      if (up[e.target].empty()) down_since.emplace(e.target, e.at);
    }
  }
  for (const auto& [group, since] : down_since) windows.push_back(Window{since, run_end, group});
  std::vector<Window> clipped;
  for (Window w : windows) {
    auto it = first_ack.find(w.broker_name);
    if (it == first_ack.end()) continue;  // held nothing acknowledged
    w.from = std::max(w.from, it->second);
    if (w.to > w.from) clipped.push_back(w);
  }
  return clipped;
}

// One stored copy of a message as a group received it: the same seq at
// another (broker, queue, queue offset) is another copy.
using StoredCopy = std::tuple<std::string, uint64_t, std::string, int32_t, int64_t>;  // group, seq, broker, queue, offset

StoredCopy copy_of(const ReceiptRecord& r) {
  return {r.group.str(), r.seq, r.broker_name.str(), r.queue_id, r.queue_offset};
}

// A group received r's message before (first): why again? A copy it already
// had is a redelivery (offsets rolled back); a retried one a RECONSUME_LATER
// (its copy lives in the retry topic); any other copy was stored twice.
// Returns whether it was another stored copy.
bool count_duplicate(const ReceiptRecord& r, const ReceiptRecord& first, std::set<StoredCopy>& again,
                     CheckerReport& report) {
  MQ_ASSERT(r.seq == first.seq);
  MQ_ASSERT(r.group == first.group);
  DuplicateCauses& causes = report.duplicates_by_cause;
  const StoredCopy copy = copy_of(r);
  const bool seen_copy = copy == copy_of(first) || again.count(copy) > 0;
  if (r.reconsume_times > 0) {
    ++causes.retried;
  } else if (seen_copy) {
    ++causes.redelivered;
  } else {
    ++causes.stored_twice;
    ++report.stored_twice_by_broker[r.broker_name.str()];
  }
  again.insert(copy);
  MQ_ASSERT(causes.total() == report.duplicates);
  return r.reconsume_times == 0 && !seen_copy;
}

// The retention rule that deleted an acknowledged message before it was
// read, if its group's CommitLog head passed its offset.
std::optional<std::string> expired_by(const SendRecord& send, const CheckerOptions& options) {
  auto head = options.retention.find(send.broker_name.str());
  if (head == options.retention.end()) return std::nullopt;
  const std::optional<int64_t> offset = commit_log_offset_of(send.msg_id.view());
  if (!offset || *offset >= head->second.deleted_below) return std::nullopt;
  MQ_ASSERT(head->second.segments_deleted > 0);
  return head->second.rule;
}

// Per consumer group, which messages (seqs) it received: a bit per message
// and group. The table of each group's first receipt that this replaces
// (4 bytes per message and group) was the bulk of the checker's memory at
// the end of a long run; the few messages received more than once are
// looked at again in a second pass (count_duplicates). Seqs outside the
// sends (a stray receipt in a real run's history file) go to a small set.
class GroupReceipts {
 public:
  explicit GroupReceipts(size_t sends) : sends_(sends) {}

  // Marks group's receipt of seq: returns whether it is the group's first.
  bool mark(const InternedName& group, uint64_t seq) {
    Group& table = group_of(group);
    if (seq >= sends_) return table.sparse.insert(seq).second;
    if (table.dense[seq]) return false;
    table.dense[seq] = true;
    return true;
  }

  bool received(const std::string& group, uint64_t seq) const {
    const auto it = groups_.find(group);
    if (it == groups_.end()) return false;
    if (seq >= sends_) return it->second.sparse.count(seq) > 0;
    return it->second.dense[seq];
  }

 private:
  struct Group {
    std::vector<bool> dense;  // seq -> received
    std::set<uint64_t> sparse;
  };

  Group& group_of(const InternedName& group) {
    // Receipts come in runs of one group: remember the last one looked up.
    if (last_ != nullptr && last_name_ == group) return *last_;
    auto [it, inserted] = groups_.try_emplace(group.str());
    if (inserted) it->second.dense.assign(sends_, false);
    last_name_ = group;
    last_ = &it->second;
    return *last_;
  }

  const size_t sends_;
  std::map<std::string, Group, std::less<>> groups_;  // std::map: nodes stay put, so last_ stays valid
  InternedName last_name_;
  Group* last_ = nullptr;
};

// The second pass over the receipts, for the messages some group received
// more than once (duplicated: group -> seqs): each later receipt against the
// group's first one of that message, in receipt order, as count_duplicate
// wants them.
void count_duplicates(const SpilledRecords<ReceiptRecord>& receipts,
                      const std::map<std::string, std::set<uint64_t>, std::less<>>& duplicated, CheckerReport& report) {
  std::map<std::string, std::map<uint64_t, std::optional<ReceiptRecord>>, std::less<>> first;  // group -> seq -> first receipt
  for (const auto& [group, seqs] : duplicated) {
    auto& of_group = first[group];
    for (const uint64_t seq : seqs) of_group.emplace(seq, std::nullopt);
  }
  std::set<StoredCopy> copies_received_again;  // the few copies past each first receipt
  std::set<uint64_t> stored_twice;             // seqs a group received from a second stored copy
  for (const ReceiptRecord& r : receipts) {
    const auto group = first.find(r.group.str());
    if (group == first.end()) continue;
    const auto entry = group->second.find(r.seq);
    if (entry == group->second.end()) continue;
    if (!entry->second) {
      entry->second = r;
      continue;
    }
    ++report.duplicates;
    if (count_duplicate(r, *entry->second, copies_received_again, report)) stored_twice.insert(r.seq);
  }
  report.messages_stored_twice = static_cast<int64_t>(stored_twice.size());
}

}  // namespace

CheckerReport check_history(const History& history, const CheckerOptions& options) {
  CheckerReport report;
  const auto& sends = history.sends();
  const auto& receipts = history.receipts();
  // Receipts per group: first receipt per seq, duplicates, reordering.
  GroupReceipts received_by(sends.size());
  std::map<std::string, std::set<uint64_t>, std::less<>> duplicated;  // group -> seqs it received again
  int64_t receipts_again = 0;
  std::map<std::tuple<std::string, std::string, int32_t>, int64_t> highest_offset;
  for (const ReceiptRecord& r : receipts) {
    if (!r.body_intact) ++report.corrupted;
    if (!received_by.mark(r.group, r.seq)) {
      ++receipts_again;
      duplicated[r.group.str()].insert(r.seq);
      continue;
    }
    auto& highest = highest_offset[{r.group, r.broker_name, r.queue_id}];
    if (r.queue_offset < highest) {
      ++report.reordered;
      ++report.reordered_by_queue[r.broker_name.str() + ":" + std::to_string(r.queue_id)];
    }
    highest = std::max(highest, r.queue_offset);
  }
  if (receipts_again > 0) count_duplicates(receipts, duplicated, report);
  MQ_ASSERT(report.duplicates == receipts_again);
  // One or two per message: spilled past the newest, as the History's
  // records (sim/checker_latency.h finds their percentiles in passes).
  SpilledRecords<Nanos> send_latencies;
  SpilledRecords<Nanos> e2e_latencies;
  std::vector<Window> read_windows;
  constexpr size_t kMergeWindowsEvery = 4096;
  size_t merge_read_windows_at = kMergeWindowsEvery;
  // The first receipt of each message by any group: kept by the History as
  // receipts arrived (each group's first one, as counted above).
  auto first_receipt_at = history.first_receipt_at().begin();
  MQ_ASSERT(history.first_receipt_at().size() == sends.size());
  for (const SendRecord& s : sends) {
    ++report.sent;
    MQ_ASSERT(first_receipt_at.index() == s.seq);
    const Nanos first_any = *first_receipt_at;
    ++first_receipt_at;  // not it++: the copy would read the block, not this iterator
    const bool received = first_any >= 0;
    if (received) e2e_latencies.push_back(first_any - s.invoked_at);
    switch (s.outcome) {
      case SendOutcome::kOk: ++report.acknowledged; break;
      case SendOutcome::kFailed: ++report.failed; break;
      case SendOutcome::kUnknown:
      case SendOutcome::kPending: ++report.unknown_outcome; break;
      default: ++report.stored_unconfirmed; break;
    }
    if (s.outcome != SendOutcome::kPending) send_latencies.push_back(s.completed_at - s.invoked_at);
    if (s.outcome == SendOutcome::kFailed && received) ++report.failed_delivered;
    if (s.outcome == SendOutcome::kUnknown || s.outcome == SendOutcome::kPending) {
      (received ? report.unknown_delivered : report.unknown) += 1;
    }
    if (stored_unconfirmed(s.outcome) && !received) ++report.lost_unconfirmed;
    if (s.outcome != SendOutcome::kOk) continue;
    const std::optional<int> foreseen = foreseen_by(s, options);
    // Deleted by retention unread, and no fault of the bound explains it:
    // the retention rule worked as configured. Not lost, and not unreadable
    // (the groups drained past it).
    const std::optional<std::string> expired = foreseen ? std::nullopt : expired_by(s, options);
    // Acknowledged: unreadable from the threshold until its first receipt.
    const Nanos readable_by = s.completed_at + options.read_unavailable_threshold;
    const Nanos read_at = received ? first_any : options.run_end;
    if (read_at > readable_by && (received || !expired)) {
      read_windows.push_back(Window{readable_by, read_at, s.broker_name});
      // Merged as they come, not only at the end: a long run's faults
      // leave a window per message they delayed, and the union is the same
      // whenever it is taken.
      if (read_windows.size() >= merge_read_windows_at) {
        merge_windows(read_windows);
        merge_read_windows_at = std::max(kMergeWindowsEvery, 2 * read_windows.size());
      }
    }
    bool lost_somewhere = false;
    bool expired_somewhere = false;
    const bool within_bound = !options.loss_at_risk || foreseen.has_value();
    for (const std::string& group : options.consumer_groups) {
      if (received_by.received(group, s.seq)) continue;
      if (expired) {
        expired_somewhere = true;
        ++report.expired_by_group[group];
        continue;
      }
      lost_somewhere = true;
      ++report.lost_by_group[group];
      const int fault = foreseen ? *foreseen : attribute(s, options);
      ++report.lost_by_fault[fault];
      if (report.lost_messages.size() < options.max_listed_lost) {
        report.lost_messages.push_back(LostMessage{s.seq, group, s.broker_name, s.completed_at, fault,
                                                   fault >= 0 ? options.schedule.events[static_cast<size_t>(fault)].describe()
                                                              : "no fault",
                                                   within_bound});
      }
    }
    if (lost_somewhere) ++report.lost;
    MQ_ASSERT(!(lost_somewhere && expired_somewhere));
    if (expired_somewhere) {
      ++report.expired_by_retention;
      ++report.expired_by_rule[expired->empty() ? "retention (rule not recorded)" : *expired];
    }
    if (lost_somewhere && !within_bound) ++report.lost_outside_bound;
  }
  MQ_ASSERT(report.messages_stored_twice <= report.duplicates_by_cause.stored_twice);
  report.write_unavailable = write_windows(history, options.run_end);
  report.write_unavailable_s = merge_windows(report.write_unavailable);
  const std::vector<Window> down = group_down_windows(history, options.run_end);
  read_windows.insert(read_windows.end(), down.begin(), down.end());
  report.read_unavailable = std::move(read_windows);
  report.read_unavailable_s = merge_windows(report.read_unavailable);
  report.send_latency = summarize_latency(send_latencies);
  report.e2e_latency = summarize_latency(e2e_latencies);
  if (options.run_end > 0) {
    report.throughput_msgs_per_s =
        static_cast<double>(report.acknowledged) / (static_cast<double>(options.run_end) / kNanosPerSecond);
  }
  MQ_ASSERT(report.acknowledged + report.failed + report.unknown_outcome + report.stored_unconfirmed == report.sent);
  MQ_ASSERT(report.lost_outside_bound <= report.lost);
  MQ_ASSERT(report.duplicates_by_cause.total() == report.duplicates);
  MQ_ASSERT(report.expired_by_retention <= report.acknowledged);
  return report;
}

}  // namespace mqlab::sim
