// ClusterHarness: a small RocketMQ cluster inside one test, on the simulator.
// One NameServer (10.0.0.100:9876), master brokers broker-a (10.0.0.1:10911)
// and broker-b (10.0.0.2:10911), each on its own SimDisk, and client
// processes on 10.0.1.x, each with its own MQClientInstance. Everything
// shares one virtual-time Scheduler, one SimClock and one LoopbackNetwork
// (no latency, no loss), so a run is deterministic and a 10 s rebalance
// interval costs microseconds. The real NamesrvController, BrokerController,
// Producer, PushConsumer and AdminClient run unchanged; tests drive them and
// look at them (routes, stores, offset tables) directly.
//
// A node can be shut down cleanly, killed (kill -9: its objects are then
// destroyed, which does no I/O) and started again as a new incarnation (a
// broker over the same disk, a client with the same clientId). A tools node
// (10.0.1.250) answers raw requests and admin commands; RawConnection feeds a
// server bytes no client would send and collects what comes back.
//
// Header-only, so the broker's and the NameServer's tests can use it too.
// Teardown kills every process before destroying any object: nothing runs
// after the test body, and no destructor can reach a freed neighbour.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "broker/client/admin_client.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/producer.h"
#include "broker/client/push_consumer.h"
#include "broker/common/assert.h"
#include "broker/env/loopback_network.h"
#include "broker/namesrv/namesrv_controller.h"
#include "broker/processor/broker_controller.h"
#include "broker/remoting/frame_codec.h"
#include "sim/disk_profile.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::client::testing {

using remoting::RemotingCommand;

inline constexpr const char* kClusterName = "DefaultCluster";
inline constexpr const char* kNamesrvHost = "10.0.0.100";
inline constexpr const char* kNamesrvAddr = "10.0.0.100:9876";
inline constexpr const char* kToolsHost = "10.0.1.250";
inline constexpr int32_t kBrokerPort = 10911;

struct BrokerSpec {
  std::string name;
  std::string host;
  std::string address() const { return host + ":" + std::to_string(kBrokerPort); }
};

inline std::vector<BrokerSpec> default_brokers() { return {{"broker-a", "10.0.0.1"}, {"broker-b", "10.0.0.2"}}; }

// Small files, so a test's store is a few MiB of simulated disk: 64 KiB
// messages at most, 1 MiB CommitLog segments, 1000-entry ConsumeQueue files,
// a 4096-entry index.
// SYNC_FLUSH: a SEND_OK means flushed, as a careful deployment's does.
inline store::MessageStoreConfig harness_store_config() {
  store::MessageStoreConfig config;
  config.storePathRootDir = "/store";
  config.maxMessageSize = 64 * 1024;
  config.mappedFileSizeCommitLog = 1 << 20;
  config.mappedFileSizeConsumeQueue = 1'000 * 20;
  config.maxHashSlotNum = 1'024;
  config.maxIndexNum = 4'096;
  config.flushDiskType = store::FlushDiskType::SYNC_FLUSH;
  return config;
}

inline broker::BrokerConfig harness_broker_config(const BrokerSpec& spec) {
  broker::BrokerConfig config;
  config.brokerClusterName = kClusterName;
  config.brokerName = spec.name;
  config.brokerId = 0;
  config.brokerIP1 = spec.host;
  config.listenPort = kBrokerPort;
  config.namesrvAddr = kNamesrvAddr;
  return config;
}

class ClusterHarness;

// A client process and the client objects of its current incarnation.
class ClientNode {
 public:
  ClientNode(ClusterHarness& harness, std::string name, std::string host);
  ~ClientNode() { destroy_objects(); }
  ClientNode(const ClientNode&) = delete;
  ClientNode& operator=(const ClientNode&) = delete;

  // A fresh incarnation with an MQClientInstance (clientId host@name), not
  // started yet: the first producer or consumer start starts it.
  // Requires: not running.
  MQClientInstance& start(std::function<void(ClientConfig&)> tweak = {});
  Producer& add_producer(ProducerConfig config);
  // Requires: subscriptions and the listener are set by the caller before start().
  PushConsumer& add_consumer(PushConsumerConfig config);
  AdminClient& admin();

  // Shuts consumers, producers and the instance down in that order, runs the
  // world until they are done, then the process exits. Requires: running.
  void shutdown();
  // kill -9, then the dead incarnation's objects are destroyed. Requires: running.
  void kill();

  bool running() const { return process_.running(); }
  MQClientInstance& instance() { return *instance_; }
  sim::SimEnv& env() { return process_.env(); }
  PushConsumer& consumer(size_t index = 0) { return *consumers_.at(index); }
  Producer& producer(size_t index = 0) { return *producers_.at(index); }
  const std::string& name() const { return name_; }
  const std::string& host() const { return host_; }
  std::string client_id() const { return host_ + "@" + name_; }
  uint32_t incarnation() const { return process_.incarnation(); }

 private:
  void destroy_objects() {
    consumers_.clear();
    producers_.clear();
    admin_.reset();
    instance_.reset();
  }

  ClusterHarness& harness_;
  const std::string name_;
  const std::string host_;
  sim::SimProcess process_;
  std::unique_ptr<MQClientInstance> instance_;
  std::vector<std::unique_ptr<Producer>> producers_;
  std::vector<std::unique_ptr<PushConsumer>> consumers_;
  std::unique_ptr<AdminClient> admin_;
};

// One connection that speaks raw bytes, opened from a bare process.
class RawConnection {
 public:
  struct State {
    std::shared_ptr<env::Connection> connection;
    uint64_t received_bytes = 0;
    remoting::FrameDecoder decoder;         // cuts what arrives into responses, as it arrives
    std::vector<RemotingCommand> responses;
    Status decode_error;
    std::optional<Status> closed;  // the server's close (or reset), as on_close reported it

    void on_bytes(std::span<const uint8_t> bytes) {
      received_bytes += bytes.size();
      decoder.feed(bytes);
      while (decode_error.ok()) {
        Result<std::optional<RemotingCommand>> next = decoder.next();
        if (!next.ok()) decode_error = next.status();
        if (!next.ok() || !next->has_value()) return;
        responses.push_back(std::move(**next));
      }
    }
  };

  explicit RawConnection(std::shared_ptr<State> state) : state_(std::move(state)) {}
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(std::vector<uint8_t> bytes) { state_->connection->send(std::move(bytes)); }
  void send(const RemotingCommand& command) { send(remoting::encode_frame(command)); }
  // Our goodbye: no callback of ours runs after it.
  void close() {
    if (state_->connection) state_->connection->close();
  }
  bool closed_by_server() const { return state_->closed.has_value(); }
  const Status& close_reason() const { return *state_->closed; }
  uint64_t received_bytes() const { return state_->received_bytes; }
  // The responses decoded from the bytes received so far (all of them must decode).
  const std::vector<RemotingCommand>& responses() const {
    EXPECT_TRUE(state_->decode_error.ok()) << state_->decode_error.to_string();
    return state_->responses;
  }

 private:
  std::shared_ptr<State> state_;
};

class ClusterHarness {
 public:
  explicit ClusterHarness(std::vector<BrokerSpec> brokers = default_brokers(), uint64_t seed = 20'240'601)
      : random_(seed),
        clock_(scheduler_),
        world_executor_(scheduler_, sim::kWorldOwner),
        network_(world_executor_, "10.0.0.254"),
        namesrv_process_("namesrv", scheduler_, clock_, {}, random_.split(), &network_, kNamesrvHost) {
    for (BrokerSpec& spec : brokers) {
      auto node = std::make_unique<BrokerNode>();
      node->spec = std::move(spec);
      node->disk = std::make_unique<sim::SimDisk>(
          scheduler_, sim::DiskProfile::nvme(),
          sim::SimDiskOptions{.name = node->spec.name + "-disk", .capacity_bytes = 1ull << 30}, random_.split());
      node->process = std::make_unique<sim::SimProcess>(node->spec.name, scheduler_, clock_,
                                                        std::vector<sim::Mount>{{"/", node->disk.get()}},
                                                        random_.split(), &network_, node->spec.host);
      brokers_.push_back(std::move(node));
    }
    tools_ = &add_client("tools", kToolsHost);
    tools_->start();
  }

  ~ClusterHarness() {
    // Every process dies first, so no destructor below runs into a live neighbour.
    for (auto& client : clients_) {
      if (client->running()) client->kill();
    }
    for (auto& node : brokers_) {
      if (node->process->running()) node->process->kill();
    }
    for (auto& process : bare_processes_) {
      if (process->running()) process->kill();
    }
    if (namesrv_process_.running()) namesrv_process_.kill();
    clients_.clear();
    for (auto& node : brokers_) node->controller.reset();
    namesrv_.reset();
  }

  ClusterHarness(const ClusterHarness&) = delete;
  ClusterHarness& operator=(const ClusterHarness&) = delete;

  // Starts the NameServer and every broker, and runs until each broker is registered.
  void start() {
    start_namesrv();
    for (size_t i = 0; i < brokers_.size(); ++i) ASSERT_TRUE(start_broker(i).ok());
    ASSERT_TRUE(run_until([&] { return registered_brokers() == brokers_.size(); }, seconds(10)))
        << registered_brokers() << " of " << brokers_.size() << " brokers registered";
  }

  // --- the NameServer
  void start_namesrv() {
    namesrv::NamesrvConfig config;
    config.listenAddress = kNamesrvAddr;
    namesrv_ = std::make_unique<namesrv::NamesrvController>(namesrv_process_.start(), config);
    std::optional<Status> started;
    namesrv_->start([&](Status status) { started = status; });
    ASSERT_TRUE(run_until([&] { return started.has_value(); }, seconds(1)));
    ASSERT_TRUE(started->ok()) << started->to_string();
  }
  namesrv::NamesrvController& namesrv() { return *namesrv_; }
  size_t registered_brokers() const { return namesrv_ ? namesrv_->status().brokers.size() : 0; }

  // --- brokers
  Status start_broker(size_t index) {
    BrokerNode& node = *brokers_.at(index);
    MQ_ASSERT(node.controller == nullptr);
    node.controller = std::make_unique<broker::BrokerController>(node.process->start(), harness_broker_config(node.spec),
                                                                 harness_store_config());
    std::optional<Status> started;
    node.controller->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); }, seconds(30));
    if (!started.has_value()) return Status::Timeout("broker " + node.spec.name + " did not start in 30 s");
    return *started;
  }
  Status shutdown_broker(size_t index) {
    BrokerNode& node = *brokers_.at(index);
    std::optional<Status> stopped;
    node.controller->shutdown([&](Status status) { stopped = status; });
    run_until([&] { return stopped.has_value(); }, seconds(30));
    node.process->kill();
    node.controller.reset();
    return stopped.value_or(Status::Timeout("broker " + node.spec.name + " did not shut down in 30 s"));
  }
  void kill_broker(size_t index) {
    BrokerNode& node = *brokers_.at(index);
    node.process->kill();
    node.controller.reset();
  }
  broker::BrokerController& broker(size_t index) { return *brokers_.at(index)->controller; }
  const BrokerSpec& broker_spec(size_t index) const { return brokers_.at(index)->spec; }
  size_t broker_count() const { return brokers_.size(); }
  // The index of the broker named name. Requires: there is one.
  size_t broker_index(const std::string& name) const {
    for (size_t i = 0; i < brokers_.size(); ++i) {
      if (brokers_[i]->spec.name == name) return i;
    }
    MQ_UNREACHABLE("no broker named " + name);
  }

  // --- clients
  ClientNode& add_client(const std::string& name, const std::string& host) {
    clients_.push_back(std::make_unique<ClientNode>(*this, name, host));
    return *clients_.back();
  }
  ClientNode& tools() { return *tools_; }
  // A process with nothing in it, for raw connections.
  sim::SimEnv& add_bare_process(const std::string& name, const std::string& host) {
    bare_processes_.push_back(std::make_unique<sim::SimProcess>(name, scheduler_, clock_, std::vector<sim::Mount>{},
                                                                random_.split(), &network_, host));
    return bare_processes_.back()->start();
  }

  // UPDATE_AND_CREATE_TOPIC on every master (mqadmin updateTopic -c), then
  // runs until the NameServer routes topic over every broker.
  void create_topic(const std::string& topic, int32_t queues) {
    remoting::TopicConfig config;
    config.topicName = topic;
    config.readQueueNums = queues;
    config.writeQueueNums = queues;
    std::optional<Status> created;
    tools_->admin().create_topic(kClusterName, config, [&](Status status) { created = status; });
    ASSERT_TRUE(run_until([&] { return created.has_value(); }, seconds(10)));
    ASSERT_TRUE(created->ok()) << created->to_string();
    ASSERT_TRUE(run_until([&] { return routed_brokers(topic) == brokers_.size(); }, seconds(10)))
        << topic << " is routed over " << routed_brokers(topic) << " brokers";
  }
  size_t routed_brokers(const std::string& topic) const {
    const std::optional<remoting::TopicRouteData> route = namesrv_->route_info_manager().pickup_topic_route_data(topic);
    return route ? route->queueDatas.size() : 0;
  }

  // --- raw requests from the tools node
  Result<RemotingCommand> call(const std::string& address, RemotingCommand request, Nanos timeout = seconds(3)) {
    std::optional<Result<RemotingCommand>> answer;
    tools_->instance().remoting().invoke(address, std::move(request), timeout,
                                         [&](Result<RemotingCommand> response) { answer = std::move(response); });
    run_until([&] { return answer.has_value(); }, timeout + seconds(1));
    if (!answer.has_value()) return Status::Timeout("no answer from " + address + " in virtual time");
    return std::move(*answer);
  }
  // The answer; fails the test on a transport error.
  RemotingCommand must_call(const std::string& address, RemotingCommand request) {
    Result<RemotingCommand> response = call(address, std::move(request));
    EXPECT_TRUE(response.ok()) << response.status().to_string();
    return response.ok() ? std::move(response).value() : RemotingCommand{};
  }

  // Connects from env (a bare process) to address and runs until connected.
  std::unique_ptr<RawConnection> connect_raw(sim::SimEnv& env, const std::string& address) {
    auto state = std::make_shared<RawConnection::State>();
    env.network().connect(address, seconds(1), [state](Result<std::shared_ptr<env::Connection>> connected) {
      ASSERT_TRUE(connected.ok()) << connected.status().to_string();
      state->connection = std::move(connected).value();
      const std::weak_ptr<RawConnection::State> weak = state;  // the connection must not keep its owner alive
      state->connection->set_handlers(
          [weak](std::span<const uint8_t> bytes) {
            if (auto s = weak.lock()) s->on_bytes(bytes);
          },
          [weak](Status reason) {
            if (auto s = weak.lock()) s->closed = std::move(reason);
          });
    });
    EXPECT_TRUE(run_until([&] { return state->connection != nullptr; }, seconds(2)));
    return std::make_unique<RawConnection>(std::move(state));
  }

  // --- time
  // Runs events until pred() holds or limit of virtual time passed; returns pred().
  bool run_until(const std::function<bool()>& pred, Nanos limit = seconds(120)) {
    return scheduler_.run_until_true(pred, limit);
  }
  void run_for(Nanos duration) { scheduler_.run_for(duration); }
  Nanos now() const { return scheduler_.now(); }
  sim::Scheduler& scheduler() { return scheduler_; }
  sim::SimClock& clock() { return clock_; }
  env::LoopbackNetwork& network() { return network_; }

 private:
  friend class ClientNode;

  struct BrokerNode {
    BrokerSpec spec;
    std::unique_ptr<sim::SimDisk> disk;
    std::unique_ptr<sim::SimProcess> process;
    std::unique_ptr<broker::BrokerController> controller;  // null while down
  };

  // Declaration order is teardown order reversed: the scheduler and the
  // network outlive every process, the processes every controller.
  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimExecutor world_executor_;
  env::LoopbackNetwork network_;
  sim::SimProcess namesrv_process_;
  std::unique_ptr<namesrv::NamesrvController> namesrv_;
  std::vector<std::unique_ptr<BrokerNode>> brokers_;
  std::vector<std::unique_ptr<sim::SimProcess>> bare_processes_;
  std::vector<std::unique_ptr<ClientNode>> clients_;
  ClientNode* tools_ = nullptr;
};

// --- ClientNode ---------------------------------------------------------------

inline ClientNode::ClientNode(ClusterHarness& harness, std::string name, std::string host)
    : harness_(harness),
      name_(std::move(name)),
      host_(std::move(host)),
      process_(name_, harness.scheduler_, harness.clock_, {}, harness.random_.split(), &harness.network_, host_) {}

inline MQClientInstance& ClientNode::start(std::function<void(ClientConfig&)> tweak) {
  MQ_ASSERT(!running());
  destroy_objects();  // the previous incarnation's, if it was killed
  ClientConfig config;
  config.namesrvAddr = {kNamesrvAddr};
  config.clientIP = host_;
  config.instanceName = name_;
  if (tweak) tweak(config);
  instance_ = std::make_unique<MQClientInstance>(process_.start(), config);
  return *instance_;
}

inline Producer& ClientNode::add_producer(ProducerConfig config) {
  MQ_ASSERT(instance_ != nullptr);
  producers_.push_back(std::make_unique<Producer>(*instance_, std::move(config)));
  return *producers_.back();
}

inline PushConsumer& ClientNode::add_consumer(PushConsumerConfig config) {
  MQ_ASSERT(instance_ != nullptr);
  consumers_.push_back(std::make_unique<PushConsumer>(*instance_, std::move(config)));
  return *consumers_.back();
}

inline AdminClient& ClientNode::admin() {
  MQ_ASSERT(instance_ != nullptr);
  if (!admin_) admin_ = std::make_unique<AdminClient>(*instance_);
  return *admin_;
}

inline void ClientNode::shutdown() {
  MQ_ASSERT(running());
  size_t pending = 0;
  auto one_done = [&pending] { --pending; };
  for (auto& consumer : consumers_) {
    ++pending;
    consumer->shutdown(one_done);
  }
  for (auto& producer : producers_) {
    ++pending;
    producer->shutdown(one_done);
  }
  EXPECT_TRUE(harness_.run_until([&] { return pending == 0; }, seconds(10))) << name_ << ": members did not stop";
  bool stopped = false;
  instance_->shutdown([&stopped] { stopped = true; });
  EXPECT_TRUE(harness_.run_until([&] { return stopped; }, seconds(10))) << name_ << ": instance did not stop";
  destroy_objects();
  process_.kill();  // the process exits; nothing of it is left to run
}

inline void ClientNode::kill() {
  process_.kill();
  destroy_objects();
}

}  // namespace mqlab::client::testing
