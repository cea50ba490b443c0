// The checker on hand-built histories: each figure (lost, unknown,
// duplicates, reordered, corrupted, unavailability windows, latency
// percentiles) and the attribution of a lost message to its fault.
#include "sim/checker.h"
#include "sim/test/receipt_record.h"

#include <gtest/gtest.h>

namespace mqlab::sim::checker_test {
namespace {


uint64_t ok_send(History& history, Nanos at, Nanos rtt, int64_t offset, const std::string& broker = "broker-a") {
  const uint64_t seq = history.begin_send("p0", at, "k", 0);
  history.complete_send(seq, at + rtt, SendOutcome::kOk, broker, 0, offset, "id", 1);
  return seq;
}

CheckerOptions options_for(Nanos run_end) {
  CheckerOptions options;
  options.consumer_groups = {"g"};
  options.run_end = run_end;
  options.broker_group_of = {{"broker-a-0", "broker-a"}, {"broker-b-0", "broker-b"}};
  return options;
}

TEST(Checker, CleanRunHasNoLossAndExactLatencies) {
  History history;
  for (int i = 0; i < 100; ++i) {
    const uint64_t seq = ok_send(history, millis(i), millis(2), i);
    history.receive(receipt(seq, millis(i) + millis(5), i));
  }
  const CheckerReport report = check_history(history, options_for(seconds(1)));
  EXPECT_EQ(report.sent, 100);
  EXPECT_EQ(report.acknowledged, 100);
  EXPECT_EQ(report.lost, 0);
  EXPECT_EQ(report.duplicates, 0);
  EXPECT_EQ(report.reordered, 0);
  EXPECT_EQ(report.send_latency.p50, millis(2));
  EXPECT_EQ(report.e2e_latency.p99, millis(5));
  EXPECT_DOUBLE_EQ(report.throughput_msgs_per_s, 100.0);
  EXPECT_TRUE(report.write_unavailable.empty());
  EXPECT_TRUE(report.read_unavailable.empty());
}

TEST(Checker, LostMessageIsAttributedToTheFaultThatFollowedItsAck) {
  History history;
  ok_send(history, millis(10), millis(1), 0);          // never received
  ok_send(history, millis(10), millis(1), 1, "broker-b");  // never received, other group
  CheckerOptions options = options_for(seconds(10));
  faults::FaultEvent before{.kind = faults::FaultKind::kCrashMachine, .at = millis(5), .duration = seconds(1),
                            .target = "broker-a-0"};
  faults::FaultEvent partition{.kind = faults::FaultKind::kIsolateMachine, .at = millis(20), .target = "broker-a-0"};
  faults::FaultEvent crash{.kind = faults::FaultKind::kCrashMachine, .at = millis(30), .target = "broker-a-0"};
  options.schedule.events = {before, partition, crash};
  const CheckerReport report = check_history(history, options);
  EXPECT_EQ(report.lost, 2);
  ASSERT_EQ(report.lost_messages.size(), 2u);
  EXPECT_EQ(report.lost_messages[0].fault_index, 2) << report.lost_messages[0].fault;
  EXPECT_EQ(report.lost_messages[1].fault_index, -1) << "nothing hit broker-b: a loss no fault explains";
  EXPECT_EQ(report.lost_by_fault.at(-1), 1);
}

TEST(Checker, UnknownDuplicatesReorderingAndCorruption) {
  History history;
  const uint64_t a = ok_send(history, 0, millis(1), 0);
  const uint64_t b = ok_send(history, millis(1), millis(1), 1);
  const uint64_t unknown = history.begin_send("p0", millis(2), "k", 0);
  history.complete_send(unknown, seconds(3), SendOutcome::kUnknown, "broker-a", -1, -1, "", 2);
  const uint64_t unknown_delivered = history.begin_send("p0", millis(3), "k", 0);
  history.complete_send(unknown_delivered, seconds(3), SendOutcome::kUnknown, "broker-a", -1, -1, "", 2);
  history.receive(receipt(b, millis(10), 1));
  history.receive(receipt(a, millis(11), 0));  // offset 0 after 1: reordered
  history.receive(receipt(a, millis(12), 0));  // again: a duplicate
  ReceiptRecord bad = receipt(unknown_delivered, millis(13), 2);
  bad.body_intact = false;
  history.receive(bad);
  const CheckerReport report = check_history(history, options_for(seconds(5)));
  EXPECT_EQ(report.unknown, 1);
  EXPECT_EQ(report.unknown_delivered, 1);
  EXPECT_EQ(report.duplicates, 1);
  EXPECT_EQ(report.reordered, 1);
  EXPECT_EQ(report.corrupted, 1);
  EXPECT_EQ(report.lost, 0);
}

TEST(Checker, WriteAndReadUnavailabilityWindows) {
  History history;
  ok_send(history, 0, millis(1), 0);
  const uint64_t f1 = history.begin_send("p0", seconds(1), "k", 0);
  history.complete_send(f1, seconds(1) + millis(5), SendOutcome::kFailed, "broker-a", -1, -1, "", 3);
  const uint64_t f2 = history.begin_send("p0", seconds(2), "k", 0);
  history.complete_send(f2, seconds(2) + millis(5), SendOutcome::kFailed, "broker-a", -1, -1, "", 3);
  const uint64_t ok = ok_send(history, seconds(4), millis(1), 1);
  // The first message is read only at 6 s: unreadable from 1.001 s to 6 s.
  history.receive(receipt(0, seconds(6), 0));
  history.receive(receipt(ok, seconds(4) + millis(2), 1));
  const CheckerReport report = check_history(history, options_for(seconds(10)));
  ASSERT_EQ(report.write_unavailable.size(), 1u);
  EXPECT_EQ(report.write_unavailable[0].from, seconds(1));
  EXPECT_EQ(report.write_unavailable[0].to, seconds(4) + millis(1));
  ASSERT_EQ(report.read_unavailable.size(), 1u);
  EXPECT_EQ(report.read_unavailable[0].from, millis(1) + seconds(1));
  EXPECT_EQ(report.read_unavailable[0].to, seconds(6));
  EXPECT_EQ(report.failed, 2);
}

TEST(Checker, LatencyPercentilesAreNearestRank) {
  std::vector<Nanos> values;
  for (int i = 1; i <= 1000; ++i) values.push_back(i);
  const LatencySummary s = summarize_latency(values);
  EXPECT_EQ(s.p50, 500);
  EXPECT_EQ(s.p99, 990);
  EXPECT_EQ(s.p999, 999);
  EXPECT_EQ(s.max, 1000);
}

}  // namespace
}  // namespace mqlab::sim::checker_test

namespace mqlab::sim::checker_test {
namespace {

TEST(Checker, AGroupWithEveryBrokerDownIsUnreadableFromItsFirstAck) {
  History history;
  const uint64_t seq = history.begin_send("p0", seconds(1), "k", 0);
  history.complete_send(seq, seconds(1) + millis(1), SendOutcome::kOk, "broker-a", 0, 0, "id", 1);
  history.receive(ReceiptRecord{seq, "g", "c0", seconds(1) + millis(2), "broker-a", 0, 0, true, true, 0});
  history.record(WorldEvent{0, "broker_up", "broker-a", "broker-a-0", -1});
  history.record(WorldEvent{seconds(5), "broker_down", "broker-a", "broker-a-0", -1});
  history.record(WorldEvent{seconds(9), "broker_up", "broker-a", "broker-a-0", -1});
  history.record(WorldEvent{seconds(12), "broker_down", "broker-b", "broker-b-0", -1});  // held no acked message
  CheckerOptions options;
  options.consumer_groups = {"g"};
  options.run_end = seconds(20);
  const CheckerReport report = check_history(history, options);
  ASSERT_EQ(report.read_unavailable.size(), 1u);
  EXPECT_EQ(report.read_unavailable[0].broker_name, "broker-a");
  EXPECT_EQ(report.read_unavailable[0].from, seconds(5));
  EXPECT_EQ(report.read_unavailable[0].to, seconds(9));
  EXPECT_DOUBLE_EQ(report.read_unavailable_s, 4.0);
}

}  // namespace
}  // namespace mqlab::sim::checker_test
