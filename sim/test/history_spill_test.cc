// What a History keeps in memory stays small however much a run records
// (its records go to a spill file: sim/history_spill.h), and the checker's
// figures and latency percentiles are the same whether the records were
// spilled or not: counted, compared, never timed.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "sim/checker.h"
#include "sim/checker_report.h"
#include "sim/history.h"
#include "sim/history_order.h"
#include "sim/history_spill.h"

namespace mqlab::sim::history_spill_test {
namespace {

struct Row {
  uint64_t index = 0;
  int64_t value = 0;
};

TEST(SpilledRecords, ReadsBackWhatWasWrittenWhereverItLives) {
  constexpr size_t kTail = 100;
  SpilledRecords<Row> rows(kTail);
  constexpr size_t kCount = 3 * SpilledRecords<Row>::kBlockRecords + 77;
  for (uint64_t i = 0; i < kCount; ++i) rows.push_back(Row{i, static_cast<int64_t>(i) * 3});
  ASSERT_EQ(rows.size(), kCount);
  ASSERT_GT(rows.spilled(), 0u);  // else this test checks nothing about the file
  // A completion lands on a spilled record and on one still in memory.
  rows.set(5, Row{5, -1});
  rows.set(kCount - 1, Row{kCount - 1, -2});
  uint64_t expected = 0;
  for (const Row& row : rows) {
    ASSERT_EQ(row.index, expected);
    const int64_t value = expected == 5 ? -1 : expected == kCount - 1 ? -2 : static_cast<int64_t>(expected) * 3;
    ASSERT_EQ(row.value, value);
    ASSERT_EQ(rows[expected].value, value);  // random access agrees with iteration
    ++expected;
  }
  EXPECT_EQ(expected, kCount);
  EXPECT_EQ(rows.back().index, kCount - 1);
  // A pass by spans reads the same records, in order, the set ones included.
  expected = 0;
  rows.for_each_span([&](std::span<const Row> span) {
    for (const Row& row : span) {
      ASSERT_EQ(row.index, expected);
      ASSERT_EQ(row.value, rows[expected].value);
      ++expected;
    }
  });
  EXPECT_EQ(expected, kCount);
  // Two iterators at different places, as the checker's passes use them.
  auto a = rows.begin();
  auto b = rows.begin();
  for (size_t i = 0; i < SpilledRecords<Row>::kBlockRecords + 3; ++i) ++b;
  EXPECT_EQ(a->index, 0u);
  EXPECT_EQ(b->index, SpilledRecords<Row>::kBlockRecords + 3);
  // A copy keeps its record when the original moves into another spilled
  // block (read over its block only when nothing else shares it).
  ASSERT_GE(rows.spilled(), 2 * SpilledRecords<Row>::kBlockRecords);
  const auto c = a;
  const Row& held = *c;
  for (size_t i = 0; i < SpilledRecords<Row>::kBlockRecords; ++i) ++a;
  EXPECT_EQ(a->index, SpilledRecords<Row>::kBlockRecords);
  EXPECT_EQ(held.index, 0u);
  EXPECT_EQ(c->index, 0u);
  // A second pass by spans reads the same as the first (its buffer reused).
  expected = 0;
  rows.for_each_span([&](std::span<const Row> span) {
    for (const Row& row : span) ASSERT_EQ(row.index, expected++);
  });
  EXPECT_EQ(expected, kCount);
}

TEST(SpilledRecords, MemoryStaysBoundedHoweverManyRecords) {
  constexpr size_t kTail = 1000;
  SpilledRecords<Row> rows(kTail);
  const size_t bound = (kTail + 2 * SpilledRecords<Row>::kBlockRecords) * sizeof(Row);
  size_t peak = 0;
  for (uint64_t i = 0; i < 40 * SpilledRecords<Row>::kBlockRecords; ++i) {
    rows.push_back(Row{i, 0});
    peak = std::max(peak, rows.memory_bytes());
  }
  (void)rows[7];  // a lookup fills the read block: counted too
  peak = std::max(peak, rows.memory_bytes());
  EXPECT_LE(peak, bound);
  EXPECT_GE(rows.spilled(), rows.size() - kTail - SpilledRecords<Row>::kBlockRecords);
}

// A history of n messages, two groups: most received by both, some by one,
// some twice (a redelivery), some failed or left pending.
void record(History& history, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const Nanos at = static_cast<Nanos>(i) * 5'000'000;
    const uint64_t seq = history.begin_send(i % 2 ? "producer-1" : "producer-0", at, "", 7);
    if (i % 97 == 3) continue;  // pending
    const SendOutcome outcome = i % 53 == 1 ? SendOutcome::kFailed : SendOutcome::kOk;
    const int32_t queue = static_cast<int32_t>(i % 4);
    char id[40];
    std::snprintf(id, sizeof(id), "0A00000100002A9F%016llX", static_cast<unsigned long long>(i * 300));
    history.complete_send(seq, at + 1'000'000 + static_cast<Nanos>(i % 13) * 17, outcome,
                          i % 3 ? "broker-a" : "broker-b", queue, static_cast<int64_t>(i / 4), id, 1);
    if (outcome != SendOutcome::kOk) continue;
    const Nanos got = at + 3'000'000 + static_cast<Nanos>((i * 7919) % 2'000'000'000);
    history.receive(ReceiptRecord{seq, "cg", "consumer-cg-0", got, i % 3 ? "broker-a" : "broker-b", queue,
                                  static_cast<int64_t>(i / 4), true, true, 0});
    if (i % 11 != 0) {
      history.receive(ReceiptRecord{seq, "audit", "consumer-audit-0", got + 5, i % 3 ? "broker-a" : "broker-b",
                                    queue, static_cast<int64_t>(i / 4), i % 1009 != 0, true, 0});
    }
    if (i % 29 == 0) {  // redelivered, or retried
      history.receive(ReceiptRecord{seq, "cg", "consumer-cg-0", got + 9, i % 3 ? "broker-a" : "broker-b", queue,
                                    static_cast<int64_t>(i / 4), true, true, i % 58 == 0 ? 1 : 0});
    }
  }
}

nlohmann::json figures(const History& history, Nanos run_end) {
  CheckerOptions options;
  options.consumer_groups = {"cg", "audit"};
  options.run_end = run_end;
  const CheckerReport report = check_history(history, options);
  nlohmann::json json = checker_figures_json(report);
  json["lost_by_group"] = report.lost_by_group;
  json["reordered_by_queue"] = report.reordered_by_queue;
  json["read_unavailable"] = windows_json(report.read_unavailable);
  json["write_unavailable"] = windows_json(report.write_unavailable);
  nlohmann::json lost = nlohmann::json::array();
  for (const LostMessage& m : report.lost_messages) lost.push_back({m.seq, m.group, m.broker_name, m.acked_at});
  json["lost_messages"] = lost;
  return json;
}

TEST(History, SpilledRecordsGiveTheSameFigures) {
  constexpr uint64_t kMessages = 20'000;
  History in_memory(size_t{1} << 20);  // a tail that holds all of them
  History spilled(512);      // all but the last 512 sends and receipts on file
  record(in_memory, kMessages);
  record(spilled, kMessages);
  ASSERT_EQ(in_memory.sends().spilled(), 0u);
  ASSERT_EQ(in_memory.receipts().spilled(), 0u);
  ASSERT_GT(spilled.sends().spilled(), kMessages / 2);
  ASSERT_GT(spilled.receipts().spilled(), kMessages / 2);
  const nlohmann::json expected = figures(in_memory, seconds(200));
  EXPECT_EQ(figures(spilled, seconds(200)), expected);
  EXPECT_GT(expected["duplicates"].get<int64_t>(), 0);  // the history exercises every path
  EXPECT_GT(expected["lost"].get<int64_t>(), 0);
  EXPECT_GT(expected["corrupted"].get<int64_t>(), 0);
}

TEST(History, MemoryPerMessageIsABitPerGroup) {
  // The memory property of a long run: after n settled messages the History
  // holds its tails and read blocks (fixed) and a bit per message and group
  // (up to twice that in vector<bool> capacity), not a record per message.
  constexpr size_t kTail = 1024;
  constexpr size_t kBlock = SpilledRecords<SendRecord>::kBlockRecords;
  const size_t fixed = (kTail + 2 * kBlock) * (sizeof(SendRecord) + sizeof(ReceiptRecord) + 2 * sizeof(Nanos)) + 4096;
  History history(kTail);
  for (int step = 0; step < 10; ++step) {
    record(history, 20'000);
    const size_t messages = history.sends().size();
    const size_t bits = messages * 2 * 2 / 8;  // 2 groups
    EXPECT_LE(history.memory_bytes(), fixed + bits) << messages << " messages";
  }
  const size_t messages = history.sends().size();
  ASSERT_EQ(messages, 200'000u);
  ASSERT_GT(history.receipts().spilled(), messages);  // the receipts are on file, not in memory
  // What the records would have cost in memory, for scale: 150 bytes a message.
  EXPECT_LT(history.memory_bytes(), messages * (sizeof(SendRecord) + sizeof(ReceiptRecord)) / 10);
}

// SendsInOrder gives what a stable sort by the key gives, however late
// sends are invoked (a producer at its in-flight cap) and complete.
RC_GTEST_PROP(SendsInOrder, EqualsAStableSortByTheKey, ()) {
  const size_t tail = *rc::gen::inRange<size_t>(1, 300);
  History history(tail);
  const auto count = *rc::gen::inRange<uint64_t>(0, 3 * SpilledRecords<SendRecord>::kBlockRecords);
  const auto late_every = *rc::gen::inRange<uint64_t>(1, 50);
  Nanos now = 0;
  for (uint64_t i = 0; i < count; ++i) {
    now += static_cast<Nanos>((i * 7) % 3);  // ties too
    // Some sends are invoked at an earlier arrival's time.
    const Nanos invoked = i % late_every == 0 ? std::max<Nanos>(0, now - static_cast<Nanos>((i * 31) % 400)) : now;
    const uint64_t seq = history.begin_send("p", invoked, "", 0);
    if (i % 13 == 5) continue;  // pending: its line is at its invocation
    history.complete_send(seq, invoked + static_cast<Nanos>((i * 17) % 500), SendOutcome::kOk, "b", 0, 0, "", 1);
  }
  for (const SendsInOrder::Key key : {SendsInOrder::Key{invoked_at_of}, SendsInOrder::Key{line_time_of}}) {
    std::vector<SendRecord> expected(history.sends().begin(), history.sends().end());
    std::stable_sort(expected.begin(), expected.end(),
                     [key](const SendRecord& a, const SendRecord& b) { return key(a) < key(b); });
    SendsInOrder in_order(history.sends(), key);
    size_t held = 0;
    for (const SendRecord& want : expected) {
      const SendRecord* got = in_order.next();
      RC_ASSERT(got != nullptr);
      RC_ASSERT(got->seq == want.seq);
      held = std::max(held, in_order.held());
    }
    RC_ASSERT(in_order.next() == nullptr);
    // Reordered within about a block, not across the run.
    RC_ASSERT(held <= 2 * SpilledRecords<SendRecord>::kBlockRecords);
  }
}

// Sends invoked in seq order (a producer below its in-flight cap), each
// completing a little later: the heap holds about a stretch of them, not a
// spill block's worth, whatever the run's length.
TEST(SendsInOrder, HoldsAboutAStretchWhenInvocationsAreInOrder) {
  History history(64);
  constexpr uint64_t kSends = 5 * SpilledRecords<SendRecord>::kBlockRecords;
  for (uint64_t i = 0; i < kSends; ++i) {
    const Nanos invoked = static_cast<Nanos>(i) * 5'000'000;  // 200 a second
    const uint64_t seq = history.begin_send("p", invoked, "", 0);
    history.complete_send(seq, invoked + 600'000 + static_cast<Nanos>((i * 7919) % 20) * 1'000'000, SendOutcome::kOk,
                          "b", 0, 0, "", 1);
  }
  for (const SendsInOrder::Key key : {SendsInOrder::Key{invoked_at_of}, SendsInOrder::Key{line_time_of}}) {
    SendsInOrder in_order(history.sends(), key);
    size_t held = 0;
    Nanos last = 0;
    uint64_t read = 0;
    while (const SendRecord* send = in_order.next()) {
      ASSERT_GE(key(*send), last);
      last = key(*send);
      held = std::max(held, in_order.held());
      ++read;
    }
    EXPECT_EQ(read, kSends);
    EXPECT_LE(held, 2 * SendsInOrder::kStretch + 8);
    EXPECT_GE(held, 1u);
  }
}

TEST(CheckerLatency, NarrowingGivesTheSortedPercentiles) {
  // Past 64 Ki values the spilled form narrows instead of sorting; a bucket
  // of a million equal values is narrowed to one value wide; percentiles
  // whose buckets are too full to gather together are gathered one by one.
  const size_t count = (size_t{1} << 20) + 4321;
  for (int shape = 0; shape < 5; ++shape) {
    SpilledRecords<Nanos> spilled;
    std::vector<Nanos> values;
    values.reserve(count);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < count; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64: a fixed sequence
      Nanos v = 0;
      switch (shape) {
        case 0: v = static_cast<Nanos>(x % 5'000'000); break;                      // spread
        case 1: v = 1'000'000; break;                                                // all equal
        case 2: v = static_cast<Nanos>(x % 1000) - 500; break;                       // negative too
        case 3: v = (x % 100 == 0) ? static_cast<Nanos>(x % (int64_t{1} << 40)) : static_cast<Nanos>(x % 64); break;  // long tail
        // 25 clusters of about 42,000 values, each within one bucket: every
        // percentile's bucket could be gathered alone but not all four at
        // once, and p99 and p999 share theirs.
        case 4: v = static_cast<Nanos>((x % 25) * 1'000'000 + (x >> 32) % 7); break;
      }
      values.push_back(v);
      spilled.push_back(v);
    }
    ASSERT_GT(spilled.spilled(), 0u);
    const LatencySummary narrowed = summarize_latency(spilled);
    const LatencySummary sorted = summarize_latency(values);
    EXPECT_EQ(narrowed.count, sorted.count) << "shape " << shape;
    EXPECT_EQ(narrowed.p50, sorted.p50) << "shape " << shape;
    EXPECT_EQ(narrowed.p90, sorted.p90) << "shape " << shape;
    EXPECT_EQ(narrowed.p99, sorted.p99) << "shape " << shape;
    EXPECT_EQ(narrowed.p999, sorted.p999) << "shape " << shape;
    EXPECT_EQ(narrowed.max, sorted.max) << "shape " << shape;
  }
}

}  // namespace
}  // namespace mqlab::sim::history_spill_test
