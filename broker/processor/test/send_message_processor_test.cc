// SEND_MESSAGE and SEND_MESSAGE_V2 against a BrokerController on the
// simulator: response fields, what gets stored, auto-create on and off, queue
// checks, %RETRY% and DLQ routing, missing fields, a full disk.
#include "broker/processor/send_message_processor.h"

#include <gtest/gtest.h>

#include "broker/processor/host_address.h"
#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::broker::testing::send_message_processor_test {
namespace {

// Reads the record a send stored, through VIEW_MESSAGE_BY_ID's store call.
PulledMessage stored_record(BrokerSimWorld& world, std::string_view msg_id) {
  Result<store::OffsetMessageId> id = store::decode_offset_message_id(msg_id);
  EXPECT_TRUE(id.ok()) << msg_id;
  if (!id.ok()) return {};
  Result<std::vector<uint8_t>> bytes = world.broker().message_store().look_message_by_offset(id->offset);
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  if (!bytes.ok()) return {};
  std::vector<PulledMessage> messages = decode_records(*bytes);
  EXPECT_EQ(messages.size(), 1u);
  return messages.empty() ? PulledMessage{} : messages.front();
}

TEST(SendMessageProcessor, V2SendAutoCreatesTheTopicAndAnswersWhereItWasStored) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  store::MessageProperties properties{{"TAGS", "TagA"}, {"KEYS", "order-1"}, {"WAIT", "true"}};
  RemotingCommand response = world.must_call(send_v2("TopicA", "hello", 2, properties));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  EXPECT_TRUE(response.is_response());
  EXPECT_EQ(*response.find_ext("queueId"), "2");
  EXPECT_EQ(*response.find_ext("queueOffset"), "0");
  EXPECT_EQ(*response.find_ext("MSG_REGION"), "DefaultRegion");
  EXPECT_EQ(*response.find_ext("TRACE_ON"), "true");
  // Offset msgId of the store host 10.0.0.1:10911 and commitlog offset 0.
  EXPECT_EQ(*response.find_ext("msgId"), "0A00000100002A9F0000000000000000");

  const meta::TopicConfig* topic = world.broker().topic_config_manager().find("TopicA");
  ASSERT_NE(topic, nullptr);
  EXPECT_EQ(topic->writeQueueNums, 4);  // min(d = 4, TBW102's 8)
  EXPECT_EQ(topic->perm, 6);            // TBW102's perm without INHERIT

  const PulledMessage stored = stored_record(world, *response.find_ext("msgId"));
  EXPECT_EQ(stored.topic, "TopicA");
  EXPECT_EQ(stored.queue_id, 2);
  EXPECT_EQ(stored.body, "hello");
  EXPECT_EQ(stored.properties.at("TAGS"), "TagA");
  EXPECT_EQ(stored.properties.at("KEYS"), "order-1");
  EXPECT_EQ(stored.properties.at("CLUSTER"), "DefaultCluster");
  EXPECT_FALSE(stored.properties.contains("WAIT"));  // used for the flush decision, not stored
  EXPECT_EQ(stored.born_host, store::HostAddress::ipv4(10, 0, 0, 9, stored.born_host.port));
  EXPECT_GT(stored.born_host.port, 0);
  EXPECT_EQ(stored.store_host, store::HostAddress::ipv4(10, 0, 0, 1, 10911));

  RemotingCommand second = world.must_call(send_v2("TopicA", "again", 2));
  ASSERT_EQ(second.code, ResponseCode::SUCCESS);
  EXPECT_EQ(*second.find_ext("queueOffset"), "1");
}

// The broker's CLUSTER property wins over one the client set; properties
// that sort before it (and after) are stored as sent.
TEST(SendMessageProcessor, TheBrokersClusterPropertyReplacesTheClients) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  store::MessageProperties properties{{"A", "first"}, {"CLUSTER", "SomeoneElse"}, {"TAGS", "TagA"}};
  RemotingCommand response = world.must_call(send_v2("TopicC", "hello", 0, properties));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  const PulledMessage stored = stored_record(world, *response.find_ext("msgId"));
  EXPECT_EQ(stored.properties.at("CLUSTER"), "DefaultCluster");
  EXPECT_EQ(stored.properties.at("A"), "first");
  EXPECT_EQ(stored.properties.at("TAGS"), "TagA");
}

// A JSON request's answer has its header written straight from its fields;
// a ROCKETMQ-header request's is a command encoded in kind: the same fields.
TEST(SendMessageProcessor, TheAnswerHasTheSameFieldsInEitherHeaderType) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand binary_request = send_v2("TopicB", "binary", 1);
  binary_request.serialize_type = remoting::SerializeType::ROCKETMQ;
  const RemotingCommand binary = world.must_call(std::move(binary_request));
  const RemotingCommand json = world.must_call(send_v2("TopicB", "json", 1));
  ASSERT_EQ(binary.code, ResponseCode::SUCCESS) << binary.remark;
  ASSERT_EQ(json.code, ResponseCode::SUCCESS) << json.remark;
  EXPECT_EQ(binary.serialize_type, remoting::SerializeType::ROCKETMQ);
  EXPECT_EQ(json.serialize_type, remoting::SerializeType::JSON);
  for (const std::string_view name : {"MSG_REGION", "TRACE_ON", "queueId"}) {
    ASSERT_NE(binary.find_ext(name), nullptr) << name;
    ASSERT_NE(json.find_ext(name), nullptr) << name;
    EXPECT_EQ(*binary.find_ext(name), *json.find_ext(name)) << name;
  }
  EXPECT_EQ(*binary.find_ext("queueOffset"), "0");
  EXPECT_EQ(*json.find_ext("queueOffset"), "1");
  EXPECT_EQ(stored_record(world, *binary.find_ext("msgId")).body, "binary");
  EXPECT_EQ(stored_record(world, *json.find_ext("msgId")).body, "json");
  EXPECT_EQ(binary.ext_fields.size(), json.ext_fields.size());
}

TEST(SendMessageProcessor, V1SendReadsTheLongFieldNames) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand response = world.must_call(send_v1("TopicV1", "v1 body", 1, {{"TAGS", "T1"}}));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  EXPECT_EQ(*response.find_ext("queueId"), "1");
  EXPECT_EQ(*response.find_ext("queueOffset"), "0");
  const PulledMessage stored = stored_record(world, *response.find_ext("msgId"));
  EXPECT_EQ(stored.topic, "TopicV1");
  EXPECT_EQ(stored.body, "v1 body");
  EXPECT_EQ(stored.properties.at("TAGS"), "T1");
}

TEST(SendMessageProcessor, NegativeQueueIdLetsTheBrokerPickAWriteQueue) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  for (int i = 0; i < 8; ++i) {
    RemotingCommand response = world.must_call(send_v2("TopicR", "m", -1));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    const int queue_id = std::stoi(std::string(*response.find_ext("queueId")));
    EXPECT_GE(queue_id, 0);
    EXPECT_LT(queue_id, 4);
  }
}

TEST(SendMessageProcessor, QueueIdBeyondTheTopicsQueuesIsASystemError) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  ASSERT_EQ(world.must_call(send_v2("TopicQ", "m", 0)).code, ResponseCode::SUCCESS);
  RemotingCommand response = world.must_call(send_v2("TopicQ", "m", 4));  // 4 queues: 0..3
  EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(response.remark.find("queueId[4] is illegal"), std::string::npos) << response.remark;
}

TEST(SendMessageProcessor, WithoutAutoCreateAnUnknownTopicDoesNotExist) {
  BrokerConfig config = test_broker_config();
  config.autoCreateTopicEnable = false;
  BrokerSimWorld world(config);
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand response = world.must_call(send_v2("Unknown", "m"));
  EXPECT_EQ(response.code, ResponseCode::TOPIC_NOT_EXIST);
  EXPECT_NE(response.remark.find("topic[Unknown] not exist"), std::string::npos) << response.remark;
  EXPECT_EQ(world.broker().topic_config_manager().find("Unknown"), nullptr);
  EXPECT_EQ(world.broker().topic_config_manager().find("TBW102"), nullptr);
}

TEST(SendMessageProcessor, InvalidAndSystemTopicsAreRefused) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  EXPECT_EQ(world.must_call(send_v2("bad topic", "m")).code, ResponseCode::SYSTEM_ERROR);
  RemotingCommand schedule = world.must_call(send_v2("SCHEDULE_TOPIC_XXXX", "m"));
  EXPECT_EQ(schedule.code, ResponseCode::NO_PERMISSION);
  EXPECT_EQ(schedule.remark, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.");
}

TEST(SendMessageProcessor, MissingRequiredFieldsAreNamedInASystemError) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand v2 = send_v2("TopicA", "m");
  v2.ext_fields.erase("b");
  RemotingCommand response = world.must_call(v2);
  EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(response.remark.find("b"), std::string::npos) << response.remark;
  EXPECT_NE(response.remark.find("null"), std::string::npos) << response.remark;

  RemotingCommand v1 = send_v1("TopicA", "m");
  v1.ext_fields.erase("queueId");
  response = world.must_call(v1);
  EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(response.remark.find("queueId"), std::string::npos) << response.remark;

  RemotingCommand malformed = send_v2("TopicA", "m");
  malformed.ext_fields.insert_or_assign("e", "zero");
  response = world.must_call(malformed);
  EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(response.remark.find("e"), std::string::npos) << response.remark;
  // The broker is still there.
  EXPECT_EQ(world.must_call(send_v2("TopicA", "m")).code, ResponseCode::SUCCESS);
}

// parse_send_message_header puts each field in a slot by its V2 letter or
// V1 name in one walk: fields it does not read (V2's m and n, names of the
// other version, longer names) must land nowhere, and both versions of one
// header read the same; the first bad field in RocketMQ's order is named.
TEST(SendMessageRequestHeaderParse, BothVersionsReadTheSameAndIgnoreOtherFields) {
  RemotingCommand v2 = send_v2("TopicA", "m", 3, {{"KEYS", "k1"}});
  RemotingCommand v1 = send_v1("TopicA", "m", 3);
  for (const char* name : {"m", "n", "z", "aa", "topic", "A"}) v2.ext_fields.insert_or_assign(name, "junk");
  for (const char* name : {"a", "b", "topicX", "flagg", "zzz"}) v1.ext_fields.insert_or_assign(name, "junk");
  Result<SendMessageRequestHeader> from_v2 = parse_send_message_header(v2);
  Result<SendMessageRequestHeader> from_v1 = parse_send_message_header(v1);
  ASSERT_TRUE(from_v2.ok()) << from_v2.status().message();
  ASSERT_TRUE(from_v1.ok()) << from_v1.status().message();
  EXPECT_EQ(from_v2->topic, "TopicA");
  EXPECT_EQ(from_v2->queueId, 3);
  EXPECT_NE(from_v2->properties.find("k1"), std::string::npos);
  EXPECT_EQ(from_v1->topic, from_v2->topic);
  EXPECT_EQ(from_v1->producerGroup, from_v2->producerGroup);
  EXPECT_EQ(from_v1->defaultTopic, from_v2->defaultTopic);
  EXPECT_EQ(from_v1->defaultTopicQueueNums, from_v2->defaultTopicQueueNums);
  EXPECT_EQ(from_v1->queueId, from_v2->queueId);
  EXPECT_EQ(from_v1->sysFlag, from_v2->sysFlag);
  // The two helpers differ in flag and bornTimestamp: each must read its own.
  EXPECT_EQ(from_v1->flag, 7);
  EXPECT_EQ(from_v2->flag, 0);
  EXPECT_EQ(from_v1->bornTimestamp, 1'700'000'000'456);
  EXPECT_EQ(from_v2->bornTimestamp, 1'700'000'000'123);
  EXPECT_EQ(from_v1->reconsumeTimes, from_v2->reconsumeTimes);
  EXPECT_EQ(from_v1->unitMode, from_v2->unitMode);

  v2.ext_fields.insert_or_assign("k", "maybe");  // unitMode
  v2.ext_fields.insert_or_assign("h", "x");      // flag, checked first
  Result<SendMessageRequestHeader> bad = parse_send_message_header(v2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "the custom field <h> is not a valid int32: \"x\"");
}

TEST(SendMessageProcessor, RetryTopicSendsGoToTheDlqAfterMaxReconsumeTimes) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  // A reconsumed copy sent by a client's hidden producer (ali-ons' fallback).
  RemotingCommand retry = send_v2("%RETRY%G", "again", 0, {{"RETRY_TOPIC", "TopicA"}}, 3);
  retry.set_ext_int("l", 16);
  RemotingCommand response = world.must_call(retry);
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  PulledMessage stored = stored_record(world, *response.find_ext("msgId"));
  EXPECT_EQ(stored.topic, "%RETRY%G");
  EXPECT_EQ(stored.reconsume_times, 3);

  RemotingCommand dead = send_v2("%RETRY%G", "dead", 0, {{"RETRY_TOPIC", "TopicA"}}, 16);
  dead.set_ext_int("l", 16);
  response = world.must_call(dead);
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  stored = stored_record(world, *response.find_ext("msgId"));
  EXPECT_EQ(stored.topic, "%DLQ%G");
  EXPECT_EQ(*response.find_ext("queueId"), "0");
  EXPECT_NE(world.broker().topic_config_manager().find("%DLQ%G"), nullptr);
}

TEST(SendMessageProcessor, TransactionalHalfMessagesAreRefused) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand response = world.must_call(send_v2("TopicT", "half", 0, {{"TRAN_MSG", "true"}}));
  EXPECT_EQ(response.code, ResponseCode::NO_PERMISSION);
  EXPECT_NE(response.remark.find("transaction"), std::string::npos);
  // Boolean.parseBoolean: "true" in any case is a half message, anything
  // else (longer, shorter, other words) is an ordinary one and is stored.
  for (const char* value : {"TRUE", "True", "tRuE"}) {
    EXPECT_EQ(world.must_call(send_v2("TopicT", "half", 0, {{"TRAN_MSG", value}})).code, ResponseCode::NO_PERMISSION)
        << value;
  }
  for (const char* value : {"", "tru", "truee", "yes", "1", "false"}) {
    RemotingCommand stored = world.must_call(send_v2("TopicT", "plain", 0, {{"TRAN_MSG", value}}));
    EXPECT_EQ(stored.code, ResponseCode::SUCCESS) << value << ": " << stored.remark;
  }
  // A redelivery (reconsumed, with a delay level) of a half message is not
  // refused: the transaction was committed before it was first consumed.
  RemotingCommand redelivered = world.must_call(send_v2("TopicT", "again", 0, {{"TRAN_MSG", "true"}, {"DELAY", "3"}}, 1));
  EXPECT_EQ(redelivered.code, ResponseCode::SUCCESS) << redelivered.remark;
  RemotingCommand reconsumed_no_delay = world.must_call(send_v2("TopicT", "again", 0, {{"TRAN_MSG", "true"}}, 1));
  EXPECT_EQ(reconsumed_no_delay.code, ResponseCode::NO_PERMISSION);
}

TEST(SendMessageProcessor, AFullDiskAnswersServiceNotAvailableUntilSpaceReturns) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  ASSERT_EQ(world.must_call(send_v2("TopicD", "before")).code, ResponseCode::SUCCESS);
  world.disk().set_capacity_bytes(world.disk().used_bytes());
  world.run_for(seconds(3));  // the store notices at its next space check (cleanResourceInterval)
  RemotingCommand refused = world.must_call(send_v2("TopicD", "while full"));
  EXPECT_EQ(refused.code, ResponseCode::SERVICE_NOT_AVAILABLE) << refused.remark;
  EXPECT_EQ(refused.find_ext("msgId"), nullptr);
  EXPECT_EQ(world.broker().message_store().max_offset_in_queue("TopicD", 0), QueueOffset(1));

  world.disk().set_capacity_bytes(1ull << 30);
  world.run_for(seconds(3));
  EXPECT_EQ(world.must_call(send_v2("TopicD", "after")).code, ResponseCode::SUCCESS);
}

TEST(PutStatusResponse, MapsEveryStatusToRocketMqsCode) {
  using store::PutMessageStatus;
  auto code_of = [](PutMessageStatus status) {
    store::PutMessageResult result;
    result.status = status;
    return put_status_response(result);
  };
  EXPECT_EQ(code_of(PutMessageStatus::PUT_OK).code, ResponseCode::SUCCESS);
  EXPECT_EQ(code_of(PutMessageStatus::FLUSH_DISK_TIMEOUT).code, ResponseCode::FLUSH_DISK_TIMEOUT);
  EXPECT_TRUE(code_of(PutMessageStatus::FLUSH_DISK_TIMEOUT).stored);
  EXPECT_EQ(code_of(PutMessageStatus::FLUSH_SLAVE_TIMEOUT).code, ResponseCode::FLUSH_SLAVE_TIMEOUT);
  EXPECT_EQ(code_of(PutMessageStatus::SLAVE_NOT_AVAILABLE).code, ResponseCode::SLAVE_NOT_AVAILABLE);
  EXPECT_EQ(code_of(PutMessageStatus::SERVICE_NOT_AVAILABLE).code, ResponseCode::SERVICE_NOT_AVAILABLE);
  EXPECT_FALSE(code_of(PutMessageStatus::SERVICE_NOT_AVAILABLE).stored);
  EXPECT_EQ(code_of(PutMessageStatus::CREATE_MAPEDFILE_FAILED).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(code_of(PutMessageStatus::MESSAGE_ILLEGAL).code, ResponseCode::MESSAGE_ILLEGAL);
  EXPECT_EQ(code_of(PutMessageStatus::PROPERTIES_SIZE_EXCEEDED).code, ResponseCode::MESSAGE_ILLEGAL);
  EXPECT_EQ(code_of(PutMessageStatus::OS_PAGECACHE_BUSY).code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(code_of(PutMessageStatus::UNKNOWN_ERROR).code, ResponseCode::SYSTEM_ERROR);
}

TEST(SendMessageProcessor, OversizeBodyIsMessageIllegal) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand response = world.must_call(send_v2("TopicBig", std::string(5000, 'x')));  // maxMessageSize 4096
  EXPECT_EQ(response.code, ResponseCode::MESSAGE_ILLEGAL) << response.remark;
}

TEST(HostAddress, LoopbackAndMappedIpv6BecomeIpv4AndNamesBecomeZero) {
  EXPECT_EQ(born_host_of("10.0.0.9:5000"), store::HostAddress::ipv4(10, 0, 0, 9, 5000));
  EXPECT_EQ(born_host_of("[::1]:5000"), store::HostAddress::ipv4(127, 0, 0, 1, 5000));
  EXPECT_EQ(born_host_of("[::ffff:192.168.1.2]:77"), store::HostAddress::ipv4(192, 168, 1, 2, 77));
  EXPECT_TRUE(born_host_of("[2001:db8::1]:1").ipv6);
  EXPECT_EQ(born_host_of("client-host:5000"), store::HostAddress::ipv4(0, 0, 0, 0, 0));
  EXPECT_EQ(born_host_of("garbage"), store::HostAddress::ipv4(0, 0, 0, 0, 0));
  EXPECT_TRUE(is_ip_literal("10.0.0.1"));
  EXPECT_FALSE(is_ip_literal("broker-a"));
}

}  // namespace
}  // namespace mqlab::broker::testing::send_message_processor_test
