#include "sim/checker_duplicates.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "broker/common/assert.h"

namespace mqlab::sim {

bool GroupReceipts::mark(const ReceiptRecord& r) {
  if (r.first_of_group) return true;
  MQ_ASSERT(history_.received(r.group.str(), r.seq));  // an earlier receipt was its group's first
  Group& table = group_of(r.group);
  if (r.seq >= sends_) {
    table.sparse_again.insert(r.seq);
    return false;
  }
  if (table.again.empty()) table.again.assign(sends_, false);
  table.again[r.seq] = true;
  return false;
}

GroupReceipts::Group& GroupReceipts::group_of(const InternedName& group) {
  // Receipts come in runs of one group: remember the last one looked up.
  if (last_ != nullptr && last_name_ == group) return *last_;
  auto [it, inserted] = groups_.try_emplace(group.str());
  if (inserted) it->second.name = group;
  last_name_ = group;
  last_ = &it->second;
  return *last_;
}

std::vector<RepeatedReceipt> GroupReceipts::repeated_from(Cursor& cursor, size_t limit) const {
  MQ_ASSERT(limit > 0);
  std::vector<RepeatedReceipt> out;
  if (cursor.done) return out;
  // groups_ is ordered by name, as InternedName orders: each seq's pairs come out sorted.
  std::vector<const Group*> repeating;
  for (const auto& [name, group] : groups_) {
    MQ_ASSERT(group.name == name);
    if (!group.again.empty()) repeating.push_back(&group);
  }
  uint64_t seq = cursor.next_seq;
  if (repeating.empty()) seq = std::max<uint64_t>(seq, sends_);
  for (; seq < sends_ && out.size() < limit; ++seq) {
    for (const Group* group : repeating) {
      if (group->again[seq]) out.push_back(RepeatedReceipt{seq, group->name});
    }
  }
  cursor.next_seq = seq;
  if (out.size() < limit) add_sparse_from(cursor, limit, out);
  MQ_ASSERT(std::is_sorted(out.begin(), out.end()));
  return out;
}

// The stray seqs past the sends, merged across groups: few, so sorted here.
void GroupReceipts::add_sparse_from(Cursor& cursor, size_t limit, std::vector<RepeatedReceipt>& out) const {
  MQ_ASSERT(cursor.next_seq >= sends_);
  std::set<RepeatedReceipt> sparse;
  for (const auto& [name, group] : groups_) {
    for (auto it = group.sparse_again.lower_bound(cursor.next_seq); it != group.sparse_again.end(); ++it) {
      sparse.insert(RepeatedReceipt{*it, group.name});
    }
  }
  for (const RepeatedReceipt& repeat : sparse) {
    if (out.size() >= limit && out.back().seq != repeat.seq) {  // whole seqs only
      cursor.next_seq = repeat.seq;
      return;
    }
    out.push_back(repeat);
  }
  cursor.done = true;
}

namespace {

// A group's first receipt of a message it received again: the stored copy
// (broker, queue, queue offset) it came from.
struct FirstCopy {
  bool seen = false;
  InternedName broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
};

// Another stored copy of a message as a group received it.
using StoredCopy = std::tuple<uint64_t, InternedName, InternedName, int32_t, int64_t>;  // seq, group, broker, queue, offset

// A group received r's message before (first, and later_copies): why again?
// A copy it already had is a redelivery (offsets rolled back); a retried one
// a RECONSUME_LATER (its copy lives in the retry topic); any other copy was
// stored twice. Returns whether it was another stored copy.
bool count_duplicate(const ReceiptRecord& r, const FirstCopy& first, std::set<StoredCopy>& later_copies,
                     CheckerReport& report) {
  MQ_ASSERT(first.seen);
  DuplicateCauses& causes = report.duplicates_by_cause;
  const bool first_copy =
      r.broker_name == first.broker_name && r.queue_id == first.queue_id && r.queue_offset == first.queue_offset;
  const StoredCopy copy{r.seq, r.group, r.broker_name, r.queue_id, r.queue_offset};
  const bool seen_copy = first_copy || later_copies.count(copy) > 0;
  if (r.reconsume_times > 0) {
    ++causes.retried;
  } else if (seen_copy) {
    ++causes.redelivered;
  } else {
    ++causes.stored_twice;
    ++report.stored_twice_by_broker[r.broker_name.str()];
  }
  if (!first_copy) later_copies.insert(copy);
  MQ_ASSERT(causes.total() == report.duplicates);
  return r.reconsume_times == 0 && !seen_copy;
}

// One pass over the receipts for the repeats of repeated (sorted, whole seqs).
void count_pass(const SpilledRecords<ReceiptRecord>& receipts, const std::vector<RepeatedReceipt>& repeated,
                CheckerReport& report) {
  MQ_ASSERT(!repeated.empty());
  MQ_ASSERT(std::is_sorted(repeated.begin(), repeated.end()));
  const uint64_t lowest = repeated.front().seq;
  const uint64_t highest = repeated.back().seq;
  std::vector<FirstCopy> first(repeated.size());
  std::set<StoredCopy> later_copies;  // the few copies past each first receipt
  std::set<uint64_t> stored_twice;    // seqs a group received from a second stored copy
  for (const ReceiptRecord& r : receipts) {
    if (r.seq < lowest || r.seq > highest) continue;
    const RepeatedReceipt key{r.seq, r.group};
    const auto it = std::lower_bound(repeated.begin(), repeated.end(), key);
    if (it == repeated.end() || *it != key) continue;
    FirstCopy& of_key = first[static_cast<size_t>(std::distance(repeated.begin(), it))];
    if (!of_key.seen) {
      of_key = FirstCopy{true, r.broker_name, r.queue_id, r.queue_offset};
      continue;
    }
    ++report.duplicates;
    if (count_duplicate(r, of_key, later_copies, report)) stored_twice.insert(r.seq);
  }
  for (const FirstCopy& f : first) MQ_ASSERT(f.seen);  // each was marked received, twice
  report.messages_stored_twice += static_cast<int64_t>(stored_twice.size());
}

}  // namespace

void count_duplicates(const SpilledRecords<ReceiptRecord>& receipts, const GroupReceipts& receipted,
                      size_t duplicates_per_pass, CheckerReport& report) {
  MQ_ASSERT(duplicates_per_pass > 0);
  GroupReceipts::Cursor cursor;
  for (;;) {
    const std::vector<RepeatedReceipt> repeated = receipted.repeated_from(cursor, duplicates_per_pass);
    if (repeated.empty()) break;
    count_pass(receipts, repeated, report);
  }
  MQ_ASSERT(cursor.done);
}

}  // namespace mqlab::sim
