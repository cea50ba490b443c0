// Producer against a fake NameServer and fake brokers on the simulated
// network: route lookup on first use, retry on the other broker after a
// failure (and the back-off that follows), timeouts and broken connections
// reported as UNKNOWN, refusals as FAILED, heartbeats and unregistration.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/client/producer.h"
#include "broker/client/test/fake_cluster.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::client::producer_protocol_test {
namespace {

using remoting::RequestCode;
using remoting::ResponseCode;
using testing::TestCluster;
using remoting::RemotingCommand;

struct ProducerWorld {
  explicit ProducerWorld(int brokers = 2, ProducerConfig config = {.producerGroup = "PG"}) : cluster(brokers) {
    cluster.route("T", 4);
    MQClientInstance& instance = cluster.add_client("p1", "10.0.0.10");
    producer = std::make_unique<Producer>(instance, config);
    std::optional<Status> started;
    producer->start([&](Status status) { started = status; });
    EXPECT_TRUE(cluster.run_until([&] { return started.has_value(); }));
    EXPECT_TRUE(started->ok()) << started->to_string();
  }

  SendResult send(Message message) {
    std::optional<SendResult> result;
    producer->send(std::move(message), [&](SendResult r) { result = r; });
    EXPECT_TRUE(cluster.run_until([&] { return result.has_value(); }));
    return result.value_or(SendResult{});
  }

  size_t sends_to(size_t broker) { return cluster.broker(broker).count(RequestCode::SEND_MESSAGE_V2); }

  TestCluster cluster;
  std::unique_ptr<Producer> producer;
};

TEST(ProducerProtocol, FirstSendLooksUpTheRouteAndStoresWithAUniqKey) {
  ProducerWorld world;
  Message message("T", "TagA", "hello");
  message.keys = "order-1";
  const SendResult result = world.send(message);
  EXPECT_EQ(result.status, SendStatus::SEND_OK) << result.remark;
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(result.queueOffset, 0);
  EXPECT_EQ(result.msgId.size(), 32u);
  EXPECT_EQ(result.msgId.substr(0, 8), "0A00000A");  // 10.0.0.10
  EXPECT_EQ(result.offsetMsgId.size(), 32u);
  EXPECT_EQ(world.cluster.namesrv().count(RequestCode::GET_ROUTEINFO_BY_TOPIC), 1u);

  const size_t broker = result.messageQueue.brokerName == "broker-a" ? 0 : 1;
  const auto stored = world.cluster.broker(broker).properties_of("T", result.messageQueue.queueId);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].at("UNIQ_KEY"), result.msgId);
  EXPECT_EQ(stored[0].at("TAGS"), "TagA");
  EXPECT_EQ(stored[0].at("KEYS"), "order-1");
  const auto request = world.cluster.broker(broker).received(RequestCode::SEND_MESSAGE_V2).at(0);
  EXPECT_EQ(request.ext_fields.at("a"), "PG");
  EXPECT_EQ(request.ext_fields.at("c"), "TBW102");
  EXPECT_EQ(request.ext_fields.at("n"), result.messageQueue.brokerName);

  // The route is cached; sends spread round robin over both brokers.
  std::set<std::string> brokers;
  for (int i = 0; i < 8; ++i) brokers.insert(world.send(Message("T", "", "m")).messageQueue.brokerName);
  EXPECT_EQ(brokers.size(), 2u);
  EXPECT_EQ(world.cluster.namesrv().count(RequestCode::GET_ROUTEINFO_BY_TOPIC), 1u);
}

// rocketmq.serialize.type: the client's setting decides every request's
// header (route lookup, heartbeat, send), and the send still succeeds;
// a client left at the default speaks JSON, as Java's does.
TEST(ProducerProtocol, SerializeTypeDecidesEveryRequestsHeader) {
  TestCluster cluster(1);
  cluster.route("T", 4);
  MQClientInstance& binary = cluster.add_client(
      "binary", "10.0.0.10", [](ClientConfig& config) { config.serializeType = remoting::SerializeType::ROCKETMQ; });
  MQClientInstance& json = cluster.add_client("json", "10.0.0.11");
  std::vector<std::unique_ptr<Producer>> producers;
  for (MQClientInstance* instance : {&binary, &json}) {
    producers.push_back(std::make_unique<Producer>(*instance, ProducerConfig{.producerGroup = "PG"}));
    std::optional<Status> started;
    producers.back()->start([&](Status status) { started = status; });
    ASSERT_TRUE(cluster.run_until([&] { return started.has_value(); }));
    ASSERT_TRUE(started->ok()) << started->to_string();
    std::optional<SendResult> result;
    producers.back()->send(Message("T", "", "m"), [&](SendResult r) { result = r; });
    ASSERT_TRUE(cluster.run_until([&] { return result.has_value(); }));
    EXPECT_EQ(result->status, SendStatus::SEND_OK) << result->remark;
  }
  const std::vector<RemotingCommand> routes = cluster.namesrv().received(RequestCode::GET_ROUTEINFO_BY_TOPIC);
  const std::vector<RemotingCommand> sends = cluster.broker(0).received(RequestCode::SEND_MESSAGE_V2);
  ASSERT_EQ(routes.size(), 2u);
  ASSERT_EQ(sends.size(), 2u);
  EXPECT_EQ(routes[0].serialize_type, remoting::SerializeType::ROCKETMQ);
  EXPECT_EQ(sends[0].serialize_type, remoting::SerializeType::ROCKETMQ);
  EXPECT_EQ(sends[0].ext_fields.at("a"), "PG") << "the binary header carries the same fields";
  EXPECT_EQ(routes[1].serialize_type, remoting::SerializeType::JSON);
  EXPECT_EQ(sends[1].serialize_type, remoting::SerializeType::JSON);
}

TEST(ProducerProtocol, UnroutedTopicFailsWithoutAnAttempt) {
  ProducerWorld world;
  const SendResult result = world.send(Message("Nowhere", "", "x"));
  EXPECT_EQ(result.status, SendStatus::FAILED);
  EXPECT_EQ(result.attempts, 0);
  EXPECT_NE(result.remark.find("No route info of this topic"), std::string::npos) << result.remark;
  EXPECT_EQ(world.send(Message("T", "", "")).status, SendStatus::FAILED);  // empty body
  EXPECT_EQ(world.send(Message("bad topic!", "", "x")).status, SendStatus::FAILED);
}

TEST(ProducerProtocol, FailedAttemptRetriesOnTheOtherBrokerWhichIsThenPreferred) {
  ProducerWorld world;
  int failures_left = 1;
  std::string failed_broker;
  for (size_t i = 0; i < 2; ++i) {
    testing::FakeBroker* broker = &world.cluster.broker(i);
    broker->set_handler(RequestCode::SEND_MESSAGE_V2, [&, broker](const auto&, auto channel) {
      if (failures_left > 0) {
        --failures_left;
        failed_broker = broker->broker_name();
        return channel.reply(ResponseCode::SYSTEM_ERROR, "disk trouble");
      }
      broker->set_handler(RequestCode::SEND_MESSAGE_V2, nullptr);  // back to storing
      channel.reply(ResponseCode::SUCCESS);
    });
  }
  const SendResult result = world.send(Message("T", "", "x"));
  EXPECT_EQ(result.status, SendStatus::SEND_OK) << result.remark;
  EXPECT_EQ(result.attempts, 2);
  EXPECT_NE(result.messageQueue.brokerName, failed_broker);
  // The failed broker backs off (600 s, Java's isolation): the next sends avoid it.
  for (int i = 0; i < 6; ++i) EXPECT_NE(world.send(Message("T", "", "y")).messageQueue.brokerName, failed_broker);
  EXPECT_FALSE(world.producer->fault_tolerance().is_available(failed_broker, world.cluster.world().now() / kNanosPerMilli));
}

TEST(ProducerProtocol, TimeoutUsesUpTheSendAndIsUnknown) {
  ProducerWorld world;
  for (size_t i = 0; i < 2; ++i) {
    world.cluster.broker(i).set_handler(RequestCode::SEND_MESSAGE_V2, [](const auto&, auto) {});  // never answers
  }
  const Nanos start = world.cluster.world().now();
  const SendResult result = world.send(Message("T", "", "x"));
  EXPECT_EQ(result.status, SendStatus::UNKNOWN) << result.remark;
  EXPECT_EQ(result.attempts, 1);  // the attempt's timeout is what is left of sendMsgTimeout
  EXPECT_GE(world.cluster.world().now() - start, millis(3000));
  EXPECT_LT(world.cluster.world().now() - start, millis(3100));
}

TEST(ProducerProtocol, ConnectionLostAfterTheWriteMakesAnyLaterFailureUnknown) {
  ProducerWorld world;
  for (size_t i = 0; i < 2; ++i) {
    testing::FakeBroker* broker = &world.cluster.broker(i);
    broker->set_handler(RequestCode::SEND_MESSAGE_V2, [broker](const auto&, auto) { broker->shutdown_later(); });
  }
  const SendResult result = world.send(Message("T", "", "x"));
  EXPECT_EQ(result.status, SendStatus::UNKNOWN) << result.remark;
  EXPECT_EQ(result.attempts, 3);  // broker-a, broker-b, then broker-a again (now refusing)
}

TEST(ProducerProtocol, RefusedMessageFailsAtOnce) {
  ProducerWorld world;
  for (size_t i = 0; i < 2; ++i) {
    world.cluster.broker(i).set_handler(RequestCode::SEND_MESSAGE_V2, [](const auto&, auto channel) {
      channel.reply(ResponseCode::MESSAGE_ILLEGAL, "the message is illegal");
    });
  }
  const SendResult result = world.send(Message("T", "", "x"));
  EXPECT_EQ(result.status, SendStatus::FAILED);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_NE(result.remark.find("MESSAGE_ILLEGAL(13)"), std::string::npos) << result.remark;
}

TEST(ProducerProtocol, BrokerNobodyListensOnIsADefiniteFailure) {
  ProducerWorld world(1);
  world.cluster.namesrv().set_route("Lost", testing::make_route({{"broker-z", "10.0.0.99:10911"}}, 2));
  const SendResult result = world.send(Message("Lost", "", "x"));
  EXPECT_EQ(result.status, SendStatus::FAILED) << result.remark;  // refused connects never wrote the request
  EXPECT_EQ(result.attempts, 3);  // one broker group: Java retries it
}

TEST(ProducerProtocol, StoredButNotFlushedIsReportedAsSuch) {
  ProducerWorld world;
  for (size_t i = 0; i < 2; ++i) {
    world.cluster.broker(i).set_handler(RequestCode::SEND_MESSAGE_V2, [](const RemotingCommand& request, auto channel) {
      RemotingCommand response = request.make_response(ResponseCode::FLUSH_SLAVE_TIMEOUT);
      response.set_ext_string("msgId", "0A0000020000");
      response.set_ext_int("queueId", 1);
      response.set_ext_int("queueOffset", 9);
      channel.reply(std::move(response));
    });
  }
  const SendResult result = world.send(Message("T", "", "x"));
  EXPECT_EQ(result.status, SendStatus::FLUSH_SLAVE_TIMEOUT);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(result.queueOffset, 9);
  EXPECT_EQ(result.messageQueue.queueId, 1);
}

TEST(ProducerProtocol, RetryTopicCountsTravelInTheHeader) {
  ProducerWorld world;
  world.cluster.route("%RETRY%G", 1, 1);
  Message message("%RETRY%G", "", "again");
  message.properties["RECONSUME_TIME"] = "2";
  message.properties["MAX_RECONSUME_TIMES"] = "16";
  ASSERT_EQ(world.send(message).status, SendStatus::SEND_OK);
  const auto request = world.cluster.broker(0).received(RequestCode::SEND_MESSAGE_V2).back();
  EXPECT_EQ(request.ext_fields.at("j"), "2");
  EXPECT_EQ(request.ext_fields.at("l"), "16");
  EXPECT_EQ(request.ext_fields.at("i").find("RECONSUME_TIME"), std::string::npos);
}

// A producer builds each send in the context of one it has finished
// (SharedShelf): nothing of the send before may show in the next one's
// request (a retry topic's counts, a compressed body's flag, its UNIQ_KEY,
// its properties).
TEST(ProducerProtocol, EachSendStartsFromAFreshContext) {
  ProducerWorld world(1, ProducerConfig{.producerGroup = "PG", .compressMsgBodyEnable = true});
  world.cluster.route("%RETRY%G", 1, 1);
  Message retried("%RETRY%G", "TagR", std::string(8192, 'r'));  // past compressMsgBodyOverHowmuch
  retried.keys = "retry-key";
  retried.properties["RECONSUME_TIME"] = "2";
  retried.properties["MAX_RECONSUME_TIMES"] = "16";
  const SendResult first = world.send(retried);
  ASSERT_EQ(first.status, SendStatus::SEND_OK) << first.remark;
  const SendResult second = world.send(Message("T", "", "plain"));
  ASSERT_EQ(second.status, SendStatus::SEND_OK) << second.remark;
  EXPECT_NE(second.msgId, first.msgId);
  const auto sends = world.cluster.broker(0).received(RequestCode::SEND_MESSAGE_V2);
  ASSERT_EQ(sends.size(), 2u);
  const RemotingCommand& request = sends[1];
  EXPECT_EQ(request.ext_fields.at("b"), "T");
  EXPECT_EQ(request.ext_fields.at("f"), "0") << "no compressed flag left over";
  EXPECT_EQ(request.ext_fields.at("j"), "0") << "no reconsume count left over";
  EXPECT_FALSE(request.ext_fields.contains("l")) << "no max reconsume count left over";
  EXPECT_EQ(request.body, std::vector<uint8_t>({'p', 'l', 'a', 'i', 'n'}));
  const auto stored = world.cluster.broker(0).properties_of("T", second.messageQueue.queueId);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].at("UNIQ_KEY"), second.msgId);
  EXPECT_FALSE(stored[0].contains("TAGS"));
  EXPECT_FALSE(stored[0].contains("KEYS"));
  EXPECT_FALSE(stored[0].contains("RECONSUME_TIME"));
  EXPECT_EQ(sends[0].ext_fields.at("f"), "1") << "the first send's body was compressed (else this test tests less)";
}

// A context's result is filled in place and kept (its strings' room) for
// the next send: nothing of a failed send's result may show in the next.
TEST(ProducerProtocol, EachSendsResultStartsFromAFreshOne) {
  ProducerWorld world(1);
  const SendResult failed = world.send(Message("Nowhere", "", "x"));
  ASSERT_EQ(failed.status, SendStatus::FAILED);
  ASSERT_FALSE(failed.remark.empty());
  const SendResult stored = world.send(Message("T", "", "y"));
  ASSERT_EQ(stored.status, SendStatus::SEND_OK) << stored.remark;
  EXPECT_TRUE(stored.remark.empty()) << stored.remark;
  EXPECT_EQ(stored.messageQueue.topic, "T");
  EXPECT_EQ(stored.attempts, 1);
  EXPECT_EQ(stored.msgId.size(), 32u);
  EXPECT_NE(stored.msgId, failed.msgId);
  EXPECT_EQ(stored.offsetMsgId.size(), 32u);
  const SendResult next = world.send(Message("T", "", "z"));
  ASSERT_EQ(next.status, SendStatus::SEND_OK) << next.remark;
  EXPECT_NE(next.msgId, stored.msgId);
  EXPECT_NE(next.offsetMsgId, stored.offsetMsgId);
  EXPECT_NE(next.queueOffset, -1);
}

TEST(ProducerProtocol, HeartbeatsGoToMastersAndShutdownUnregisters) {
  ProducerWorld world;
  ASSERT_EQ(world.send(Message("T", "", "x")).status, SendStatus::SEND_OK);
  world.cluster.run_for(seconds(31));
  const auto heartbeats = world.cluster.broker(0).received(RequestCode::HEART_BEAT);
  ASSERT_FALSE(heartbeats.empty());
  const auto data = remoting::HeartbeatData::parse(std::string(heartbeats.back().body.begin(), heartbeats.back().body.end()));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->clientID, "10.0.0.10@p1");
  EXPECT_TRUE(data->consumerDataSet.empty());
  std::set<std::string> groups;
  for (const auto& producer : data->producerDataSet) groups.insert(producer.groupName);
  EXPECT_EQ(groups, (std::set<std::string>{"CLIENT_INNER_PRODUCER", "PG"}));
  EXPECT_GE(world.cluster.namesrv().count(RequestCode::GET_ROUTEINFO_BY_TOPIC), 2u);  // the 30 s refresh

  bool done = false;
  world.producer->shutdown([&] { done = true; });
  ASSERT_TRUE(world.cluster.run_until([&] { return done; }));
  const auto unregister = world.cluster.broker(1).received(RequestCode::UNREGISTER_CLIENT);
  ASSERT_EQ(unregister.size(), 1u);
  EXPECT_EQ(unregister[0].ext_fields.at("producerGroup"), "PG");
  EXPECT_EQ(world.send(Message("T", "", "late")).status, SendStatus::FAILED);
}

}  // namespace
}  // namespace mqlab::client::producer_protocol_test
