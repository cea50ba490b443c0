// The programs a simulated process runs: a broker, a NameServer, a producer
// driving the scenario's workload, a consumer recording what it receives.
// Each wraps the very objects mqbroker, mqnamesrv and real clients use
// (BrokerController, NamesrvController, Producer, PushConsumer) over the
// process's SimEnv. Destroying an app is what kill -9 leaves behind: no I/O,
// and the scheduler has already dropped the process's pending events.
#pragma once

#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "sim/sim_env.h"

namespace mqlab::broker {
class BrokerController;
}

namespace mqlab::sim {

class SimWorld;
class SimMachine;

class SimApp {
 public:
  virtual ~SimApp() = default;
  virtual void start() = 0;
  // Stops issuing new work (producers, at the end of the safety phase).
  virtual void stop_producing() {}
  // For a running broker (master, or a slave serving reads for a lost
  // master): whether every group has committed offsets
  // up to the end of every queue of topic (the consumers caught up with
  // what the broker holds). nullopt for other apps or a broker not ready.
  virtual std::optional<bool> caught_up(const std::string& topic, const std::vector<std::string>& groups) const {
    (void)topic;
    (void)groups;
    return std::nullopt;
  }
  // For a running broker: its CommitLog's max offset, to sample replication
  // lag (sim/run_series.h). nullopt for other apps or a broker not ready.
  virtual std::optional<int64_t> commit_log_max_offset() const { return std::nullopt; }
  // For a broker that is up and serving: its controller, to read its store's
  // offsets at a fault's instant (sim/loss_bound.h). nullptr otherwise.
  virtual broker::BrokerController* running_broker() { return nullptr; }
};

std::unique_ptr<SimApp> make_broker_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name);
std::unique_ptr<SimApp> make_namesrv_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name);
std::unique_ptr<SimApp> make_producer_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name);
// group: the consumer group this process belongs to.
std::unique_ptr<SimApp> make_consumer_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name,
                                          const std::string& group);

// The simulated ports: RocketMQ's defaults.
constexpr int kBrokerListenPort = 10911;
constexpr int kNamesrvListenPort = 9876;
// When clients start and when producers begin sending: after the brokers
// registered with the NameServers at start-up.
constexpr Nanos kClientStartDelay = seconds(1);
constexpr Nanos kProduceStartDelay = seconds(3);

}  // namespace mqlab::sim
