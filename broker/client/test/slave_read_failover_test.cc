// Consumer reads fail over to a slave (mq_client_instance.h): a master that
// stops answering is avoided for kBrokerUnreachableBackoff, pulls and offset
// queries go to its slave (whatever the slave suggests), the committed
// offsets go there too, and once the master answers again the consumer's
// offsets carry back to it (its in-memory offset rides on the next pull and
// on the periodic persist), as RocketMQ's RemoteBrokerOffsetStore does.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/client/push_consumer.h"
#include "broker/client/test/fake_cluster.h"
#include "broker/remoting/request_code.h"

namespace mqlab::client::slave_read_failover_test {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseChannel;
using testing::TestCluster;

store::MessageToStore message_to_store(const std::string& body) {
  store::MessageToStore message;
  message.topic = "T";
  message.queue_id = 0;
  message.body.assign(body.begin(), body.end());
  message.properties["UNIQ_KEY"] = "UNIQ-" + body;
  message.born_host = store::HostAddress::ipv4(10, 0, 0, 50, 1234);
  return message;
}

// broker-a with its master on broker(0) and its slave on broker(1).
void route_master_and_slave(TestCluster& cluster) {
  remoting::TopicRouteData route = testing::make_route({{"broker-a", cluster.broker(0).address()}}, 1);
  route.brokerDatas.at(0).brokerAddrs[1] = cluster.broker(1).address();
  cluster.namesrv().set_route("T", route);
  cluster.route("%RETRY%G", 1, 1);
}

TEST(SlaveReadFailover, LookupAvoidsAnUnreachableMasterForTheBackOffOnly) {
  TestCluster cluster(2);
  route_master_and_slave(cluster);
  MQClientInstance& instance = cluster.add_client("c0", "10.0.0.20");
  std::optional<Status> started;
  instance.start([&](Status status) { started = status; });
  std::optional<Status> routed;
  instance.update_topic_route("T", [&](Status status) { routed = status; });
  ASSERT_TRUE(cluster.run_until([&] { return routed.has_value(); }));
  ASSERT_TRUE(routed->ok()) << routed->to_string();
  const std::string master = cluster.broker(0).address();
  const std::string slave = cluster.broker(1).address();
  ASSERT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, false)->address, master);

  // An error answer says nothing about reachability.
  instance.note_request_failure(master, Status::InvalidArgument("SYSTEM_ERROR"));
  EXPECT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, false)->address, master);

  instance.note_request_failure(master, Status::Timeout("pull timed out"));
  const auto moved = instance.find_broker_address_in_subscribe("broker-a", 0, false);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->address, slave);
  EXPECT_EQ(moved->brokerId, 1);
  EXPECT_TRUE(moved->slave);
  // only_this_broker asks for exactly that broker: no substitute.
  EXPECT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, true)->address, master);
  // Publishing never goes to a slave.
  EXPECT_EQ(instance.find_broker_address_in_publish("broker-a"), master);

  // Both unreachable: as if neither were.
  instance.note_request_failure(slave, Status::Unavailable("connection refused"));
  EXPECT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, false)->address, master);

  cluster.run_for(MQClientInstance::kBrokerUnreachableBackoff + seconds(1));
  EXPECT_FALSE(instance.broker_unreachable(master));
  EXPECT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, false)->address, master);
}

TEST(SlaveReadFailover, SwitchedOffReadsStayOnTheMasterAsInRocketMQ4) {
  TestCluster cluster(2);
  route_master_and_slave(cluster);
  MQClientInstance& instance =
      cluster.add_client("c0", "10.0.0.20", [](ClientConfig& config) { config.slaveReadOnUnreachableMaster = false; });
  instance.start([](Status) {});
  std::optional<Status> routed;
  instance.update_topic_route("T", [&](Status status) { routed = status; });
  ASSERT_TRUE(cluster.run_until([&] { return routed.has_value(); }));
  const std::string master = cluster.broker(0).address();
  instance.note_request_failure(master, Status::Timeout("pull timed out"));
  EXPECT_FALSE(instance.broker_unreachable(master));
  EXPECT_EQ(instance.find_broker_address_in_subscribe("broker-a", 0, false)->address, master);
}

TEST(SlaveReadFailover, ConsumerReadsTheSlaveWhileTheMasterIsSilentAndItsOffsetsReturnToTheMaster) {
  TestCluster cluster(2);
  route_master_and_slave(cluster);
  // The slave holds the master's messages (replicated) and, as a slave with
  // slaveReadEnable=false does, suggests the master for the next pull.
  for (int i = 0; i < 5; ++i) {
    cluster.broker(0).put(message_to_store("m" + std::to_string(i)));
    cluster.broker(1).put(message_to_store("m" + std::to_string(i)));
  }
  cluster.broker(1).suggest_broker_id = 0;
  // The master is silent: its machine is gone, the requests time out.
  const auto silent = [](const RemotingCommand&, ResponseChannel) {};
  cluster.broker(0).set_handler(RequestCode::PULL_MESSAGE, silent);
  cluster.broker(0).set_handler(RequestCode::QUERY_CONSUMER_OFFSET, silent);
  cluster.broker(0).set_handler(RequestCode::UPDATE_CONSUMER_OFFSET, silent);

  PushConsumerConfig config;
  config.consumerGroup = "G";
  config.consumeFromWhere = ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET;
  PushConsumer consumer(cluster.add_client("c0", "10.0.0.20"), config);
  ASSERT_TRUE(consumer.subscribe("T", "*").ok());
  std::vector<std::string> bodies;
  consumer.register_message_listener([&](const MessageExt& message, ConsumeCallback done) {
    bodies.push_back(message.body_text());
    done(ConsumeResult::SUCCESS);
  });
  consumer.start([](Status status) { ASSERT_TRUE(status.ok()) << status.to_string(); });

  const auto slave_committed = [&]() -> int64_t {
    const auto it = cluster.broker(1).committed.find({"G", "T", 0});
    return it == cluster.broker(1).committed.end() ? -1 : it->second;
  };
  // Without the failover every pull would wait on the master until the
  // route dropped it, which this NameServer never does.
  ASSERT_TRUE(cluster.run_until([&] { return bodies.size() == 5 && slave_committed() == 5; }, seconds(100)))
      << bodies.size() << " consumed, slave has committed offset " << slave_committed();
  EXPECT_EQ(bodies, (std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"}));
  EXPECT_EQ(cluster.broker(0).committed.count({"G", "T", 0}), 0u);

  // The master answers again: the consumer's offset carries back to it, and
  // new messages (written on the master) are read there.
  cluster.broker(0).set_handler(RequestCode::PULL_MESSAGE, nullptr);
  cluster.broker(0).set_handler(RequestCode::QUERY_CONSUMER_OFFSET, nullptr);
  cluster.broker(0).set_handler(RequestCode::UPDATE_CONSUMER_OFFSET, nullptr);
  cluster.broker(0).put(message_to_store("m5"));
  const auto master_committed = [&]() -> int64_t {
    const auto it = cluster.broker(0).committed.find({"G", "T", 0});
    return it == cluster.broker(0).committed.end() ? -1 : it->second;
  };
  ASSERT_TRUE(cluster.run_until([&] { return bodies.size() == 6 && master_committed() == 6; }, seconds(120)))
      << bodies.size() << " consumed, master has committed offset " << master_committed();
  EXPECT_EQ(bodies.back(), "m5");
}

}  // namespace
}  // namespace mqlab::client::slave_read_failover_test
