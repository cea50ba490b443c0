// RouteInfoManager's bookkeeping (reference 7.5, 8.5): registration of master
// and slave groups, route shape, dataVersion-gated queue data, id switches,
// expiry, connection close, unregistration, cluster info and topic lists.
// Plain data: each test feeds registrations with explicit instants.
#include "broker/namesrv/route_info_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mqlab::namesrv::route_info_manager_test {
namespace {

using remoting::BrokerData;
using remoting::DataVersion;
using remoting::QueueData;
using remoting::TopicConfig;

struct Broker {
  std::string cluster;
  std::string name;
  int64_t id;
  std::string addr;
  std::string ha;
  std::string connection;  // remote address of its connection to the NameServer
};

const Broker kMasterA{"DefaultCluster", "broker-a", 0, "10.0.0.11:10911", "10.0.0.11:10912", "10.0.0.11:50001"};
const Broker kSlaveA{"DefaultCluster", "broker-a", 1, "10.0.0.12:10911", "10.0.0.12:10912", "10.0.0.12:50002"};
const Broker kMasterB{"DefaultCluster", "broker-b", 0, "10.0.0.21:10911", "10.0.0.21:10912", "10.0.0.21:50003"};
const Broker kSlaveB{"DefaultCluster", "broker-b", 1, "10.0.0.22:10911", "10.0.0.22:10912", "10.0.0.22:50004"};

RegisterBrokerRequest registration(const Broker& broker, const std::map<std::string, int32_t>& topics,
                                   DataVersion version) {
  RegisterBrokerRequest request;
  request.clusterName = broker.cluster;
  request.brokerName = broker.name;
  request.brokerId = broker.id;
  request.brokerAddr = broker.addr;
  request.haServerAddr = broker.ha;
  request.remoteAddress = broker.connection;
  for (const auto& [topic, queues] : topics) {
    TopicConfig config;
    config.topicName = topic;
    config.readQueueNums = queues;
    config.writeQueueNums = queues;
    request.topicConfigWrapper.topicConfigTable.emplace(topic, config);
  }
  request.topicConfigWrapper.dataVersion = version;
  return request;
}

const DataVersion kV1{1'700'000'000'000, 1};
const DataVersion kV2{1'700'000'000'500, 2};

// Both groups, masters and slaves, with topic T (4 queues) on both and
// TopicA (8) on broker-a only; slaves report the same tables.
void register_two_groups(RouteInfoManager& routes, Nanos now) {
  const std::map<std::string, int32_t> a{{"T", 4}, {"TopicA", 8}};
  const std::map<std::string, int32_t> b{{"T", 4}};
  routes.register_broker(registration(kMasterA, a, kV1), now);
  routes.register_broker(registration(kSlaveA, a, kV1), now);
  routes.register_broker(registration(kMasterB, b, kV1), now);
  routes.register_broker(registration(kSlaveB, b, kV1), now);
}

TEST(RouteInfoManager, TwoGroupsGiveTheRouteShapeOfAJavaNameServer) {
  RouteInfoManager routes;
  register_two_groups(routes, seconds(1));
  const std::optional<remoting::TopicRouteData> route = routes.pickup_topic_route_data("T");
  ASSERT_TRUE(route.has_value());
  const std::vector<BrokerData> brokers{
      {"DefaultCluster", "broker-a", {{0, kMasterA.addr}, {1, kSlaveA.addr}}},
      {"DefaultCluster", "broker-b", {{0, kMasterB.addr}, {1, kSlaveB.addr}}}};
  EXPECT_EQ(route->brokerDatas, brokers);
  const std::vector<QueueData> queues{{"broker-a", 4, 4, 6, 0}, {"broker-b", 4, 4, 6, 0}};
  EXPECT_EQ(route->queueDatas, queues);
  EXPECT_TRUE(route->filterServerTable.empty());
  EXPECT_TRUE(route->orderTopicConf.empty());

  const std::optional<remoting::TopicRouteData> only_a = routes.pickup_topic_route_data("TopicA");
  ASSERT_TRUE(only_a.has_value());
  ASSERT_EQ(only_a->brokerDatas.size(), 1u);
  EXPECT_EQ(only_a->brokerDatas[0].brokerName, "broker-a");
  EXPECT_EQ(only_a->queueDatas[0].writeQueueNums, 8);

  EXPECT_FALSE(routes.pickup_topic_route_data("Nope").has_value());
  EXPECT_EQ(routes.get_all_topic_list(), (std::vector<std::string>{"T", "TopicA"}));
  EXPECT_EQ(routes.stats().registrations, 4u);
  routes.check_invariants();
}

TEST(RouteInfoManager, SlaveLearnsItsLiveMastersAddresses) {
  RouteInfoManager routes;
  // Before the master registers there is nothing to tell.
  EXPECT_EQ(routes.register_broker(registration(kSlaveA, {}, kV1), 0), RegisterBrokerResult{});
  EXPECT_EQ(routes.register_broker(registration(kMasterA, {}, kV1), 0), RegisterBrokerResult{});  // a master hears nothing
  const RegisterBrokerResult result = routes.register_broker(registration(kSlaveA, {}, kV1), seconds(30));
  EXPECT_EQ(result.masterAddr, kMasterA.addr);
  EXPECT_EQ(result.haServerAddr, kMasterA.ha);
}

TEST(RouteInfoManager, QueueDataComesFromTheMasterOnlyWhenItsDataVersionChanged) {
  RouteInfoManager routes;
  routes.register_broker(registration(kMasterA, {{"T1", 4}}, kV1), 0);
  EXPECT_EQ(routes.get_all_topic_list(), std::vector<std::string>{"T1"});

  // Same dataVersion: the body is not read again, even if it says more.
  routes.register_broker(registration(kMasterA, {{"T1", 8}, {"T2", 4}}, kV1), seconds(30));
  EXPECT_EQ(routes.get_all_topic_list(), std::vector<std::string>{"T1"});
  EXPECT_EQ(routes.pickup_topic_route_data("T1")->queueDatas[0].writeQueueNums, 4);

  // A slave's table is never the brokerName's.
  routes.register_broker(registration(kSlaveA, {{"T3", 4}}, kV2), seconds(31));
  EXPECT_FALSE(routes.pickup_topic_route_data("T3").has_value());

  routes.register_broker(registration(kMasterA, {{"T1", 8}, {"T2", 4}}, kV2), seconds(60));
  EXPECT_EQ(routes.get_all_topic_list(), (std::vector<std::string>{"T1", "T2"}));
  EXPECT_EQ(routes.pickup_topic_route_data("T1")->queueDatas[0].writeQueueNums, 8);
  EXPECT_EQ(routes.query_broker_topic_config(kMasterA.addr), kV2);
}

TEST(RouteInfoManager, AnIncrementalRegistrationKeepsTheOtherTopics) {
  // A 4.x broker registers a topic it just created alone, with a new dataVersion.
  RouteInfoManager routes;
  routes.register_broker(registration(kMasterA, {{"T1", 4}, {"T2", 4}}, kV1), 0);
  routes.register_broker(registration(kMasterA, {{"T3", 2}}, kV2), seconds(1));
  EXPECT_EQ(routes.get_all_topic_list(), (std::vector<std::string>{"T1", "T2", "T3"}));
}

TEST(RouteInfoManager, AnAddressRegisteredUnderANewIdLosesItsOldId) {
  RouteInfoManager routes;
  routes.register_broker(registration(kMasterA, {{"T", 4}}, kV1), 0);
  routes.register_broker(registration(kSlaveA, {{"T", 4}}, kV1), 0);
  // The old master left; the slave is reconfigured as the master.
  routes.on_connection_closed(kMasterA.connection);
  Broker promoted = kSlaveA;
  promoted.id = 0;
  routes.register_broker(registration(promoted, {{"T", 4}}, kV1), seconds(10));
  const BrokerData& broker = routes.broker_addr_table().at("broker-a");
  EXPECT_EQ(broker.brokerAddrs, (std::map<int64_t, std::string>{{0, kSlaveA.addr}}));
  routes.check_invariants();
}

TEST(RouteInfoManager, BrokersNotRefreshedFor120SecondsAreDropped) {
  RouteInfoManager routes(seconds(120));
  register_two_groups(routes, seconds(5));
  // broker-b keeps registering, broker-a falls silent.
  routes.register_broker(registration(kMasterB, {{"T", 4}}, kV1), seconds(100));
  routes.register_broker(registration(kSlaveB, {{"T", 4}}, kV1), seconds(100));
  EXPECT_TRUE(routes.scan_not_active_broker(seconds(125)).empty());  // exactly 120 s: still alive
  const std::vector<std::string> dropped = routes.scan_not_active_broker(seconds(125) + 1);
  EXPECT_EQ(dropped, (std::vector<std::string>{kMasterA.addr, kSlaveA.addr}));
  EXPECT_EQ(routes.stats().brokers_expired, 2u);
  EXPECT_FALSE(routes.broker_addr_table().contains("broker-a"));
  EXPECT_FALSE(routes.pickup_topic_route_data("TopicA").has_value());
  const std::optional<remoting::TopicRouteData> route = routes.pickup_topic_route_data("T");
  ASSERT_TRUE(route.has_value());
  ASSERT_EQ(route->brokerDatas.size(), 1u);
  EXPECT_EQ(route->brokerDatas[0].brokerName, "broker-b");
  EXPECT_EQ(routes.cluster_addr_table().at("DefaultCluster"), std::set<std::string>{"broker-b"});
  routes.check_invariants();
}

TEST(RouteInfoManager, ASurvivingSlaveKeepsTheTopicRoutable) {
  RouteInfoManager routes;
  register_two_groups(routes, 0);
  EXPECT_EQ(routes.on_connection_closed(kMasterA.connection), std::vector<std::string>{kMasterA.addr});
  const std::optional<remoting::TopicRouteData> route = routes.pickup_topic_route_data("TopicA");
  ASSERT_TRUE(route.has_value());
  // No id 0: producers skip the group, consumers read from the slave.
  EXPECT_EQ(route->brokerDatas[0].brokerAddrs, (std::map<int64_t, std::string>{{1, kSlaveA.addr}}));
  EXPECT_EQ(route->queueDatas.size(), 1u);
  EXPECT_EQ(routes.stats().brokers_dropped_on_close, 1u);
}

TEST(RouteInfoManager, ConnectionCloseDropsOnlyBrokersRegisteredOverIt) {
  RouteInfoManager routes;
  register_two_groups(routes, 0);
  EXPECT_TRUE(routes.on_connection_closed("10.0.0.99:40000").empty());
  // broker-b's master re-registers over a new connection; the old one closing is stale news.
  Broker reconnected = kMasterB;
  reconnected.connection = "10.0.0.21:50099";
  routes.register_broker(registration(reconnected, {{"T", 4}}, kV1), seconds(30));
  EXPECT_TRUE(routes.on_connection_closed(kMasterB.connection).empty());
  EXPECT_EQ(routes.on_connection_closed(reconnected.connection), std::vector<std::string>{kMasterB.addr});
  EXPECT_EQ(routes.broker_live_table().size(), 3u);
  routes.check_invariants();
}

TEST(RouteInfoManager, UnregisteringTheLastAddressRemovesTheBrokerNameEverywhere) {
  RouteInfoManager routes;
  register_two_groups(routes, 0);
  routes.unregister_broker("DefaultCluster", kSlaveA.addr, "broker-a", 1);
  EXPECT_TRUE(routes.pickup_topic_route_data("TopicA").has_value());
  routes.unregister_broker("DefaultCluster", kMasterA.addr, "broker-a", 0);
  EXPECT_FALSE(routes.pickup_topic_route_data("TopicA").has_value());
  EXPECT_EQ(routes.get_all_topic_list(), std::vector<std::string>{"T"});
  routes.unregister_broker("DefaultCluster", kMasterB.addr, "broker-b", 0);
  routes.unregister_broker("DefaultCluster", kSlaveB.addr, "broker-b", 1);
  EXPECT_TRUE(routes.cluster_addr_table().empty());
  EXPECT_TRUE(routes.broker_addr_table().empty());
  EXPECT_TRUE(routes.topic_queue_table().empty());
  EXPECT_TRUE(routes.broker_live_table().empty());
  EXPECT_EQ(routes.stats().unregistrations, 4u);
}

TEST(RouteInfoManager, DataVersionQueriesAndRefreshes) {
  RouteInfoManager routes(seconds(120));
  routes.register_broker(registration(kMasterA, {{"T", 4}}, kV1), 0);
  EXPECT_FALSE(routes.is_broker_topic_config_changed(kMasterA.addr, kV1));
  EXPECT_TRUE(routes.is_broker_topic_config_changed(kMasterA.addr, kV2));
  EXPECT_TRUE(routes.is_broker_topic_config_changed("10.0.0.99:10911", kV1));  // never registered
  EXPECT_FALSE(routes.query_broker_topic_config("10.0.0.99:10911").has_value());
  routes.update_broker_info_update_timestamp(kMasterA.addr, seconds(100));
  EXPECT_TRUE(routes.scan_not_active_broker(seconds(200)).empty());
  EXPECT_EQ(routes.scan_not_active_broker(seconds(221)).size(), 1u);
}

TEST(RouteInfoManager, ClusterInfoInBothKeyForms) {
  RouteInfoManager routes;
  routes.register_broker(registration(kMasterA, {}, kV1), 0);
  routes.register_broker(registration(kSlaveA, {}, kV1), 0);
  const ClusterInfo info = routes.get_all_cluster_info();
  EXPECT_EQ(info.to_json(remoting::RouteDataJsonForm::kFastjsonIntegerKeys),
            R"({"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.11:10911",1:"10.0.0.12:10911"},)"
            R"("brokerName":"broker-a","cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}})");
  const std::string standard = info.to_json(remoting::RouteDataJsonForm::kStandardJson);
  EXPECT_EQ(standard, remoting::quote_unquoted_integer_keys(
                          info.to_json(remoting::RouteDataJsonForm::kFastjsonIntegerKeys)));
  EXPECT_TRUE(nlohmann::json::accept(standard));
}

}  // namespace
}  // namespace mqlab::namesrv::route_info_manager_test
