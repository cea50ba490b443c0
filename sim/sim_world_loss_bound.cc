// SimWorld's side of the loss bound (sim/loss_bound.h): at the start of
// every fault, before it acts, the state of every broker's store (flushed and
// max CommitLog offsets, what each slave holds and confirmed, the RAID
// members); at the end, the verdict: a run that lost more acknowledged
// messages than its bound fails, through an implicit expectation
// "loss_bound" beside the scenario's own (so sweep, shrink and the summary
// report it as they report any missed expectation).
#include <sstream>

#include "sim/sim_apps.h"
#include "sim/sim_machine.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

broker::BrokerController* SimWorld::running_broker(const std::string& process) {
  auto it = apps_.find(process);
  return it == apps_.end() ? nullptr : it->second->running_broker();
}

void SimWorld::record_fault_instant(int index) {
  FaultInstant instant;
  instant.fault_index = index;
  instant.at = scheduler_.now();
  for (const auto& machine : machines_) {
    if (machine->spec().role != MachineRole::kBroker) continue;
    BrokerStoreState state;
    state.machine = machine->name();
    state.broker_group = machine->spec().broker_group;
    state.broker_id = broker_id_of(*machine);
    state.powered = machine->powered();
    state.destroyed = machine->destroyed();
    state.disks_survive = machine->disks_survive();
    if (Raid10Disk* raid = machine->raid()) {
      for (int member = 0; member < Raid10Disk::kMemberCount; ++member) {
        state.raid_member_healthy[static_cast<size_t>(member)] =
            raid->member_state(member) == Raid10Disk::MemberState::kHealthy;
      }
    }
    // A broker process has its machine's name (scenario.h).
    if (broker::BrokerController* broker = running_broker(machine->spec().processes.front())) {
      read_broker_offsets(*broker, state);
    }
    if (state.running) MQ_ASSERT(state.powered && !state.destroyed);
    instant.brokers.push_back(std::move(state));
  }
  MQ_ASSERT(fault_instants_.empty() || fault_instants_.back().at <= instant.at);
  fault_instants_.push_back(std::move(instant));
}

void SimWorld::bound_loss(RunResult& result) const {
  const int64_t lost = result.report.lost;
  const int64_t bound = result.loss_bound.messages;
  MQ_ASSERT(bound >= 0);
  result.within_bound = lost <= bound;
  ExpectationResult e;
  e.metric = "loss_bound";
  e.measured = static_cast<double>(lost);
  e.held = result.within_bound;
  std::ostringstream text;
  text << "lost <= loss_bound " << bound << " (measured " << lost;
  if (!e.held) text << ": " << lost - bound << " over the bound";
  text << ")";
  e.describe = text.str();
  result.expectations.push_back(e);
}

}  // namespace mqlab::sim
