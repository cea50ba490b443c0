// SimWorld's manual failover (the promote_slave fault): what an operator of
// a RocketMQ 4.x master/slave group does when the master is lost, since 4.x
// has no automatic promotion (rocketmq-reference.md 4.4):
//   1. fence the old master: if its process still runs (a partition, a
//      pause), it is stopped, and it stays down until the end-of-run healing,
//      so the group never has two masters;
//   2. stop the group's first live slave, give it brokerId 0 and the
//      scenario's master role (brokerRole as configured: SYNC_MASTER stays
//      SYNC_MASTER and answers SLAVE_NOT_AVAILABLE until a slave follows
//      it), and restart it over the same disk: it recovers its replicated
//      log and registers with the NameServers as the group's master;
//   3. the old master takes the promoted slave's brokerId: when (if) it
//      comes back in the healing, it starts as a SLAVE of the new master.
//      Its log may hold bytes the new master never got (an ASYNC_MASTER's
//      unreplicated tail): the HAClient then refuses to merge and stays
//      disconnected (broker/ha/README.md), keeping those bytes for an
//      operator. A destroyed master never comes back at all.
// A group without a live slave cannot be promoted: the event is noted and
// nothing changes.
#include "sim/sim_machine.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

int SimWorld::broker_id_of(const SimMachine& machine) const {
  auto it = broker_id_override_.find(machine.name());
  return it == broker_id_override_.end() ? machine.spec().broker_id : it->second;
}

void SimWorld::promote_slave(const std::string& broker_group) {
  SimMachine* master = nullptr;
  SimMachine* slave = nullptr;
  for (const auto& machine : machines_) {
    if (machine->spec().role != MachineRole::kBroker || machine->spec().broker_group != broker_group) continue;
    const int id = broker_id_of(*machine);
    if (id == 0) {
      master = machine.get();
    } else if (!slave && !machine->destroyed() && machine->powered() && machine->disks_survive()) {
      slave = machine.get();
    }
  }
  if (!slave) {
    note(broker_group, "", "promote_slave: no live slave in the group; nothing promoted");
    return;
  }
  const int slave_id = broker_id_of(*slave);
  MQ_ASSERT(slave_id > 0);
  if (master) {
    for (const auto& [name, process] : master->processes()) stop_process(name);
    fenced_.insert(master->name());
    broker_id_override_[master->name()] = slave_id;
    note(master->name(), "", "demoted: down until healed, then a slave with brokerId " + std::to_string(slave_id));
  }
  for (const auto& [name, process] : slave->processes()) stop_process(name);
  broker_id_override_[slave->name()] = 0;
  note(slave->name(), "", "promoted to master of " + broker_group);
  for (const auto& [name, process] : slave->processes()) start_process(name);
  MQ_ASSERT(broker_id_of(*slave) == 0);
}

}  // namespace mqlab::sim
