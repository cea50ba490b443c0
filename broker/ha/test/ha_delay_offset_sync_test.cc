// Delay offsets travel master -> slave (GET_ALL_DELAY_OFFSET, request code
// 45, slave_synchronize.h): a slave promoted to master after scheduled
// messages were delivered loads the master's delayOffset.json and does not
// deliver them again. With the slave's sync off, the promoted slave starts
// its ScheduleMessageService from nothing and delivers every one a second
// time: the difference the sync makes.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "broker/ha/test/ha_sim_world.h"
#include "broker/store/message_codec.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::ha::testing::ha_delay_offset_sync_test {
namespace {

using broker::testing::body_text;
using broker::testing::request_with;
using broker::testing::send_v2;

constexpr const char* kTopic = "TopicTest";
constexpr int kScheduled = 3;

class DelayOffsetSync : public ::testing::TestWithParam<bool> {};

TEST_P(DelayOffsetSync, PromotedSlaveDeliversWhatTheMasterDeliveredOnlyWhenNotSynced) {
  const bool synced = GetParam();
  HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == HAClientState::kTransfer; }, seconds(5));
  ASSERT_EQ(world.ha_client().state(), HAClientState::kTransfer);
  if (!synced) world.slave().slave_synchronize()->shutdown();

  // Level 1 (1 s): parked in SCHEDULE_TOPIC_XXXX, then delivered to queue 0.
  for (int i = 0; i < kScheduled; ++i) {
    const RemotingCommand response = world.must_call(
        send_v2(kTopic, "scheduled-" + std::to_string(i), 0, {{std::string(store::kPropertyDelayLevel), "1"}}));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
  world.run_until([&] { return world.master_store().max_offset_in_queue(kTopic, 0) == QueueOffset(kScheduled); },
                  seconds(10));
  ASSERT_EQ(world.master_store().max_offset_in_queue(kTopic, 0), QueueOffset(kScheduled));
  ASSERT_TRUE(world.wait_caught_up());  // the delivered copies are on the slave too

  // The master's answer is its offset table: level 1 delivered up to 3.
  const RemotingCommand offsets = world.must_call(request_with(RequestCode::GET_ALL_DELAY_OFFSET, {}));
  ASSERT_EQ(offsets.code, ResponseCode::SUCCESS) << offsets.remark;
  EXPECT_EQ(nlohmann::json::parse(body_text(offsets)), nlohmann::json::parse(R"({"offsetTable":{"1":3}})"));

  if (synced) {
    std::optional<Status> round;
    world.slave().slave_synchronize()->sync_all([&](Status status) { round = status; });
    world.run_until([&] { return round.has_value(); }, seconds(10));
    ASSERT_TRUE(round.has_value() && round->ok()) << (round ? round->to_string() : "no answer");
    world.run_for(seconds(1));  // the persist of delayOffset.json it started
    // A slave answers with its synced copy.
    const RemotingCommand copy =
        world.must_call(request_with(RequestCode::GET_ALL_DELAY_OFFSET, {}), kSlaveAddr);
    EXPECT_EQ(copy.code, ResponseCode::SUCCESS);
  }

  // Manual failover: the master's machine is gone; the slave restarts as
  // brokerId 0, ASYNC_MASTER, over its own disk.
  world.crash_master();
  world.crash_slave();
  world.slave_config().brokerId = 0;
  world.slave_store_config().brokerRole = store::BrokerRole::ASYNC_MASTER;
  ASSERT_TRUE(world.start_slave().ok());
  ASSERT_TRUE(world.slave_store().schedule_message_service().started());
  world.run_for(seconds(5));  // level 1's entries are long due

  const QueueOffset delivered = world.slave_store().max_offset_in_queue(kTopic, 0);
  if (synced) {
    EXPECT_EQ(delivered, QueueOffset(kScheduled)) << "already delivered scheduled messages were delivered again";
    EXPECT_EQ(world.slave_store().schedule_message_service().offset_table().at(1), kScheduled);
  } else {
    EXPECT_EQ(delivered, QueueOffset(2 * kScheduled)) << "without the sync every one is delivered twice";
  }
}

INSTANTIATE_TEST_SUITE_P(SyncOnOrOff, DelayOffsetSync, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Synced" : "NotSynced";
                         });

}  // namespace
}  // namespace mqlab::ha::testing::ha_delay_offset_sync_test
