// SimMachine: one simulated computer: a host address on the SimNet, a wall
// clock that can be skewed, its data disk (a SimDisk, or the volume of a
// RAID10 array of four), and the process slots it hosts. Machine-level
// faults (power loss, destruction, disk failure) act here; process-level
// ones act on its SimProcesses.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/raid10_disk.h"
#include "sim/scenario.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"
#include "sim/sim_net.h"

namespace mqlab::sim {

class SimMachine {
 public:
  SimMachine(const MachineSpec& spec, std::string host, Scheduler& scheduler, SimNet& network,
             const TopologySpec& topology, env::Random& random);

  const MachineSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const std::string& host() const { return host_; }
  SimClock& clock() { return clock_; }
  bool has_disk() const { return disk_ != nullptr || raid_ != nullptr; }
  SimDisk* data_disk();  // the volume processes write to; nullptr without disks
  Raid10Disk* raid() { return raid_.get(); }
  SimProcess& process(const std::string& name) { return *processes_.at(name); }
  const std::map<std::string, std::unique_ptr<SimProcess>>& processes() const { return processes_; }

  // A process slot added after the machine was built (the audit consumer).
  SimProcess& add_process(const std::string& name, Scheduler& scheduler, SimNet& network, env::Random stream);

  bool powered() const { return powered_; }
  void set_powered(bool on) { powered_ = on; }
  bool destroyed() const { return destroyed_; }
  void set_destroyed() { destroyed_ = true; }
  // Whether the disks still hold the store (not failed beyond repair).
  bool disks_survive() const;

 private:
  MachineSpec spec_;
  std::string host_;
  SimClock clock_;
  std::unique_ptr<SimDisk> disk_;
  std::unique_ptr<Raid10Disk> raid_;
  std::map<std::string, std::unique_ptr<SimProcess>> processes_;
  std::vector<Mount> mounts_;
  bool powered_ = true;
  bool destroyed_ = false;
};

}  // namespace mqlab::sim
