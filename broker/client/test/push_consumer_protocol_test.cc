// PushConsumer against fake brokers on the simulated network: three
// consumers converging on an averaged split, the pull loop with long polling
// and offset commits, tag filtering, OFFSET_ILLEGAL, send-back of a failed
// message (and its fallbacks: a re-send to %RETRY%<group>, a local retry),
// broadcasting, and shutdown.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>

#include "broker/client/producer.h"
#include "broker/client/push_consumer.h"
#include "broker/client/test/fake_cluster.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::client::push_consumer_protocol_test {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;
using testing::TestCluster;

store::MessageToStore message_to_store(const std::string& topic, int32_t queue_id, const std::string& body,
                                       const std::string& tags = "") {
  store::MessageToStore message;
  message.topic = topic;
  message.queue_id = queue_id;
  message.body.assign(body.begin(), body.end());
  if (!tags.empty()) message.properties["TAGS"] = tags;
  message.properties["UNIQ_KEY"] = "UNIQ-" + body;
  message.born_host = store::HostAddress::ipv4(10, 0, 0, 50, 1234);
  return message;
}

struct Delivery {
  std::string topic;
  std::string body;
  int64_t queueOffset = 0;
  int32_t reconsumeTimes = 0;
  std::string msgId;
};

// A consumer on its own client process, recording what its handler saw.
struct ConsumerUnderTest {
  ConsumerUnderTest(TestCluster& cluster, const std::string& name, const std::string& host, PushConsumerConfig config,
                    const std::string& expression = "*")
      : consumer(std::make_unique<PushConsumer>(cluster.add_client(name, host), std::move(config))) {
    EXPECT_TRUE(consumer->subscribe("T", expression).ok());
    consumer->register_message_listener([this](const MessageExt& message, ConsumeCallback done) {
      deliveries.push_back({message.topic, message.body_text(), message.queueOffset, message.reconsumeTimes, message.msgId});
      done(decide ? decide(message) : ConsumeResult::SUCCESS);
    });
    consumer->start([this](Status status) { started = status; });
  }

  std::unique_ptr<PushConsumer> consumer;
  std::vector<Delivery> deliveries;
  std::function<ConsumeResult(const MessageExt&)> decide;
  std::optional<Status> started;
};

PushConsumerConfig group_config(MessageModel model = MessageModel::CLUSTERING) {
  PushConsumerConfig config;
  config.consumerGroup = "G";
  config.messageModel = model;
  return config;
}

// The OffsetStore remembers the entry it updated last: lookups of other
// queues, a removal and a re-insert of that queue must never see a stale or
// erased entry, and increase_only must hold through the shortcut.
TEST(OffsetStore, TheRecentEntryShortcutFollowsUpdatesRemovalsAndOtherQueues) {
  TestCluster cluster(1);
  ClientConfig config;
  config.namesrvAddr = {cluster.namesrv().address()};
  config.clientIP = "10.0.0.41";
  config.instanceName = "offsets";
  MQClientInstance instance(cluster.world().start_process("offsets", "10.0.0.41"), config);
  OffsetStore store(instance, "G", MessageModel::CLUSTERING);
  const MessageQueue a{"T", "broker-a", 0};
  const MessageQueue b{"T", "broker-a", 1};
  const MessageQueue c{"T", "broker-b", 0};
  EXPECT_EQ(store.read_offset_in_memory(a), std::nullopt);
  store.update_offset(a, 5, true);
  store.update_offset(a, 3, true);  // never lowered
  EXPECT_EQ(store.read_offset_in_memory(a), 5);
  store.update_offset(b, 7, true);
  EXPECT_EQ(store.read_offset_in_memory(a), 5);  // not b's
  EXPECT_EQ(store.read_offset_in_memory(c), std::nullopt);
  store.update_offset(b, 2, false);  // lowered on purpose (OFFSET_ILLEGAL)
  EXPECT_EQ(store.read_offset_in_memory(b), 2);
  store.remove_offset(b);  // the recent entry goes
  EXPECT_EQ(store.read_offset_in_memory(b), std::nullopt);
  store.update_offset(b, 1, true);  // a fresh entry, not the erased one's 2
  EXPECT_EQ(store.read_offset_in_memory(b), 1);
  store.update_offset(c, 9, true);
  store.remove_offset(a);  // not the recent one
  EXPECT_EQ(store.read_offset_in_memory(a), std::nullopt);
  EXPECT_EQ(store.read_offset_in_memory(c), 9);
  EXPECT_EQ(store.offset_table(), (std::map<MessageQueue, int64_t>{{b, 1}, {c, 9}}));
}

TEST(PushConsumerProtocol, ThreeConsumersConvergeOnTheAveragedSplit) {
  TestCluster cluster(1);
  cluster.route("T", 8);
  cluster.route("%RETRY%G", 1);
  std::vector<std::unique_ptr<ConsumerUnderTest>> consumers;
  for (int i = 0; i < 3; ++i) {
    consumers.push_back(std::make_unique<ConsumerUnderTest>(cluster, "c" + std::to_string(i),
                                                            "10.0.0." + std::to_string(20 + i), group_config()));
  }
  // The first rebalances see only part of the group; the 10 s rebalances settle it.
  cluster.run_for(seconds(25));
  std::map<MessageQueue, int> owners;
  std::vector<size_t> t_counts;
  for (const auto& c : consumers) {
    ASSERT_TRUE(c->started && c->started->ok());
    size_t t_queues = 0;
    for (const MessageQueue& q : c->consumer->assigned_queues()) {
      ++owners[q];
      if (q.topic == "T") ++t_queues;
    }
    t_counts.push_back(t_queues);
  }
  EXPECT_EQ(owners.size(), 9u);  // 8 of T and the retry queue
  for (const auto& [q, count] : owners) EXPECT_EQ(count, 1) << q.to_string();
  EXPECT_EQ(t_counts, (std::vector<size_t>{3, 3, 2}));  // sorted ids: 10.0.0.20@c0 first
  EXPECT_GE(cluster.broker(0).count(RequestCode::GET_CONSUMER_LIST_BY_GROUP), 6u);
  // Queues that changed hands had their offsets persisted before being dropped.
  EXPECT_GT(cluster.broker(0).count(RequestCode::UPDATE_CONSUMER_OFFSET), 0u);
}

TEST(PushConsumerProtocol, LongPollDeliversNewMessagesAndOffsetsAreCommitted) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  cluster.broker(0).put(message_to_store("T", 0, "old"));  // before the group existed: skipped (LAST_OFFSET)
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  ASSERT_TRUE(cluster.run_until([&] { return cluster.broker(0).parked_pulls() == 1; }, seconds(5)));
  const auto pulls = cluster.broker(0).received(RequestCode::PULL_MESSAGE);
  ASSERT_EQ(pulls.size(), 1u);
  EXPECT_EQ(pulls[0].ext_fields.at("queueOffset"), "1");  // GET_MAX_OFFSET's answer
  EXPECT_EQ(pulls[0].ext_fields.at("sysFlag"), "6");      // SUSPEND | SUBSCRIPTION, nothing to commit yet
  EXPECT_EQ(pulls[0].ext_fields.at("suspendTimeoutMillis"), "15000");
  EXPECT_EQ(cluster.broker(0).count(RequestCode::QUERY_CONSUMER_OFFSET), 1u);

  cluster.run_for(seconds(3));
  const Nanos put_at = cluster.world().now();
  cluster.broker(0).put(message_to_store("T", 0, "new"));
  ASSERT_TRUE(cluster.run_until([&] { return !c.deliveries.empty(); }, seconds(1)));
  EXPECT_EQ(cluster.world().now(), put_at);  // the parked pull answered at once
  EXPECT_EQ(c.deliveries[0].body, "new");
  EXPECT_EQ(c.deliveries[0].queueOffset, 1);
  EXPECT_EQ(c.deliveries[0].msgId, "UNIQ-new");
  EXPECT_EQ(c.consumer->offset_store().read_offset_in_memory({"T", "broker-a", 0}), 2);

  // The next pull carries the offset to commit; the 5 s persist sends it too.
  cluster.run_for(seconds(6));
  const auto later = cluster.broker(0).received(RequestCode::PULL_MESSAGE);
  EXPECT_EQ(later.back().ext_fields.at("sysFlag"), "7");
  EXPECT_EQ(later.back().ext_fields.at("commitOffset"), "2");
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 2);
  EXPECT_GE(cluster.broker(0).count(RequestCode::UPDATE_CONSUMER_OFFSET), 1u);

  // An idle long poll is answered NO_NEW_MSG after 15 s and pulled again.
  const size_t before = cluster.broker(0).count(RequestCode::PULL_MESSAGE);
  cluster.run_for(seconds(16));
  EXPECT_EQ(cluster.broker(0).count(RequestCode::PULL_MESSAGE), before + 1);
  EXPECT_EQ(c.deliveries.size(), 1u);

  bool stopped = false;
  c.consumer->shutdown([&] { stopped = true; });
  ASSERT_TRUE(cluster.run_until([&] { return stopped; }));
  const auto unregister = cluster.broker(0).received(RequestCode::UNREGISTER_CLIENT);
  ASSERT_FALSE(unregister.empty());
  EXPECT_EQ(unregister.back().ext_fields.at("consumerGroup"), "G");
}

TEST(PushConsumerProtocol, StoredOffsetWinsAndTagsAreFiltered) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  for (const auto& [body, tag] : std::vector<std::pair<std::string, std::string>>{
           {"a0", "TagA"}, {"b1", "TagB"}, {"a2", "TagA"}, {"n3", ""}, {"a4", "TagA"}, {"b5", "TagB"}}) {
    cluster.broker(0).put(message_to_store("T", 0, body, tag));
  }
  cluster.broker(0).committed[{"G", "T", 0}] = 1;
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config(), "TagA");
  cluster.run_for(seconds(7));
  std::vector<std::string> bodies;
  for (const Delivery& d : c.deliveries) bodies.push_back(d.body);
  EXPECT_EQ(bodies, (std::vector<std::string>{"a2", "a4"}));
  // Filtered messages count as consumed: the committed offset passes them.
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 6);
  EXPECT_EQ(cluster.broker(0).received(RequestCode::PULL_MESSAGE).at(0).ext_fields.at("subscription"), "TagA");
}

TEST(PushConsumerProtocol, IllegalOffsetMovesToWhereTheBrokerSays) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  for (int i = 0; i < 3; ++i) cluster.broker(0).put(message_to_store("T", 0, "m" + std::to_string(i)));
  cluster.broker(0).committed[{"G", "T", 0}] = 100;  // beyond the queue: the broker lost data
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  cluster.run_for(seconds(2));
  EXPECT_TRUE(c.deliveries.empty());  // restarted at max offset 3
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 3);
  cluster.broker(0).put(message_to_store("T", 0, "m3"));
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 1; }, seconds(1)));
  EXPECT_EQ(c.deliveries[0].body, "m3");
}

TEST(PushConsumerProtocol, FailedMessageIsSentBackAndRedeliveredFromTheRetryTopic) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  cluster.route("%RETRY%G", 1);
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  c.decide = [](const MessageExt& message) {
    return message.reconsumeTimes == 0 ? ConsumeResult::RECONSUME_LATER : ConsumeResult::SUCCESS;
  };
  cluster.run_for(seconds(1));
  cluster.broker(0).put(message_to_store("T", 0, "flaky"));
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 2; }, seconds(5)));
  const auto send_backs = cluster.broker(0).received(RequestCode::CONSUMER_SEND_MSG_BACK);
  ASSERT_EQ(send_backs.size(), 1u);
  EXPECT_EQ(send_backs[0].ext_fields.at("group"), "G");
  EXPECT_EQ(send_backs[0].ext_fields.at("delayLevel"), "0");
  EXPECT_EQ(send_backs[0].ext_fields.at("originTopic"), "T");
  EXPECT_EQ(send_backs[0].ext_fields.at("originMsgId"), "UNIQ-flaky");
  EXPECT_EQ(send_backs[0].ext_fields.at("maxReconsumeTimes"), "16");
  // The retry copy is handed out under the original topic, with the same id.
  EXPECT_EQ(c.deliveries[1].topic, "T");
  EXPECT_EQ(c.deliveries[1].body, "flaky");
  EXPECT_EQ(c.deliveries[1].reconsumeTimes, 1);
  EXPECT_EQ(c.deliveries[1].msgId, "UNIQ-flaky");
  cluster.run_for(seconds(6));
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 1);
  EXPECT_EQ((cluster.broker(0).committed[{"G", "%RETRY%G", 0}]), 1);
}

TEST(PushConsumerProtocol, RefusedSendBackFallsBackToAReSendThroughTheInnerProducer) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  cluster.route("%RETRY%G", 1);
  cluster.broker(0).set_handler(RequestCode::CONSUMER_SEND_MSG_BACK, [](const auto&, auto channel) {
    channel.reply(ResponseCode::SYSTEM_ERROR, "look message by offset failed");
  });
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  c.decide = [](const MessageExt& message) {
    return message.reconsumeTimes == 0 ? ConsumeResult::RECONSUME_LATER : ConsumeResult::SUCCESS;
  };
  cluster.run_for(seconds(1));
  cluster.broker(0).put(message_to_store("T", 0, "flaky"));
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 2; }, seconds(5)));
  const auto sends = cluster.broker(0).received(RequestCode::SEND_MESSAGE_V2);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].ext_fields.at("a"), "CLIENT_INNER_PRODUCER");
  EXPECT_EQ(sends[0].ext_fields.at("b"), "%RETRY%G");
  EXPECT_EQ(sends[0].ext_fields.at("j"), "1");
  EXPECT_EQ(sends[0].ext_fields.at("l"), "16");
  const store::MessageProperties properties = store::decode_properties(sends[0].ext_fields.at("i"));
  EXPECT_EQ(properties.at("RETRY_TOPIC"), "T");
  EXPECT_EQ(properties.at("ORIGIN_MESSAGE_ID"), "UNIQ-flaky");
  EXPECT_EQ(properties.at("UNIQ_KEY"), "UNIQ-flaky");  // the id survives the retry
  EXPECT_EQ(properties.at("DELAY"), "3");
  EXPECT_EQ(c.deliveries[1].topic, "T");
}

TEST(PushConsumerProtocol, WhenNothingTakesItBackTheMessageIsRetriedLocally) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  cluster.route("%RETRY%G", 1);
  cluster.broker(0).set_handler(RequestCode::CONSUMER_SEND_MSG_BACK,
                                [](const auto&, auto channel) { channel.reply(ResponseCode::SYSTEM_ERROR, "no"); });
  cluster.broker(0).set_handler(RequestCode::SEND_MESSAGE_V2,
                                [](const auto&, auto channel) { channel.reply(ResponseCode::MESSAGE_ILLEGAL, "no"); });
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  c.decide = [](const MessageExt& message) {
    const bool fail = message.body_text() == "stubborn" && message.reconsumeTimes < 2;
    return fail ? ConsumeResult::RECONSUME_LATER : ConsumeResult::SUCCESS;
  };
  cluster.run_for(seconds(1));
  cluster.broker(0).put(message_to_store("T", 0, "stubborn"));
  cluster.broker(0).put(message_to_store("T", 0, "fine"));
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 2; }, seconds(1)));
  EXPECT_EQ(c.deliveries[1].body, "fine");  // not held up by the parked one
  const Nanos parked_at = cluster.world().now();
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 4; }, seconds(12)));
  EXPECT_GE(cluster.world().now() - parked_at, seconds(10));  // two 5 s local retries
  EXPECT_EQ(c.deliveries[3].body, "stubborn");
  EXPECT_EQ(c.deliveries[3].reconsumeTimes, 2);
  // The parked message held the offset back until it was consumed.
  cluster.run_for(seconds(6));
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 2);
}

TEST(PushConsumerProtocol, PullsFollowTheSuggestedBrokerAndNeverCommitToASlave) {
  TestCluster cluster(2);  // broker-b's process plays broker-a's slave (id 1)
  remoting::TopicRouteData route = testing::make_route({{"broker-a", cluster.broker(0).address()}}, 1);
  route.brokerDatas[0].brokerAddrs[1] = cluster.broker(1).address();
  cluster.namesrv().set_route("T", route);
  cluster.broker(0).committed[{"G", "T", 0}] = 0;
  cluster.broker(0).suggest_broker_id = 1;  // "you are reading old data: go to the slave"
  cluster.broker(1).suggest_broker_id = 1;
  cluster.broker(1).put(message_to_store("T", 0, "s0"));
  cluster.broker(1).put(message_to_store("T", 0, "s1"));
  ConsumerUnderTest c(cluster, "c0", "10.0.0.20", group_config());
  ASSERT_TRUE(cluster.run_until([&] { return c.deliveries.size() == 2; }, seconds(20)));
  cluster.run_for(seconds(1));
  const auto slave_pulls = cluster.broker(1).received(RequestCode::PULL_MESSAGE);
  ASSERT_GE(slave_pulls.size(), 2u);
  EXPECT_EQ(slave_pulls.back().ext_fields.at("queueOffset"), "2");
  for (const auto& pull : slave_pulls) EXPECT_EQ(pull.ext_fields.at("sysFlag"), "6") << "no COMMIT_OFFSET to a slave";
  EXPECT_EQ(cluster.broker(0).count(RequestCode::PULL_MESSAGE), 1u);  // the first, then it said: go to the slave
  EXPECT_GE(cluster.broker(1).count(RequestCode::HEART_BEAT), 1u);    // a consumer heartbeats slaves too
  cluster.run_for(seconds(5));
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 0}]), 2);  // persisted to the master
}

TEST(PushConsumerProtocol, BroadcastingGivesEveryConsumerEveryQueue) {
  TestCluster cluster(2);
  cluster.route("T", 2);
  ConsumerUnderTest a(cluster, "c0", "10.0.0.20", group_config(MessageModel::BROADCASTING));
  ConsumerUnderTest b(cluster, "c1", "10.0.0.21", group_config(MessageModel::BROADCASTING));
  cluster.run_for(seconds(1));
  cluster.broker(1).put(message_to_store("T", 1, "everyone"));
  cluster.run_for(seconds(6));
  EXPECT_EQ(a.consumer->assigned_queues().size(), 4u);  // no retry topic in broadcasting
  EXPECT_EQ(b.consumer->assigned_queues().size(), 4u);
  ASSERT_EQ(a.deliveries.size(), 1u);
  ASSERT_EQ(b.deliveries.size(), 1u);
  EXPECT_EQ(cluster.broker(0).count(RequestCode::GET_CONSUMER_LIST_BY_GROUP), 0u);
  EXPECT_EQ(cluster.broker(0).count(RequestCode::QUERY_CONSUMER_OFFSET), 0u);  // offsets are local
  EXPECT_EQ(a.consumer->offset_store().persisted_local().at({"T", "broker-b", 1}), 1);
}

}  // namespace
}  // namespace mqlab::client::push_consumer_protocol_test

namespace mqlab::client::push_consumer_protocol_test {
namespace {

TEST(PushConsumerProtocol, InstanceShutdownPersistsOffsetsAndUnregistersEveryGroup) {
  TestCluster cluster(1);
  cluster.route("T", 2);
  MQClientInstance& instance = cluster.add_client("c0", "10.0.0.20");
  PushConsumer consumer(instance, group_config());
  ASSERT_TRUE(consumer.subscribe("T", "*").ok());
  int consumed = 0;
  consumer.register_message_listener([&](const MessageExt&, ConsumeCallback done) {
    ++consumed;
    done(ConsumeResult::SUCCESS);
  });
  consumer.start([](Status status) { EXPECT_TRUE(status.ok()); });
  cluster.run_for(seconds(1));
  cluster.broker(0).put(message_to_store("T", 1, "x"));
  ASSERT_TRUE(cluster.run_until([&] { return consumed == 1; }, seconds(1)));
  bool done = false;
  instance.shutdown([&] { done = true; });
  ASSERT_TRUE(cluster.run_until([&] { return done; }, seconds(5)));
  EXPECT_EQ((cluster.broker(0).committed[{"G", "T", 1}]), 1);
  std::set<std::string> groups;
  for (const auto& request : cluster.broker(0).received(RequestCode::UNREGISTER_CLIENT)) {
    for (const char* key : {"producerGroup", "consumerGroup"}) {
      if (request.ext_fields.contains(key)) groups.insert(std::string(request.ext_fields.at(key)));
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"CLIENT_INNER_PRODUCER", "G"}));
  // Nothing runs any more: no pulls after the long polls that were cut off.
  const size_t pulls = cluster.broker(0).count(RequestCode::PULL_MESSAGE);
  cluster.run_for(seconds(60));
  EXPECT_EQ(cluster.broker(0).count(RequestCode::PULL_MESSAGE), pulls);
}

TEST(PushConsumerProtocol, DestroyingAConsumerWithPullsAndHandlersInFlightIsSafe) {
  TestCluster cluster(1);
  cluster.route("T", 2);
  MQClientInstance& instance = cluster.add_client("c0", "10.0.0.20");
  std::vector<ConsumeCallback> held;  // handlers that have not answered yet
  {
    PushConsumer consumer(instance, group_config());
    ASSERT_TRUE(consumer.subscribe("T", "*").ok());
    consumer.register_message_listener([&](const MessageExt&, ConsumeCallback done) { held.push_back(std::move(done)); });
    consumer.start([](Status) {});
    cluster.run_for(seconds(1));
    cluster.broker(0).put(message_to_store("T", 0, "x"));
    ASSERT_TRUE(cluster.run_until([&] { return held.size() == 1; }, seconds(1)));
  }
  held[0](ConsumeResult::RECONSUME_LATER);  // the consumer is gone: ignored
  cluster.run_for(seconds(40));
  EXPECT_EQ(cluster.broker(0).count(RequestCode::CONSUMER_SEND_MSG_BACK), 0u);
  // The instance still runs, and its group slot is free again.
  PushConsumer again(instance, group_config());
  ASSERT_TRUE(again.subscribe("T", "*").ok());
  again.register_message_listener([](const MessageExt&, ConsumeCallback done) { done(ConsumeResult::SUCCESS); });
  std::optional<Status> started;
  again.start([&](Status status) { started = status; });
  ASSERT_TRUE(cluster.run_until([&] { return started.has_value(); }));
  EXPECT_TRUE(started->ok()) << started->to_string();
}

}  // namespace
}  // namespace mqlab::client::push_consumer_protocol_test
