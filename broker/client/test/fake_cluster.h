// A simulated world for client protocol tests: a virtual-time Scheduler, one
// shared LoopbackNetwork (hosts "10.0.0.x"), and fake servers built on the
// real RemotingServer: a FakeNameServer answering routes and cluster info
// from tables the test fills, and a FakeBroker that keeps messages in memory
// (encoded as CommitLog records, so pulls return real record bytes), holds
// empty pulls for long polling, tracks heartbeats, consumer offsets and
// send-backs. Any request code can be overridden with a scripted handler,
// and every request received is recorded for assertions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "broker/client/mq_client_api.h"
#include "broker/client/mq_client_instance.h"
#include "broker/env/loopback_network.h"
#include "broker/remoting/remoting_server.h"
#include "broker/remoting/route_data.h"
#include "broker/store/message_codec.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::client::testing {

using remoting::RemotingCommand;
using remoting::ResponseChannel;

class SimWorld {
 public:
  explicit SimWorld(uint64_t seed = 1);
  ~SimWorld();

  // A new process on host; its first incarnation's Env.
  sim::SimEnv& start_process(const std::string& name, const std::string& host);
  sim::Scheduler& scheduler() { return scheduler_; }
  Nanos now() const { return scheduler_.now(); }
  void run_for(Nanos duration) { scheduler_.run_for(duration); }
  // Runs events until pred() holds or limit of virtual time passed; returns pred().
  bool run_until(const std::function<bool()>& pred, Nanos limit = seconds(120));

 private:
  sim::Scheduler scheduler_;
  env::Random random_;
  sim::SimClock clock_;
  sim::SimDisk disk_;
  sim::SimExecutor world_executor_;
  env::LoopbackNetwork network_;
  std::vector<std::unique_ptr<sim::SimProcess>> processes_;
};

class FakeServer {
 public:
  using Handler = std::function<void(const RemotingCommand& request, ResponseChannel channel)>;

  FakeServer(env::Env& env, const std::string& name, const std::string& address);
  virtual ~FakeServer();

  // Replaces the default behaviour for code (until cleared with a null handler).
  void set_handler(int32_t code, Handler handler);
  std::vector<RemotingCommand> received(int32_t code) const;
  size_t count(int32_t code) const { return received(code).size(); }
  const std::string& address() const { return address_; }
  void shutdown() { server_.shutdown(); }
  // shutdown() from a handler: posted, so the server is not torn down under its own call.
  void shutdown_later() {
    env_.executor().post([this] { server_.shutdown(); });
  }

 protected:
  void set_default(int32_t code, Handler handler);
  env::Env& env_;

 private:
  void ensure_registered(int32_t code);

  remoting::RemotingServer server_;
  std::string address_;
  std::map<int32_t, Handler> defaults_;
  std::map<int32_t, Handler> overrides_;
  std::set<int32_t> registered_;
  std::vector<RemotingCommand> received_;
};

class FakeNameServer : public FakeServer {
 public:
  FakeNameServer(env::Env& env, const std::string& address);
  // Sets topic's route: each broker gets one queueData with the given queue counts.
  void set_route(const std::string& topic, remoting::TopicRouteData route) { routes_[topic] = std::move(route); }
  void remove_route(const std::string& topic) { routes_.erase(topic); }
  api::ClusterInfo cluster_info;

 private:
  std::map<std::string, remoting::TopicRouteData> routes_;
};

// A route over brokers {name, address}, each with `queues` read and write queues.
remoting::TopicRouteData make_route(const std::vector<std::pair<std::string, std::string>>& brokers, int32_t queues,
                                    int32_t perm = 6);

class FakeBroker : public FakeServer {
 public:
  FakeBroker(env::Env& env, std::string broker_name, const std::string& address, store::HostAddress store_host);

  struct Stored {
    int64_t queue_offset = 0;
    int64_t physical_offset = 0;
  };
  // Stores a message as a SEND would; wakes parked pulls of its queue.
  Stored put(store::MessageToStore message);
  int64_t max_offset(const std::string& topic, int32_t queue_id) const;
  // Decoded messages of a queue, in offset order.
  std::vector<store::MessageProperties> properties_of(const std::string& topic, int32_t queue_id) const;
  std::vector<std::string> bodies_of(const std::string& topic, int32_t queue_id) const;

  std::map<std::tuple<std::string, std::string, int32_t>, int64_t> committed;  // (group, topic, queue) -> offset
  std::map<std::string, std::set<std::string>> consumers;                      // group -> client ids
  int64_t suggest_broker_id = 0;  // what pull answers say to pull from next
  size_t parked_pulls() const { return parked_.size(); }
  const std::string& broker_name() const { return broker_name_; }

 private:
  struct ParkedPull {
    RemotingCommand request;
    std::shared_ptr<ResponseChannel> channel;
    env::TimerId timer = env::kNoTimer;
  };

  void on_send(const RemotingCommand& request, ResponseChannel channel);
  void on_pull(const RemotingCommand& request, ResponseChannel channel);
  // Answers the pull now, or returns false when it should wait.
  bool answer_pull(const RemotingCommand& request, ResponseChannel& channel, bool may_park);
  void on_send_back(const RemotingCommand& request, ResponseChannel channel);
  void wake(const std::string& topic, int32_t queue_id);

  std::string broker_name_;
  store::HostAddress store_host_;
  int64_t next_physical_offset_ = 0;
  std::map<std::pair<std::string, int32_t>, std::vector<std::vector<uint8_t>>> queues_;
  std::map<int64_t, std::vector<uint8_t>> by_physical_offset_;
  std::map<uint64_t, ParkedPull> parked_;
  uint64_t next_parked_id_ = 1;
};

// A NameServer at 10.0.0.1:9876, brokers broker-a, broker-b, ... at
// 10.0.0.2:10911, 10.0.0.3:10911, ... (cluster DefaultCluster), and client
// processes at the hosts the test names. Clients go before the servers and
// the servers before the world.
class TestCluster {
 public:
  explicit TestCluster(int broker_count = 2, uint64_t seed = 1);
  ~TestCluster();

  // A client instance (not started) on its own process; tweak edits its config.
  MQClientInstance& add_client(const std::string& instance_name, const std::string& host,
                               const std::function<void(ClientConfig&)>& tweak = {});
  // Routes topic over the first `broker_count` brokers (all when 0), `queues` each.
  void route(const std::string& topic, int32_t queues, size_t broker_count = 0, int32_t perm = 6);
  FakeBroker& broker(size_t index) { return *brokers_.at(index); }
  FakeNameServer& namesrv() { return *namesrv_; }
  SimWorld& world() { return world_; }
  bool run_until(const std::function<bool()>& pred, Nanos limit = seconds(120)) { return world_.run_until(pred, limit); }
  void run_for(Nanos duration) { world_.run_for(duration); }

 private:
  SimWorld world_;
  std::unique_ptr<FakeNameServer> namesrv_;
  std::vector<std::unique_ptr<FakeBroker>> brokers_;
  std::vector<std::unique_ptr<MQClientInstance>> clients_;
};

}  // namespace mqlab::client::testing
