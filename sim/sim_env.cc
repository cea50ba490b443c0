#include "sim/sim_env.h"

#include <utility>

#include "broker/common/assert.h"

namespace mqlab::sim {

void SimExecutor::post(env::Task&& task) {
  MQ_ASSERT(task != nullptr);
  // Due now, after the running task: the scheduler's sequence numbers keep
  // posts in order, after everything already due at this instant.
  scheduler_.schedule_at(scheduler_.now(), std::move(task), owner_);
}

env::TimerId SimExecutor::run_after(Nanos delay, env::Task&& task) {
  MQ_ASSERT(delay >= 0);
  MQ_ASSERT(task != nullptr);
  const EventId id = scheduler_.schedule_after(delay, std::move(task), owner_);
  MQ_ASSERT(id != env::kNoTimer);
  return id;
}

bool SimExecutor::cancel(env::TimerId id) {
  if (!scheduler_.is_pending(id) || scheduler_.owner_of(id) != owner_) return false;
  return scheduler_.cancel(id);
}

SimEnv::SimEnv(Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts, env::Random random,
               env::LoopbackNetwork* network_root, std::string host)
    : scheduler_(scheduler),
      clock_(clock),
      owner_(scheduler.add_owner()),
      executor_(scheduler, owner_),
      files_(scheduler, std::move(mounts), owner_),
      network_(network_root ? network_root->endpoint(executor_, host)
                            : std::make_unique<env::LoopbackNetwork>(executor_, host)),
      random_(random) {
  MQ_ASSERT(owner_ != kWorldOwner);
  MQ_ASSERT(alive());
}

SimEnv::SimEnv(Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts, env::Random random,
               SimNet& network, std::string host)
    : scheduler_(scheduler),
      clock_(clock),
      owner_(scheduler.add_owner()),
      executor_(scheduler, owner_),
      files_(scheduler, std::move(mounts), owner_),
      sim_network_(network.endpoint(executor_, owner_, std::move(host))),
      random_(random) {
  MQ_ASSERT(owner_ != kWorldOwner);
  MQ_ASSERT(alive());
}

SimEnv::~SimEnv() {
  if (alive()) kill();
}

void SimEnv::kill() {
  MQ_ASSERT(alive());
  // Peers see their connections reset, as TCP would after kill -9.
  if (sim_network_) {
    sim_network_->kill();
  } else {
    network_->kill();
  }
  scheduler_.kill_owner(owner_);
  MQ_ASSERT(!alive());
}

SimProcess::SimProcess(std::string name, Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts,
                       env::Random stream, env::LoopbackNetwork* network_root, std::string host)
    : name_(std::move(name)),
      scheduler_(scheduler),
      clock_(clock),
      mounts_(std::move(mounts)),
      stream_(stream),
      network_root_(network_root),
      host_(std::move(host)) {}

SimProcess::SimProcess(std::string name, Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts,
                       env::Random stream, SimNet& network, std::string host)
    : name_(std::move(name)),
      scheduler_(scheduler),
      clock_(clock),
      mounts_(std::move(mounts)),
      stream_(stream),
      sim_net_(&network),
      host_(std::move(host)) {}

SimEnv& SimProcess::start() {
  MQ_ASSERT_MSG(!running(), name_ + " is already running");
  env_.reset();  // the dead incarnation's view goes before the new one exists
  env_ = sim_net_ ? std::make_unique<SimEnv>(scheduler_, clock_, mounts_, stream_.split(), *sim_net_, host_)
                  : std::make_unique<SimEnv>(scheduler_, clock_, mounts_, stream_.split(), network_root_, host_);
  ++incarnation_;
  MQ_ASSERT(running());
  return *env_;
}

void SimProcess::kill() {
  MQ_ASSERT_MSG(running(), name_ + " is not running");
  env_->kill();
  MQ_ASSERT(!running());
}

SimEnv& SimProcess::env() {
  MQ_ASSERT_MSG(env_ != nullptr, name_ + " was never started");
  return *env_;
}

}  // namespace mqlab::sim
