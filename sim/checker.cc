#include "sim/checker.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/checker_duplicates.h"
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
  while (const SendRecord* s = in_order.next()) {
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
  // By interned name, in a list (a run has a few groups), the last one
  // found kept at hand: sends come in runs to one group, and a map keyed by
  // the name's text compared strings per acknowledged send.
  std::vector<std::pair<InternedName, Nanos>> first_ack;
  std::pair<InternedName, Nanos>* last = nullptr;
  history.sends().for_each_span([&](std::span<const SendRecord> span) {
    for (const SendRecord& s : span) {
      if (s.outcome != SendOutcome::kOk) continue;
      if (last == nullptr || last->first != s.broker_name) {
        last = nullptr;
        for (auto& entry : first_ack) {
          if (entry.first == s.broker_name) last = &entry;
        }
        if (last == nullptr) last = &first_ack.emplace_back(s.broker_name, s.completed_at);
      }
      last->second = std::min(last->second, s.completed_at);
    }
  });
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
    const auto it = std::find_if(first_ack.begin(), first_ack.end(),
                                 [&w](const auto& entry) { return entry.first == std::string_view(w.broker_name); });
    if (it == first_ack.end()) continue;  // held nothing acknowledged
    w.from = std::max(w.from, it->second);
    if (w.to > w.from) clipped.push_back(w);
  }
  return clipped;
}

// options.retention's entry for a broker group, by interned name, the last
// one found kept at hand: sends come in runs to one group, and a search of
// the map by the name's text cost three string compares a send.
class RetentionByGroup {
 public:
  explicit RetentionByGroup(const std::map<std::string, RetentionHead>& retention) : retention_(retention) {}
  const RetentionHead* find(InternedName group) {
    if (!found_any_ || group != last_group_) {
      const auto it = retention_.find(group.str());
      last_head_ = it == retention_.end() ? nullptr : &it->second;
      last_group_ = group;
      found_any_ = true;
    }
    return last_head_;
  }

 private:
  const std::map<std::string, RetentionHead>& retention_;
  bool found_any_ = false;
  InternedName last_group_;
  const RetentionHead* last_head_ = nullptr;  // map values stay put
};

// The retention rule that deleted an acknowledged message before it was
// read, if its group's CommitLog head passed its offset (options' own
// text: not copied per message).
const std::string* expired_by(const SendRecord& send, RetentionByGroup& retention) {
  const RetentionHead* const head = retention.find(send.broker_name);
  if (head == nullptr) return nullptr;
  const std::optional<int64_t> offset = commit_log_offset_of(send.msg_id.view());
  if (!offset || *offset >= head->deleted_below) return nullptr;
  MQ_ASSERT(head->segments_deleted > 0);
  return &head->rule;
}

}  // namespace

CheckerReport check_history(const History& history, const CheckerOptions& options) {
  CheckerReport report;
  const auto& sends = history.sends();
  const auto& receipts = history.receipts();
  // Receipts per group: first receipt per seq, duplicates, reordering.
  GroupReceipts received_by(history);
  int64_t receipts_again = 0;
  // Keyed by the interned names' ids (a key of strings copied two per
  // receipt; the names themselves compared their texts when they differed),
  // and the last queue's entry kept at hand: receipts come in runs from one
  // queue (a pull's messages), so most need no lookup at all. Nothing walks
  // the map: the ids' order is as good as the texts'.
  using QueueOfGroup = std::tuple<uint32_t, uint32_t, int32_t>;
  std::map<QueueOfGroup, int64_t> highest_offset;
  std::optional<QueueOfGroup> last_queue;
  int64_t* last_highest = nullptr;  // map values stay put as others are inserted
  for (const ReceiptRecord& r : receipts) {
    if (!r.body_intact) ++report.corrupted;
    if (!received_by.mark(r)) {
      ++receipts_again;  // why: count_duplicates, in passes below
      continue;
    }
    const QueueOfGroup queue{r.group.id(), r.broker_name.id(), r.queue_id};
    if (last_queue != queue) {
      last_queue = queue;
      last_highest = &highest_offset[queue];
    }
    int64_t& highest = *last_highest;
    if (r.queue_offset < highest) {
      ++report.reordered;
      ++report.reordered_by_queue[r.broker_name.str() + ":" + std::to_string(r.queue_id)];
    }
    highest = std::max(highest, r.queue_offset);
  }
  if (receipts_again > 0) count_duplicates(receipts, received_by, options.duplicates_per_pass, report);
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
  // Per group of options.consumer_groups, folded into the report's maps at
  // the end: a map lookup by name per message and group was most of this
  // loop in a run whose retention expired nearly every message.
  std::vector<int64_t> expired_by_group(options.consumer_groups.size(), 0);
  std::vector<int64_t> lost_by_group(options.consumer_groups.size(), 0);
  const std::string* last_rule = nullptr;  // options' text; map values stay put as others are inserted
  RetentionByGroup retention(options.retention);
  int64_t* last_rule_count = nullptr;
  std::vector<History::GroupReceived> received_by_group;
  for (const std::string& group : options.consumer_groups) received_by_group.push_back(history.received_by(group));
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
    const std::string* const expired = foreseen ? nullptr : expired_by(s, retention);
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
    for (size_t g = 0; g < options.consumer_groups.size(); ++g) {
      const std::string& group = options.consumer_groups[g];
      if (received_by_group[g](s.seq)) continue;
      if (expired) {
        expired_somewhere = true;
        ++expired_by_group[g];
        continue;
      }
      lost_somewhere = true;
      ++lost_by_group[g];
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
      // Runs of messages share a rule (one text per broker group): its
      // counter is kept at hand while they do.
      if (expired != last_rule) {
        last_rule = expired;
        last_rule_count = &report.expired_by_rule[expired->empty() ? "retention (rule not recorded)" : *expired];
      }
      ++*last_rule_count;
    }
    if (lost_somewhere && !within_bound) ++report.lost_outside_bound;
  }
  for (size_t g = 0; g < options.consumer_groups.size(); ++g) {
    if (expired_by_group[g] > 0) report.expired_by_group[options.consumer_groups[g]] += expired_by_group[g];
    if (lost_by_group[g] > 0) report.lost_by_group[options.consumer_groups[g]] += lost_by_group[g];
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
