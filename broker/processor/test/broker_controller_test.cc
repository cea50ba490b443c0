// BrokerController life cycle on the simulator: NameServer registration (at
// start, periodically, after topic changes, with a body whose CRC matches;
// unregistration at shutdown) against a fake NameServer, restarts after a
// clean shutdown and after kill -9, and BrokerConfig's validation.
#include <gtest/gtest.h>

#include "broker/common/crc32.h"
#include "broker/processor/test/broker_sim_world.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker::testing::broker_controller_test {
namespace {

constexpr const char* kNamesrvAddr = "10.0.0.5:9876";

// A NameServer that only records what brokers tell it.
class FakeNameServer {
 public:
  explicit FakeNameServer(BrokerSimWorld& world)
      : process_("namesrv", world.scheduler(), world.clock(), {}, world.random().split(), &world.network(), "10.0.0.5"),
        world_(world) {
    server_ = std::make_unique<remoting::RemotingServer>(process_.start(), "fake-namesrv");
    for (int32_t code : {RequestCode::REGISTER_BROKER, RequestCode::UNREGISTER_BROKER}) {
      server_->register_processor(code, [this](const RemotingCommand& request, remoting::ResponseChannel channel) {
        received_.push_back({world_.now(), request});
        channel.reply(ResponseCode::SUCCESS);
      });
    }
    MQ_ASSERT(server_->start(kNamesrvAddr).ok());
  }
  ~FakeNameServer() { server_.reset(); }

  struct Received {
    Nanos at;
    RemotingCommand request;
  };
  std::vector<Received> of(int32_t code) const {
    std::vector<Received> matching;
    for (const Received& r : received_) {
      if (r.request.code == code) matching.push_back(r);
    }
    return matching;
  }

 private:
  sim::SimProcess process_;
  BrokerSimWorld& world_;
  std::unique_ptr<remoting::RemotingServer> server_;
  std::vector<Received> received_;
};

BrokerConfig config_with_namesrv() {
  BrokerConfig config = test_broker_config();
  config.namesrvAddr = kNamesrvAddr;
  return config;
}

remoting::RegisterBrokerBody checked_body(const RemotingCommand& request) {
  const int64_t crc = crc32_ieee(0, request.body) & 0x7FFFFFFF;
  EXPECT_EQ(*request.find_ext("bodyCrc32"), std::to_string(crc));
  Result<remoting::RegisterBrokerBody> body = remoting::RegisterBrokerBody::parse(
      std::string_view(reinterpret_cast<const char*>(request.body.data()), request.body.size()));
  EXPECT_TRUE(body.ok()) << body.status().to_string();
  return body.ok() ? *body : remoting::RegisterBrokerBody{};
}

TEST(BrokerController, RegistersAtStartPeriodicallyAndAfterTopicChanges) {
  BrokerSimWorld world(config_with_namesrv());
  FakeNameServer namesrv(world);
  const Nanos started_at = world.now();
  ASSERT_TRUE(world.start_broker().ok());
  world.run_for(millis(100));
  std::vector<FakeNameServer::Received> registrations = namesrv.of(RequestCode::REGISTER_BROKER);
  ASSERT_EQ(registrations.size(), 1u);
  const RemotingCommand& first = registrations[0].request;
  EXPECT_EQ(first.version, 407);
  EXPECT_EQ(*first.find_ext("brokerName"), "broker-a");
  EXPECT_EQ(*first.find_ext("brokerAddr"), "10.0.0.1:10911");
  EXPECT_EQ(*first.find_ext("clusterName"), "DefaultCluster");
  EXPECT_EQ(*first.find_ext("haServerAddr"), "10.0.0.1:10912");
  EXPECT_EQ(*first.find_ext("brokerId"), "0");
  EXPECT_EQ(*first.find_ext("compressed"), "false");
  remoting::RegisterBrokerBody body = checked_body(first);
  EXPECT_TRUE(body.topicConfigSerializeWrapper.topicConfigTable.contains("TBW102"));
  EXPECT_EQ(body.topicConfigSerializeWrapper.topicConfigTable.at("TBW102").perm, 7);

  // Periodic: the first 10 s after start, then every registerNameServerPeriod (30 s).
  world.run_until([&] { return namesrv.of(RequestCode::REGISTER_BROKER).size() == 3; }, seconds(60));
  registrations = namesrv.of(RequestCode::REGISTER_BROKER);
  ASSERT_EQ(registrations.size(), 3u);
  EXPECT_NEAR(static_cast<double>(registrations[1].at - started_at), static_cast<double>(seconds(10)), 1e8);
  EXPECT_NEAR(static_cast<double>(registrations[2].at - registrations[1].at), static_cast<double>(seconds(30)), 1e8);

  // A topic created through the admin command is registered at once.
  RemotingCommand create = request_with(RequestCode::UPDATE_AND_CREATE_TOPIC, {{"topic", "Orders"},
                                                                               {"defaultTopic", "TBW102"},
                                                                               {"readQueueNums", "2"},
                                                                               {"writeQueueNums", "2"},
                                                                               {"perm", "6"},
                                                                               {"topicFilterType", "SINGLE_TAG"}});
  ASSERT_EQ(world.must_call(create).code, ResponseCode::SUCCESS);
  world.run_for(millis(100));
  registrations = namesrv.of(RequestCode::REGISTER_BROKER);
  ASSERT_EQ(registrations.size(), 4u);
  EXPECT_TRUE(checked_body(registrations[3].request).topicConfigSerializeWrapper.topicConfigTable.contains("Orders"));
  // So is an auto-created one, and a heartbeat's retry topic.
  ASSERT_EQ(world.must_call(send_v2("AutoTopic", "m")).code, ResponseCode::SUCCESS);
  ASSERT_EQ(world.must_call(heartbeat("C1", "G", {"Orders"})).code, ResponseCode::SUCCESS);
  world.run_for(millis(100));
  registrations = namesrv.of(RequestCode::REGISTER_BROKER);
  ASSERT_EQ(registrations.size(), 6u);
  const auto& table = checked_body(registrations[5].request).topicConfigSerializeWrapper.topicConfigTable;
  EXPECT_TRUE(table.contains("AutoTopic"));
  EXPECT_TRUE(table.contains("%RETRY%G"));

  ASSERT_TRUE(world.shutdown_broker().ok());
  std::vector<FakeNameServer::Received> unregistrations = namesrv.of(RequestCode::UNREGISTER_BROKER);
  ASSERT_EQ(unregistrations.size(), 1u);
  EXPECT_EQ(*unregistrations[0].request.find_ext("brokerAddr"), "10.0.0.1:10911");
}

TEST(BrokerController, WithoutWritePermissionTopicsAreRegisteredReadOnly) {
  BrokerConfig config = config_with_namesrv();
  config.brokerPermission = 4;  // READ only
  BrokerSimWorld world(config);
  FakeNameServer namesrv(world);
  ASSERT_TRUE(world.start_broker().ok());
  world.run_for(millis(100));
  std::vector<FakeNameServer::Received> registrations = namesrv.of(RequestCode::REGISTER_BROKER);
  ASSERT_EQ(registrations.size(), 1u);
  EXPECT_EQ(checked_body(registrations[0].request).topicConfigSerializeWrapper.topicConfigTable.at("TBW102").perm, 4);
}

TEST(BrokerController, AnUnreachableNameServerDoesNotStopTheBroker) {
  BrokerConfig config = test_broker_config();
  config.namesrvAddr = "10.0.0.77:9876";  // nobody listens there
  BrokerSimWorld world(config);
  ASSERT_TRUE(world.start_broker().ok());
  world.run_for(seconds(15));
  EXPECT_EQ(world.must_call(send_v2("TopicA", "m")).code, ResponseCode::SUCCESS);
  EXPECT_GE(world.broker().broker_outer_api().stats().registrations_failed, 2u);
  EXPECT_TRUE(world.shutdown_broker().ok());
}

// What a restart must keep: topics, consumer offsets, messages.
void expect_state_survived(BrokerSimWorld& world) {
  EXPECT_NE(world.broker().topic_config_manager().find("Orders"), nullptr);
  EXPECT_NE(world.broker().topic_config_manager().find("%RETRY%G"), nullptr);
  RemotingCommand offset = world.must_call(request_with(
      RequestCode::QUERY_CONSUMER_OFFSET, {{"consumerGroup", "G"}, {"topic", "Orders"}, {"queueId", "0"}}));
  ASSERT_EQ(offset.code, ResponseCode::SUCCESS);
  EXPECT_EQ(*offset.find_ext("offset"), "2");
  RemotingCommand pulled = world.must_call(pull("G", "Orders", 0, 0));
  ASSERT_EQ(pulled.code, ResponseCode::SUCCESS) << pulled.remark;
  std::vector<PulledMessage> messages = decode_records(pulled.body);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[2].body, "m2");
  // New sends continue the queue.
  RemotingCommand sent = world.must_call(send_v2("Orders", "m3", 0));
  ASSERT_EQ(sent.code, ResponseCode::SUCCESS);
  EXPECT_EQ(*sent.find_ext("queueOffset"), "3");
}

void write_state(BrokerSimWorld& world) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(world.must_call(send_v2("Orders", "m" + std::to_string(i), 0)).code, ResponseCode::SUCCESS);
  }
  ASSERT_EQ(world.must_call(heartbeat("C1", "G", {"Orders"})).code, ResponseCode::SUCCESS);
  RemotingCommand commit =
      request_with(RequestCode::UPDATE_CONSUMER_OFFSET,
                   {{"consumerGroup", "G"}, {"topic", "Orders"}, {"queueId", "0"}, {"commitOffset", "2"}});
  ASSERT_EQ(world.must_call(commit).code, ResponseCode::SUCCESS);
}

TEST(BrokerController, ACleanRestartKeepsTopicsOffsetsAndMessages) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  write_state(world);
  ASSERT_TRUE(world.shutdown_broker().ok());
  ASSERT_TRUE(world.start_broker().ok());
  EXPECT_FALSE(world.broker().message_store().recovery_report().abnormal);
  expect_state_survived(world);
}

TEST(BrokerController, AfterKillMinus9TheNextStartRecoversTheSame) {
  BrokerSimWorld world;
  ASSERT_TRUE(world.start_broker().ok());
  write_state(world);
  world.run_for(seconds(6));  // offsets persist every flushConsumerOffsetInterval (5 s)
  world.crash_broker();
  ASSERT_TRUE(world.start_broker().ok());
  EXPECT_TRUE(world.broker().message_store().recovery_report().abnormal);
  expect_state_survived(world);
}

TEST(BrokerController, AnInvalidConfigFailsStartNamingTheKey) {
  BrokerConfig config = test_broker_config();
  config.brokerIP1 = "broker-host";
  BrokerSimWorld world(config);
  Status status = world.start_broker();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("brokerIP1"), std::string::npos) << status.to_string();
}

TEST(BrokerConfig, ValidateNamesTheKey) {
  auto message_of = [](auto change) {
    BrokerConfig config = test_broker_config();
    change(config);
    return config.validate().message();
  };
  EXPECT_TRUE(test_broker_config().validate().ok());
  EXPECT_NE(message_of([](BrokerConfig& c) { c.brokerName = ""; }).find("brokerName"), std::string::npos);
  EXPECT_NE(message_of([](BrokerConfig& c) { c.listenPort = 0; }).find("listenPort"), std::string::npos);
  EXPECT_NE(message_of([](BrokerConfig& c) { c.namesrvAddr = "a:1;b"; }).find("namesrvAddr"), std::string::npos);
  EXPECT_NE(message_of([](BrokerConfig& c) { c.defaultTopicQueueNums = 0; }).find("defaultTopicQueueNums"),
            std::string::npos);
  EXPECT_NE(message_of([](BrokerConfig& c) { c.brokerPermission = 64; }).find("brokerPermission"), std::string::npos);
}

TEST(BrokerConfig, PropertiesAndDerivedValues) {
  BrokerConfig config;
  EXPECT_EQ(config.set_property("brokerName", " broker-b ").value(), true);
  EXPECT_EQ(config.brokerName, "broker-b");
  EXPECT_EQ(config.set_property("listenPort", "10921").value(), true);
  EXPECT_EQ(config.set_property("longPollingEnable", "false").value(), true);
  EXPECT_FALSE(config.longPollingEnable);
  EXPECT_EQ(config.set_property("flushDiskType", "SYNC_FLUSH").value(), false);  // a store key
  EXPECT_FALSE(config.set_property("listenPort", "ten").ok());
  EXPECT_EQ(config.broker_addr(), "127.0.0.1:10921");
  EXPECT_EQ(config.ha_server_addr(), "127.0.0.1:10922");
  config.namesrvAddr = " 10.0.0.5:9876 ; 10.0.0.6:9876;";
  EXPECT_EQ(config.namesrv_addrs(), (std::vector<std::string>{"10.0.0.5:9876", "10.0.0.6:9876"}));
  config.registerNameServerPeriod = 1'000;
  EXPECT_EQ(config.register_period(), seconds(10));
  config.registerNameServerPeriod = 600'000;
  EXPECT_EQ(config.register_period(), seconds(60));
  // messageDelayLevel is a store key, as in RocketMQ (schedule_message_service_test.cc).
  EXPECT_EQ(config.set_property("messageDelayLevel", "1s").value(), false);
  EXPECT_EQ(config.to_properties().at("brokerName"), "broker-b");
}

}  // namespace
}  // namespace mqlab::broker::testing::broker_controller_test
