#include "sim/real_run_plan.h"

#include <string>

#include "broker/client/client_config.h"
#include "broker/common/assert.h"
#include "broker/remoting/remoting_command.h"
#include "sim/sim_net.h"
#include "sim/sim_world.h"

namespace mqlab::sim {
namespace {

const char* role_name(MachineRole role) {
  switch (role) {
    case MachineRole::kBroker: return "broker";
    case MachineRole::kNameServer: return "namesrv";
    case MachineRole::kClient: return "client";
  }
  return "?";
}

// The store settings a real broker needs to behave as the simulated one:
// role, flush policy and the timings behind them. Paths, ports and segment
// sizes are the driver's business (temporary directories, free ports).
nlohmann::json broker_conf(const Scenario& scenario) {
  const store::MessageStoreConfig& s = scenario.broker.store;
  nlohmann::json conf = {
      {"brokerRole", broker_role_name(s.brokerRole)},
      {"flushDiskType", flush_disk_type_name(s.flushDiskType)},
      {"flushIntervalCommitLog", std::to_string(s.flushIntervalCommitLog)},
      {"flushCommitLogLeastPages", std::to_string(s.flushCommitLogLeastPages)},
      {"syncFlushTimeout", std::to_string(s.syncFlushTimeout)},
      {"dispatchFlushedOnly", s.dispatchFlushedOnly ? "true" : "false"},
      {"transientStorePoolEnable", s.transientStorePoolEnable ? "true" : "false"},
      {"recycleExpiredCommitLogEnable", s.recycleExpiredCommitLogEnable ? "true" : "false"},
      {"commitIntervalCommitLog", std::to_string(s.commitIntervalCommitLog)},
      {"commitCommitLogLeastPages", std::to_string(s.commitCommitLogLeastPages)},
      {"commitCommitLogThoroughInterval", std::to_string(s.commitCommitLogThoroughInterval)},
      {"slaveTimeout", std::to_string(s.slaveTimeout)},
      {"haSlaveFallbehindMax", std::to_string(s.haSlaveFallbehindMax)},
      {"maxMessageSize", std::to_string(s.maxMessageSize)},
  };
  for (const auto& [key, value] : scenario.broker.broker_conf) conf[key] = value;
  return conf;
}

nlohmann::json fault_json(const faults::FaultEvent& e, size_t index) {
  return {{"index", index},
          {"kind", std::string(faults::fault_kind_name(e.kind))},
          {"target", e.target},
          {"at_s", seconds_of(e.at)},
          {"duration_s", seconds_of(e.duration)},
          {"side_a", e.side_a},
          {"side_b", e.side_b},
          {"one_way", e.one_way},
          {"describe", e.describe()}};
}

// The links as SimNet models them, for the driver's network emulation
// (tc, or tools/delay_relay.py where the kernel has no netem). "default":
// the file left the LAN untouched, so the real network (itself a LAN) is used
// as it is rather than emulating a quarter millisecond it already has.
nlohmann::json network_json(const NetworkSpec& n) {
  const NetworkSpec lan;
  const NetworkProfile profile;  // the retransmission timeout SimNet adds for a lost chunk
  MQ_ASSERT(profile.retransmission_timeout_ns > 0);
  const bool is_default = n.latency == lan.latency && n.jitter == lan.jitter &&
                          n.bandwidth_bytes_per_sec == lan.bandwidth_bytes_per_sec &&
                          n.loss_probability == lan.loss_probability;
  return {{"default", is_default},
          {"latency_ms", static_cast<double>(n.latency) / kNanosPerMilli},
          {"jitter_ms", static_cast<double>(n.jitter) / kNanosPerMilli},
          {"bandwidth_bytes_per_sec", n.bandwidth_bytes_per_sec},
          {"default_bandwidth_bytes_per_sec", lan.bandwidth_bytes_per_sec},
          {"loss_probability", n.loss_probability},
          {"retransmission_timeout_ms", static_cast<double>(profile.retransmission_timeout_ns) / kNanosPerMilli},
          {"tcp_user_timeout_ms", static_cast<double>(n.tcp_user_timeout) / kNanosPerMilli}};
}

}  // namespace

faults::FaultSchedule seed_schedule(const Scenario& scenario, uint64_t seed) {
  const SimWorld world(scenario, seed);
  return world.schedule();
}

// The scenario's `client:` section. "default": every key at ClientConfig's
// default; otherwise the driver gives the keys to every mqadmin perf
// client as --clientConfig.
nlohmann::json client_json(const ClientSpec& client) {
  const client::ClientConfig& c = client.config;
  nlohmann::json json = {{"default", client.is_default()}};
  for (const client::ClientConfig::IntervalKey& key : client::ClientConfig::interval_keys()) {
    json[std::string(key.name)] = c.*key.field;
  }
  json["slaveReadOnUnreachableMaster"] = c.slaveReadOnUnreachableMaster;
  json["serializeType"] = std::string(remoting::serialize_type_name(c.serializeType));
  return json;
}

nlohmann::json real_run_plan(const Scenario& scenario, uint64_t seed, const faults::FaultSchedule& schedule) {
  nlohmann::json machines = nlohmann::json::array();
  for (const MachineSpec& m : scenario_machines(scenario)) {
    machines.push_back({{"name", m.name},
                        {"role", role_name(m.role)},
                        {"broker_group", m.broker_group},
                        {"broker_id", m.broker_id},
                        {"processes", m.processes}});
  }
  const WorkloadSpec& w = scenario.workload;
  nlohmann::json groups = nlohmann::json::array();
  for (const ConsumerGroupSpec& g : w.consumer_groups) groups.push_back({{"name", g.name}, {"consumers", g.consumers}});
  nlohmann::json faults = nlohmann::json::array();
  for (size_t i = 0; i < schedule.events.size(); ++i) faults.push_back(fault_json(schedule.events[i], i));
  nlohmann::json timeline = nlohmann::json::array();
  for (const faults::FaultAction& a : faults::timeline(schedule)) {
    timeline.push_back({{"at_s", seconds_of(a.at)}, {"start", a.start}, {"fault_index", a.event}});
  }
  return {{"scenario", scenario.name},
          {"seed", seed},
          {"duration_s", seconds_of(scenario.duration)},
          {"liveness_bound_s", seconds_of(scenario.liveness_bound)},
          {"machines", machines},
          {"network", network_json(scenario.network)},
          {"broker_conf", broker_conf(scenario)},
          {"client", client_json(scenario.client)},
          {"workload",
           {{"topic", w.topic},
            {"queues_per_broker", w.queues_per_broker},
            {"producers",
             {{"count", w.producers.count},
              {"rate_per_sec", w.producers.rate_per_sec},
              // A real producer sends one size; a distribution is run at its mean.
              {"message_size_bytes", (w.producers.size_min_bytes + w.producers.size_max_bytes) / 2},
              {"send_timeout_ms", w.producers.send_timeout / kNanosPerMilli},
              {"retries", w.producers.retries},
              // The perf producer's senders (-w): what the simulated producer caps.
              {"max_in_flight", w.producers.max_in_flight}}},
            {"consumer_groups", groups}}},
          {"faults", faults},
          {"timeline", timeline}};
}

}  // namespace mqlab::sim
