// The checker's receipts per consumer group (which messages each group
// received, and which more than once) and why each repeat happened
// (CheckerReport::duplicates_by_cause), in memory that does not grow with
// the run beyond a bit or two per message and group.
//
// Why: a long run's faults make repeats in proportion to its length (every
// restart or rebalance redelivers a few seconds of messages). Kept as a set
// of repeated seqs per group, each one's first receipt and a set of the
// stored copies seen (as strings), they cost about 250 bytes per repeat and
// were the peak of a long run (heaptrack, 180 simulated minutes of the
// standard scenario: 8.7 MiB of the 32 MiB heap peak, growing with the run).
// Here a repeat costs a bit while receipts are marked (the History says
// which receipt was a group's first); its causes are found
// afterwards in passes over the receipts, each pass taking the repeats of
// at most duplicates_per_pass (seq, group) pairs (about 40 bytes each),
// whole seqs at a time (a message received twice by two groups is one
// message stored twice), in seq order.
//
// A pass classifies a group's later receipts of a message against the
// stored copies that group received before, exactly as one pass over every
// receipt would: a receipt's cause depends only on the earlier receipts of
// its own (group, seq), which the pass sees in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/checker.h"
#include "sim/history.h"

namespace mqlab::sim {

// A group and a message it received more than once.
struct RepeatedReceipt {
  uint64_t seq = 0;
  InternedName group;
  friend auto operator<=>(const RepeatedReceipt&, const RepeatedReceipt&) = default;
};

// Per consumer group, which messages (seqs) it received more than once: a
// bit each per message and group, sized at the group's first repeat. Which
// ones it received at all, and whether a receipt was its group's first, the
// History knows already (History::received, ReceiptRecord::first_of_group):
// no table of its own for them. Seqs outside the sends (a stray receipt in
// a real run's history file) go to a small set.
class GroupReceipts {
 public:
  explicit GroupReceipts(const History& history) : history_(history), sends_(history.sends().size()) {}

  // Notes r (every receipt, in the History's order): returns whether it is
  // its group's first receipt of its seq.
  bool mark(const ReceiptRecord& r);
  bool received(const std::string& group, uint64_t seq) const { return history_.received(group, seq); }

  // Where repeated_from goes on from.
  struct Cursor {
    uint64_t next_seq = 0;
    bool done = false;  // past every seq (a stray one may be the largest uint64_t)
  };
  // The repeated receipts from cursor on, in (seq, group) order: whole seqs,
  // until at least limit pairs (or the end); advances cursor past them.
  // Empty when none are left. Requires: limit > 0.
  std::vector<RepeatedReceipt> repeated_from(Cursor& cursor, size_t limit) const;

 private:
  struct Group {
    InternedName name;
    std::vector<bool> again;  // seq -> received more than once; sized at the first repeat
    std::set<uint64_t> sparse_again;
  };

  Group& group_of(const InternedName& group);
  void add_sparse_from(Cursor& cursor, size_t limit, std::vector<RepeatedReceipt>& out) const;

  const History& history_;
  const size_t sends_;
  std::map<std::string, Group, std::less<>> groups_;  // std::map: nodes stay put, so last_ stays valid
  InternedName last_name_;
  Group* last_ = nullptr;
};

// Counts each repeated receipt of receipted (marked into it) by cause into
// report: duplicates, duplicates_by_cause, stored_twice_by_broker and
// messages_stored_twice. Requires: duplicates_per_pass > 0.
void count_duplicates(const SpilledRecords<ReceiptRecord>& receipts, const GroupReceipts& receipted,
                      size_t duplicates_per_pass, CheckerReport& report);

}  // namespace mqlab::sim
