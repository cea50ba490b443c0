#include "sim/retention_expiry.h"

#include "broker/processor/broker_controller.h"
#include "broker/store/message_codec.h"
#include "broker/store/message_store.h"
#include "sim/sim_machine.h"
#include "sim/sim_world.h"

namespace mqlab::sim {

std::optional<int64_t> commit_log_offset_of(std::string_view offset_msg_id) {
  const std::optional<PhyOffset> offset = store::offset_of_offset_message_id(offset_msg_id);
  if (!offset) return std::nullopt;
  return offset->value();
}

RetentionHead retention_head_of(store::MessageStore& store) {
  RetentionHead head;
  head.deleted_below = store.min_phy_offset().value();
  head.segments_deleted = store.stats().segments_deleted;
  head.rule = store.stats().retention_rule;
  MQ_ASSERT(head.deleted_below >= 0);
  return head;
}

std::map<std::string, RetentionHead> retention_heads(SimWorld& world) {
  std::map<std::string, RetentionHead> heads;
  std::map<std::string, int> chosen_id;  // group -> brokerId whose head is in `heads`
  for (const MachineSpec& spec : scenario_machines(world.scenario())) {
    if (spec.role != MachineRole::kBroker) continue;
    SimMachine* machine = world.find_machine(spec.name);
    MQ_ASSERT(machine != nullptr);
    broker::BrokerController* broker = world.running_broker(spec.processes.front());
    if (broker == nullptr) continue;
    const int id = world.broker_id_of(*machine);
    // The master's head wins; among slaves the first running one.
    if (auto it = chosen_id.find(spec.broker_group); it != chosen_id.end() && (it->second == 0 || id != 0)) continue;
    RetentionHead head = retention_head_of(broker->message_store());
    const RetentionHead* at_stop = world.retention_head_at_stop(spec.processes.front());
    // A log starting later than at the stop was cut by something else (a
    // disk rebuilt from a slave that began to follow later): not retention.
    if (head.segments_deleted == 0 && at_stop != nullptr && head.deleted_below <= at_stop->deleted_below) {
      MQ_ASSERT(at_stop->segments_deleted > 0);
      head.segments_deleted = at_stop->segments_deleted;
      head.rule = at_stop->rule;
    }
    chosen_id[spec.broker_group] = id;
    heads[spec.broker_group] = std::move(head);
  }
  // Only a broker that deleted segments (since it started, or before its
  // last stop) knows the rule; its head is then retention's. (A fresh
  // slave's log starts where it began to follow, not at 0: without a
  // deletion its head proves nothing.) Any other cut of the log is not
  // recognised, and its messages count as lost: the checker never hides a
  // loss it cannot explain.
  std::erase_if(heads, [](const auto& entry) { return entry.second.segments_deleted == 0; });
  return heads;
}

}  // namespace mqlab::sim
