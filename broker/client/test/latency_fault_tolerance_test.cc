// LatencyFaultTolerance and TopicPublishInfo: the back-off table step by
// step, and queue selection (round robin, avoiding the previous attempt's
// broker and brokers that back off), on hand-built routes.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "broker/client/latency_fault_tolerance.h"
#include "broker/client/topic_publish_info.h"

namespace mqlab::client::latency_fault_tolerance_test {
namespace {

TEST(LatencyFaultTolerance, BackOffFollowsRocketMqTable) {
  EXPECT_EQ(compute_not_available_duration(0), 0);
  EXPECT_EQ(compute_not_available_duration(49), 0);
  EXPECT_EQ(compute_not_available_duration(50), 0);
  EXPECT_EQ(compute_not_available_duration(549), 0);
  EXPECT_EQ(compute_not_available_duration(550), 30'000);
  EXPECT_EQ(compute_not_available_duration(999), 30'000);
  EXPECT_EQ(compute_not_available_duration(1'000), 60'000);
  EXPECT_EQ(compute_not_available_duration(2'000), 120'000);
  EXPECT_EQ(compute_not_available_duration(3'000), 180'000);
  EXPECT_EQ(compute_not_available_duration(14'999), 180'000);
  EXPECT_EQ(compute_not_available_duration(15'000), 600'000);
  EXPECT_EQ(compute_not_available_duration(kIsolationLatencyMs), 600'000);
}

TEST(LatencyFaultTolerance, SlowOrFailedBrokerIsAvoidedUntilItsBackOffEnds) {
  LatencyFaultTolerance faults;
  EXPECT_TRUE(faults.is_available("a", 0));
  faults.update_fault_item("a", 600, false, 1'000);  // slow: 30 s
  EXPECT_FALSE(faults.is_available("a", 1'000));
  EXPECT_FALSE(faults.is_available("a", 30'999));
  EXPECT_TRUE(faults.is_available("a", 31'000));
  faults.update_fault_item("b", 5, true, 0);  // failed: Java isolates for 600 s
  EXPECT_EQ(faults.available_at_ms("b", 0), 600'000);
  faults.update_fault_item("b", 5, false, 10);  // a quick success clears it
  EXPECT_TRUE(faults.is_available("b", 10));
}

remoting::TopicRouteData two_broker_route(int32_t queues) {
  remoting::TopicRouteData route;
  route.queueDatas = {{"broker-b", queues, queues, 6, 0}, {"broker-a", queues, queues, 6, 0}};
  route.brokerDatas = {{"c", "broker-a", {{0, "10.0.0.2:10911"}}}, {"c", "broker-b", {{0, "10.0.0.3:10911"}}}};
  return route;
}

TEST(TopicPublishInfo, QueuesOfWritableMastersSortedByBroker) {
  remoting::TopicRouteData route = two_broker_route(2);
  route.queueDatas.push_back({"broker-c", 4, 4, 4, 0});            // read-only
  route.queueDatas.push_back({"broker-d", 4, 4, 6, 0});            // no broker data
  route.brokerDatas.push_back({"c", "broker-e", {{1, "x:1"}}});    // slave only
  route.queueDatas.push_back({"broker-e", 4, 4, 6, 0});
  const TopicPublishInfo info = TopicPublishInfo::from_route("T", route, 0);
  ASSERT_EQ(info.queues().size(), 4u);
  EXPECT_EQ(info.queues()[0], (MessageQueue{"T", "broker-a", 0}));
  EXPECT_EQ(info.queues()[3], (MessageQueue{"T", "broker-b", 1}));
}

TEST(TopicPublishInfo, OrderTopicConfDefinesTheQueues) {
  remoting::TopicRouteData route = two_broker_route(8);
  route.orderTopicConf = "broker-a:2;broker-b:1;bad;broker-c:x";
  const TopicPublishInfo info = TopicPublishInfo::from_route("T", route, 0);
  EXPECT_TRUE(info.order_topic());
  ASSERT_EQ(info.queues().size(), 3u);
  EXPECT_EQ(info.queues()[2], (MessageQueue{"T", "broker-b", 0}));
}

TEST(TopicPublishInfo, RoundRobinFromTheStartIndex) {
  TopicPublishInfo info = TopicPublishInfo::from_route("T", two_broker_route(2), 5);
  std::vector<std::string> picked;
  for (int i = 0; i < 4; ++i) {
    const MessageQueue& q = info.select_one_message_queue("", nullptr, 0);
    picked.push_back(q.brokerName + ":" + std::to_string(q.queueId));
  }
  EXPECT_EQ(picked, (std::vector<std::string>{"broker-a:1", "broker-b:0", "broker-b:1", "broker-a:0"}));
}

TEST(TopicPublishInfo, RetryAvoidsThePreviousBroker) {
  for (uint64_t start = 0; start < 8; ++start) {
    TopicPublishInfo info = TopicPublishInfo::from_route("T", two_broker_route(4), start);
    const MessageQueue first = info.select_one_message_queue("", nullptr, 0);
    const MessageQueue retry = info.select_one_message_queue(first.brokerName, nullptr, 0);
    EXPECT_NE(retry.brokerName, first.brokerName) << "start " << start;
  }
}

TEST(TopicPublishInfo, SingleBrokerTopicRetriesThatBroker) {
  remoting::TopicRouteData route = two_broker_route(2);
  route.queueDatas.pop_back();  // only broker-b's queues
  TopicPublishInfo info = TopicPublishInfo::from_route("T", route, 0);
  LatencyFaultTolerance faults;
  faults.update_fault_item("broker-b", 0, true, 0);
  EXPECT_EQ(info.select_one_message_queue("broker-b", &faults, 0).brokerName, "broker-b");
}

TEST(TopicPublishInfo, BackingOffBrokerIsSkippedWhileAnotherIsAvailable) {
  TopicPublishInfo info = TopicPublishInfo::from_route("T", two_broker_route(4), 0);
  LatencyFaultTolerance faults;
  faults.update_fault_item("broker-a", 3'000, false, 0);  // 180 s
  for (int i = 0; i < 20; ++i) EXPECT_EQ(info.select_one_message_queue("", &faults, 1'000).brokerName, "broker-b");
  // Once broker-a's back-off has passed it is chosen again.
  std::set<std::string> seen;
  for (int i = 0; i < 8; ++i) seen.insert(info.select_one_message_queue("", &faults, 200'000).brokerName);
  EXPECT_EQ(seen.size(), 2u);
}

TEST(TopicPublishInfo, WhenAllBackOffTheOneRecoveringFirstIsTried) {
  TopicPublishInfo info = TopicPublishInfo::from_route("T", two_broker_route(4), 3);
  LatencyFaultTolerance faults;
  faults.update_fault_item("broker-a", 0, true, 0);       // until 600 s
  faults.update_fault_item("broker-b", 1'000, false, 0);  // until 60 s
  EXPECT_EQ(info.select_one_message_queue("", &faults, 10).brokerName, "broker-b");
  // ...unless it was the previous attempt's broker.
  EXPECT_EQ(info.select_one_message_queue("broker-b", &faults, 10).brokerName, "broker-a");
}

}  // namespace
}  // namespace mqlab::client::latency_fault_tolerance_test
