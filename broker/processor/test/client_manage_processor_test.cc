// HEART_BEAT, UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP, the consumer
// offset commands and CONSUMER_SEND_MSG_BACK against a BrokerController on
// the simulator, including channel expiry and closed connections.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::broker::testing::client_manage_processor_test {
namespace {

RemotingCommand consumer_list(const std::string& group) {
  return request_with(RequestCode::GET_CONSUMER_LIST_BY_GROUP, {{"consumerGroup", group}});
}

RemotingCommand query_offset(const std::string& group, const std::string& topic, int32_t queue_id) {
  return request_with(RequestCode::QUERY_CONSUMER_OFFSET,
                      {{"consumerGroup", group}, {"topic", topic}, {"queueId", std::to_string(queue_id)}});
}

RemotingCommand update_offset(const std::string& group, const std::string& topic, int32_t queue_id, int64_t offset) {
  return request_with(RequestCode::UPDATE_CONSUMER_OFFSET, {{"consumerGroup", group},
                                                            {"topic", topic},
                                                            {"queueId", std::to_string(queue_id)},
                                                            {"commitOffset", std::to_string(offset)}});
}

std::vector<std::string> ids_of(const RemotingCommand& response) {
  nlohmann::json body = nlohmann::json::parse(body_text(response));
  return body.at("consumerIdList").get<std::vector<std::string>>();
}

class ClientManageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(world_.start_broker().ok()); }
  BrokerSimWorld world_;
};

TEST_F(ClientManageTest, HeartbeatRegistersTheConsumerAndCreatesItsRetryTopic) {
  EXPECT_EQ(world_.must_call(consumer_list("G")).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(world_.must_call(consumer_list("G")).remark, "no consumer for this group, G");
  RemotingCommand response = world_.must_call(heartbeat("10.0.0.9@4242", "G", {"TopicA", "%RETRY%G"}, "PG"));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  EXPECT_TRUE(response.body.empty());

  RemotingCommand list = world_.must_call(consumer_list("G"));
  ASSERT_EQ(list.code, ResponseCode::SUCCESS);
  EXPECT_EQ(ids_of(list), std::vector<std::string>{"10.0.0.9@4242"});
  const meta::TopicConfig* retry = world_.broker().topic_config_manager().find("%RETRY%G");
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(retry->writeQueueNums, 1);
  EXPECT_NE(world_.broker().subscription_group_manager().find("G"), nullptr);
  EXPECT_NE(world_.broker().producer_manager().find("PG"), nullptr);
  const ConsumerGroupInfo* info = world_.broker().consumer_manager().find("G");
  ASSERT_NE(info, nullptr);
  EXPECT_NE(info->find_subscription("TopicA"), nullptr);

  // A second client on another connection joins; ids come back sorted.
  remoting::RemotingClient other(world_.client_env());
  std::optional<Result<RemotingCommand>> answer;
  other.invoke(kBrokerAddr, heartbeat("10.0.0.9@1111", "G", {"TopicA"}), seconds(3),
               [&](Result<RemotingCommand> r) { answer = std::move(r); });
  world_.run_until([&] { return answer.has_value(); });
  EXPECT_EQ(ids_of(world_.must_call(consumer_list("G"))), (std::vector<std::string>{"10.0.0.9@1111", "10.0.0.9@4242"}));

  // Its connection closes: it leaves the group at once.
  other.shutdown();
  world_.run_for(millis(100));
  EXPECT_EQ(ids_of(world_.must_call(consumer_list("G"))), std::vector<std::string>{"10.0.0.9@4242"});
}

TEST_F(ClientManageTest, UnregisterClientRemovesItFromItsGroups) {
  ASSERT_EQ(world_.must_call(heartbeat("C1", "G", {"TopicA"}, "PG")).code, ResponseCode::SUCCESS);
  RemotingCommand bye = request_with(RequestCode::UNREGISTER_CLIENT,
                                     {{"clientID", "C1"}, {"consumerGroup", "G"}, {"producerGroup", "PG"}});
  EXPECT_EQ(world_.must_call(bye).code, ResponseCode::SUCCESS);
  EXPECT_EQ(world_.must_call(consumer_list("G")).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(world_.broker().producer_manager().find("PG"), nullptr);
  RemotingCommand no_id = request_with(RequestCode::UNREGISTER_CLIENT, {{"consumerGroup", "G"}});
  RemotingCommand refused = world_.must_call(no_id);
  EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(refused.remark.find("clientID"), std::string::npos);
}

TEST_F(ClientManageTest, ChannelsWithoutHeartbeatFor120SecondsExpire) {
  ASSERT_EQ(world_.must_call(heartbeat("C1", "G", {"TopicA"})).code, ResponseCode::SUCCESS);
  world_.run_for(seconds(100));
  EXPECT_EQ(world_.must_call(consumer_list("G")).code, ResponseCode::SUCCESS);
  world_.run_for(seconds(35));  // 135 s since the heartbeat, past the next 10 s scan
  EXPECT_EQ(world_.must_call(consumer_list("G")).code, ResponseCode::SYSTEM_ERROR);
}

TEST_F(ClientManageTest, BadHeartbeatBodiesAreSystemErrors) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::HEART_BEAT);
  request.body = {'{', 'x'};
  EXPECT_EQ(world_.must_call(request).code, ResponseCode::SYSTEM_ERROR);
  request.body.clear();
  EXPECT_EQ(world_.must_call(request).code, ResponseCode::SYSTEM_ERROR);
}

TEST_F(ClientManageTest, OffsetsUpdateQueryAndTheYoungQueueRule) {
  // Nothing committed, queue unknown (min 0): a young queue starts at 0.
  RemotingCommand young = world_.must_call(query_offset("G", "TopicA", 0));
  ASSERT_EQ(young.code, ResponseCode::SUCCESS) << young.remark;
  EXPECT_EQ(*young.find_ext("offset"), "0");

  EXPECT_EQ(world_.must_call(update_offset("G", "TopicA", 0, 42)).code, ResponseCode::SUCCESS);
  RemotingCommand committed = world_.must_call(query_offset("G", "TopicA", 0));
  EXPECT_EQ(*committed.find_ext("offset"), "42");
  // ali-ons sends offset 0 as -1: accepted, and it does not overwrite 42.
  EXPECT_EQ(world_.must_call(update_offset("G", "TopicA", 0, -1)).code, ResponseCode::SUCCESS);
  EXPECT_EQ(*world_.must_call(query_offset("G", "TopicA", 0)).find_ext("offset"), "42");

  // A oneway update is applied without an answer.
  RemotingCommand oneway = update_offset("G", "TopicA", 1, 5);
  oneway.mark_oneway();
  std::optional<Status> written;
  world_.client().invoke_oneway(kBrokerAddr, oneway, [&](Status s) { written = s; });
  world_.run_for(millis(100));
  EXPECT_EQ(world_.broker().consumer_offset_manager().query_offset("G", "TopicA", 1), std::optional<int64_t>(5));

  RemotingCommand missing = request_with(RequestCode::QUERY_CONSUMER_OFFSET, {{"consumerGroup", "G"}, {"topic", "T"}});
  RemotingCommand refused = world_.must_call(missing);
  EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(refused.remark.find("queueId"), std::string::npos);
}

TEST_F(ClientManageTest, AQueueWhoseStartWasDeletedAnswersQueryNotFound) {
  const std::string body(3000, 'q');
  for (int i = 0; i < 100; ++i) ASSERT_EQ(world_.must_call(send_v2("TopicOld", body, 0)).code, ResponseCode::SUCCESS);
  world_.run_for(millis(50));
  world_.disk().set_capacity_bytes(world_.disk().used_bytes() * 100 / 88);
  world_.run_for(seconds(5));
  world_.disk().set_capacity_bytes(1ull << 30);
  ASSERT_GT(world_.broker().message_store().min_offset_in_queue("TopicOld", 0).value(), 0);
  RemotingCommand response = world_.must_call(query_offset("NewGroup", "TopicOld", 0));
  EXPECT_EQ(response.code, ResponseCode::QUERY_NOT_FOUND);
}

TEST_F(ClientManageTest, SendBackStoresRetriesThenTheDeadLetterQueue) {
  RemotingCommand sent = world_.must_call(send_v2("TopicA", "payload", 0, {{"TAGS", "TagA"}, {"KEYS", "k1"}}));
  ASSERT_EQ(sent.code, ResponseCode::SUCCESS);
  const std::string msg_id(*sent.find_ext("msgId"));
  int64_t offset = store::decode_offset_message_id(msg_id)->offset.value();
  // ali-ons: delayLevel 0, maxReconsumeTimes 16; we use 2 to reach the DLQ soon.
  auto send_back = [&](int64_t at) {
    return request_with(RequestCode::CONSUMER_SEND_MSG_BACK, {{"offset", std::to_string(at)},
                                                              {"group", "G"},
                                                              {"delayLevel", "0"},
                                                              {"originMsgId", msg_id},
                                                              {"originTopic", "TopicA"},
                                                              {"unitMode", "false"},
                                                              {"maxReconsumeTimes", "2"}});
  };
  PullOptions no_suspend;
  no_suspend.sys_flag = 4;  // SUBSCRIPTION only: answer at once
  for (int round = 1; round <= 2; ++round) {
    const Nanos sent_back_at = world_.now();
    RemotingCommand response = world_.must_call(send_back(offset));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    // Level 3 + reconsumeTimes: the retry waits 10 s, then 30 s.
    const Nanos delay = round == 1 ? seconds(10) : seconds(30);
    world_.run_for(sent_back_at + delay - millis(10) - world_.now());
    RemotingCommand early = world_.must_call(pull("G", "%RETRY%G", 0, round - 1, no_suspend));
    EXPECT_NE(early.code, ResponseCode::SUCCESS) << "round " << round << ": a retry before its delay";
    world_.run_for(millis(20));
    RemotingCommand pulled = world_.must_call(pull("G", "%RETRY%G", 0, round - 1));
    ASSERT_EQ(pulled.code, ResponseCode::SUCCESS) << pulled.remark;
    std::vector<PulledMessage> retries = decode_records(pulled.body);
    ASSERT_EQ(retries.size(), 1u);
    const PulledMessage& retry = retries[0];
    EXPECT_EQ(retry.topic, "%RETRY%G");
    EXPECT_EQ(retry.body, "payload");
    EXPECT_EQ(retry.reconsume_times, round);
    EXPECT_EQ(retry.properties.at("RETRY_TOPIC"), "TopicA");
    EXPECT_EQ(retry.properties.at("ORIGIN_MESSAGE_ID"), msg_id);
    EXPECT_EQ(retry.properties.at("TAGS"), "TagA");
    EXPECT_FALSE(retry.properties.contains("DELAY"));  // served: delivered without it
    EXPECT_EQ(retry.properties.at("REAL_TOPIC"), "%RETRY%G");
    EXPECT_FALSE(retry.properties.contains("WAIT"));
    offset = retry.physical_offset;  // the consumer fails the retry too
  }
  RemotingCommand dead = world_.must_call(send_back(offset));
  ASSERT_EQ(dead.code, ResponseCode::SUCCESS) << dead.remark;
  world_.run_for(millis(50));
  RemotingCommand pulled = world_.must_call(pull("G", "%DLQ%G", 0, 0));
  ASSERT_EQ(pulled.code, ResponseCode::SUCCESS) << pulled.remark;
  std::vector<PulledMessage> dlq = decode_records(pulled.body);
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].reconsume_times, 3);
  EXPECT_EQ(dlq[0].properties.at("ORIGIN_MESSAGE_ID"), msg_id);
  EXPECT_FALSE(dlq[0].properties.contains("DELAY"));

  RemotingCommand gone = world_.must_call(send_back(1'000'000'000));
  EXPECT_EQ(gone.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(gone.remark.find("look message by offset failed"), std::string::npos);
}

}  // namespace
}  // namespace mqlab::broker::testing::client_manage_processor_test
