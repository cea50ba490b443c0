// SimWorld's fault injector: carries out each start and end of the fault
// schedule on the simulated machines, disks, processes and network, and the
// healing at the end of the safety phase.
#include <set>

#include "sim/sim_machine.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

void SimWorld::schedule_faults() {
  for (const faults::FaultAction& action : faults::timeline(schedule_)) {
    if (action.at >= scenario_.duration) continue;  // the liveness phase heals instead
    scheduler_.schedule_at(action.at, [this, action] {
      apply_fault(schedule_.events[action.event], action.start, static_cast<int>(action.event));
    });
  }
}

void SimWorld::stop_machine(SimMachine& machine) {
  for (const auto& [name, process] : machine.processes()) stop_process(name);
}

void SimWorld::start_machine(SimMachine& machine) {
  for (const auto& [name, process] : machine.processes()) start_process(name);
}

namespace {
std::set<std::string> hosts_of(const std::set<std::string>& machines,
                               const std::vector<std::unique_ptr<SimMachine>>& all) {
  std::set<std::string> hosts;
  for (const auto& machine : all) {
    if (machines.count(machine->name())) hosts.insert(machine->host());
  }
  return hosts;
}
}  // namespace

void SimWorld::apply_fault(const faults::FaultEvent& event, bool start, int index) {
  using faults::FaultKind;
  active_faults_[index] = start;
  note(event.target, "", std::string(start ? "fault_start " : "fault_end ") + event.describe());
  history_.record(WorldEvent{scheduler_.now(), start ? "fault_start" : "fault_end", event.target, event.describe(), index});
  if (start) record_fault_instant(index);  // what the fault may destroy, before it acts
  SimMachine* machine = event.target.empty() ? nullptr : machine_of(event.target);
  switch (event.kind) {
    case FaultKind::kKillProcess:
      if (start) stop_process(event.target); else start_process(event.target);
      return;
    case FaultKind::kPauseProcess: {
      SimProcess& process = machine->process(event.target);
      if (!process.running()) return;
      if (start) scheduler_.pause_owner(process.env().owner()); else scheduler_.resume_owner(process.env().owner());
      return;
    }
    case FaultKind::kCrashMachine:
      if (start) {
        stop_machine(*machine);
        machine->set_powered(false);
        if (SimDisk* disk = machine->data_disk()) disk->power_loss(random_);
        network_->set_host_down(machine->host(), true);
      } else {
        machine->set_powered(true);
        network_->set_host_down(machine->host(), false);
        start_machine(*machine);
      }
      return;
    case FaultKind::kPowerLossAll:
      for (const auto& m : machines_) {
        if (start) {
          stop_machine(*m);
          m->set_powered(false);
          if (SimDisk* disk = m->data_disk()) disk->power_loss(random_);
          network_->set_host_down(m->host(), true);
        } else {
          m->set_powered(true);
          network_->set_host_down(m->host(), false);
        }
      }
      if (!start) {
        for (const auto& m : machines_) start_machine(*m);
      }
      return;
    case FaultKind::kDestroyMachine:
      if (!start) return;  // lost for good: nothing comes back
      stop_machine(*machine);
      machine->set_destroyed();
      if (machine->raid()) {
        for (int member = 0; member < 4; ++member) machine->raid()->fail_member(member);
      } else if (SimDisk* disk = machine->data_disk()) {
        disk->fail();
      }
      network_->set_host_down(machine->host(), true);
      return;
    case FaultKind::kFailDisk:
      if (machine->raid()) {
        if (start) machine->raid()->fail_member(event.disk_index); else machine->raid()->replace_member(event.disk_index);
        return;
      }
      if (start) {
        machine->data_disk()->fail();
      } else {
        // A new, empty disk: the broker starts over with an empty store,
        // unless it is a master with a slave to rebuild it from.
        stop_machine(*machine);
        machine->data_disk()->replace();
        rebuild_from_slave(*machine);
        start_machine(*machine);
      }
      return;
    case FaultKind::kSlowDisk:
      if (SimDisk* disk = machine->data_disk()) disk->set_slowdown(start ? event.factor : 1.0);
      return;
    case FaultKind::kStallDisk:
      if (start) {
        if (SimDisk* disk = machine->data_disk()) disk->stall(event.duration);
      }
      return;
    case FaultKind::kPartition: {
      const std::set<std::string> a = hosts_of(event.side_a, machines_);
      const std::set<std::string> b = hosts_of(event.side_b, machines_);
      if (start) network_->partition(a, b, !event.one_way); else network_->heal(a, b);
      return;
    }
    case FaultKind::kIsolateMachine:
      if (start) network_->isolate(machine->host()); else network_->heal_host(machine->host());
      return;
    case FaultKind::kClockSkew:
      if (start) machine->clock().set_skew_ms(machine->clock().skew_ms() + event.skew_ms);
      return;
    case FaultKind::kPromoteSlave:
      if (start) promote_slave(event.target);  // an operator's act: nothing undoes it
      return;
  }
}

// A master's new disk gets a copy of its group's first live slave's store,
// as an operator rebuilds a RocketMQ 4.x master whose disk died (a master
// never copies back from its slave, so coming back empty as brokerId 0
// would hide the slave's copy from consumers and make the slave refuse the
// shorter log). The copy is what the slave's page cache shows, made durable.
// A slave, or a master without a live slave, starts over empty.
void SimWorld::rebuild_from_slave(SimMachine& master) {
  if (master.spec().role != MachineRole::kBroker || broker_id_of(master) != 0) return;
  SimDisk* disk = master.data_disk();
  MQ_ASSERT(disk != nullptr && !disk->failed());
  for (const auto& machine : machines_) {
    if (machine.get() == &master || machine->spec().role != MachineRole::kBroker ||
        machine->spec().broker_group != master.spec().broker_group || broker_id_of(*machine) == 0) {
      continue;
    }
    SimDisk* source = machine->data_disk();
    if (machine->destroyed() || !machine->disks_survive() || source == nullptr || source->failed()) continue;
    const Status copied = disk->restore_from(*source);
    note(master.name(), "", copied.ok() ? "new disk rebuilt from " + machine->name() + "'s store"
                                        : "rebuilding from " + machine->name() + " failed: " + copied.to_string());
    return;
  }
  note(master.name(), "", "new disk left empty: no live slave to rebuild it from");
}

// The end of the safety phase: undo every fault still active (in schedule
// order), heal the network, resume paused processes, power machines on, and
// restart every process whose machine and disks survive.
void SimWorld::heal_everything() {
  fenced_.clear();  // demoted masters come back, as slaves of the promoted ones
  for (const auto& [index, active] : active_faults_) {
    if (!active) continue;
    const faults::FaultEvent& event = schedule_.events[static_cast<size_t>(index)];
    if (event.kind == faults::FaultKind::kDestroyMachine || event.kind == faults::FaultKind::kClockSkew) continue;
    apply_fault(event, /*start=*/false, index);
  }
  network_->heal_all();
  for (const auto& machine : machines_) {
    if (machine->destroyed()) continue;
    machine->set_powered(true);
    network_->set_host_down(machine->host(), false);
    for (const auto& [name, process] : machine->processes()) {
      if (process->running() && scheduler_.owner_paused(process->env().owner())) {
        scheduler_.resume_owner(process->env().owner());
      }
    }
    start_machine(*machine);
  }
}

}  // namespace mqlab::sim
