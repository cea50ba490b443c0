// The checker's accounting of what is not loss: acknowledged messages that
// CommitLog retention deleted before a group read them (expired, with the
// rule), and duplicates broken down by cause (redelivered, retried, stored
// twice). Hand-built histories pin each rule; one simulated run with
// aggressive retention checks the world's retention heads end to end.
#include <gtest/gtest.h>

#include <iostream>

#include "broker/common/log.h"
#include "broker/processor/broker_controller.h"
#include "broker/store/message_store.h"
#include "broker/store/message_codec.h"
#include "sim/checker.h"
#include "sim/checker_report.h"
#include "sim/retention_expiry.h"
#include "sim/scenario.h"
#include "sim/sim_world.h"
#include "sim/test/quiet_run.h"
#include "sim/test/receipt_record.h"

namespace mqlab::sim::checker_accounting_test {
namespace {

const store::HostAddress kBrokerHost = store::HostAddress::ipv4(10, 0, 0, 1, 10911);
const std::string kRule = "older than fileReservedTime 0 h, at deleteWhen 00";

uint64_t ok_send_at(History& history, Nanos at, int64_t commit_log_offset, int64_t queue_offset,
                    const std::string& broker = "broker-a") {
  const uint64_t seq = history.begin_send("p0", at, "k", 0);
  history.complete_send(seq, at + millis(1), SendOutcome::kOk, broker, 0, queue_offset,
                        store::create_offset_message_id(kBrokerHost, PhyOffset(commit_log_offset)), 1);
  return seq;
}

ReceiptRecord receipt_of(uint64_t seq, Nanos at, int32_t queue_id, int64_t queue_offset, int32_t reconsume_times = 0,
                         const std::string& consumer = "c0") {
  return receipt(seq, at, queue_offset, "g", queue_id, reconsume_times, consumer);
}

CheckerOptions options_until(Nanos run_end) {
  CheckerOptions options;
  options.consumer_groups = {"g"};
  options.run_end = run_end;
  options.broker_group_of = {{"broker-a-0", "broker-a"}};
  return options;
}

TEST(CheckerAccounting, OffsetMessageIdsNameTheirCommitLogOffset) {
  EXPECT_EQ(commit_log_offset_of(store::create_offset_message_id(kBrokerHost, PhyOffset(123456789))).value_or(-1),
            123456789);
  EXPECT_FALSE(commit_log_offset_of("").has_value());
  EXPECT_FALSE(commit_log_offset_of("not an id").has_value());
}

// Three messages below the head retention left, one above it; one of those
// below was read in time. Without the head (the old accounting) the two
// unread ones are "lost" and unreadable until the run's end.
TEST(CheckerAccounting, MessagesRetentionDeletedUnreadAreExpiredNotLost) {
  History history;
  const uint64_t read_in_time = ok_send_at(history, millis(10), 0, 0);
  ok_send_at(history, millis(20), 1000, 1);  // never read, deleted
  ok_send_at(history, millis(30), 2000, 2);  // never read, deleted
  ok_send_at(history, millis(40), 9000, 3);  // never read, still stored: lost
  history.receive(receipt_of(read_in_time, millis(15), 0, 0));

  CheckerOptions before = options_until(seconds(60));
  const CheckerReport old = check_history(history, before);
  EXPECT_EQ(old.lost, 3);
  EXPECT_EQ(old.expired_by_retention, 0);

  CheckerOptions options = options_until(seconds(60));
  options.retention["broker-a"] = RetentionHead{.deleted_below = 5000, .segments_deleted = 2, .rule = kRule};
  const CheckerReport report = check_history(history, options);
  EXPECT_EQ(report.lost, 1);
  ASSERT_EQ(report.lost_messages.size(), 1u);
  EXPECT_EQ(report.lost_messages[0].seq, 3u);
  EXPECT_EQ(report.expired_by_retention, 2);
  EXPECT_EQ(report.expired_by_group.at("g"), 2);
  EXPECT_EQ(report.expired_by_rule.at(kRule), 2);
  // Only the lost one is unreadable: from its ack + 1 s to the run's end.
  ASSERT_EQ(report.read_unavailable.size(), 1u);
  EXPECT_EQ(report.read_unavailable[0].from, millis(41) + seconds(1));
  EXPECT_LT(report.read_unavailable_s, old.read_unavailable_s);

  EXPECT_EQ(checker_figures_json(report).at("expired_by_retention"), 2);
}

// A message the loss bound says a fault may destroy stays a loss even below
// the head, and another group's head says nothing about broker-a.
TEST(CheckerAccounting, ExpiryNeverHidesAForeseenLossOrAnotherGroupsMessage) {
  History history;
  const uint64_t at_risk = ok_send_at(history, millis(10), 100, 0);
  ok_send_at(history, millis(20), 200, 0, "broker-b");
  CheckerOptions options = options_until(seconds(10));
  options.broker_group_of["broker-b-0"] = "broker-b";
  options.schedule.events = {
      faults::FaultEvent{.kind = faults::FaultKind::kCrashMachine, .at = millis(15), .target = "broker-a-0"}};
  options.loss_at_risk = std::map<uint64_t, int>{{at_risk, 0}};
  options.retention["broker-a"] = RetentionHead{.deleted_below = 5000, .segments_deleted = 1, .rule = kRule};
  const CheckerReport report = check_history(history, options);
  EXPECT_EQ(report.expired_by_retention, 0);
  EXPECT_EQ(report.lost, 2);
  EXPECT_EQ(report.lost_by_fault.at(0), 1);
}

TEST(CheckerAccounting, DuplicatesAreBrokenDownByCause) {
  History history;
  const uint64_t redelivered = ok_send_at(history, 0, 0, 0);
  const uint64_t stored_twice = ok_send_at(history, millis(1), 100, 1);
  const uint64_t retried = ok_send_at(history, millis(2), 200, 2);
  history.receive(receipt_of(redelivered, millis(10), 0, 0));
  history.receive(receipt_of(stored_twice, millis(11), 0, 1));
  history.receive(receipt_of(retried, millis(12), 0, 2));
  // After a restart: offsets 0..2 of queue 0 again, to another consumer instance.
  history.receive(receipt_of(redelivered, seconds(6), 0, 0, 0, "c1"));
  // The producer's retry stored a second copy in queue 3, read there; then that copy again.
  history.receive(receipt_of(stored_twice, seconds(6), 3, 7));
  history.receive(receipt_of(stored_twice, seconds(7), 3, 7));
  // The handler asked RECONSUME_LATER: the retry topic's copy.
  history.receive(receipt_of(retried, seconds(8), 0, 0, 1));

  const CheckerReport report = check_history(history, options_until(seconds(10)));
  EXPECT_EQ(report.duplicates, 4);
  EXPECT_EQ(report.duplicates_by_cause.redelivered, 2);
  EXPECT_EQ(report.duplicates_by_cause.stored_twice, 1);
  EXPECT_EQ(report.duplicates_by_cause.retried, 1);
  EXPECT_EQ(report.stored_twice_by_broker.at("broker-a"), 1);
  EXPECT_EQ(report.messages_stored_twice, 1);
  EXPECT_EQ(report.lost, 0);
  const nlohmann::json causes = checker_figures_json(report).at("duplicates_by_cause");
  EXPECT_EQ(causes.at("redelivered"), 2);
  EXPECT_EQ(causes.at("retried"), 1);
  EXPECT_EQ(causes.at("stored_twice"), 1);
}

// Retention that deletes every closed segment each second (fileReservedTime
// 0 at every hour, small segments) in a real simulated run: the audit group,
// which reads every queue from its start after the safety phase, finds the
// oldest messages gone. With the world's retention heads they are expired
// by the recorded rule; without them they would be the run's "loss".
TEST(CheckerAccounting, ASimulatedRunsRetentionIsExpiryNotLoss) {
  const std::string yaml =
      "name: retention\nduration: 20s\nseeds: 1\n"
      "topology: {preset: single_master, disk: instant}\n"
      "broker:\n  mappedFileSizeCommitLog: 200000\n  maxMessageSize: 4096\n  fileReservedTime: 0\n"
      "  deleteWhen: '00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;15;16;17;18;19;20;21;22;23'\n"
      "  cleanResourceInterval: 1000\n"
      "workload:\n  producers: {count: 1, rate: 200/s, message_size: 1KiB}\n"
      "  consumer_groups: [{name: cg, consumers: 1}]\n";
  Result<Scenario> scenario = parse_scenario(yaml, "retention.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  SimWorld world(*scenario, 1);
  const RunResult result = run_quietly(world);
  ASSERT_TRUE(result.converged) << result.liveness_failure;

  const std::map<std::string, RetentionHead> heads = retention_heads(world);
  ASSERT_EQ(heads.count("broker-a"), 1u);
  const RetentionHead& head = heads.at("broker-a");
  EXPECT_GT(head.deleted_below, 0);
  EXPECT_GT(head.segments_deleted, 0u);
  EXPECT_EQ(head.rule, "older than fileReservedTime 0 h, at deleteWhen 00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;"
                       "15;16;17;18;19;20;21;22;23");

  CheckerOptions options;
  options.consumer_groups = {"cg", kAuditGroup};
  options.run_end = result.virtual_end;
  options.schedule = result.schedule;
  options.broker_group_of = world.broker_group_of();
  const CheckerReport without_heads = check_history(world.history(), options);
  options.retention = heads;
  const CheckerReport report = check_history(world.history(), options);
  EXPECT_GT(without_heads.lost, 0) << "the audit group misses what retention deleted";
  EXPECT_EQ(report.lost, 0);
  EXPECT_EQ(report.expired_by_retention, without_heads.lost);
  EXPECT_EQ(report.expired_by_group.at(kAuditGroup), without_heads.lost);
  EXPECT_LE(report.read_unavailable_s, without_heads.read_unavailable_s);
  std::cout << "retention run: acknowledged " << report.acknowledged << ", lost " << without_heads.lost << " -> "
            << report.lost << ", expired " << report.expired_by_retention << ", unavailable read s "
            << without_heads.read_unavailable_s << " -> " << report.read_unavailable_s << "\n";
}

// A broker restarted after its retention deleted segments counts deletions
// from zero again, but its log still starts where retention left it. Here
// retention may delete only in hour 22 (the simulated epoch starts at
// 22:13:20 UTC); a clock skew moves broker-a-0 into hour 23 and a kill
// restarts it, so it deletes nothing after the restart. Its head at the
// stop keeps the rule: what it deleted is expired, not lost (the 600-minute
// standard run reported 2.9 million such "losses").
TEST(CheckerAccounting, RetentionBeforeARestartIsStillExpiry) {
  const std::string yaml =
      "name: retention-restart\nduration: 20s\nseeds: 1\n"
      "topology: {preset: single_master, disk: instant}\n"
      "broker:\n  mappedFileSizeCommitLog: 200000\n  maxMessageSize: 4096\n  fileReservedTime: 0\n"
      "  deleteWhen: '22'\n  cleanResourceInterval: 1000\n"
      "workload:\n  producers: {count: 1, rate: 200/s, message_size: 1KiB}\n"
      "  consumer_groups: [{name: cg, consumers: 1}]\n"
      "faults:\n"
      "  - {at: 11s, kind: clock_skew, target: broker-a-0, skew: 3000s}\n"
      "  - {at: 12s, kind: kill_process, target: broker-a-0, duration: 1s}\n";
  Result<Scenario> scenario = parse_scenario(yaml, "retention-restart.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  SimWorld world(*scenario, 1);
  const RunResult result = run_quietly(world);
  ASSERT_TRUE(result.converged) << result.liveness_failure;

  broker::BrokerController* broker = world.running_broker("broker-a-0");
  ASSERT_NE(broker, nullptr);
  EXPECT_EQ(broker->message_store().stats().segments_deleted, 0u) << "deleted after the restart";
  const RetentionHead* at_stop = world.retention_head_at_stop("broker-a-0");
  ASSERT_NE(at_stop, nullptr) << "retention deleted nothing before the kill";
  EXPECT_GT(at_stop->segments_deleted, 0u);
  EXPECT_EQ(at_stop->rule, "older than fileReservedTime 0 h, at deleteWhen 22");

  const std::map<std::string, RetentionHead> heads = retention_heads(world);
  ASSERT_EQ(heads.count("broker-a"), 1u);
  EXPECT_EQ(heads.at("broker-a").rule, at_stop->rule);
  EXPECT_EQ(heads.at("broker-a").deleted_below, broker->message_store().min_phy_offset().value());
  EXPECT_EQ(heads.at("broker-a").deleted_below, at_stop->deleted_below) << "a kill keeps the page cache";
  EXPECT_EQ(result.report.lost, 0);
  EXPECT_GT(result.report.expired_by_retention, 0);
}

// The kill/pause scenario's duplicates (1,800 in session 3, 0 on real
// processes) are second stored copies, not redeliveries: sends in flight to
// the paused broker-b fail when the first one's 3 s timeout closes the
// connection, are retried on broker-a within the budget left, and broker-b
// stores the originals too when it resumes. The workload group and the audit
// group each read both copies.
TEST(CheckerAccounting, KillPauseScenariosDuplicatesAreSecondStoredCopies) {
  Result<Scenario> scenario = load_scenario(std::string(MQLAB_SOURCE_DIR) + "/scenarios/real-multi-master-kill-pause.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  SimWorld world(*scenario, 1);
  const RunResult result = run_quietly(world);
  const CheckerReport& report = result.report;
  EXPECT_EQ(report.lost, 0);
  EXPECT_GT(report.duplicates, 0);
  EXPECT_EQ(report.duplicates_by_cause.stored_twice, report.duplicates);
  EXPECT_EQ(report.duplicates_by_cause.redelivered, 0);
  EXPECT_EQ(report.duplicates_by_cause.retried, 0);
  EXPECT_EQ(report.messages_stored_twice * 2, report.duplicates) << "each copy read by cg-real and by the audit group";
}

}  // namespace
}  // namespace mqlab::sim::checker_accounting_test
