// Master -> slave replication end to end on the simulator (HASimWorld: two
// BrokerControllers, a NameServer, a client on one SimNet): catch-up across
// segments byte for byte, the fresh-slave start point, resume after a slave
// restart, the wire rules a master enforces, and the SLAVE role (no sends,
// pulls served, metadata synced from the master).
#include <gtest/gtest.h>

#include "broker/ha/test/ha_sim_world.h"

namespace mqlab::ha::testing::ha_replication_test {
namespace {

using broker::testing::pull;

constexpr const char* kTopic = "TopicTest";

void send_many(HASimWorld& world, int count, size_t first_size = 700) {
  for (int i = 0; i < count; ++i) {
    const RemotingCommand response = world.send(kTopic, first_size + static_cast<size_t>(i % 400));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
}

TEST(HAReplication, SlaveCatchesUpByteIdenticallyAcrossSegments) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  ASSERT_EQ(world.ha_client().state(), HAClientState::kTransfer);
  EXPECT_EQ(world.ha_client().master_address(), kMasterHaAddr);  // learned from the NameServer
  send_many(world, 300);
  ASSERT_TRUE(world.wait_caught_up());
  world.run_until([&] { return world.ha_service().push2slave_max_offset() == world.master_store().max_phy_offset(); });
  EXPECT_GE(world.master_store().commit_log().file_queue().files().size(), 4u);  // BLANKs travelled too
  EXPECT_EQ(world.slave_store().min_phy_offset(), PhyOffset(0));
  EXPECT_TRUE(world.slave_is_prefix_of_master());
  EXPECT_EQ(world.ha_service().push2slave_max_offset(), world.master_store().max_phy_offset());
  EXPECT_EQ(world.ha_service().connection_count(), 1u);
  // The slave's own dispatcher built its ConsumeQueues.
  world.run_until([&] { return world.slave_store().dispatched_phy_offset() == world.slave_store().max_phy_offset(); });
  for (int32_t queue = 0; queue < 4; ++queue) {
    EXPECT_EQ(world.slave_store().max_offset_in_queue(kTopic, queue),
              world.master_store().max_offset_in_queue(kTopic, queue));
  }
}

TEST(HAReplication, FreshSlaveStartsAtTheMastersNewestSegment) {
  // RocketMQ 4.x: a slave reporting 0 gets the newest segment on, never the
  // older ones (apache/rocketmq #3661). We keep that rule, documented.
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  send_many(world, 300);
  const PhyOffset newest(world.master_store().commit_log().file_queue().last_file()->file_from_offset());
  ASSERT_GT(newest, PhyOffset(0));
  ASSERT_TRUE(world.start_slave().ok());
  ASSERT_TRUE(world.wait_caught_up());
  EXPECT_EQ(world.slave_store().min_phy_offset(), newest);
  EXPECT_TRUE(world.slave_is_prefix_of_master());
  // Its ConsumeQueues start late, with the same ends as the master's.
  world.run_until([&] { return world.slave_store().dispatched_phy_offset() == world.slave_store().max_phy_offset(); });
  EXPECT_EQ(world.slave_store().dispatched_phy_offset(), world.slave_store().max_phy_offset());
  EXPECT_EQ(world.slave_store().max_offset_in_queue(kTopic, 0), world.master_store().max_offset_in_queue(kTopic, 0));
  EXPECT_GT(world.slave_store().min_offset_in_queue(kTopic, 0), QueueOffset(0));
}

TEST(HAReplication, RestartedSlaveResumesFromItsRecoveredOffset) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  send_many(world, 100);
  ASSERT_TRUE(world.wait_caught_up());
  world.crash_slave();  // kill -9: its page cache survives
  send_many(world, 100, 900);
  ASSERT_TRUE(world.start_slave().ok());
  const PhyOffset recovered = world.slave_store().max_phy_offset();
  EXPECT_GT(recovered, PhyOffset(0));
  EXPECT_LT(recovered, world.master_store().max_phy_offset());
  ASSERT_TRUE(world.wait_caught_up());
  EXPECT_TRUE(world.slave_is_prefix_of_master());
  // It asked from the start of its last record and found it identical.
  EXPECT_GT(world.ha_client().stats().bytes_verified, 0u);
  EXPECT_EQ(world.ha_client().stats().refusals, 0u);
  EXPECT_EQ(world.slave_store().min_phy_offset(), PhyOffset(0));
}

// A restarted slave (kill -9, or a power cut that takes its unflushed tail)
// fetches only what its recovered log lacks, plus the one record it checks:
// measured by the bytes the master streams and the slave appends.
TEST(HAReplication, RestartedSlaveTransfersOnlyWhatItsRecoveredLogLacks) {
  for (const bool power_loss : {false, true}) {
    SCOPED_TRACE(power_loss ? "power loss" : "kill -9");
    HASimWorld world;
    ASSERT_TRUE(world.start_master().ok());
    ASSERT_TRUE(world.start_slave().ok());
    world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
    send_many(world, 150);  // several 72 KiB segments
    ASSERT_TRUE(world.wait_caught_up());
    world.run_for(seconds(2));  // the slave's flush makes them durable ...
    send_many(world, 20);       // ... but not these: a power cut takes them
    ASSERT_TRUE(world.wait_caught_up());
    const PhyOffset held = world.slave_store().max_phy_offset();
    if (power_loss) {
      world.power_loss_slave();
    } else {
      world.crash_slave();
    }
    send_many(world, 100, 900);
    const uint64_t streamed_before = world.ha_service().stats().bytes_sent;
    ASSERT_TRUE(world.start_slave().ok());
    const PhyOffset recovered = world.slave_store().max_phy_offset();
    EXPECT_GT(recovered, PhyOffset(0));
    if (!power_loss) {
      EXPECT_EQ(recovered, held);
    }
    if (power_loss) {
      EXPECT_LT(recovered, held);
    }
    ASSERT_TRUE(world.wait_caught_up());
    world.run_for(millis(100));
    const HAClientStats& slave = world.ha_client().stats();
    const int64_t lacked = world.master_store().max_phy_offset() - recovered;
    const uint64_t streamed = world.ha_service().stats().bytes_sent - streamed_before;
    EXPECT_EQ(slave.bytes_appended, static_cast<uint64_t>(lacked));
    EXPECT_EQ(streamed, static_cast<uint64_t>(lacked) + slave.bytes_verified);
    // The one record re-sent is the slave's last (send_many's bodies are at
    // most 1299 bytes, records about 200 more).
    EXPECT_GT(slave.bytes_verified, 0u);
    EXPECT_LT(slave.bytes_verified, 1600u);
    // It found that record from its ConsumeQueues, reading its own log from
    // there, not from its newest segment's start.
    EXPECT_EQ(slave.bytes_scanned_to_resume, slave.bytes_verified);
    EXPECT_EQ(slave.refusals, 0u);
    EXPECT_EQ(world.slave_store().min_phy_offset(), PhyOffset(0));  // never restarted as a fresh slave
    EXPECT_TRUE(world.slave_is_prefix_of_master());
  }
}

TEST(HAReplication, MasterStreamsFromTheNewestSegmentAndClosesOnAnAckBeyondItsMax) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  send_many(world, 200);
  const PhyOffset max = world.master_store().max_phy_offset();
  const PhyOffset newest(world.master_store().commit_log().file_queue().last_file()->file_from_offset());
  std::shared_ptr<env::Connection> connection;
  world.client_env().network().connect(kMasterHaAddr, seconds(3), [&](Result<std::shared_ptr<env::Connection>> c) {
    ASSERT_TRUE(c.ok());
    connection = *c;
  });
  world.run_until([&] { return connection != nullptr; });
  ASSERT_TRUE(connection);
  TransferFrameDecoder decoder(1 << 20);
  std::vector<TransferFrame> frames;
  std::optional<Status> closed;
  connection->set_handlers(
      [&](std::span<const uint8_t> bytes) {
        decoder.feed(bytes);
        while (true) {
          auto frame = decoder.next();
          ASSERT_TRUE(frame.ok());
          if (!frame->has_value()) break;
          frames.push_back(std::move(**frame));
        }
      },
      [&](Status reason) { closed = reason; });
  auto report = [&](PhyOffset offset) {
    const auto bytes = encode_offset_report(offset);
    connection->send(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  };
  report(PhyOffset(0));
  world.run_for(millis(200));
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.front().offset, newest);
  // Without acks the master stops after its in-flight window.
  int64_t streamed = 0;
  for (const TransferFrame& frame : frames) streamed += static_cast<int64_t>(frame.body.size());
  EXPECT_LE(streamed, 4 * 32 * 1024);
  EXPECT_EQ(streamed, std::min<int64_t>(max - newest, 4 * 32 * 1024));
  for (const TransferFrame& frame : frames) EXPECT_LE(frame.body.size(), 32u * 1024);
  report(max + 1);
  world.run_for(millis(200));
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(world.ha_service().stats().acks_beyond_max, 1u);
  EXPECT_EQ(world.ha_service().connection_count(), 0u);
}

TEST(HAReplication, MasterClosesOnGarbageReports) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  std::shared_ptr<env::Connection> connection;
  world.client_env().network().connect(kMasterHaAddr, seconds(3), [&](Result<std::shared_ptr<env::Connection>> c) {
    ASSERT_TRUE(c.ok());
    connection = *c;
  });
  world.run_until([&] { return connection != nullptr; });
  ASSERT_TRUE(connection);
  std::optional<Status> closed;
  connection->set_handlers([](std::span<const uint8_t>) {}, [&](Status reason) { closed = reason; });
  connection->send(std::vector<uint8_t>(8, 0xFF));  // -1
  world.run_for(millis(200));
  EXPECT_TRUE(closed.has_value());
  EXPECT_EQ(world.ha_service().connection_count(), 0u);
  EXPECT_TRUE(world.master().running());
}

TEST(HAReplication, MasterDropsASlaveThatStopsReporting) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  ASSERT_EQ(world.ha_service().connection_count(), 1u);
  const sim::OwnerId slave_owner = world.slave_process().env().owner();
  world.scheduler().pause_owner(slave_owner);  // SIGSTOP: its socket stays open, it says nothing
  world.run_for(seconds(25));
  EXPECT_EQ(world.ha_service().connection_count(), 0u);  // haHousekeepingInterval = 20 s
  world.scheduler().resume_owner(slave_owner);
  world.run_until([&] { return world.ha_service().connection_count() == 1u; }, seconds(30));
  EXPECT_EQ(world.ha_service().connection_count(), 1u);  // it noticed and reconnected
}

// A fake master on the client's machine: the slave is pointed at it with
// haMasterAddress and fed garbage, then a frame for the wrong offset.
TEST(HAReplication, SlaveDropsAndReconnectsOnGarbageAndOffsetMismatch) {
  HASimWorld world;
  world.slave_config().namesrvAddr = "";
  world.slave_store_config().haMasterAddress = "10.0.0.9:10912";
  std::vector<std::shared_ptr<env::Connection>> accepted;
  std::vector<PhyOffset> reports;
  OffsetReportDecoder decoder;
  Result<std::shared_ptr<env::Listener>> listener =
      world.client_env().network().listen("10.0.0.9:10912", [&](std::shared_ptr<env::Connection> connection) {
        connection->set_handlers(
            [&](std::span<const uint8_t> bytes) {
              auto report = decoder.feed(bytes);
              ASSERT_TRUE(report.ok());
              if (report->has_value()) reports.push_back(**report);
            },
            [](Status) {});
        accepted.push_back(std::move(connection));
      });
  ASSERT_TRUE(listener.ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return !reports.empty(); }, seconds(5));
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(reports.front(), PhyOffset(0));  // an empty store asks from 0, at once
  accepted.back()->send({0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});  // bodySize -1
  world.run_for(millis(100));
  EXPECT_EQ(world.ha_client().stats().disconnects, 1u);
  EXPECT_NE(world.ha_client().state(), HAClientState::kTransfer);
  world.run_until([&] { return accepted.size() == 2u; }, seconds(10));  // retried 5 s later
  ASSERT_EQ(accepted.size(), 2u);
  world.run_for(millis(100));
  // Real bytes from a real master, then a frame that does not follow on.
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_EQ(world.send(kTopic, 100).code, ResponseCode::SUCCESS);
  const PhyOffset end = world.master_store().max_phy_offset();
  const auto record = HASimWorld::log_bytes(world.master_store(), PhyOffset(0), end);
  auto frame = [&](PhyOffset offset, const std::vector<uint8_t>& body) {
    const auto header = encode_transfer_header(offset, static_cast<int32_t>(body.size()));
    std::vector<uint8_t> bytes(header.begin(), header.end());
    bytes.insert(bytes.end(), body.begin(), body.end());
    accepted.back()->send(std::move(bytes));
    world.run_for(millis(100));
  };
  frame(PhyOffset(0), record);
  EXPECT_EQ(world.slave_store().max_phy_offset(), end);
  EXPECT_EQ(reports.back(), end);  // acknowledged
  frame(end + 100, {});
  EXPECT_EQ(world.ha_client().stats().offset_mismatches, 1u);
  EXPECT_EQ(world.ha_client().stats().disconnects, 2u);
  EXPECT_EQ(world.slave_store().max_phy_offset(), end);
  world.run_until([&] { return accepted.size() == 3u; }, seconds(10));
  EXPECT_EQ(accepted.size(), 3u);
  world.run_for(millis(100));
  EXPECT_EQ(reports.back(), PhyOffset(0));  // resumes from the start of its last record to check it
  EXPECT_TRUE(world.slave().running());
}

TEST(HAReplication, SlaveRefusesSendsAndServesPulls) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  send_many(world, 20);
  ASSERT_TRUE(world.wait_caught_up());
  // Sends: SERVICE_NOT_AVAILABLE (the client retries elsewhere).
  const RemotingCommand refused = world.must_call(broker::testing::send_v2(kTopic, "x"), kSlaveAddr);
  EXPECT_NE(refused.code, ResponseCode::SUCCESS);
  // Pulls, once the slave synced the topic from its master (3 s after start).
  world.run_for(seconds(4));
  const RemotingCommand pulled = world.must_call(pull("G", kTopic, 0, 0), kSlaveAddr);
  ASSERT_EQ(pulled.code, ResponseCode::SUCCESS) << pulled.remark;
  const auto messages = broker::testing::decode_records(pulled.body);
  EXPECT_EQ(messages.size(), static_cast<size_t>(world.master_store().max_offset_in_queue(kTopic, 0).value()));
  EXPECT_EQ(*pulled.find_ext("suggestWhichBrokerId"), "0");  // slaveReadEnable=false: back to the master
}

TEST(HAReplication, SlaveSyncsMetadataFromItsMaster) {
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  send_many(world, 5);
  ASSERT_TRUE(world.master().subscription_group_manager().find_or_create("G1").ok());
  ASSERT_TRUE(world.master().consumer_offset_manager().commit_offset("G1", kTopic, 0, 3).ok());
  // A value the slave had on its own is overwritten by the master's.
  ASSERT_TRUE(world.slave().consumer_offset_manager().commit_offset("G1", kTopic, 0, 1).ok());
  world.run_for(seconds(4));  // the first sync runs 3 s after start
  EXPECT_NE(world.slave().topic_config_manager().find(kTopic), nullptr);
  EXPECT_NE(world.slave().subscription_group_manager().find("G1"), nullptr);
  EXPECT_EQ(world.slave().consumer_offset_manager().query_offset("G1", kTopic, 0), std::optional<int64_t>(3));
  // Later changes arrive with the next round, 10 s on.
  ASSERT_TRUE(world.master().consumer_offset_manager().commit_offset("G1", kTopic, 0, 4).ok());
  world.run_for(seconds(10));
  EXPECT_EQ(world.slave().consumer_offset_manager().query_offset("G1", kTopic, 0), std::optional<int64_t>(4));
  EXPECT_GE(world.slave().slave_synchronize()->stats().rounds, 2u);
  EXPECT_EQ(world.slave().slave_synchronize()->stats().failures, 0u);
}

}  // namespace
}  // namespace mqlab::ha::testing::ha_replication_test
