#include "sim/sim_machine.h"

namespace mqlab::sim {

SimMachine::SimMachine(const MachineSpec& spec, std::string host, Scheduler& scheduler, SimNet& network,
                       const TopologySpec& topology, env::Random& random)
    : spec_(spec), host_(std::move(host)), clock_(scheduler) {
  MQ_ASSERT(!spec_.name.empty());
  std::vector<Mount> mounts;
  if (spec_.role == MachineRole::kBroker) {
    SimDiskOptions options;
    options.name = spec_.name + "-disk";
    options.capacity_bytes = topology.disk_capacity_bytes;
    options.torn_sector_probability = topology.torn_sector_probability;
    options.bit_rot_probability = topology.bit_rot_probability;
    if (topology.raid10) {
      raid_ = std::make_unique<Raid10Disk>(scheduler, topology.disk, options, random.split());
      mounts.push_back(Mount{"/", &raid_->volume()});
    } else {
      disk_ = std::make_unique<SimDisk>(scheduler, topology.disk, options, random.split());
      mounts.push_back(Mount{"/", disk_.get()});
    }
  } else {
    // Clients and NameServers keep nothing that matters; a small disk anyway,
    // so every process has a file system.
    SimDiskOptions options;
    options.name = spec_.name + "-disk";
    options.capacity_bytes = 1ull << 30;
    disk_ = std::make_unique<SimDisk>(scheduler, DiskProfile::sata_ssd(), options, random.split());
    mounts.push_back(Mount{"/", disk_.get()});
  }
  mounts_ = mounts;
  for (const std::string& name : spec_.processes) {
    processes_.emplace(name, std::make_unique<SimProcess>(name, scheduler, clock_, mounts, random.split(), network, host_));
  }
}

SimProcess& SimMachine::add_process(const std::string& name, Scheduler& scheduler, SimNet& network,
                                    env::Random stream) {
  MQ_ASSERT(!processes_.count(name));
  spec_.processes.push_back(name);
  auto process = std::make_unique<SimProcess>(name, scheduler, clock_, mounts_, stream, network, host_);
  SimProcess& added = *process;
  processes_.emplace(name, std::move(process));
  return added;
}

SimDisk* SimMachine::data_disk() {
  if (raid_) return &raid_->volume();
  return disk_.get();
}

bool SimMachine::disks_survive() const {
  if (destroyed_) return false;
  if (raid_) return !raid_->array_failed();
  return disk_ && !disk_->failed();
}

}  // namespace mqlab::sim
