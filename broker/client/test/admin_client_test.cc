// AdminClient and the instance's NameServer handling against fakes: cluster
// list, topic creation on every master, topic status and consumer progress;
// NameServer rotation past a dead address; and one seed replaying one trace.
#include <gtest/gtest.h>

#include <optional>

#include "broker/client/admin_client.h"
#include "broker/client/push_consumer.h"
#include "broker/client/test/fake_cluster.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::client::admin_client_test {
namespace {

using remoting::RequestCode;
using remoting::ResponseCode;
using testing::TestCluster;

template <typename T>
T wait_for(TestCluster& cluster, std::function<void(std::function<void(T)>)> start) {
  std::optional<T> out;
  start([&](T value) { out.emplace(std::move(value)); });
  EXPECT_TRUE(cluster.run_until([&] { return out.has_value(); }));
  return std::move(*out);
}

TEST(AdminClient, ClusterListAndTopicCreationOnEveryMaster) {
  TestCluster cluster(2);
  AdminClient admin(cluster.add_client("admin", "10.0.0.30"));
  const auto info = wait_for<Result<api::ClusterInfo>>(cluster, [&](auto done) { admin.cluster_list(done); });
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  EXPECT_EQ(info->clusterAddrTable.at("DefaultCluster"), (std::set<std::string>{"broker-a", "broker-b"}));

  remoting::TopicConfig config;
  config.topicName = "Orders";
  config.readQueueNums = 8;
  config.writeQueueNums = 8;
  const Status created = wait_for<Status>(cluster, [&](auto done) { admin.create_topic("DefaultCluster", config, done); });
  EXPECT_TRUE(created.ok()) << created.to_string();
  for (size_t i = 0; i < 2; ++i) {
    const auto requests = cluster.broker(i).received(RequestCode::UPDATE_AND_CREATE_TOPIC);
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].ext_fields.at("topic"), "Orders");
    EXPECT_EQ(requests[0].ext_fields.at("readQueueNums"), "8");
    EXPECT_EQ(requests[0].ext_fields.at("perm"), "6");
  }
  EXPECT_EQ(wait_for<Status>(cluster, [&](auto done) { admin.create_topic("Nope", config, done); }).code(),
            StatusCode::kNotFound);
}

TEST(AdminClient, TopicStatusAndConsumerProgress) {
  TestCluster cluster(2);
  cluster.route("T", 2);
  for (int i = 0; i < 5; ++i) {
    store::MessageToStore message;
    message.topic = "T";
    message.queue_id = i % 2;
    message.body = {'x'};
    cluster.broker(0).put(message);
  }
  cluster.broker(0).committed[{"G", "T", 0}] = 2;
  AdminClient admin(cluster.add_client("admin", "10.0.0.30"));
  const auto status =
      wait_for<Result<std::vector<QueueOffsetRange>>>(cluster, [&](auto done) { admin.topic_status("T", done); });
  ASSERT_TRUE(status.ok()) << status.status().to_string();
  ASSERT_EQ(status->size(), 4u);
  EXPECT_EQ((*status)[0].queue, (MessageQueue{"T", "broker-a", 0}));
  EXPECT_EQ((*status)[0].maxOffset, 3);
  EXPECT_EQ((*status)[1].maxOffset, 2);
  EXPECT_EQ((*status)[3].maxOffset, 0);

  const auto progress =
      wait_for<Result<ConsumerProgress>>(cluster, [&](auto done) { admin.consumer_progress("G", "T", done); });
  ASSERT_TRUE(progress.ok()) << progress.status().to_string();
  ASSERT_EQ(progress->queues.size(), 4u);
  EXPECT_EQ(progress->queues[0].consumerOffset, 2);
  EXPECT_EQ(progress->queues[0].lag(), 1);
  EXPECT_EQ(progress->queues[1].consumerOffset, 0);  // never committed
  EXPECT_EQ(progress->queues[1].lag(), 2);
  EXPECT_EQ(progress->total_lag(), 3);

  const auto missing =
      wait_for<Result<std::vector<QueueOffsetRange>>>(cluster, [&](auto done) { admin.topic_status("None", done); });
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(MQClientInstance, NameServerRequestsRotatePastADeadAddress) {
  TestCluster cluster(1);
  cluster.route("T", 1);
  ClientConfig config;
  config.namesrvAddr = {"10.0.0.77:9876", cluster.namesrv().address()};  // the first has nobody listening
  config.clientIP = "10.0.0.40";
  config.instanceName = "rotating";
  MQClientInstance instance(cluster.world().start_process("rotating", "10.0.0.40"), config);
  for (int i = 0; i < 3; ++i) {
    const Status status = wait_for<Status>(cluster, [&](auto done) { instance.update_topic_route("T", done); });
    EXPECT_TRUE(status.ok()) << status.to_string();
  }
  ASSERT_NE(instance.find_route("T"), nullptr);
  EXPECT_EQ(instance.find_broker_address_in_publish("broker-a"), "10.0.0.2:10911");
  EXPECT_EQ(cluster.namesrv().count(RequestCode::GET_ROUTEINFO_BY_TOPIC), 3u);
  // Concurrent lookups of one topic share one request.
  int answered = 0;
  for (int i = 0; i < 4; ++i) instance.update_topic_route("T", [&](Status) { ++answered; });
  ASSERT_TRUE(cluster.run_until([&] { return answered == 4; }));
  EXPECT_EQ(cluster.namesrv().count(RequestCode::GET_ROUTEINFO_BY_TOPIC), 4u);
  const Status missing = wait_for<Status>(cluster, [&](auto done) { instance.update_topic_route("Nope", done); });
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

// What a run looked like from the broker's side: every request in order.
std::vector<std::string> consumer_trace(uint64_t seed) {
  TestCluster cluster(2, seed);
  cluster.route("T", 4);
  cluster.route("%RETRY%G", 1, 1);
  std::vector<std::unique_ptr<PushConsumer>> consumers;
  for (int i = 0; i < 2; ++i) {
    PushConsumerConfig config;
    config.consumerGroup = "G";
    auto consumer = std::make_unique<PushConsumer>(cluster.add_client("c" + std::to_string(i), "10.0.0.2" + std::to_string(i)), config);
    EXPECT_TRUE(consumer->subscribe("T", "*").ok());
    consumer->register_message_listener([](const MessageExt&, ConsumeCallback done) { done(ConsumeResult::SUCCESS); });
    consumer->start([](Status) {});
    consumers.push_back(std::move(consumer));
  }
  cluster.run_for(seconds(5));
  for (int i = 0; i < 8; ++i) {
    store::MessageToStore message;
    message.topic = "T";
    message.queue_id = i % 4;
    message.body = {static_cast<uint8_t>('0' + i)};
    cluster.broker(static_cast<size_t>(i % 2)).put(message);
  }
  cluster.run_for(seconds(30));
  std::vector<std::string> trace;
  for (size_t b = 0; b < 2; ++b) {
    for (int32_t code : {RequestCode::PULL_MESSAGE, RequestCode::HEART_BEAT, RequestCode::UPDATE_CONSUMER_OFFSET,
                         RequestCode::GET_CONSUMER_LIST_BY_GROUP}) {
      for (const auto& request : cluster.broker(b).received(code)) trace.push_back(request.describe());
    }
  }
  return trace;
}

TEST(MQClientInstance, OneSeedReplaysOneTrace) {
  const std::vector<std::string> first = consumer_trace(7);
  EXPECT_GT(first.size(), 20u);
  EXPECT_EQ(first, consumer_trace(7));
}

}  // namespace
}  // namespace mqlab::client::admin_client_test
