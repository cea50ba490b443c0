// The loss bound's rules on hand-built histories and fault-instant states
// (sim/loss_bound.h): what each fault may destroy under each configuration,
// the queue offsets reused after a truncation, and how the checker uses the
// bound (attribution, lost messages the bound did not foresee).
#include "sim/loss_bound.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "broker/store/message_codec.h"
#include "sim/checker.h"
#include "sim/test/receipt_record.h"

namespace mqlab::sim::loss_bound_test {
namespace {

constexpr int64_t kRecordBytes = 300;

// A message of group sent at `at`, stored as record `record` of its log at
// queue 0 offset `record`, acknowledged 0.5 ms later.
uint64_t acked_record(History& history, Nanos at, int record, const std::string& group = "broker-a") {
  const uint64_t seq = history.begin_send("p0", at, "", 0);
  const std::string id = store::create_offset_message_id(store::HostAddress::ipv4(10, 0, 1, 1, 10911),
                                                         PhyOffset(record * kRecordBytes));
  history.complete_send(seq, at + 500 * kNanosPerMicro, SendOutcome::kOk, group, 0, record, id, 1);
  return seq;
}

// Message i of broker-a: record i of its log, queue 0 offset i, acknowledged at 10 ms + i ms.
uint64_t acked(History& history, int i, const std::string& group = "broker-a") {
  return acked_record(history, millis(10 + i), i, group);
}

// process became ready to serve at `at` (SimWorld::record_ready).
void broker_up(History& history, Nanos at, const std::string& process) {
  history.record(WorldEvent{at, "broker_up", "broker-a", process, -1});
}

void received(History& history, uint64_t seq, Nanos at, int64_t queue_offset) {
  history.receive(receipt(seq, at, queue_offset, "cg"));
}

BrokerStoreState broker(const std::string& machine, int broker_id, int64_t max, int64_t flushed) {
  BrokerStoreState state;
  state.machine = machine;
  state.broker_group = "broker-a";
  state.broker_id = broker_id;
  state.running = true;
  state.max_phy_offset = max;
  state.flushed_phy_offset = flushed;
  return state;
}

Scenario scenario(store::FlushDiskType flush, store::BrokerRole role, bool raid10 = false) {
  Scenario s;
  s.broker.store.flushDiskType = flush;
  s.broker.store.brokerRole = role;
  s.topology.raid10 = raid10;
  return s;
}

faults::FaultEvent fault(faults::FaultKind kind, Nanos at, const std::string& target) {
  faults::FaultEvent e;
  e.kind = kind;
  e.at = at;
  e.target = target;
  return e;
}

TEST(LossBound, AsyncFlushPowerLossMayLoseWhatWasPastTheFlushedOffset) {
  History history;
  for (int i = 0; i < 100; ++i) acked(history, i);
  faults::FaultSchedule schedule{{fault(faults::FaultKind::kCrashMachine, millis(200), "broker-a-0")}};
  // 100 records written, 60 flushed.
  const FaultInstant instant{0, millis(200), {broker("broker-a-0", 0, 100 * kRecordBytes, 60 * kRecordBytes)}};
  const LossBound async = compute_loss_bound(scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER),
                                             schedule, {instant}, history);
  EXPECT_EQ(async.messages, 40);
  EXPECT_EQ(async.faults.at(0).destroyed, 40);
  EXPECT_EQ(async.at_risk.count(60), 1u);
  EXPECT_EQ(async.at_risk.count(59), 0u);
  // The same fault under SYNC_FLUSH: nothing, whatever the offsets say.
  const LossBound sync = compute_loss_bound(scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::ASYNC_MASTER),
                                            schedule, {instant}, history);
  EXPECT_EQ(sync.messages, 0);
  EXPECT_NE(sync.reason.find("SYNC_FLUSH"), std::string::npos) << sync.reason;
}

TEST(LossBound, KillProcessAndSlowDiskLoseNothingUnderAnyConfiguration) {
  History history;
  for (int i = 0; i < 10; ++i) acked(history, i);
  faults::FaultSchedule schedule{{fault(faults::FaultKind::kKillProcess, millis(100), "broker-a-0"),
                                  fault(faults::FaultKind::kSlowDisk, millis(150), "broker-a-0")}};
  const std::vector<FaultInstant> instants = {{0, millis(100), {broker("broker-a-0", 0, 3000, 0)}},
                                              {1, millis(150), {broker("broker-a-0", 0, 3000, 0)}}};
  const LossBound bound = compute_loss_bound(
      scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER), schedule, instants, history);
  EXPECT_EQ(bound.messages, 0);
  ASSERT_EQ(bound.faults.size(), 2u);
  EXPECT_NE(bound.faults[0].reason.find("page cache"), std::string::npos);
}

// transientStorePoolEnable: the master acknowledges from its CommitLog's
// write buffer, so its kill -9 takes what was past the committed offset
// (max_phy_offset); a slave's kill, or the pool ignored (SYNC_FLUSH), nothing.
TEST(LossBound, TransientStorePoolKillMayLoseWhatWasPastTheCommittedOffset) {
  History history;
  broker_up(history, 0, "broker-a-0");
  for (int i = 0; i < 20; ++i) acked(history, i);
  const faults::FaultSchedule schedule{{fault(faults::FaultKind::kKillProcess, millis(100), "broker-a-0")}};
  // Records 0..11 committed (3600 bytes), 0..4 flushed.
  const std::vector<FaultInstant> instants = {{0, millis(100), {broker("broker-a-0", 0, 12 * kRecordBytes, 5 * kRecordBytes)}}};
  Scenario pool = scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER);
  pool.broker.store.transientStorePoolEnable = true;
  const LossBound bound = compute_loss_bound(pool, schedule, instants, history);
  EXPECT_EQ(bound.messages, 8);  // records 12..19, acknowledged by 30 ms
  ASSERT_EQ(bound.faults.size(), 1u);
  EXPECT_EQ(bound.faults[0].destroyed, 8);
  EXPECT_NE(bound.faults[0].reason.find("write buffer"), std::string::npos) << bound.faults[0].reason;

  const std::vector<FaultInstant> slave_killed = {
      {0, millis(100), {broker("broker-a-0", 1, 12 * kRecordBytes, 5 * kRecordBytes)}}};
  EXPECT_EQ(compute_loss_bound(pool, schedule, slave_killed, history).messages, 0);
  Scenario ignored = pool;
  ignored.broker.store.flushDiskType = store::FlushDiskType::SYNC_FLUSH;
  EXPECT_EQ(compute_loss_bound(ignored, schedule, instants, history).messages, 0);
}

// A kill takes only the killed process's buffer: what it acknowledged since
// it became ready. The first kill takes records 12..19; the restarted
// master's log ends at record 12 and reuses offsets 12.. for new messages.
// At the second kill it has committed record 12 of its own: its buffer holds
// its record 13 alone, not the first incarnation's 13..19, which lie past
// its committed offset too but died with the first process (counting them
// again is what made a promoted slave's kill, with no traffic since its
// promotion, look as if it had lost its predecessor's tail).
TEST(LossBound, TransientStorePoolKillCountsOnlyWhatTheKilledProcessAcknowledged) {
  History history;
  broker_up(history, 0, "broker-a-0");
  for (int i = 0; i < 20; ++i) acked(history, i);
  broker_up(history, millis(200), "broker-a-0");
  const uint64_t committed_again = acked_record(history, millis(210), 12);
  const uint64_t buffered = acked_record(history, millis(211), 13);
  const faults::FaultSchedule schedule{{fault(faults::FaultKind::kKillProcess, millis(100), "broker-a-0"),
                                        fault(faults::FaultKind::kKillProcess, millis(300), "broker-a-0")}};
  const std::vector<FaultInstant> instants = {
      {0, millis(100), {broker("broker-a-0", 0, 12 * kRecordBytes, 5 * kRecordBytes)}},
      {1, millis(300), {broker("broker-a-0", 0, 13 * kRecordBytes, 5 * kRecordBytes)}}};
  Scenario pool = scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER);
  pool.broker.store.transientStorePoolEnable = true;
  const LossBound bound = compute_loss_bound(pool, schedule, instants, history);
  ASSERT_EQ(bound.faults.size(), 2u);
  EXPECT_EQ(bound.faults[0].destroyed, 8);  // records 12..19 of the first incarnation
  EXPECT_EQ(bound.faults[1].destroyed, 1) << bound.faults[1].reason;
  EXPECT_EQ(bound.at_risk.count(buffered), 1u);
  EXPECT_EQ(bound.at_risk.at(buffered), 1);
  EXPECT_EQ(bound.at_risk.count(committed_again), 0u);
  EXPECT_EQ(bound.messages, 9);
}

TEST(LossBound, AsyncMasterLossWithPromotionMayLoseWhatTheSlaveLacked) {
  History history;
  for (int i = 0; i < 50; ++i) acked(history, i);
  faults::FaultSchedule schedule{{fault(faults::FaultKind::kDestroyMachine, millis(100), "broker-a-0"),
                                  fault(faults::FaultKind::kPromoteSlave, millis(300), "broker-a")}};
  BrokerStoreState slave = broker("broker-a-1", 1, 45 * kRecordBytes + 100, 0);
  slave.replica_complete_end = 45 * kRecordBytes;  // a partial 46th record
  slave.confirmed_offset = 45 * kRecordBytes + 100;
  const FaultInstant at_destroy{0, millis(100), {broker("broker-a-0", 0, 50 * kRecordBytes, 0), slave}};
  const LossBound bound = compute_loss_bound(
      scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::ASYNC_MASTER), schedule, {at_destroy}, history);
  EXPECT_EQ(bound.messages, 5);  // records 45..49: the partial one is lost too
  const FaultLossBound& f = bound.faults.at(0);
  EXPECT_EQ(f.master_max_offset, 50 * kRecordBytes);
  EXPECT_EQ(f.slave_confirmed_offset, 45 * kRecordBytes + 100);
  EXPECT_EQ(f.lag_bytes, 5 * kRecordBytes);
  EXPECT_EQ(f.lag_messages, 5);
  EXPECT_DOUBLE_EQ(f.lag_ms, 100.0 - (10 + 45 + 0.5));  // the oldest unreplicated ack
  // SYNC_MASTER promises nothing is lost.
  const LossBound sync = compute_loss_bound(
      scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::SYNC_MASTER), schedule, {at_destroy}, history);
  EXPECT_EQ(sync.messages, 0);
}

// A master lost for good, no promotion: the slave serves the reads anyway
// (the client moves to it), so the bound is the replication lag, as with a
// promotion. A replaced plain disk is rebuilt from the slave: the same. A
// RAID10 volume that lost a mirror brings the master back without the data
// as brokerId 0: consumers follow it and the slave's copy is not read, so
// all of it unless a promotion came first.
TEST(LossBound, MasterLostForGoodWithoutPromotionIsReadFromItsSlave) {
  History history;
  for (int i = 0; i < 50; ++i) acked(history, i);
  const faults::FaultSchedule destroyed{{fault(faults::FaultKind::kDestroyMachine, millis(100), "broker-a-0")}};
  BrokerStoreState slave = broker("broker-a-1", 1, 45 * kRecordBytes, 0);
  slave.replica_complete_end = 45 * kRecordBytes;
  const FaultInstant at_fault{0, millis(100), {broker("broker-a-0", 0, 50 * kRecordBytes, 0), slave}};
  const Scenario sync = scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::SYNC_MASTER);
  const Scenario async = scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER);
  EXPECT_EQ(compute_loss_bound(sync, destroyed, {at_fault}, history).messages, 0);
  const LossBound lag = compute_loss_bound(async, destroyed, {at_fault}, history);
  EXPECT_EQ(lag.messages, 5);
  EXPECT_EQ(lag.faults.at(0).lag_messages, 5);

  const faults::FaultSchedule disk{{fault(faults::FaultKind::kFailDisk, millis(100), "broker-a-0")}};
  EXPECT_EQ(compute_loss_bound(sync, disk, {at_fault}, history).messages, 0);
  EXPECT_EQ(compute_loss_bound(async, disk, {at_fault}, history).messages, 5);
  faults::FaultEvent mirror = disk.events[0];
  mirror.disk_index = 0;
  BrokerStoreState raid_master = broker("broker-a-0", 0, 50 * kRecordBytes, 0);
  raid_master.raid_member_healthy[1] = false;  // member 0's partner is already gone
  const FaultInstant raid_fault{0, millis(100), {raid_master, slave}};
  const Scenario sync_raid = scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::SYNC_MASTER, true);
  EXPECT_EQ(compute_loss_bound(sync_raid, {{mirror}}, {raid_fault}, history).messages, 50);
  const faults::FaultSchedule mirror_then_promote{
      {mirror, fault(faults::FaultKind::kPromoteSlave, millis(300), "broker-a")}};
  EXPECT_EQ(compute_loss_bound(sync_raid, mirror_then_promote, {raid_fault}, history).messages, 0);

  // No slave holds a copy: everything.
  const FaultInstant alone{0, millis(100), {broker("broker-a-0", 0, 50 * kRecordBytes, 0)}};
  EXPECT_EQ(compute_loss_bound(sync, destroyed, {alone}, history).messages, 50);
}

TEST(LossBound, Raid10LosesNothingWhileTheMirrorPartnerIsHealthy) {
  History history;
  for (int i = 0; i < 20; ++i) acked(history, i);
  faults::FaultEvent fail = fault(faults::FaultKind::kFailDisk, millis(100), "broker-a-0");
  fail.disk_index = 2;
  BrokerStoreState master = broker("broker-a-0", 0, 20 * kRecordBytes, 20 * kRecordBytes);
  const Scenario raid = scenario(store::FlushDiskType::SYNC_FLUSH, store::BrokerRole::ASYNC_MASTER, true);
  EXPECT_EQ(compute_loss_bound(raid, {{fail}}, {{0, millis(100), {master}}}, history).messages, 0);
  master.raid_member_healthy[3] = false;  // the partner of member 2 is already gone
  EXPECT_EQ(compute_loss_bound(raid, {{fail}}, {{0, millis(100), {master}}}, history).messages, 20);
}

TEST(LossBound, MessagesAcknowledgedLaterAtQueueOffsetsAConsumerPassedAreAtRisk) {
  History history;
  for (int i = 0; i < 10; ++i) received(history, acked(history, i), millis(30), i);  // read up to offset 9
  // After the power loss the queue restarts at offset 6: new messages reuse
  // offsets 6..9, which the consumer (at 10) skips.
  for (int i = 6; i < 12; ++i) {
    const uint64_t seq = history.begin_send("p0", millis(500 + i), "", 0);
    history.complete_send(seq, millis(501 + i), SendOutcome::kOk, "broker-a", 0, i,
                          store::create_offset_message_id(store::HostAddress::ipv4(10, 0, 1, 1, 10911),
                                                          PhyOffset(i * kRecordBytes)),
                          1);
  }
  faults::FaultSchedule schedule{{fault(faults::FaultKind::kCrashMachine, millis(100), "broker-a-0")}};
  const FaultInstant instant{0, millis(100), {broker("broker-a-0", 0, 10 * kRecordBytes, 6 * kRecordBytes)}};
  const LossBound bound = compute_loss_bound(
      scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER), schedule, {instant}, history);
  EXPECT_EQ(bound.faults.at(0).destroyed, 4);  // records 6..9
  EXPECT_EQ(bound.faults.at(0).skipped, 4);    // new messages at offsets 6..9
  EXPECT_EQ(bound.messages, 8);
}

// Two power cuts, the consumer reading on between them: each cut's reused
// offsets are judged against everything received before it, the second's
// against receipts from before the first too (queue 1 is read only then).
// The receipts are read once, on from cut to cut; receipts recorded out of
// time order, or instants given out of time order, take the walk from the
// start, and all must give the same figures.
History two_cuts_history(bool receipts_out_of_order) {
  History history;
  std::vector<uint64_t> first;
  for (int i = 0; i < 10; ++i) first.push_back(acked(history, i));
  // Queue 1, offsets 0..5, in records between queue 0's (below both cuts'
  // flushed offsets: neither cut destroys them).
  std::vector<uint64_t> queue1;
  const auto offset_id = [](int64_t phy_offset) {
    return store::create_offset_message_id(store::HostAddress::ipv4(10, 0, 1, 1, 10911), PhyOffset(phy_offset));
  };
  for (int i = 0; i < 6; ++i) {
    const uint64_t seq = history.begin_send("p0", millis(20 + i), "", 0);
    history.complete_send(seq, millis(21 + i), SendOutcome::kOk, "broker-a", 1, i, offset_id(i * kRecordBytes + 100),
                          1);
    queue1.push_back(seq);
  }
  // After the first cut queue 0 restarts at 6 (offsets 6..9 reused), then
  // goes on to 13; the consumer, at 10 after the first reads, reads 10..13.
  std::map<int, uint64_t> second;
  for (int i = 6; i < 14; ++i) second[i] = acked_record(history, millis(500 + i), i);
  const auto read_first = [&] {
    for (int i = 0; i < 10; ++i) received(history, first[static_cast<size_t>(i)], millis(30), i);
    for (int i = 0; i < 6; ++i) {
      history.receive(receipt(queue1[static_cast<size_t>(i)], millis(31), i, "cg", /*queue_id=*/1));
    }
  };
  const auto read_second = [&] {
    for (int i = 10; i < 14; ++i) received(history, second[i], millis(700), i);
  };
  if (receipts_out_of_order) {
    read_second();
    read_first();
  } else {
    read_first();
    read_second();
  }
  // After the second cut queue 0 restarts at 12: offsets 12 and 13 reused;
  // and queue 1 (restarted at 3, say) reuses offset 3.
  for (int i = 12; i < 14; ++i) acked_record(history, millis(1'100 + i), i);
  const uint64_t reused = history.begin_send("p0", millis(1'120), "", 0);
  history.complete_send(reused, millis(1'121), SendOutcome::kOk, "broker-a", 1, 3, offset_id(14 * kRecordBytes), 1);
  return history;
}

TEST(LossBound, EachCutJudgesReusedOffsetsByWhatWasReceivedBeforeIt) {
  const faults::FaultSchedule schedule{{fault(faults::FaultKind::kCrashMachine, millis(100), "broker-a-0"),
                                        fault(faults::FaultKind::kCrashMachine, millis(1'000), "broker-a-0")}};
  const FaultInstant first_cut{0, millis(100), {broker("broker-a-0", 0, 10 * kRecordBytes, 6 * kRecordBytes)}};
  const FaultInstant second_cut{1, millis(1'000), {broker("broker-a-0", 0, 14 * kRecordBytes, 12 * kRecordBytes)}};
  const Scenario async_master = scenario(store::FlushDiskType::ASYNC_FLUSH, store::BrokerRole::ASYNC_MASTER);
  for (const bool out_of_order : {false, true}) {
    const History history = two_cuts_history(out_of_order);
    for (const bool reversed : {false, true}) {
      const std::vector<FaultInstant> instants = reversed ? std::vector<FaultInstant>{second_cut, first_cut}
                                                          : std::vector<FaultInstant>{first_cut, second_cut};
      const LossBound bound = compute_loss_bound(async_master, schedule, instants, history);
      ASSERT_EQ(bound.faults.size(), 2u);
      for (const FaultLossBound& f : bound.faults) {
        SCOPED_TRACE(testing::Message() << "fault " << f.fault_index << (out_of_order ? ", receipts out of order" : "")
                                        << (reversed ? ", instants reversed" : ""));
        if (f.fault_index == 0) {
          EXPECT_EQ(f.destroyed, 4);  // records 6..9 of the first messages
          EXPECT_EQ(f.skipped, 5);    // queue 0's offsets 6..9 (the consumer at 10), queue 1's 3 (at 6)
        } else {
          EXPECT_EQ(f.destroyed, 2);  // records 12 and 13
          EXPECT_EQ(f.skipped, 3);    // queue 0's 12 and 13 (read at 700 ms), queue 1's 3 (read before the first cut)
        }
      }
      EXPECT_EQ(bound.messages, 13);
    }
  }
}

TEST(LossBound, CheckerAttributesByTheBoundAndCountsWhatItDidNotForesee) {
  History history;
  const uint64_t foreseen = acked(history, 0);
  const uint64_t surprise = acked(history, 1);
  CheckerOptions options;
  options.consumer_groups = {"cg"};
  options.run_end = seconds(1);
  options.schedule = {{fault(faults::FaultKind::kKillProcess, millis(20), "broker-a-1"),
                       fault(faults::FaultKind::kDestroyMachine, millis(50), "broker-a-0")}};
  options.broker_group_of = {{"broker-a-0", "broker-a"}, {"broker-a-1", "broker-a"}};
  options.loss_at_risk = std::map<uint64_t, int>{{foreseen, 1}};
  const CheckerReport report = check_history(history, options);
  EXPECT_EQ(report.lost, 2);
  EXPECT_EQ(report.lost_outside_bound, 1);
  ASSERT_EQ(report.lost_messages.size(), 2u);
  EXPECT_EQ(report.lost_messages[0].seq, foreseen);
  EXPECT_EQ(report.lost_messages[0].fault_index, 1);  // the bound's fault, not the kill that followed the ack
  EXPECT_TRUE(report.lost_messages[0].within_bound);
  EXPECT_EQ(report.lost_messages[1].seq, surprise);
  EXPECT_FALSE(report.lost_messages[1].within_bound);
}

}  // namespace
}  // namespace mqlab::sim::loss_bound_test
