// Delayed delivery through a BrokerController on the simulator: a SEND with DELAY is pullable only after its
// level's delay, exactly once and unchanged; a long-polling pull is answered when it comes due; a broker
// restarted (cleanly or by kill -9) in the middle delivers every delayed message.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "broker/processor/test/broker_sim_world.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::broker::testing::delayed_delivery_test {
namespace {

PullOptions no_suspend() {
  PullOptions options;
  options.sys_flag = 4;  // SUBSCRIPTION only: answered at once
  return options;
}

store::MessageProperties delayed_properties(const std::string& key, int32_t level) {
  return {{"DELAY", std::to_string(level)}, {"KEYS", key}, {"TAGS", "TagA"}, {"color", "blue"}};
}

// Every message of (topic, queue) from offset 0, pulled without suspending.
std::vector<PulledMessage> pull_all(BrokerSimWorld& world, const std::string& topic, int32_t queue_id) {
  std::vector<PulledMessage> all;
  int64_t offset = 0;
  for (;;) {
    RemotingCommand response = world.must_call(pull("G", topic, queue_id, offset, no_suspend()));
    if (response.code != ResponseCode::SUCCESS) break;
    for (PulledMessage& message : decode_records(response.body)) all.push_back(std::move(message));
    offset = std::stoll(std::string(*response.find_ext("nextBeginOffset")));
  }
  return all;
}

TEST(DelayedDelivery, ASendWithDelayLevelTwoIsPullableOnlyAfterFiveSecondsAndExactlyOnce) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  const Nanos sent_at = world.now();
  RemotingCommand sent = world.must_call(send_v2("TopicA", "later", 2, delayed_properties("k1", 2)));
  ASSERT_EQ(sent.code, ResponseCode::SUCCESS) << sent.remark;
  EXPECT_EQ(*sent.find_ext("queueId"), "2");

  world.run_for(sent_at + millis(4'990) - world.now());
  RemotingCommand early = world.must_call(pull("G", "TopicA", 2, 0, no_suspend()));
  EXPECT_EQ(early.code, ResponseCode::PULL_NOT_FOUND) << early.remark;

  world.run_for(millis(20));
  std::vector<PulledMessage> got = pull_all(world, "TopicA", 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].topic, "TopicA");
  EXPECT_EQ(got[0].queue_id, 2);
  EXPECT_EQ(got[0].queue_offset, 0);
  EXPECT_EQ(got[0].body, "later");
  EXPECT_EQ(got[0].properties.at("KEYS"), "k1");
  EXPECT_EQ(got[0].properties.at("TAGS"), "TagA");
  EXPECT_EQ(got[0].properties.at("color"), "blue");
  EXPECT_FALSE(got[0].properties.contains("DELAY"));

  world.run_for(seconds(120));
  EXPECT_EQ(pull_all(world, "TopicA", 2).size(), 1u);  // exactly once
  EXPECT_EQ(world.broker().message_store().schedule_message_service().stats().delivered, 1u);
}

TEST(DelayedDelivery, AParkedPullIsAnsweredWhenTheMessageComesDue) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  ASSERT_EQ(world.must_call(send_v2("TopicA", "warm-up", 0)).code, ResponseCode::SUCCESS);
  world.run_for(millis(50));
  const Nanos sent_at = world.now();
  ASSERT_EQ(world.must_call(send_v2("TopicA", "later", 0, delayed_properties("k2", 2))).code, ResponseCode::SUCCESS);
  PendingCall parked = world.call_async(pull("G", "TopicA", 0, 1), seconds(30));  // held up to 15 s
  world.run_until([&] { return parked->has_value(); }, seconds(20));
  ASSERT_TRUE(parked->has_value());
  ASSERT_TRUE((*parked)->ok()) << (*parked)->status().to_string();
  const RemotingCommand& response = ***parked;
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  EXPECT_EQ(decode_records(response.body).at(0).body, "later");
  EXPECT_GE(world.now() - sent_at, seconds(5) - millis(1));
  EXPECT_LT(world.now() - sent_at, seconds(5) + millis(100));
}

TEST(DelayedDelivery, ARestartedBrokerDeliversEveryDelayedMessage) {
  for (const bool crash : {false, true}) {
    SCOPED_TRACE(crash ? "kill -9" : "clean shutdown");
    BrokerSimWorld world;
    ASSERT_TRUE(world.start_broker().ok());
    for (int i = 0; i < 12; ++i) {
      const std::string key = "m" + std::to_string(i);
      RemotingCommand sent = world.must_call(send_v2("TopicB", key, 0, delayed_properties(key, 1 + i % 3)));
      ASSERT_EQ(sent.code, ResponseCode::SUCCESS) << sent.remark;
      world.run_for(millis(500));
    }
    // 6 s in: level 1 (1 s) and 2 (5 s) partly delivered, level 3 (10 s) not at all.
    if (crash) {
      world.crash_broker();
    } else {
      ASSERT_TRUE(world.shutdown_broker().ok());
    }
    ASSERT_TRUE(world.start_broker().ok());
    world.run_for(seconds(15));
    std::map<std::string, int> counts;
    for (const PulledMessage& message : pull_all(world, "TopicB", 0)) ++counts[message.body];
    ASSERT_EQ(counts.size(), 12u);
    for (const auto& [body, count] : counts) {
      EXPECT_GE(count, 1) << body;
      if (!crash) {
        EXPECT_EQ(count, 1) << body;  // a clean shutdown persisted every offset
      }
    }
  }
}

}  // namespace
}  // namespace mqlab::broker::testing::delayed_delivery_test
