// SYNC_MASTER's answers on the simulator: PUT_OK only once the slave has the
// message, FLUSH_SLAVE_TIMEOUT after slaveTimeout when the slave is cut off,
// SLAVE_NOT_AVAILABLE at once without a slave (or with one too far behind),
// and RocketMQ's combination with SYNC_FLUSH. Every one of them stores the message.
#include <gtest/gtest.h>

#include "broker/ha/test/ha_sim_world.h"

namespace mqlab::ha::testing::ha_sync_master_test {
namespace {

constexpr const char* kTopic = "TopicTest";

void connect_slave(HASimWorld& world) {
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until(
      [&] { return world.ha_service().connection_count() == 1u && world.ha_client().stats().reports_sent > 0; },
      seconds(5));
  world.run_for(millis(50));  // the first report reaches the master
  ASSERT_EQ(world.ha_client().state(), HAClientState::kTransfer);
}

TEST(SyncMaster, PutOkOnlyAfterTheSlaveHasTheMessage) {
  HASimWorld world(store::BrokerRole::SYNC_MASTER);
  connect_slave(world);
  for (int i = 0; i < 20; ++i) {
    const PhyOffset before = world.master_store().max_phy_offset();
    PendingCall reply = world.call_async(broker::testing::send_v2(kTopic, std::string(500, 's')));
    // Run until the answer; at that moment the slave must hold the record.
    world.run_until([&] { return reply->has_value(); });
    ASSERT_TRUE(reply->has_value() && (*reply)->ok());
    EXPECT_EQ((**reply)->code, ResponseCode::SUCCESS);
    const PhyOffset end = world.master_store().max_phy_offset();
    EXPECT_GT(end, before);
    EXPECT_GE(world.slave_store().max_phy_offset(), end);
    EXPECT_GE(world.ha_service().push2slave_max_offset(), end);
  }
  EXPECT_EQ(world.master_store().stats().puts_ok, 20u);
  EXPECT_EQ(world.ha_service().group_transfer().timeouts(), 0u);
}

TEST(SyncMaster, FlushSlaveTimeoutWhenTheSlaveIsPartitioned) {
  HASimWorld world(store::BrokerRole::SYNC_MASTER);
  connect_slave(world);
  world.net().partition({kMasterHost}, {kSlaveHost});
  const Nanos sent_at = world.now();
  const RemotingCommand response = world.send(kTopic, 300);
  EXPECT_EQ(response.code, ResponseCode::FLUSH_SLAVE_TIMEOUT);
  EXPECT_GE(world.now() - sent_at, millis(3000));  // slaveTimeout
  EXPECT_LT(world.now() - sent_at, millis(3500));
  EXPECT_NE(response.find_ext("msgId"), nullptr);  // stored: the client gets its id
  EXPECT_EQ(world.master_store().stats().slave_timeouts, 1u);
  // Healed within the connection's life, the slave catches up by itself.
  world.net().heal({kMasterHost}, {kSlaveHost});
  EXPECT_TRUE(world.wait_caught_up());
  EXPECT_TRUE(world.slave_is_prefix_of_master());
  EXPECT_EQ(world.send(kTopic, 300).code, ResponseCode::SUCCESS);
}

TEST(SyncMaster, SlaveNotAvailableAtOnceWithoutASlave) {
  HASimWorld world(store::BrokerRole::SYNC_MASTER);
  ASSERT_TRUE(world.start_master().ok());
  const Nanos sent_at = world.now();
  const RemotingCommand response = world.send(kTopic, 300);
  EXPECT_EQ(response.code, ResponseCode::SLAVE_NOT_AVAILABLE);
  EXPECT_LT(world.now() - sent_at, millis(100));  // no waiting for a slave that is not there
  EXPECT_GT(world.master_store().max_phy_offset(), PhyOffset(0));  // stored
  EXPECT_EQ(world.master_store().stats().slave_not_available, 1u);
}

TEST(SyncMaster, SlaveNotAvailableWhenTheSlaveIsTooFarBehind) {
  HASimWorld world(store::BrokerRole::SYNC_MASTER);
  world.master_store_config().haSlaveFallbehindMax = 2000;
  connect_slave(world);
  world.net().partition({kMasterHost}, {kSlaveHost});
  // Two puts at once: the first is within 2000 bytes of the slave's ack and
  // waits; the second is past it and is answered at once.
  PendingCall first = world.call_async(broker::testing::send_v2(kTopic, std::string(1000, 'a')));
  PendingCall second = world.call_async(broker::testing::send_v2(kTopic, std::string(1000, 'b')));
  world.run_until([&] { return second->has_value(); });
  ASSERT_TRUE(second->has_value() && (*second)->ok());
  EXPECT_EQ((**second)->code, ResponseCode::SLAVE_NOT_AVAILABLE);
  EXPECT_FALSE(first->has_value());
  world.run_until([&] { return first->has_value(); });
  ASSERT_TRUE(first->has_value() && (*first)->ok());
  EXPECT_EQ((**first)->code, ResponseCode::FLUSH_SLAVE_TIMEOUT);
}

TEST(SyncMaster, SyncFlushAndSyncMasterWaitForBoth) {
  HASimWorld world(store::BrokerRole::SYNC_MASTER);
  world.master_store_config().flushDiskType = store::FlushDiskType::SYNC_FLUSH;
  connect_slave(world);
  EXPECT_EQ(world.send(kTopic, 300).code, ResponseCode::SUCCESS);
  EXPECT_GE(world.master_store().flushed_phy_offset(), world.master_store().max_phy_offset());
  EXPECT_GE(world.slave_store().max_phy_offset(), world.master_store().max_phy_offset());
  // The flush succeeds, the replication does not: replication's status wins.
  world.net().partition({kMasterHost}, {kSlaveHost});
  EXPECT_EQ(world.send(kTopic, 300).code, ResponseCode::FLUSH_SLAVE_TIMEOUT);
  EXPECT_GE(world.master_store().flushed_phy_offset(), world.master_store().max_phy_offset());
}

TEST(SyncMaster, AsyncMasterAnswersWithoutWaiting) {
  HASimWorld world(store::BrokerRole::ASYNC_MASTER);
  connect_slave(world);
  world.net().partition({kMasterHost}, {kSlaveHost});
  const Nanos sent_at = world.now();
  EXPECT_EQ(world.send(kTopic, 300).code, ResponseCode::SUCCESS);
  EXPECT_LT(world.now() - sent_at, millis(100));
}

}  // namespace
}  // namespace mqlab::ha::testing::ha_sync_master_test
