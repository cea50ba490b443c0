// The simulated Env: what one simulated process (a broker, a NameServer, a
// client) is given instead of the operating system.
//
//   SimClock     a machine's clock: now_ns() is the Scheduler's virtual time;
//                wall_ms() is a virtual epoch plus virtual time plus the
//                machine's skew (which a fault may change, so it can jump).
//   SimExecutor  a process incarnation's executor: post and run_after queue
//                scheduler events owned by that incarnation.
//   SimEnv       one incarnation: a fresh owner, its executor, its view of
//                the machine's disks, and its own Random stream.
//   SimProcess   a process slot across incarnations: start() gives a fresh
//                SimEnv, kill() is kill -9.
//
// A killed incarnation runs no more code: kill() drops its pending timers
// and completions, and anything it (or a destructor of its objects) queues
// afterwards is refused. Its page-cache writes stay on the disks. A restart
// is a new SimEnv with a new owner, so nothing of the old one can leak in.
//
// Invariants: an executor's events all belong to its owner; a SimEnv's owner
// is alive until kill() or its destruction; an incarnation's Random is split
// from the process's stream, so incarnations draw independent numbers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "broker/env/env.h"
#include "broker/env/random.h"
#include "broker/env/loopback_network.h"
#include "sim/scheduler.h"
#include "sim/sim_file_system.h"
#include "sim/sim_net.h"

namespace mqlab::sim {

// 2023-11-14T22:13:20Z: a fixed, recent-looking epoch for stored timestamps.
constexpr int64_t kDefaultEpochWallMs = 1'700'000'000'000;

class SimClock final : public env::Clock {
 public:
  explicit SimClock(const Scheduler& scheduler, int64_t epoch_wall_ms = kDefaultEpochWallMs)
      : scheduler_(scheduler), epoch_wall_ms_(epoch_wall_ms) {}

  Nanos now_ns() override { return scheduler_.now(); }
  int64_t wall_ms() override { return epoch_wall_ms_ + scheduler_.now() / kNanosPerMilli + skew_ms_; }

  // How far this machine's wall clock is off; may be changed at any time.
  void set_skew_ms(int64_t skew_ms) { skew_ms_ = skew_ms; }
  int64_t skew_ms() const { return skew_ms_; }

 private:
  const Scheduler& scheduler_;
  const int64_t epoch_wall_ms_;
  int64_t skew_ms_ = 0;
};

class SimExecutor final : public env::Executor {
 public:
  SimExecutor(Scheduler& scheduler, OwnerId owner) : scheduler_(scheduler), owner_(owner) {}

  void post(env::Task&& task) override;
  env::TimerId run_after(Nanos delay, env::Task&& task) override;
  // Cancels only this owner's own timers; another process's id is not ours.
  bool cancel(env::TimerId id) override;

  OwnerId owner() const { return owner_; }

 private:
  Scheduler& scheduler_;
  const OwnerId owner_;
};

class SimEnv final : public env::Env {
 public:
  // clock: the machine's; mounts: the machine's disks as this process sees
  // them; random: this incarnation's stream.
  // network_root: an in-process loopback network shared by the world's
  // processes (no latency, no partitions); null gives a private one. host:
  // this process's address on it.
  SimEnv(Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts, env::Random random,
         env::LoopbackNetwork* network_root = nullptr, std::string host = "127.0.0.1");
  // The same on the simulated network: an endpoint of network on host's
  // machine ("10.0.0.1"), killed with the incarnation.
  SimEnv(Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts, env::Random random, SimNet& network,
         std::string host);
  // Kills the incarnation if still alive: nothing it queued outlives it.
  ~SimEnv() override;
  SimEnv(const SimEnv&) = delete;
  SimEnv& operator=(const SimEnv&) = delete;

  env::Clock& clock() override { return clock_; }
  env::Executor& executor() override { return executor_; }
  env::FileSystem& files() override { return files_; }
  env::Network& network() override {
    return sim_network_ ? static_cast<env::Network&>(*sim_network_) : *network_;
  }
  env::Random& random() override { return random_; }

  OwnerId owner() const { return owner_; }
  bool alive() const { return scheduler_.owner_alive(owner_); }
  // kill -9. Requires: alive().
  void kill();

 private:
  Scheduler& scheduler_;
  env::Clock& clock_;
  const OwnerId owner_;
  SimExecutor executor_;
  SimFileSystem files_;
  std::unique_ptr<env::LoopbackNetwork> network_;  // null when on a SimNet
  std::unique_ptr<SimNetEndpoint> sim_network_;    // null when on a loopback
  env::Random random_;
};

class SimProcess {
 public:
  // stream: this process's Random, split from the scenario seed; each
  // incarnation gets a split of it.
  SimProcess(std::string name, Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts,
             env::Random stream, env::LoopbackNetwork* network_root = nullptr, std::string host = "127.0.0.1");
  // Each incarnation gets an endpoint of network on host's machine.
  SimProcess(std::string name, Scheduler& scheduler, env::Clock& clock, std::vector<Mount> mounts,
             env::Random stream, SimNet& network, std::string host);

  // A fresh incarnation. Requires: !running(). The caller has destroyed every
  // object of the previous incarnation (they refer to its SimEnv).
  SimEnv& start();
  // kill -9. Requires: running(). The dead SimEnv stays allocated until the
  // next start(), so the dead incarnation's objects can be destroyed safely.
  void kill();

  bool running() const { return env_ != nullptr && env_->alive(); }
  // The current (or last, if killed) incarnation. Requires: started once.
  SimEnv& env();
  const std::string& name() const { return name_; }
  uint32_t incarnation() const { return incarnation_; }

 private:
  const std::string name_;
  Scheduler& scheduler_;
  env::Clock& clock_;
  const std::vector<Mount> mounts_;
  env::Random stream_;
  env::LoopbackNetwork* network_root_ = nullptr;
  SimNet* sim_net_ = nullptr;  // when set, incarnations live on it instead of network_root_
  std::string host_;
  std::unique_ptr<SimEnv> env_;
  uint32_t incarnation_ = 0;
};

}  // namespace mqlab::sim
