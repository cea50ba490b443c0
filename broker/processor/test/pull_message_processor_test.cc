// PULL_MESSAGE against a BrokerController on the simulator: FOUND bodies
// decoded record by record, every result code with its offsets, tag
// filtering, long polling (woken by a message, or timed out), the commit
// offset flag, access checks and missing fields.
#include <gtest/gtest.h>

#include "broker/processor/pull_message_processor.h"
#include "broker/processor/subscription_filter.h"
#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::broker::testing::pull_message_processor_test {
namespace {

int64_t ext_int(const RemotingCommand& response, const char* name) {
  const std::string_view* value = response.find_ext(name);
  EXPECT_NE(value, nullptr) << name << " missing in " << response.describe();
  return value ? std::stoll(std::string(*value)) : -999;
}

class PullMessageTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(world_.start_broker().ok()); }

  void send(const std::string& topic, int32_t queue_id, const std::string& body, const std::string& tags = "") {
    store::MessageProperties properties;
    if (!tags.empty()) properties["TAGS"] = tags;
    RemotingCommand response = world_.must_call(send_v2(topic, body, queue_id, properties));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
  // The dispatcher makes a message pullable shortly after its put.
  void settle() { world_.run_for(millis(50)); }

  BrokerSimWorld world_;
};

TEST_F(PullMessageTest, FoundReturnsTheRawRecordsAndTheOffsets) {
  for (int i = 0; i < 3; ++i) send("TopicA", 1, "body-" + std::to_string(i));
  settle();
  RemotingCommand response = world_.must_call(pull("G", "TopicA", 1, 0));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  EXPECT_EQ(response.remark, "FOUND");
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 3);
  EXPECT_EQ(ext_int(response, "minOffset"), 0);
  EXPECT_EQ(ext_int(response, "maxOffset"), 3);
  EXPECT_EQ(ext_int(response, "suggestWhichBrokerId"), 0);
  std::vector<PulledMessage> messages = decode_records(response.body);
  ASSERT_EQ(messages.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(messages[i].body, "body-" + std::to_string(i));
    EXPECT_EQ(messages[i].queue_offset, i);
    EXPECT_EQ(messages[i].topic, "TopicA");
    EXPECT_FALSE(messages[i].born_host.ipv6);  // ali-ons reads 4-byte hosts only
  }
  // maxMsgNums bounds the batch; nextBeginOffset follows it.
  PullOptions two;
  two.max_msg_nums = 2;
  response = world_.must_call(pull("G", "TopicA", 1, 1, two));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS);
  EXPECT_EQ(decode_records(response.body).size(), 2u);
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 3);
}

// A record the copy path cannot read (here: its segment cut short under
// it) ends the body: the answer carries the records before it and a
// nextBeginOffset at it, so the consumer asks for it again rather than
// skipping it (and the records after it) as if they had been delivered.
TEST_F(PullMessageTest, ARecordThatCannotBeReadEndsTheBodyAndTheNextPullStartsAtIt) {
  for (int i = 0; i < 3; ++i) send("TopicR", 0, "body-" + std::to_string(i));
  settle();
  PullOptions one;
  one.max_msg_nums = 1;
  const RemotingCommand first = world_.must_call(pull("G", "TopicR", 0, 0, one));
  ASSERT_EQ(first.code, ResponseCode::SUCCESS) << first.remark;
  const size_t first_record_bytes = first.body.size();  // the segment's first record starts at 0
  Result<std::shared_ptr<env::File>> segment =
      world_.broker().env().files().open("/store/commitlog/00000000000000000000", env::OpenOptions{});
  ASSERT_TRUE(segment.ok()) << segment.status().to_string();
  ASSERT_TRUE((*segment)->truncate(first_record_bytes + 10).ok());  // the second record cut short
  for (const bool json : {true, false}) {
    RemotingCommand request = pull("G", "TopicR", 0, 0);
    if (!json) request.serialize_type = remoting::SerializeType::ROCKETMQ;
    const RemotingCommand response = world_.must_call(std::move(request));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    const std::vector<PulledMessage> messages = decode_records(response.body);
    ASSERT_EQ(messages.size(), 1u) << (json ? "JSON" : "ROCKETMQ");
    EXPECT_EQ(messages[0].body, "body-0");
    EXPECT_EQ(ext_int(response, "nextBeginOffset"), 1) << (json ? "JSON" : "ROCKETMQ");
  }
}

TEST_F(PullMessageTest, EveryStoreOutcomeHasItsCodeAndOffsets) {
  send("TopicA", 0, "only");
  settle();
  PullOptions no_suspend;
  no_suspend.sys_flag = 4;  // SUBSCRIPTION only: answer at once
  // offset == max: nothing new.
  RemotingCommand at_max = world_.must_call(pull("G", "TopicA", 0, 1, no_suspend));
  EXPECT_EQ(at_max.code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(at_max.remark, "OFFSET_OVERFLOW_ONE");
  EXPECT_EQ(ext_int(at_max, "nextBeginOffset"), 1);
  EXPECT_EQ(ext_int(at_max, "maxOffset"), 1);
  EXPECT_TRUE(at_max.body.empty());
  // offset > max: moved to max (min is 0, so RocketMQ corrects to min).
  RemotingCommand beyond = world_.must_call(pull("G", "TopicA", 0, 9, no_suspend));
  EXPECT_EQ(beyond.code, ResponseCode::PULL_OFFSET_MOVED);
  EXPECT_EQ(ext_int(beyond, "nextBeginOffset"), 0);
  // An empty (never written) queue: NOT_FOUND at 0, OFFSET_MOVED elsewhere.
  RemotingCommand empty0 = world_.must_call(pull("G", "TopicA", 3, 0, no_suspend));
  EXPECT_EQ(empty0.code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(ext_int(empty0, "nextBeginOffset"), 0);
  EXPECT_EQ(ext_int(empty0, "minOffset"), 0);
  EXPECT_EQ(ext_int(empty0, "maxOffset"), 0);
  RemotingCommand empty5 = world_.must_call(pull("G", "TopicA", 3, 5, no_suspend));
  EXPECT_EQ(empty5.code, ResponseCode::PULL_OFFSET_MOVED);
  EXPECT_EQ(ext_int(empty5, "nextBeginOffset"), 0);
  // Everything filtered out: retry at once, past the scanned entries.
  no_suspend.subscription = "TagB";
  RemotingCommand filtered = world_.must_call(pull("G", "TopicA", 0, 0, no_suspend));
  EXPECT_EQ(filtered.code, ResponseCode::PULL_RETRY_IMMEDIATELY);
  EXPECT_EQ(filtered.remark, "NO_MATCHED_MESSAGE");
  EXPECT_EQ(ext_int(filtered, "nextBeginOffset"), 1);
  EXPECT_TRUE(filtered.body.empty());
}

TEST_F(PullMessageTest, RetentionMovesAnOffsetBelowTheMinimumToIt) {
  // Enough messages to fill several ConsumeQueue files (64 entries each) and commitlog segments.
  const std::string body(3000, 'r');
  for (int i = 0; i < 100; ++i) send("TopicOld", 0, body);
  settle();
  world_.disk().set_capacity_bytes(world_.disk().used_bytes() * 100 / 88);  // over 85%: delete forcibly
  world_.run_for(seconds(5));
  world_.disk().set_capacity_bytes(1ull << 30);
  const QueueOffset min = world_.broker().message_store().min_offset_in_queue("TopicOld", 0);
  ASSERT_GT(min.value(), 0) << "retention deleted nothing; the test needs it to";
  PullOptions no_suspend;
  no_suspend.sys_flag = 4;
  RemotingCommand response = world_.must_call(pull("G", "TopicOld", 0, 0 + 1, no_suspend));
  EXPECT_EQ(response.code, ResponseCode::PULL_OFFSET_MOVED);
  EXPECT_EQ(response.remark, "OFFSET_TOO_SMALL");
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), min.value());
}

TEST_F(PullMessageTest, TagsFilterByHashAndSplitOnDoubleBars) {
  send("TopicT", 0, "a", "TagA");
  send("TopicT", 0, "b", "TagB");
  send("TopicT", 0, "c", "TagC");
  send("TopicT", 0, "none");
  settle();
  PullOptions options;
  options.subscription = "TagA || TagC";
  RemotingCommand response = world_.must_call(pull("G", "TopicT", 0, 0, options));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS);
  std::vector<PulledMessage> messages = decode_records(response.body);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].body, "a");
  EXPECT_EQ(messages[1].body, "c");
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 4);  // scanned past the filtered ones

  options.subscription = "*";
  response = world_.must_call(pull("G", "TopicT", 0, 0, options));
  EXPECT_EQ(decode_records(response.body).size(), 4u);

  options.subscription = "||";
  response = world_.must_call(pull("G", "TopicT", 0, 0, options));
  EXPECT_EQ(response.code, ResponseCode::SUBSCRIPTION_PARSE_FAILED);
}

// The broker filters by TAG alone (no filter server, enablePropertyFilter
// off): a pull naming another expression type is refused whatever its
// subscription, "*" included.
TEST_F(PullMessageTest, AnExpressionTypeOtherThanTagIsRefused) {
  send("TopicE", 0, "a", "TagA");
  settle();
  for (const std::string subscription : {"*", "TagA"}) {
    PullOptions options;
    options.subscription = subscription;
    RemotingCommand request = pull("G", "TopicE", 0, 0, options);
    request.set_ext_string("expressionType", "SQL92");
    const RemotingCommand refused = world_.must_call(request);
    EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR) << subscription;
    EXPECT_EQ(refused.remark, "The broker does not support consumer to filter message by SQL92") << subscription;
    request.set_ext_string("expressionType", "TAG");
    EXPECT_EQ(world_.must_call(request).code, ResponseCode::SUCCESS) << subscription;
  }
}

TEST_F(PullMessageTest, ALongPollIsAnsweredWhenAMessageArrives) {
  send("TopicL", 0, "first");
  settle();
  const Nanos parked_at = world_.now();
  PendingCall parked = world_.call_async(pull("G", "TopicL", 0, 1), seconds(30));
  world_.run_for(seconds(2));
  ASSERT_FALSE(parked->has_value()) << "a pull with SUSPEND at the queue's end must be held";
  EXPECT_EQ(world_.broker().pull_request_hold_service().parked_count(), 1u);
  send("TopicL", 0, "second");
  world_.run_until([&] { return parked->has_value(); });
  ASSERT_TRUE(parked->has_value());
  ASSERT_TRUE((*parked)->ok());
  const RemotingCommand& response = (*parked)->value();
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  std::vector<PulledMessage> messages = decode_records(response.body);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].body, "second");
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 2);
  EXPECT_LT(world_.now() - parked_at, seconds(3));  // at the arrival, not at a 5 s check
  EXPECT_EQ(world_.broker().pull_request_hold_service().parked_count(), 0u);
}

TEST_F(PullMessageTest, ALongPollIsAnsweredNotFoundWhenItsHoldTimeIsUp) {
  send("TopicL", 0, "first");
  settle();
  PullOptions options;
  options.suspend_timeout_ms = 7'000;
  const Nanos parked_at = world_.now();
  PendingCall parked = world_.call_async(pull("G", "TopicL", 0, 1, options), seconds(30));
  world_.run_for(millis(6'900));
  EXPECT_FALSE(parked->has_value());
  world_.run_until([&] { return parked->has_value(); });
  ASSERT_TRUE(parked->has_value() && (*parked)->ok());
  const RemotingCommand& response = (*parked)->value();
  EXPECT_EQ(response.code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 1);
  const Nanos held = world_.now() - parked_at;
  EXPECT_GE(held, millis(7'000));
  EXPECT_LT(held, millis(7'100));
}

// Each parked pull's hold timer finds its queue's entry in the hold table:
// two on one queue expire one after the other, and a pull parked after the
// queue's entry was emptied (by a wake) and made again still expires.
TEST_F(PullMessageTest, HoldTimesExpireThroughTheQueuesEntriesComingAndGoing) {
  send("TopicE", 0, "first");
  settle();
  PullOptions short_hold;
  short_hold.suspend_timeout_ms = 2'000;
  PullOptions long_hold;
  long_hold.suspend_timeout_ms = 4'000;
  const Nanos parked_at = world_.now();
  PendingCall early = world_.call_async(pull("G", "TopicE", 0, 1, short_hold), seconds(30));
  PendingCall late = world_.call_async(pull("G", "TopicE", 0, 1, long_hold), seconds(30));
  world_.run_until([&] { return early->has_value(); }, seconds(3));
  ASSERT_TRUE(early->has_value() && (*early)->ok());
  EXPECT_EQ((*early)->value().code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_FALSE(late->has_value());
  EXPECT_EQ(world_.broker().pull_request_hold_service().parked_count(), 1u);
  world_.run_until([&] { return late->has_value(); }, seconds(3));
  ASSERT_TRUE(late->has_value() && (*late)->ok());
  EXPECT_EQ((*late)->value().code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_GE(world_.now() - parked_at, millis(4'000));
  EXPECT_EQ(world_.broker().pull_request_hold_service().parked_count(), 0u);

  // Parked, woken by a message (the queue's entry goes), parked again.
  PendingCall woken = world_.call_async(pull("G", "TopicE", 0, 1, long_hold), seconds(30));
  world_.run_for(millis(500));
  send("TopicE", 0, "second");
  world_.run_until([&] { return woken->has_value(); }, seconds(3));
  ASSERT_TRUE(woken->has_value() && (*woken)->ok());
  EXPECT_EQ((*woken)->value().code, ResponseCode::SUCCESS);
  const Nanos reparked_at = world_.now();
  PendingCall again = world_.call_async(pull("G", "TopicE", 0, 2, short_hold), seconds(30));
  world_.run_until([&] { return again->has_value(); }, seconds(3));
  ASSERT_TRUE(again->has_value() && (*again)->ok());
  EXPECT_EQ((*again)->value().code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_GE(world_.now() - reparked_at, millis(2'000));
  EXPECT_EQ(world_.broker().pull_request_hold_service().parked_count(), 0u);
}

TEST_F(PullMessageTest, ALongPollOnANewQueueIsWokenByItsFirstMessage) {
  send("TopicN", 0, "elsewhere");  // creates the topic; queue 2 stays empty
  PendingCall parked = world_.call_async(pull("G", "TopicN", 2, 0), seconds(30));
  world_.run_for(seconds(1));
  ASSERT_FALSE(parked->has_value());
  send("TopicN", 2, "first of queue 2");
  world_.run_until([&] { return parked->has_value(); });
  ASSERT_TRUE(parked->has_value() && (*parked)->ok());
  EXPECT_EQ((*parked)->value().code, ResponseCode::SUCCESS);
  EXPECT_EQ(decode_records((*parked)->value().body).at(0).body, "first of queue 2");
}

TEST_F(PullMessageTest, ALongPollIgnoresMessagesItsTagsDoNotMatch) {
  send("TopicF", 0, "x", "TagA");
  settle();
  PullOptions options;
  options.subscription = "TagB";
  options.suspend_timeout_ms = 4'000;
  PendingCall parked = world_.call_async(pull("G", "TopicF", 0, 1, options), seconds(30));
  world_.run_for(millis(500));
  send("TopicF", 0, "not for us", "TagA");
  world_.run_for(millis(500));
  EXPECT_FALSE(parked->has_value());
  send("TopicF", 0, "for us", "TagB");
  world_.run_until([&] { return parked->has_value(); });
  ASSERT_TRUE(parked->has_value() && (*parked)->ok());
  const RemotingCommand& response = (*parked)->value();
  ASSERT_EQ(response.code, ResponseCode::SUCCESS);
  EXPECT_EQ(decode_records(response.body).at(0).body, "for us");
}

// A parked pull keeps its channel, not its request: its answer must still
// carry the request's opaque (the client matches answers by it, so a wrong
// one is never seen) and come in the request's serialize type.
TEST_F(PullMessageTest, WokenLongPollsAreAnsweredWithTheirRequestsOpaqueAndSerializeType) {
  send("TopicW", 0, "first");
  settle();
  RemotingCommand binary = pull("G", "TopicW", 0, 1);
  binary.serialize_type = remoting::SerializeType::ROCKETMQ;
  PendingCall parked_binary = world_.call_async(std::move(binary), seconds(30));
  PendingCall parked_json = world_.call_async(pull("G", "TopicW", 0, 1), seconds(30));
  world_.run_for(seconds(1));
  ASSERT_EQ(world_.broker().pull_request_hold_service().parked_count(), 2u);
  send("TopicW", 0, "second");
  world_.run_until([&] { return parked_binary->has_value() && parked_json->has_value(); }, seconds(3));
  ASSERT_TRUE(parked_binary->has_value() && (*parked_binary)->ok());
  ASSERT_TRUE(parked_json->has_value() && (*parked_json)->ok());
  for (const RemotingCommand* response : {&(*parked_binary)->value(), &(*parked_json)->value()}) {
    ASSERT_EQ(response->code, ResponseCode::SUCCESS) << response->remark;
    EXPECT_EQ(response->remark, "FOUND");
    EXPECT_TRUE(response->is_response());
    EXPECT_EQ(decode_records(response->body).at(0).body, "second");
  }
  EXPECT_EQ((*parked_binary)->value().serialize_type, remoting::SerializeType::ROCKETMQ);
  EXPECT_EQ((*parked_json)->value().serialize_type, remoting::SerializeType::JSON);
  // The JSON answer's header is written straight from its fields, the
  // binary one's set on a command: the same fields either way.
  EXPECT_EQ((*parked_binary)->value().ext_fields, (*parked_json)->value().ext_fields);
  EXPECT_EQ((*parked_json)->value().ext_int("nextBeginOffset").value(), 2);
  EXPECT_EQ((*parked_json)->value().ext_int("maxOffset").value(), 2);
}

TEST_F(PullMessageTest, WithoutLongPollingAPullIsHeldForShortPollingTimeMills) {
  ASSERT_TRUE(world_.shutdown_broker().ok());
  world_.config().longPollingEnable = false;
  ASSERT_TRUE(world_.start_broker().ok());
  send("TopicS", 0, "one");
  settle();
  const Nanos parked_at = world_.now();
  PendingCall parked = world_.call_async(pull("G", "TopicS", 0, 1), seconds(30));
  world_.run_until([&] { return parked->has_value(); });
  ASSERT_TRUE(parked->has_value() && (*parked)->ok());
  EXPECT_EQ((*parked)->value().code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_GE(world_.now() - parked_at, millis(1'000));
  EXPECT_LT(world_.now() - parked_at, millis(1'100));
}

TEST_F(PullMessageTest, CommitOffsetFlagStoresTheConsumersOffset) {
  send("TopicC", 0, "m");
  settle();
  PullOptions options;
  options.sys_flag = 1 | 4;  // COMMIT_OFFSET | SUBSCRIPTION
  options.commit_offset = 1;
  ASSERT_EQ(world_.must_call(pull("G", "TopicC", 0, 1, options)).code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(world_.broker().consumer_offset_manager().query_offset("G", "TopicC", 0), std::optional<int64_t>(1));
  options.commit_offset = -1;  // nothing to commit yet: ignored
  world_.must_call(pull("G", "TopicC", 0, 1, options));
  EXPECT_EQ(world_.broker().consumer_offset_manager().query_offset("G", "TopicC", 0), std::optional<int64_t>(1));
}

TEST_F(PullMessageTest, AccessChecksComeInRocketMqsOrder) {
  send("TopicA", 0, "m");
  RemotingCommand unknown_topic = world_.must_call(pull("G", "NoSuchTopic", 0, 0));
  EXPECT_EQ(unknown_topic.code, ResponseCode::TOPIC_NOT_EXIST);
  RemotingCommand bad_queue = world_.must_call(pull("G", "TopicA", 4, 0));
  EXPECT_EQ(bad_queue.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_NE(bad_queue.remark.find("queueId[4] is illegal"), std::string::npos);
  // Without the SUBSCRIPTION flag the heartbeat's subscription is needed.
  PullOptions options;
  options.sys_flag = 0;
  EXPECT_EQ(world_.must_call(pull("G", "TopicA", 0, 0, options)).code, ResponseCode::SUBSCRIPTION_NOT_EXIST);
  ASSERT_EQ(world_.must_call(heartbeat("10.0.0.9@1", "G", {"TopicA"})).code, ResponseCode::SUCCESS);
  settle();
  EXPECT_EQ(world_.must_call(pull("G", "TopicA", 0, 0, options)).code, ResponseCode::SUCCESS);
  RemotingCommand other_topic = world_.must_call(pull("G", "%RETRY%G", 0, 0, options));
  EXPECT_EQ(other_topic.code, ResponseCode::SUBSCRIPTION_NOT_EXIST);
  // A group that is not allowed to consume.
  meta::SubscriptionGroupConfig disabled;
  disabled.groupName = "Disabled";
  disabled.consumeEnable = false;
  ASSERT_TRUE(world_.broker().subscription_group_manager().create_or_update(disabled).ok());
  EXPECT_EQ(world_.must_call(pull("Disabled", "TopicA", 0, 0)).code, ResponseCode::NO_PERMISSION);
}

TEST_F(PullMessageTest, WithoutAutoCreateSubscriptionGroupAnUnknownGroupIsRefused) {
  ASSERT_TRUE(world_.shutdown_broker().ok());
  world_.config().autoCreateSubscriptionGroup = false;
  ASSERT_TRUE(world_.start_broker().ok());
  send("TopicA", 0, "m");
  EXPECT_EQ(world_.must_call(pull("Stranger", "TopicA", 0, 0)).code, ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST);
}

TEST_F(PullMessageTest, MissingFieldsAreNamed) {
  for (const char* field : {"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag"}) {
    RemotingCommand request = pull("G", "TopicA", 0, 0);
    request.ext_fields.erase(field);
    RemotingCommand response = world_.must_call(request);
    EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR) << field;
    EXPECT_NE(response.remark.find(field), std::string::npos) << response.remark;
  }
}

TEST(PullMessageOnSlave, OffsetsAreNotCorrectedAndCommitsAreIgnored) {
  BrokerConfig config = test_broker_config();
  config.brokerId = 1;
  store::MessageStoreConfig store_config = test_store_config();
  store_config.brokerRole = store::BrokerRole::SLAVE;
  BrokerSimWorld world(config, store_config);
  ASSERT_TRUE(world.start_broker().ok());
  RemotingCommand create = request_with(RequestCode::UPDATE_AND_CREATE_TOPIC, {{"topic", "TopicA"},
                                                                              {"readQueueNums", "1"},
                                                                              {"writeQueueNums", "1"},
                                                                              {"perm", "6"},
                                                                              {"topicFilterType", "SINGLE_TAG"}});
  ASSERT_EQ(world.must_call(create).code, ResponseCode::SUCCESS);
  // A slave stores nothing a producer sends.
  EXPECT_EQ(world.must_call(send_v2("TopicA", "m")).code, ResponseCode::SERVICE_NOT_AVAILABLE);
  PullOptions options;
  options.sys_flag = 1 | 4;  // COMMIT_OFFSET | SUBSCRIPTION
  options.commit_offset = 3;
  RemotingCommand response = world.must_call(pull("G", "TopicA", 0, 5, options));
  EXPECT_EQ(response.code, ResponseCode::PULL_RETRY_IMMEDIATELY);  // a master would say PULL_OFFSET_MOVED
  EXPECT_EQ(ext_int(response, "nextBeginOffset"), 5);
  EXPECT_EQ(ext_int(response, "suggestWhichBrokerId"), 0);
  EXPECT_FALSE(world.broker().consumer_offset_manager().query_offset("G", "TopicA", 0).has_value());
}

TEST(SubscriptionFilter, ParsesRocketMqsSubscriptionStrings) {
  Result<SubscriptionFilter> all = build_subscription_filter("*");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->all);
  EXPECT_TRUE(all->store_filter().empty());
  Result<SubscriptionFilter> two = build_subscription_filter(" TagA ||TagB|| ");
  ASSERT_TRUE(two.ok());
  EXPECT_FALSE(two->all);
  EXPECT_EQ(two->tags, (std::set<std::string>{"TagA", "TagB"}));
  EXPECT_TRUE(two->matches(store::tags_code("TagA")));
  EXPECT_FALSE(two->matches(store::tags_code("TagC")));
  EXPECT_FALSE(two->matches(0));
  EXPECT_FALSE(build_subscription_filter("||").ok());
  // ali-ons tags a tag-less message "null": a subscription to it matches.
  Result<SubscriptionFilter> null_tag = build_subscription_filter("null");
  ASSERT_TRUE(null_tag.ok());
  EXPECT_TRUE(null_tag->matches(store::tags_code("null")));
}

}  // namespace
}  // namespace mqlab::broker::testing::pull_message_processor_test

namespace mqlab::broker::testing::pull_message_processor_test {
namespace {

// parse_pull_message_header walks the sorted fields once against its own
// sorted names: unknown names before, between and after the known ones
// (including prefixes and extensions of them) must not shift a slot.
TEST(PullMessageRequestHeaderParse, UnknownFieldsAroundKnownOnesChangeNothing) {
  PullOptions options;
  options.sys_flag = 1 | 4;  // COMMIT_OFFSET | SUBSCRIPTION
  options.commit_offset = 3;
  RemotingCommand request = pull("G", "TopicA", 2, 7, options);
  Result<PullMessageRequestHeader> plain = parse_pull_message_header(request);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  for (const char* name : {"", "a", "commit", "commitOffsetX", "queueI", "queueIdx", "sub", "subVersionZ", "sys",
                           "t", "topicZ", "zzz", "QUEUEID"}) {
    request.ext_fields.insert_or_assign(name, "junk");
  }
  Result<PullMessageRequestHeader> noisy = parse_pull_message_header(request);
  ASSERT_TRUE(noisy.ok()) << noisy.status().message();
  EXPECT_EQ(noisy->consumerGroup, "G");
  EXPECT_EQ(noisy->topic, "TopicA");
  EXPECT_EQ(noisy->queueId, 2);
  EXPECT_EQ(noisy->queueOffset, 7);
  EXPECT_EQ(noisy->commitOffset, 3);
  EXPECT_EQ(noisy->maxMsgNums, plain->maxMsgNums);
  EXPECT_EQ(noisy->sysFlag, plain->sysFlag);
  EXPECT_EQ(noisy->suspendTimeoutMillis, plain->suspendTimeoutMillis);
  EXPECT_EQ(noisy->subscription, plain->subscription);
  EXPECT_EQ(noisy->subVersion, plain->subVersion);
  EXPECT_EQ(noisy->expressionType, plain->expressionType);
}

// The first field RocketMQ checks is the one an error names, whatever the
// order of the walk that found them.
TEST(PullMessageRequestHeaderParse, ErrorsNameFieldsInRocketMqsOrder) {
  RemotingCommand request = pull("G", "TopicA", 0, 0);
  request.ext_fields.insert_or_assign("queueId", "x");
  request.ext_fields.insert_or_assign("commitOffset", "y");
  Result<PullMessageRequestHeader> parsed = parse_pull_message_header(request);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "the custom field <queueId> is not a valid int32: \"x\"");
  request.ext_fields.erase("topic");
  parsed = parse_pull_message_header(request);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "the custom field <topic> is null");
}

}  // namespace
}  // namespace mqlab::broker::testing::pull_message_processor_test
