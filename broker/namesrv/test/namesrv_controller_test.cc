// NamesrvController over the wire: brokers (RemotingClients, one connection
// each) register, clients look routes up, as reference 7.5 and 8.5 describe.
// Runs on the simulator: a NameServer process and a brokers process on one
// loopback network, 120 s of expiry in microseconds of real time.
#include "broker/namesrv/namesrv_controller.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "broker/common/crc32.h"
#include "broker/env/loopback_network.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/route_data.h"
#include "sim/scheduler.h"
#include "sim/sim_env.h"

namespace mqlab::namesrv::namesrv_controller_test {
namespace {

using remoting::DataVersion;
using remoting::RemotingClient;
using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;
using remoting::TopicRouteData;

constexpr const char* kNamesrv = "10.0.0.1:9876";
constexpr int32_t kAliOnsVersion = 121;  // V3_4_9, what ali-ons sends
constexpr int32_t kJavaVersion = 407;    // V4_9_7

struct Broker {
  std::string cluster;
  std::string name;
  int64_t id;
  std::string addr;
  std::string ha;
};

const Broker kMasterA{"DefaultCluster", "broker-a", 0, "10.0.0.11:10911", "10.0.0.11:10912"};
const Broker kSlaveA{"DefaultCluster", "broker-a", 1, "10.0.0.12:10911", "10.0.0.12:10912"};
const Broker kMasterB{"DefaultCluster", "broker-b", 0, "10.0.0.21:10911", "10.0.0.21:10912"};
const Broker kSlaveB{"DefaultCluster", "broker-b", 1, "10.0.0.22:10911", "10.0.0.22:10912"};

const DataVersion kV1{1'700'000'000'000, 1};
const DataVersion kV2{1'700'000'000'500, 2};

std::string text_of(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }
std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

int32_t masked_crc32(const std::vector<uint8_t>& body) {
  return static_cast<int32_t>(crc32_ieee(0, body) & 0x7FFFFFFF);
}

// REGISTER_BROKER as a 4.9.x broker sends it: the RegisterBrokerBody and its CRC.
RemotingCommand register_request(const Broker& broker, const std::map<std::string, int32_t>& topics,
                                 DataVersion version) {
  remoting::RegisterBrokerBody body;
  for (const auto& [topic, queues] : topics) {
    remoting::TopicConfig config;
    config.topicName = topic;
    config.readQueueNums = queues;
    config.writeQueueNums = queues;
    body.topicConfigSerializeWrapper.topicConfigTable.emplace(topic, config);
  }
  body.topicConfigSerializeWrapper.dataVersion = version;
  RemotingCommand request = RemotingCommand::make_request(RequestCode::REGISTER_BROKER);
  request.set_ext_string("brokerName", broker.name);
  request.set_ext_string("brokerAddr", broker.addr);
  request.set_ext_string("clusterName", broker.cluster);
  request.set_ext_string("haServerAddr", broker.ha);
  request.set_ext_int("brokerId", broker.id);
  request.set_ext_bool("compressed", false);
  request.body = bytes_of(body.to_json());
  request.set_ext_int("bodyCrc32", masked_crc32(request.body));
  return request;
}

RemotingCommand route_request(const std::string& topic, int32_t version) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::GET_ROUTEINFO_BY_TOPIC, {{"topic", topic}});
  request.version = version;
  return request;
}

class NamesrvControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NamesrvConfig config;
    config.listenAddress = kNamesrv;
    start_namesrv(config);
    brokers_env_ = &brokers_process_.start();
    tools_ = std::make_unique<RemotingClient>(*brokers_env_);
  }

  void start_namesrv(const NamesrvConfig& config) {
    namesrv_ = std::make_unique<NamesrvController>(namesrv_process_.running() ? namesrv_process_.env()
                                                                              : namesrv_process_.start(),
                                                   config);
    std::optional<Status> started;
    namesrv_->start([&](Status status) { started = status; });
    EXPECT_FALSE(started.has_value());  // never inline
    ASSERT_TRUE(run_until([&] { return started.has_value(); }));
    ASSERT_TRUE(started->ok()) << started->to_string();
  }

  // Each broker has its own client, hence its own connection to the NameServer.
  RemotingClient& client_of(const Broker& broker) {
    std::unique_ptr<RemotingClient>& client = broker_clients_[broker.addr];
    if (client == nullptr) client = std::make_unique<RemotingClient>(*brokers_env_);
    return *client;
  }

  bool run_until(const std::function<bool()>& done, Nanos limit = seconds(10)) {
    const Nanos deadline = scheduler_.now() + limit;
    while (!done()) {
      if (scheduler_.pending_count() == 0 || scheduler_.next_due() > deadline) return false;
      scheduler_.run_one();
    }
    return true;
  }

  // Sends request and runs the world until it is answered.
  RemotingCommand call(RemotingClient& client, RemotingCommand request) {
    std::optional<Result<RemotingCommand>> result;
    client.invoke(kNamesrv, std::move(request), seconds(3), [&](Result<RemotingCommand> r) { result = std::move(r); });
    EXPECT_TRUE(run_until([&] { return result.has_value(); }));
    if (!result.has_value() || !result->ok()) {
      ADD_FAILURE() << (result.has_value() ? result->status().to_string() : "no response");
      return RemotingCommand{};
    }
    return std::move(*result).value();
  }
  RemotingCommand call(RemotingCommand request) { return call(*tools_, std::move(request)); }

  RemotingCommand register_broker(const Broker& broker, const std::map<std::string, int32_t>& topics,
                                  DataVersion version = kV1) {
    RemotingCommand response = call(client_of(broker), register_request(broker, topics, version));
    EXPECT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
    return response;
  }

  void register_two_groups() {
    register_broker(kMasterA, {{"T", 4}, {"TopicA", 8}});
    register_broker(kSlaveA, {{"T", 4}, {"TopicA", 8}});
    register_broker(kMasterB, {{"T", 4}});
    register_broker(kSlaveB, {{"T", 4}});
  }

  bool routable(const std::string& topic) {
    return call(route_request(topic, kJavaVersion)).code == ResponseCode::SUCCESS;
  }

  sim::Scheduler scheduler_;
  sim::SimClock clock_{scheduler_};
  sim::SimExecutor world_executor_{scheduler_, sim::kWorldOwner};
  env::LoopbackNetwork network_{world_executor_, "10.0.0.100"};
  sim::SimProcess namesrv_process_{"namesrv", scheduler_, clock_, {}, env::Random(1), &network_, "10.0.0.1"};
  sim::SimProcess brokers_process_{"brokers", scheduler_, clock_, {}, env::Random(2), &network_, "10.0.0.2"};
  sim::SimEnv* brokers_env_ = nullptr;
  // Declared after the processes, so destroyed before them.
  std::unique_ptr<NamesrvController> namesrv_;
  std::map<std::string, std::unique_ptr<RemotingClient>> broker_clients_;
  std::unique_ptr<RemotingClient> tools_;  // a client looking routes up
};

TEST_F(NamesrvControllerTest, RouteForAliOnsHasBareBrokerIdKeysAndForJavaStandardJson) {
  register_two_groups();
  const RemotingCommand old_client = call(route_request("T", kAliOnsVersion));
  ASSERT_EQ(old_client.code, ResponseCode::SUCCESS);
  EXPECT_EQ(text_of(old_client.body),
            R"({"brokerDatas":[{"brokerAddrs":{0:"10.0.0.11:10911",1:"10.0.0.12:10911"},)"
            R"("brokerName":"broker-a","cluster":"DefaultCluster"},)"
            R"({"brokerAddrs":{0:"10.0.0.21:10911",1:"10.0.0.22:10911"},)"
            R"("brokerName":"broker-b","cluster":"DefaultCluster"}],"filterServerTable":{},)"
            R"("queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},)"
            R"({"brokerName":"broker-b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]})");

  const RemotingCommand new_client = call(route_request("T", kJavaVersion));
  ASSERT_EQ(new_client.code, ResponseCode::SUCCESS);
  EXPECT_NE(text_of(new_client.body).find(R"({"0":"10.0.0.11:10911","1":"10.0.0.12:10911"})"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::accept(text_of(new_client.body)));

  RemotingCommand asks_standard = route_request("T", kAliOnsVersion);
  asks_standard.set_ext_bool("acceptStandardJsonOnly", true);
  EXPECT_EQ(call(std::move(asks_standard)).body, new_client.body);

  const Result<TopicRouteData> old_route = TopicRouteData::parse(text_of(old_client.body));
  const Result<TopicRouteData> new_route = TopicRouteData::parse(text_of(new_client.body));
  ASSERT_TRUE(old_route.ok()) << old_route.status().to_string();
  ASSERT_TRUE(new_route.ok());
  EXPECT_EQ(*old_route, *new_route);
  ASSERT_EQ(new_route->brokerDatas.size(), 2u);
  EXPECT_EQ(new_route->brokerDatas[1].brokerAddrs.at(1), kSlaveB.addr);
}

TEST_F(NamesrvControllerTest, UnknownTopicIsTopicNotExist) {
  register_two_groups();
  const RemotingCommand response = call(route_request("NoSuchTopic", kAliOnsVersion));
  EXPECT_EQ(response.code, ResponseCode::TOPIC_NOT_EXIST);
  EXPECT_EQ(response.remark, "No topic route info in name server for the topic: NoSuchTopic");
  EXPECT_TRUE(response.body.empty());
}

TEST_F(NamesrvControllerTest, SlaveRegistrationLearnsMasterAndHaServerAddresses) {
  const RemotingCommand early_slave = register_broker(kSlaveA, {});
  EXPECT_EQ(early_slave.find_ext("masterAddr"), nullptr);  // no master yet
  const RemotingCommand master = register_broker(kMasterA, {{"T", 4}});
  EXPECT_EQ(master.find_ext("masterAddr"), nullptr);
  EXPECT_EQ(master.find_ext("haServerAddr"), nullptr);
  const RemotingCommand slave = register_broker(kSlaveA, {});
  ASSERT_NE(slave.find_ext("masterAddr"), nullptr);
  EXPECT_EQ(*slave.find_ext("masterAddr"), kMasterA.addr);
  EXPECT_EQ(*slave.find_ext("haServerAddr"), kMasterA.ha);
}

TEST_F(NamesrvControllerTest, BrokersThatStopRegisteringExpireAfter120Seconds) {
  register_two_groups();
  // broker-b keeps its 30 s heartbeat; broker-a's connections stay open but silent.
  for (int i = 0; i < 3; ++i) {
    scheduler_.run_for(seconds(30));
    register_broker(kMasterB, {{"T", 4}});
    register_broker(kSlaveB, {{"T", 4}});
  }
  EXPECT_TRUE(routable("TopicA"));  // t = 90 s
  scheduler_.run_for(seconds(28));
  EXPECT_TRUE(routable("TopicA"));  // t = 118 s: not yet 120 s silent
  register_broker(kMasterB, {{"T", 4}});
  register_broker(kSlaveB, {{"T", 4}});
  scheduler_.run_for(seconds(10));  // the scan at 125 s finds broker-a silent for over 120 s
  EXPECT_FALSE(routable("TopicA"));
  const RemotingCommand route = call(route_request("T", kJavaVersion));
  ASSERT_EQ(route.code, ResponseCode::SUCCESS);
  ASSERT_EQ(TopicRouteData::parse(text_of(route.body))->brokerDatas.size(), 1u);
  EXPECT_EQ(namesrv_->route_info_manager().stats().brokers_expired, 2u);
}

TEST_F(NamesrvControllerTest, ClosingABrokersConnectionDropsItAtOnce) {
  register_two_groups();
  client_of(kMasterA).close_connection(kNamesrv);
  scheduler_.run_for(millis(1));
  // The slave survives: TopicA stays routable for reads, without an id 0.
  const RemotingCommand route = call(route_request("TopicA", kJavaVersion));
  ASSERT_EQ(route.code, ResponseCode::SUCCESS);
  const Result<TopicRouteData> parsed = TopicRouteData::parse(text_of(route.body));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->brokerDatas[0].brokerAddrs, (std::map<int64_t, std::string>{{1, kSlaveA.addr}}));
  client_of(kSlaveA).shutdown();
  scheduler_.run_for(millis(1));
  EXPECT_FALSE(routable("TopicA"));
  EXPECT_TRUE(routable("T"));
  EXPECT_EQ(namesrv_->route_info_manager().stats().brokers_dropped_on_close, 2u);
}

TEST_F(NamesrvControllerTest, QueueDataIsRebuiltOnlyWhenTheDataVersionChanges) {
  register_broker(kMasterA, {{"T1", 4}}, kV1);
  register_broker(kMasterA, {{"T1", 4}, {"T2", 4}}, kV1);
  EXPECT_FALSE(routable("T2"));
  register_broker(kSlaveA, {{"T1", 4}, {"T2", 4}, {"T3", 4}}, kV2);  // a slave's table is ignored
  EXPECT_FALSE(routable("T3"));
  register_broker(kMasterA, {{"T1", 4}, {"T2", 4}}, kV2);
  EXPECT_TRUE(routable("T2"));
}

TEST_F(NamesrvControllerTest, QueryDataVersionSaysChangedAndRefreshesWhenUnchanged) {
  register_broker(kMasterA, {{"T", 4}}, kV1);
  const auto query = [&](DataVersion version) {
    RemotingCommand request = RemotingCommand::make_request(
        RequestCode::QUERY_DATA_VERSION,
        {{"brokerName", kMasterA.name}, {"brokerAddr", kMasterA.addr}, {"clusterName", kMasterA.cluster},
         {"brokerId", "0"}});
    request.body = bytes_of(version.to_json());
    return call(client_of(kMasterA), std::move(request));
  };
  const RemotingCommand changed = query(kV2);
  EXPECT_EQ(changed.code, ResponseCode::SUCCESS);
  EXPECT_EQ(*changed.find_ext("changed"), "true");
  EXPECT_EQ(DataVersion::parse(text_of(changed.body)).value(), kV1);  // what the NameServer holds
  // "Unchanged" answers keep the broker alive without REGISTER_BROKER.
  for (int i = 0; i < 10; ++i) {
    scheduler_.run_for(seconds(30));
    EXPECT_EQ(*query(kV1).find_ext("changed"), "false");
  }
  EXPECT_TRUE(routable("T"));  // t = 300 s
}

TEST_F(NamesrvControllerTest, BodyCrc32MismatchIsRefused) {
  RemotingCommand request = register_request(kMasterA, {{"T", 4}}, kV1);
  request.set_ext_int("bodyCrc32", masked_crc32(request.body) ^ 1);
  const RemotingCommand refused = call(client_of(kMasterA), request);
  EXPECT_EQ(refused.code, ResponseCode::SYSTEM_ERROR);
  EXPECT_EQ(refused.remark, "crc32 not match");
  EXPECT_FALSE(routable("T"));
  request.set_ext_int("bodyCrc32", 0);  // 0: the broker did not compute one
  EXPECT_EQ(call(client_of(kMasterA), request).code, ResponseCode::SUCCESS);
  EXPECT_TRUE(routable("T"));
}

TEST_F(NamesrvControllerTest, ClusterInfoAndTopicListBodiesParse) {
  register_two_groups();
  RemotingCommand cluster_request = RemotingCommand::make_request(RequestCode::GET_BROKER_CLUSTER_INFO);
  cluster_request.version = kAliOnsVersion;
  const RemotingCommand cluster = call(std::move(cluster_request));
  ASSERT_EQ(cluster.code, ResponseCode::SUCCESS);
  const std::string text = text_of(cluster.body);
  EXPECT_NE(text.find(R"({0:"10.0.0.11:10911",1:"10.0.0.12:10911"})"), std::string::npos);  // fastjson's form
  const nlohmann::json json = nlohmann::json::parse(remoting::quote_unquoted_integer_keys(text));
  EXPECT_EQ(json["clusterAddrTable"], nlohmann::json::parse(R"({"DefaultCluster":["broker-a","broker-b"]})"));
  for (const auto& [broker_name, broker_json] : json["brokerAddrTable"].items()) {
    // Each entry is a BrokerData: read it with route_data's own parser.
    const Result<TopicRouteData> wrapped = TopicRouteData::parse(R"({"brokerDatas":[)" + broker_json.dump() + "]}");
    ASSERT_TRUE(wrapped.ok()) << wrapped.status().to_string();
    EXPECT_EQ(wrapped->brokerDatas[0].brokerName, broker_name);
    EXPECT_EQ(wrapped->brokerDatas[0].brokerAddrs.size(), 2u);
  }

  const RemotingCommand topics = call(RemotingCommand::make_request(RequestCode::GET_ALL_TOPIC_LIST_FROM_NAMESERVER));
  ASSERT_EQ(topics.code, ResponseCode::SUCCESS);
  EXPECT_EQ(text_of(topics.body), R"({"topicList":["T","TopicA"]})");
}

TEST_F(NamesrvControllerTest, MalformedRequestsAreAnsweredWithErrorsNotCrashes) {
  RemotingCommand no_name = register_request(kMasterA, {{"T", 4}}, kV1);
  no_name.ext_fields.erase("brokerName");
  RemotingCommand bad_id = register_request(kMasterA, {{"T", 4}}, kV1);
  bad_id.set_ext_string("brokerId", "zero");
  RemotingCommand bad_body = register_request(kMasterA, {}, kV1);
  bad_body.body = bytes_of(R"({"topicConfigSerializeWrapper":[)");
  bad_body.set_ext_int("bodyCrc32", masked_crc32(bad_body.body));
  RemotingCommand compressed = register_request(kMasterA, {}, kV1);
  compressed.set_ext_bool("compressed", true);
  RemotingCommand bad_version_body =
      RemotingCommand::make_request(RequestCode::QUERY_DATA_VERSION, {{"brokerName", "a"}, {"brokerAddr", "b"},
                                                                        {"clusterName", "c"}, {"brokerId", "0"}});
  bad_version_body.body = bytes_of("{");

  const std::vector<std::pair<RemotingCommand, std::string>> cases{
      {no_name, "the custom field <brokerName> is null"},
      {bad_id, "brokerId"},
      {bad_body, "Failed to decode RegisterBrokerBody"},
      {compressed, "compressed"},
      {RemotingCommand::make_request(RequestCode::GET_ROUTEINFO_BY_TOPIC), "the custom field <topic> is null"},
      {RemotingCommand::make_request(RequestCode::UNREGISTER_BROKER, {{"brokerName", "a"}}), "brokerAddr"},
      {RemotingCommand::make_request(RequestCode::QUERY_DATA_VERSION), "brokerName"},
      {bad_version_body, "DataVersion"},
      {RemotingCommand::make_request(RequestCode::PUT_KV_CONFIG, {{"namespace", "N"}, {"key", "k"}}), "value"},
      {RemotingCommand::make_request(RequestCode::GET_KV_CONFIG, {{"namespace", "N"}}), "key"},
      {RemotingCommand::make_request(RequestCode::DELETE_KV_CONFIG), "namespace"},
  };
  for (const auto& [request, remark_part] : cases) {
    const RemotingCommand response = call(request);
    EXPECT_EQ(response.code, ResponseCode::SYSTEM_ERROR) << request.describe();
    EXPECT_NE(response.remark.find(remark_part), std::string::npos) << response.remark;
  }
  EXPECT_FALSE(routable("T"));
  // Still serving, on the same connection.
  register_broker(kMasterA, {{"T", 4}});
  EXPECT_TRUE(routable("T"));
  EXPECT_EQ(namesrv_->status().remoting.connections_closed_for_bad_input, 0u);
}

TEST_F(NamesrvControllerTest, UnregisterDropsTheBroker) {
  register_two_groups();
  const RemotingCommand response = call(RemotingCommand::make_request(
      RequestCode::UNREGISTER_BROKER, {{"brokerName", kMasterB.name}, {"brokerAddr", kMasterB.addr},
                                       {"clusterName", kMasterB.cluster}, {"brokerId", "0"}}));
  EXPECT_EQ(response.code, ResponseCode::SUCCESS);
  const Result<TopicRouteData> route = TopicRouteData::parse(text_of(call(route_request("T", kJavaVersion)).body));
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(route->brokerDatas[1].brokerAddrs, (std::map<int64_t, std::string>{{1, kSlaveB.addr}}));
}

TEST_F(NamesrvControllerTest, KvConfigAndOrderTopicConf) {
  const auto kv = [&](int32_t code, remoting::ExtFields fields) {
    return call(RemotingCommand::make_request(code, std::move(fields)));
  };
  EXPECT_EQ(kv(RequestCode::PUT_KV_CONFIG, {{"namespace", kNamespaceOrderTopicConfig}, {"key", "T"},
                                            {"value", "broker-a:4"}})
                .code,
            ResponseCode::SUCCESS);
  const RemotingCommand found = kv(RequestCode::GET_KV_CONFIG, {{"namespace", kNamespaceOrderTopicConfig}, {"key", "T"}});
  EXPECT_EQ(found.code, ResponseCode::SUCCESS);
  EXPECT_EQ(*found.find_ext("value"), "broker-a:4");
  const RemotingCommand missing = kv(RequestCode::GET_KV_CONFIG, {{"namespace", "N"}, {"key", "k"}});
  EXPECT_EQ(missing.code, ResponseCode::QUERY_NOT_FOUND);
  EXPECT_EQ(missing.remark, "No config item, Namespace: N Key: k");

  // A registering broker gets the ORDER_TOPIC_CONFIG list; routes carry it
  // only with orderMessageEnable (off here).
  const RemotingCommand registered = register_broker(kMasterA, {{"T", 4}});
  EXPECT_EQ(text_of(registered.body), R"({"table":{"T":"broker-a:4"}})");
  EXPECT_EQ(TopicRouteData::parse(text_of(call(route_request("T", kJavaVersion)).body))->orderTopicConf, "");

  EXPECT_EQ(kv(RequestCode::DELETE_KV_CONFIG, {{"namespace", kNamespaceOrderTopicConfig}, {"key", "T"}}).code,
            ResponseCode::SUCCESS);
  EXPECT_FALSE(namesrv_->get_kv_config(kNamespaceOrderTopicConfig, "T").has_value());
  EXPECT_TRUE(register_broker(kMasterA, {{"T", 4}}).body.empty());
}

TEST_F(NamesrvControllerTest, OrderMessageEnableAddsOrderTopicConfToRoutes) {
  namesrv_.reset();
  NamesrvConfig config;
  config.listenAddress = kNamesrv;
  config.orderMessageEnable = true;
  start_namesrv(config);
  namesrv_->put_kv_config(kNamespaceOrderTopicConfig, "T", "broker-a:4");
  register_broker(kMasterA, {{"T", 4}});
  const RemotingCommand route = call(route_request("T", kAliOnsVersion));
  ASSERT_EQ(route.code, ResponseCode::SUCCESS);
  EXPECT_EQ(TopicRouteData::parse(text_of(route.body))->orderTopicConf, "broker-a:4");
}

TEST_F(NamesrvControllerTest, StatusSnapshotListsBrokersAndTopics) {
  register_two_groups();
  scheduler_.run_for(seconds(7));
  const NamesrvStatus status = namesrv_->status();
  EXPECT_TRUE(status.running);
  EXPECT_EQ(status.address, kNamesrv);
  EXPECT_EQ(status.connections, 4u);  // one per broker; the tools client has not called yet
  ASSERT_EQ(status.brokers.size(), 4u);
  EXPECT_EQ(status.brokers[0].brokerName, "broker-a");
  EXPECT_EQ(status.brokers[0].brokerId, 0);
  EXPECT_EQ(status.brokers[0].brokerAddr, kMasterA.addr);
  EXPECT_EQ(status.brokers[0].haServerAddr, kMasterA.ha);
  EXPECT_EQ(status.brokers[0].remoteAddress.rfind("10.0.0.2:", 0), 0u);
  EXPECT_GE(status.brokers[0].since_last_update_ns, seconds(7));
  EXPECT_EQ(status.brokers[3].brokerAddr, kSlaveB.addr);
  ASSERT_EQ(status.topics.size(), 2u);
  EXPECT_EQ(status.topics[0].topic, "T");
  EXPECT_EQ(status.topics[0].queueDatas.size(), 2u);
  EXPECT_EQ(status.routes.registrations, 4u);
  EXPECT_EQ(status.remoting.requests, 4u);

  namesrv_->shutdown();
  EXPECT_FALSE(namesrv_->status().running);
  EXPECT_EQ(namesrv_->status().connections, 0u);
}

TEST_F(NamesrvControllerTest, StartReportsAnAddressInUse) {
  NamesrvController second(namesrv_process_.env(), NamesrvConfig{.listenAddress = kNamesrv});
  std::optional<Status> started;
  second.start([&](Status status) { started = status; });
  ASSERT_TRUE(run_until([&] { return started.has_value(); }));
  EXPECT_FALSE(started->ok());
  EXPECT_FALSE(second.running());
}

}  // namespace
}  // namespace mqlab::namesrv::namesrv_controller_test
