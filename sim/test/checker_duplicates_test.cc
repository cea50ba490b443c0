// The checker finds why each repeated receipt happened in passes of a
// bounded number of repeats (sim/checker_duplicates.h): generated histories
// with redeliveries, retries, second stored copies and stray seqs give the
// same figures whatever the pass size, equal to a direct count.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/checker.h"
#include "sim/checker_duplicates.h"
#include "sim/history.h"
#include "sim/test/receipt_record.h"

namespace mqlab::sim::checker_duplicates_test {
namespace {

const std::vector<std::string> kGroups = {"g-audit", "g-bench", "g-zeta"};

// What each figure of the duplicates must be, counted in one pass with
// unbounded tables: the rule of checker_duplicates.h said plainly.
struct Expected {
  int64_t duplicates = 0;
  DuplicateCauses causes;
  std::map<std::string, int64_t> stored_twice_by_broker;
  int64_t messages_stored_twice = 0;
};

Expected count_directly(const std::vector<ReceiptRecord>& receipts) {
  Expected expected;
  using Copy = std::tuple<std::string, uint64_t, std::string, int32_t, int64_t>;
  std::set<Copy> seen;                                 // every copy a group received
  std::set<std::pair<std::string, uint64_t>> received;  // (group, seq)
  std::set<uint64_t> stored_twice;
  for (const ReceiptRecord& r : receipts) {
    const Copy copy{r.group.str(), r.seq, r.broker_name.str(), r.queue_id, r.queue_offset};
    if (received.insert({r.group.str(), r.seq}).second) {
      seen.insert(copy);
      continue;
    }
    ++expected.duplicates;
    const bool seen_copy = seen.count(copy) > 0;
    if (r.reconsume_times > 0) {
      ++expected.causes.retried;
    } else if (seen_copy) {
      ++expected.causes.redelivered;
    } else {
      ++expected.causes.stored_twice;
      ++expected.stored_twice_by_broker[r.broker_name.str()];
      stored_twice.insert(r.seq);
    }
    seen.insert(copy);
  }
  expected.messages_stored_twice = static_cast<int64_t>(stored_twice.size());
  return expected;
}

// A history of sends and receipts with repeats of every cause, some of
// them past the sends (a stray seq in a real run's history file).
struct Generated {
  History history{/*tail_records=*/64};  // a small tail: the receipts reach the spill file
  std::vector<ReceiptRecord> receipts;
};

void generate(Generated& out) {
  const auto sends = *rc::gen::inRange<uint64_t>(1, 400);
  for (uint64_t i = 0; i < sends; ++i) {
    const uint64_t seq = out.history.begin_send("p0", static_cast<Nanos>(i), "k", 0);
    out.history.complete_send(seq, static_cast<Nanos>(i) + 1, SendOutcome::kOk, "broker-a", 0,
                              static_cast<int64_t>(i), "id", 1);
  }
  const auto count = *rc::gen::inRange<size_t>(0, 1500);
  for (size_t i = 0; i < count; ++i) {
    ReceiptRecord r;
    // Mostly a few hot seqs, so repeats are common; now and then a stray one.
    const bool stray = *rc::gen::inRange(0, 40) == 0;
    r.seq = stray ? sends + *rc::gen::inRange<uint64_t>(0, 5) : *rc::gen::inRange<uint64_t>(0, std::min<uint64_t>(sends, 60));
    r.group = kGroups[*rc::gen::inRange<size_t>(0, kGroups.size())];
    r.consumer = "c0";
    r.at = static_cast<Nanos>(1000 + i);
    r.broker_name = *rc::gen::inRange(0, 4) == 0 ? "broker-b" : "broker-a";
    r.queue_id = *rc::gen::inRange(0, 2);
    r.queue_offset = static_cast<int64_t>(r.seq % 7) + *rc::gen::inRange(0, 2);
    r.reconsume_times = *rc::gen::inRange(0, 6) == 0 ? 1 : 0;
    out.history.receive(r);
    out.receipts.push_back(r);
  }
}

RC_GTEST_PROP(CheckerDuplicates, PassesOfAnySizeCountAsOneDirectCount, ()) {
  Generated generated;
  generate(generated);
  const Expected expected = count_directly(generated.receipts);
  CheckerOptions options;
  options.consumer_groups = kGroups;
  options.run_end = seconds(10);
  const auto per_pass = *rc::gen::element<size_t>(1, 2, 3, 17, size_t{1} << 16);
  options.duplicates_per_pass = per_pass;
  const CheckerReport report = check_history(generated.history, options);
  RC_ASSERT(report.duplicates == expected.duplicates);
  RC_ASSERT(report.duplicates_by_cause.redelivered == expected.causes.redelivered);
  RC_ASSERT(report.duplicates_by_cause.retried == expected.causes.retried);
  RC_ASSERT(report.duplicates_by_cause.stored_twice == expected.causes.stored_twice);
  RC_ASSERT(report.stored_twice_by_broker == expected.stored_twice_by_broker);
  RC_ASSERT(report.messages_stored_twice == expected.messages_stored_twice);
}

// The passes partition the repeats: whole seqs, in order, each once.
RC_GTEST_PROP(CheckerDuplicates, RepeatsComeOutOnceInWholeSeqs, ()) {
  Generated generated;
  generate(generated);
  GroupReceipts receipted(generated.history);
  std::set<std::pair<uint64_t, std::string>> received;  // (seq, group) received
  std::set<std::pair<uint64_t, std::string>> repeated;  // (seq, group) received more than once
  // The History's receipts: they carry whether each was its group's first.
  RC_ASSERT(generated.history.receipts().size() == generated.receipts.size());
  for (const ReceiptRecord& r : generated.history.receipts()) {
    const bool first = received.insert({r.seq, r.group.str()}).second;
    RC_ASSERT(receipted.mark(r) == first);
    RC_ASSERT(generated.history.received(r.group.str(), r.seq));
    if (!first) repeated.insert({r.seq, r.group.str()});
  }
  const auto limit = *rc::gen::inRange<size_t>(1, 20);
  GroupReceipts::Cursor cursor;
  std::vector<std::pair<uint64_t, std::string>> out;
  for (int passes = 0;; ++passes) {
    RC_ASSERT(passes <= static_cast<int>(repeated.size()) + 1);
    const std::vector<RepeatedReceipt> pass = receipted.repeated_from(cursor, limit);
    if (pass.empty()) break;
    // A seq is never split between passes (no || in RC_ASSERT: it does not short-circuit).
    if (!out.empty()) RC_ASSERT(out.back().first < pass.front().seq);
    // No more than limit pairs, but for the last seq's other groups.
    size_t before_last_seq = 0;
    while (before_last_seq < pass.size() && pass[before_last_seq].seq != pass.back().seq) ++before_last_seq;
    RC_ASSERT(before_last_seq < limit);
    for (const RepeatedReceipt& r : pass) out.emplace_back(r.seq, r.group.str());
  }
  RC_ASSERT(cursor.done);
  const std::vector<std::pair<uint64_t, std::string>> expected(repeated.begin(), repeated.end());
  RC_ASSERT(expected == out);
}

TEST(CheckerDuplicates, OneMessageStoredTwiceForTwoGroupsAcrossTinyPassesCountsOnce) {
  History history;
  for (int i = 0; i < 3; ++i) {
    const uint64_t seq = history.begin_send("p0", i, "k", 0);
    history.complete_send(seq, i + 1, SendOutcome::kOk, "broker-a", 0, i, "id", 1);
  }

  // seq 1 is stored twice (queue offsets 1 and 5) and both groups read both copies.
  history.receive(receipt(1, 10, 1, "g-audit"));
  history.receive(receipt(1, 11, 1, "g-bench"));
  history.receive(receipt(1, 12, 5, "g-audit"));
  history.receive(receipt(1, 13, 5, "g-bench"));
  history.receive(receipt(2, 14, 2, "g-bench"));
  history.receive(receipt(2, 15, 2, "g-bench"));  // redelivered
  CheckerOptions options;
  options.consumer_groups = {"g-audit", "g-bench"};
  options.run_end = seconds(1);
  options.duplicates_per_pass = 1;  // a pass per seq, both groups of seq 1 in one
  const CheckerReport report = check_history(history, options);
  EXPECT_EQ(report.duplicates, 3);
  EXPECT_EQ(report.duplicates_by_cause.stored_twice, 2);
  EXPECT_EQ(report.duplicates_by_cause.redelivered, 1);
  EXPECT_EQ(report.messages_stored_twice, 1);
  EXPECT_EQ(report.stored_twice_by_broker.at("broker-a"), 2);
}

}  // namespace
}  // namespace mqlab::sim::checker_duplicates_test
