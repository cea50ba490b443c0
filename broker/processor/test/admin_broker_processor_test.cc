// The admin and query commands against a BrokerController on the simulator:
// queue offsets and times, topic creation and listing, message lookup by key
// and by id, runtime info, topic and consume statistics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::broker::testing::admin_broker_processor_test {
namespace {

RemotingCommand queue_request(int32_t code, const std::string& topic, int32_t queue_id) {
  return request_with(code, {{"topic", topic}, {"queueId", std::to_string(queue_id)}});
}

RemotingCommand create_topic(const std::string& topic, int32_t queues, int32_t perm = 6) {
  return request_with(RequestCode::UPDATE_AND_CREATE_TOPIC, {{"topic", topic},
                                                             {"defaultTopic", "TBW102"},
                                                             {"readQueueNums", std::to_string(queues)},
                                                             {"writeQueueNums", std::to_string(queues)},
                                                             {"perm", std::to_string(perm)},
                                                             {"topicFilterType", "SINGLE_TAG"},
                                                             {"topicSysFlag", "0"},
                                                             {"order", "false"}});
}

class AdminBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(world_.start_broker().ok()); }

  std::string send(const std::string& topic, int32_t queue_id, const std::string& body,
                   const store::MessageProperties& properties = {}) {
    RemotingCommand response = world_.must_call(send_v2(topic, body, queue_id, properties));
    EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    const std::string_view* id = response.find_ext("msgId");
    return id ? std::string(*id) : "";
  }
  std::string offset_of(RemotingCommand request, const char* field = "offset") {
    RemotingCommand response = world_.must_call(std::move(request));
    EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    const std::string_view* value = response.find_ext(field);
    return value ? std::string(*value) : "<missing>";
  }

  BrokerSimWorld world_;
};

TEST_F(AdminBrokerTest, QueueOffsetsAndTimes) {
  EXPECT_EQ(offset_of(queue_request(RequestCode::GET_MAX_OFFSET, "TopicA", 0)), "0");
  EXPECT_EQ(offset_of(queue_request(RequestCode::GET_MIN_OFFSET, "TopicA", 0)), "0");
  EXPECT_EQ(offset_of(queue_request(RequestCode::GET_EARLIEST_MSG_STORETIME, "TopicA", 0), "timestamp"), "-1");
  const int64_t before_ms = world_.clock().wall_ms();
  send("TopicA", 0, "one");
  world_.run_for(seconds(10));
  const int64_t middle_ms = world_.clock().wall_ms();
  send("TopicA", 0, "two");
  send("TopicA", 0, "three");
  world_.run_for(millis(50));
  EXPECT_EQ(offset_of(queue_request(RequestCode::GET_MAX_OFFSET, "TopicA", 0)), "3");
  EXPECT_EQ(offset_of(queue_request(RequestCode::GET_MIN_OFFSET, "TopicA", 0)), "0");
  const int64_t earliest =
      std::stoll(offset_of(queue_request(RequestCode::GET_EARLIEST_MSG_STORETIME, "TopicA", 0), "timestamp"));
  EXPECT_GE(earliest, before_ms);
  EXPECT_LT(earliest, middle_ms);
  RemotingCommand search = queue_request(RequestCode::SEARCH_OFFSET_BY_TIMESTAMP, "TopicA", 0);
  search.set_ext_int("timestamp", middle_ms);
  EXPECT_EQ(offset_of(search), "1");
  search.set_ext_int("timestamp", before_ms - 1000);
  EXPECT_EQ(offset_of(search), "0");
  RemotingCommand missing = request_with(RequestCode::GET_MAX_OFFSET, {{"topic", "TopicA"}});
  EXPECT_EQ(world_.must_call(missing).code, ResponseCode::SYSTEM_ERROR);
}

TEST_F(AdminBrokerTest, UpdateAndCreateTopicThenGetAllTopicConfig) {
  RemotingCommand created = world_.must_call(create_topic("Orders", 3));
  ASSERT_EQ(created.code, ResponseCode::SUCCESS) << created.remark;
  const meta::TopicConfig* topic = world_.broker().topic_config_manager().find("Orders");
  ASSERT_NE(topic, nullptr);
  EXPECT_EQ(topic->readQueueNums, 3);
  EXPECT_EQ(topic->perm, 6);

  RemotingCommand all = world_.must_call(request_with(RequestCode::GET_ALL_TOPIC_CONFIG, {}));
  ASSERT_EQ(all.code, ResponseCode::SUCCESS);
  Result<remoting::TopicConfigSerializeWrapper> wrapper = remoting::TopicConfigSerializeWrapper::parse(body_text(all));
  ASSERT_TRUE(wrapper.ok()) << wrapper.status().to_string();
  ASSERT_TRUE(wrapper->topicConfigTable.contains("Orders"));
  EXPECT_EQ(wrapper->topicConfigTable.at("Orders").writeQueueNums, 3);
  EXPECT_TRUE(wrapper->topicConfigTable.contains("TBW102"));
  EXPECT_GT(wrapper->dataVersion.counter, 0);

  EXPECT_EQ(world_.must_call(create_topic("bad name", 1)).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(world_.must_call(create_topic("TBW102", 1)).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(world_.must_call(create_topic("DefaultCluster", 1)).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(world_.must_call(create_topic("Zero", 0)).code, ResponseCode::SYSTEM_ERROR);
  RemotingCommand no_perm = create_topic("NoPerm", 1);
  no_perm.ext_fields.erase("perm");
  RemotingCommand refused = world_.must_call(no_perm);
  EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(refused.remark.find("perm"), std::string::npos);
}

TEST_F(AdminBrokerTest, QueryMessageByKeyAndViewMessageById) {
  const std::string id1 = send("TopicK", 0, "first", {{"KEYS", "order-7 customer-1"}});
  send("TopicK", 1, "other", {{"KEYS", "order-8"}});
  const std::string id3 = send("TopicK", 2, "second", {{"KEYS", "order-7"}});
  world_.run_for(millis(50));
  RemotingCommand query = request_with(RequestCode::QUERY_MESSAGE, {{"topic", "TopicK"},
                                                                    {"key", "order-7"},
                                                                    {"maxNum", "32"},
                                                                    {"beginTimestamp", "0"},
                                                                    {"endTimestamp", std::to_string(INT64_MAX)}});
  RemotingCommand found = world_.must_call(query);
  ASSERT_EQ(found.code, ResponseCode::SUCCESS) << found.remark;
  std::vector<PulledMessage> messages = decode_records(found.body);
  ASSERT_EQ(messages.size(), 2u);
  std::set<std::string> bodies{messages[0].body, messages[1].body};
  EXPECT_EQ(bodies, (std::set<std::string>{"first", "second"}));
  EXPECT_NE(found.find_ext("indexLastUpdateTimestamp"), nullptr);
  EXPECT_NE(found.find_ext("indexLastUpdatePhyoffset"), nullptr);

  query.set_ext_string("key", "no-such-key");
  RemotingCommand not_found = world_.must_call(query);
  EXPECT_EQ(not_found.code, ResponseCode::QUERY_NOT_FOUND);
  EXPECT_EQ(not_found.remark, "can not find message, maybe time range not correct");

  const int64_t offset = store::decode_offset_message_id(id3)->offset.value();
  RemotingCommand view = request_with(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", std::to_string(offset)}});
  RemotingCommand viewed = world_.must_call(view);
  ASSERT_EQ(viewed.code, ResponseCode::SUCCESS) << viewed.remark;
  std::vector<PulledMessage> one = decode_records(viewed.body);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].body, "second");
  EXPECT_EQ(store::create_offset_message_id(one[0].store_host, PhyOffset(one[0].physical_offset)), id3);
  (void)id1;

  RemotingCommand bad = request_with(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", "999999"}});
  RemotingCommand refused = world_.must_call(bad);
  EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(refused.remark, "can not find message by the offset, 999999");
}

// transientStorePoolEnable: a send is answered from the CommitLog's write
// buffer, but VIEW_MESSAGE_BY_ID and QUERY_MESSAGE read only committed
// records (RocketMQ's getReadPosition()), so the message is found only once
// CommitRealTimeService wrote it to the file.
TEST(AdminBrokerTransientStorePool, ViewByIdAndQueryByKeyFindAMessageOnlyOnceCommitted) {
  store::MessageStoreConfig store_config = test_store_config();
  store_config.flushDiskType = store::FlushDiskType::ASYNC_FLUSH;
  store_config.transientStorePoolEnable = true;
  store_config.commitIntervalCommitLog = 5'000;  // a wide window between the answer and the commit
  BrokerSimWorld world(test_broker_config(), store_config);
  ASSERT_TRUE(world.start_broker().ok());
  ASSERT_NE(world.broker().message_store().commit_real_time_service(), nullptr);
  RemotingCommand sent = world.must_call(send_v2("TopicP", "pooled", 0, {{"KEYS", "order-9"}}));
  ASSERT_EQ(sent.code, ResponseCode::SUCCESS) << sent.remark;
  const int64_t offset = store::decode_offset_message_id(*sent.find_ext("msgId"))->offset.value();
  const RemotingCommand view = request_with(RequestCode::VIEW_MESSAGE_BY_ID, {{"offset", std::to_string(offset)}});
  const RemotingCommand query = request_with(RequestCode::QUERY_MESSAGE, {{"topic", "TopicP"},
                                                                          {"key", "order-9"},
                                                                          {"maxNum", "32"},
                                                                          {"beginTimestamp", "0"},
                                                                          {"endTimestamp", std::to_string(INT64_MAX)}});
  ASSERT_EQ(world.broker().message_store().max_phy_offset().value(), 0) << "answered, still buffered";
  RemotingCommand viewed = world.must_call(view);
  EXPECT_EQ(viewed.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(viewed.remark, "can not find message by the offset, " + std::to_string(offset));
  EXPECT_EQ(world.must_call(query).code, ResponseCode::QUERY_NOT_FOUND);

  world.run_for(millis(store_config.commitIntervalCommitLog));
  ASSERT_GT(world.broker().message_store().max_phy_offset().value(), offset);
  viewed = world.must_call(view);
  ASSERT_EQ(viewed.code, ResponseCode::SUCCESS) << viewed.remark;
  std::vector<PulledMessage> one = decode_records(viewed.body);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].body, "pooled");
  RemotingCommand found = world.must_call(query);
  ASSERT_EQ(found.code, ResponseCode::SUCCESS) << found.remark;
  ASSERT_EQ(decode_records(found.body).size(), 1u);
  EXPECT_EQ(decode_records(found.body)[0].body, "pooled");
}

TEST_F(AdminBrokerTest, RuntimeInfoTopicStatsAndConsumeStats) {
  for (int i = 0; i < 5; ++i) send("TopicS", 0, "m");
  send("TopicS", 1, "m");
  world_.run_for(millis(50));
  ASSERT_EQ(world_.must_call(heartbeat("C1", "G", {"TopicS"})).code, ResponseCode::SUCCESS);
  RemotingCommand commit =
      request_with(RequestCode::UPDATE_CONSUMER_OFFSET,
                   {{"consumerGroup", "G"}, {"topic", "TopicS"}, {"queueId", "0"}, {"commitOffset", "2"}});
  ASSERT_EQ(world_.must_call(commit).code, ResponseCode::SUCCESS);

  RemotingCommand info = world_.must_call(request_with(RequestCode::GET_BROKER_RUNTIME_INFO, {}));
  ASSERT_EQ(info.code, ResponseCode::SUCCESS);
  nlohmann::json table = nlohmann::json::parse(body_text(info)).at("table");
  EXPECT_EQ(table.at("msgPutTotalTodayNow"), "6");
  EXPECT_EQ(table.at("brokerVersionDesc"), "V4_9_7");
  for (const auto& [key, value] : table.items()) EXPECT_TRUE(value.is_string()) << key;

  RemotingCommand stats = world_.must_call(request_with(RequestCode::GET_TOPIC_STATS_INFO, {{"topic", "TopicS"}}));
  ASSERT_EQ(stats.code, ResponseCode::SUCCESS);
  nlohmann::json offsets = nlohmann::json::parse(body_text(stats)).at("offsetTable");
  ASSERT_EQ(offsets.size(), 4u);
  EXPECT_EQ(offsets[0].at("maxOffset"), 5);
  EXPECT_EQ(offsets[0].at("minOffset"), 0);
  EXPECT_GT(offsets[0].at("lastUpdateTimestamp").get<int64_t>(), 0);
  EXPECT_EQ(offsets[1].at("maxOffset"), 1);
  EXPECT_EQ(offsets[2].at("lastUpdateTimestamp"), 0);
  EXPECT_EQ(world_.must_call(request_with(RequestCode::GET_TOPIC_STATS_INFO, {{"topic", "Nope"}})).code,
            ResponseCode::TOPIC_NOT_EXIST);

  RemotingCommand consume = world_.must_call(request_with(RequestCode::GET_CONSUME_STATS, {{"consumerGroup", "G"}}));
  ASSERT_EQ(consume.code, ResponseCode::SUCCESS);
  nlohmann::json body = nlohmann::json::parse(body_text(consume));
  EXPECT_EQ(body.at("diffTotal"), 3 + 1);  // queue 0: 5 - 2, queue 1: 1 - 0
  ASSERT_EQ(body.at("offsetTable").size(), 4u);
  EXPECT_EQ(body.at("offsetTable")[0].at("brokerOffset"), 5);
  EXPECT_EQ(body.at("offsetTable")[0].at("consumerOffset"), 2);
  EXPECT_GT(body.at("offsetTable")[0].at("lastTimestamp").get<int64_t>(), 0);

  RemotingCommand offsets_all = world_.must_call(request_with(RequestCode::GET_ALL_CONSUMER_OFFSET, {}));
  ASSERT_EQ(offsets_all.code, ResponseCode::SUCCESS);
  EXPECT_EQ(nlohmann::json::parse(body_text(offsets_all)).at("offsetTable").at("TopicS@G").at("0"), 2);

  RemotingCommand groups = world_.must_call(request_with(RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}));
  ASSERT_EQ(groups.code, ResponseCode::SUCCESS);
  EXPECT_EQ(nlohmann::json::parse(body_text(groups)).at("subscriptionGroupTable").at("G").at("retryMaxTimes"), 16);
}

}  // namespace
}  // namespace mqlab::broker::testing::admin_broker_processor_test
