#include "sim/sim_world.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "broker/common/log.h"
#include "broker/processor/broker_controller.h"
#include "sim/run_metrics.h"
#include "sim/sim_apps.h"
#include "sim/sim_machine.h"

namespace mqlab::sim {
namespace {

// Hosts: brokers 10.0.1.x, NameServers 10.0.2.x, clients 10.0.3.x.
std::string host_for(const MachineSpec& spec, int index_in_role) {
  const int subnet = spec.role == MachineRole::kBroker ? 1 : spec.role == MachineRole::kNameServer ? 2 : 3;
  return "10.0." + std::to_string(subnet) + "." + std::to_string(index_in_role + 1);
}

SimNetOptions net_options(const NetworkSpec& spec) {
  SimNetOptions options;
  options.profile.latency_base_ns = spec.latency;
  options.profile.latency_jitter_ns = spec.jitter;
  options.profile.bandwidth_bytes_per_sec = spec.bandwidth_bytes_per_sec;
  options.profile.loss_probability = spec.loss_probability;
  options.tcp_user_timeout_ns = spec.tcp_user_timeout;
  return options;
}

// "consumer-cg-0" -> "cg"
std::string group_of_consumer(const std::string& process) {
  const std::string prefix = "consumer-";
  const size_t dash = process.rfind('-');
  MQ_ASSERT(process.rfind(prefix, 0) == 0 && dash != std::string::npos && dash > prefix.size());
  return process.substr(prefix.size(), dash - prefix.size());
}

}  // namespace

SimWorld::SimWorld(const Scenario& scenario, uint64_t seed, std::ostream* trace_out,
                   std::optional<faults::FaultSchedule> schedule)
    : scenario_(scenario),
      seed_(seed),
      random_(seed),
      workload_random_(random_.split()),
      trace_(trace_out),
      schedule_override_(std::move(schedule)) {
  network_ = std::make_unique<SimNet>(scheduler_, random_.split(), net_options(scenario_.network));
  build();
}

SimWorld::~SimWorld() {
  // Apps refer to their SimEnvs: destroy them before the machines.
  apps_.clear();
}

void SimWorld::note(std::string_view machine, std::string_view process, std::string_view event) {
  trace_.line(scheduler_.now(), machine, process, event);
}

std::vector<std::string> SimWorld::namesrv_addresses() const {
  std::vector<std::string> addresses;
  for (const auto& machine : machines_) {
    if (machine->spec().role == MachineRole::kNameServer) {
      addresses.push_back(machine->host() + ":" + std::to_string(kNamesrvListenPort));
    }
  }
  return addresses;
}

void SimWorld::build() {
  env::Random disks = random_.split();
  std::map<MachineRole, int> index_in_role;
  for (const MachineSpec& spec : scenario_machines(scenario_)) {
    const std::string host = host_for(spec, index_in_role[spec.role]++);
    network_->add_host(host);
    machines_.push_back(std::make_unique<SimMachine>(spec, host, scheduler_, *network_, scenario_.topology, disks));
    SimMachine* machine = machines_.back().get();
    broker_group_of_[spec.name] = spec.broker_group;
    for (const std::string& process : spec.processes) {
      machine_of_process_[process] = machine;
      if (!spec.broker_group.empty()) broker_group_of_[process] = spec.broker_group;
    }
  }
  // The fault schedule: the fixed list, plus the nemesis drawn from its own stream.
  schedule_ = scenario_.faults.schedule;
  if (scenario_.faults.nemesis) {
    env::Random fault_random = random_.split();
    faults::NemesisResult drawn =
        faults::generate_nemesis(*scenario_.faults.nemesis, nemesis_targets(scenario_), scenario_.duration, fault_random);
    schedule_.events.insert(schedule_.events.end(), drawn.schedule.events.begin(), drawn.schedule.events.end());
    schedule_.sort();
  }
  // An override replaces the schedule only after the nemesis stream was
  // split off, so every later stream (clients, power-loss tears) is the same.
  if (schedule_override_) {
    const std::vector<MachineSpec> machines = scenario_machines(scenario_);
    for (const faults::FaultEvent& event : schedule_override_->events) {
      MQ_ASSERT_MSG(validate_fault_target(event, machines, scenario_.duration).ok(), event.describe());
    }
    schedule_ = *schedule_override_;
    schedule_.sort();
  }
}

SimMachine* SimWorld::machine_of(const std::string& name) {
  for (const auto& machine : machines_) {
    if (machine->name() == name) return machine.get();
  }
  auto it = machine_of_process_.find(name);
  return it == machine_of_process_.end() ? nullptr : it->second;
}

std::unique_ptr<SimApp> SimWorld::make_app(const std::string& process, SimMachine& machine) {
  SimEnv& env = machine.process(process).start();
  switch (machine.spec().role) {
    case MachineRole::kBroker: return make_broker_app(*this, machine, env, process);
    case MachineRole::kNameServer: return make_namesrv_app(*this, machine, env, process);
    case MachineRole::kClient:
      if (process.rfind("producer-", 0) == 0) return make_producer_app(*this, machine, env, process);
      return make_consumer_app(*this, machine, env, process, group_of_consumer(process));
  }
  MQ_UNREACHABLE("unknown machine role");
}

void SimWorld::start_process(const std::string& process) {
  SimMachine* machine = machine_of(process);
  MQ_ASSERT(machine != nullptr);
  if (apps_.count(process) || !machine->powered() || machine->destroyed() || fenced_.count(machine->name())) return;
  if (machine->spec().role == MachineRole::kBroker && !machine->disks_survive()) return;
  started_at_[process] = scheduler_.now();
  note(machine->name(), process, "process_start");
  auto app = make_app(process, *machine);
  SimApp& started = *app;
  apps_[process] = std::move(app);
  started.start();
}

void SimWorld::stop_process(const std::string& process) {
  SimMachine* machine = machine_of(process);
  MQ_ASSERT(machine != nullptr);
  auto it = apps_.find(process);
  if (it == apps_.end()) return;
  if (broker::BrokerController* broker = running_broker(process)) {
    RetentionHead head = retention_head_of(broker->message_store());
    if (head.segments_deleted > 0) retention_head_at_stop_[process] = std::move(head);
  }
  SimProcess& slot = machine->process(process);
  if (slot.running()) slot.kill();  // kill -9: its events are dropped, its peers reset
  apps_.erase(it);                   // destructors do no I/O
  if (machine->spec().role == MachineRole::kBroker) {
    history_.record(WorldEvent{scheduler_.now(), "broker_down", machine->spec().broker_group, process, -1});
  }
  note(machine->name(), process, "process_killed");
}

const RetentionHead* SimWorld::retention_head_at_stop(const std::string& process) const {
  auto it = retention_head_at_stop_.find(process);
  return it == retention_head_at_stop_.end() ? nullptr : &it->second;
}

void SimWorld::record_ready(const std::string& process, Nanos started_at, bool ok, bool abnormal,
                            std::string stop_reason) {
  RecoveryRecord record;
  record.process = process;
  record.started_at = started_at;
  record.ready_at = ok ? scheduler_.now() : -1;
  record.abnormal = abnormal;
  record.stop_reason = std::move(stop_reason);
  recoveries_.push_back(record);
  SimMachine* machine = machine_of(process);
  if (ok && machine && machine->spec().role == MachineRole::kBroker) {
    history_.record(WorldEvent{scheduler_.now(), "broker_up", machine->spec().broker_group, process, -1});
  }
  note(machine ? machine->name() : "", process,
       std::string(ok ? "process_ready" : "process_failed_to_start") + (abnormal ? " (abnormal recovery)" : "") +
           (record.stop_reason.empty() ? "" : ": truncated at " + record.stop_reason));
}

std::vector<std::string> SimWorld::checked_groups() const {
  std::vector<std::string> groups;
  for (const ConsumerGroupSpec& group : scenario_.workload.consumer_groups) groups.push_back(group.name);
  groups.push_back(kAuditGroup);
  return groups;
}

void SimWorld::start_audit_consumer() {
  SimMachine* client = nullptr;
  for (const auto& machine : machines_) {
    if (machine->spec().role == MachineRole::kClient && !machine->destroyed()) client = machine.get();
  }
  if (!client) return;
  const std::string name = std::string("consumer-") + kAuditGroup + "-0";
  client->add_process(name, scheduler_, *network_, random_.split());
  machine_of_process_[name] = client;
  start_process(name);
}

bool SimWorld::all_acknowledged_received() const {
  // Asked every simulated second of the liveness phase: History keeps the
  // answer incrementally rather than this rebuilding a map of every receipt.
  return history_.all_acknowledged_received_by(checked_groups());
}

// Converged: every acknowledged message was received, or else every broker
// group is drained: every clustering group has committed offsets to the end
// of each of its queues on the group's master, or, when the master is lost
// (machine destroyed, store gone), on one of its live slaves, which serves
// those reads in its place (whatever is missing is then gone from the
// brokers: loss, which the checker counts, not a liveness failure). A group
// with no surviving copy has nothing left to read.
bool SimWorld::converged() const {
  if (all_acknowledged_received()) return true;
  std::vector<std::string> groups = {kAuditGroup};
  for (const ConsumerGroupSpec& group : scenario_.workload.consumer_groups) {
    if (group.mode == ConsumeMode::kClustering) groups.push_back(group.name);
  }
  const auto drained = [&](const SimMachine& machine) {
    const auto app = apps_.find(machine.spec().processes.front());
    if (app == apps_.end()) return false;
    const std::optional<bool> caught_up = app->second->caught_up(scenario_.workload.topic, groups);
    return caught_up.value_or(false);
  };
  for (const auto& machine : machines_) {
    if (machine->spec().role != MachineRole::kBroker || broker_id_of(*machine) != 0) continue;
    if (!machine->destroyed() && machine->disks_survive()) {
      if (!drained(*machine)) return false;
      continue;
    }
    bool has_slave = false;
    bool slave_drained = false;
    for (const auto& other : machines_) {
      if (other->spec().role != MachineRole::kBroker || other->spec().broker_group != machine->spec().broker_group ||
          broker_id_of(*other) == 0 || other->destroyed() || !other->disks_survive()) {
        continue;
      }
      has_slave = true;
      slave_drained = slave_drained || drained(*other);
    }
    if (has_slave && !slave_drained) return false;
  }
  return true;
}

RunResult SimWorld::run() {
  MQ_ASSERT(!ran_);
  ran_ = true;
  RunResult result;
  result.scenario = scenario_.name;
  result.seed = seed_;
  result.replay_key = scenario_.hash + ":" + std::to_string(seed_) + ":" + MQLAB_VERSION;
  result.schedule = schedule_;
  result.parameters = describe(scenario_) + "fault schedule for seed " + std::to_string(seed_) + ":\n" +
                      schedule_.describe();
  set_assert_context([this] {
    return "scenario " + scenario_.name + ", seed " + std::to_string(seed_) + ", t=" +
           format_virtual_time(scheduler_.now()) + "s; replay: mqsim replay " + scenario_.source + " --seed " +
           std::to_string(seed_);
  });
  note("", "", "run_start " + scenario_.name + " seed " + std::to_string(seed_));

  // NameServers first, then brokers (they register at start), clients a moment later.
  for (const auto& machine : machines_) {
    if (machine->spec().role == MachineRole::kClient) continue;
    for (const auto& [name, process] : machine->processes()) start_process(name);
  }
  scheduler_.schedule_at(kClientStartDelay, [this] {
    for (const auto& machine : machines_) {
      if (machine->spec().role != MachineRole::kClient) continue;
      for (const auto& [name, process] : machine->processes()) start_process(name);
    }
  });
  producing_ = true;
  schedule_faults();

  // Safety phase, stopping every kLagSampleInterval to sample replication
  // lag (reading state only: the run is the same as one run_until).
  while (scheduler_.now() < scenario_.duration) {
    scheduler_.run_until(std::min(scenario_.duration, scheduler_.now() + kLagSampleInterval));
    sample_replication_lag();
  }
  producing_ = false;
  for (auto& [name, app] : apps_) app->stop_producing();
  note("", "", "safety_phase_end: healing every fault");
  heal_everything();
  start_audit_consumer();

  // Liveness phase: converge within the bound.
  const Nanos liveness_bound = effective_liveness_bound(scenario_);
  const Nanos deadline = scenario_.duration + liveness_bound;
  while (scheduler_.now() < deadline) {
    scheduler_.run_until(std::min(deadline, scheduler_.now() + seconds(1)));
    if (converged()) break;
  }
  result.converged = converged();
  if (!result.converged) {
    result.liveness_failure = "acknowledged messages still unread " +
                              std::to_string(liveness_bound / kNanosPerSecond) +
                              " s after every fault was healed";
  }
  note("", "", std::string("liveness_phase_end: ") + (result.converged ? "converged" : result.liveness_failure));

  CheckerOptions options;
  options.consumer_groups = checked_groups();
  options.run_end = scheduler_.now();
  options.schedule = schedule_;
  options.broker_group_of = broker_group_of_;
  result.loss_bound = compute_loss_bound(scenario_, schedule_, fault_instants_, history_);
  // Moved in and back, not copied: a long run's bound holds tens of
  // thousands of seqs (a map node each), and the checker runs at the peak.
  options.loss_at_risk = std::move(result.loss_bound.at_risk);
  options.retention = retention_heads(*this);  // unread messages retention deleted are expiry, not loss
  result.report = check_history(history_, options);
  result.loss_bound.at_risk = std::move(*options.loss_at_risk);
  result.series = latency_series(history_);
  result.series.replication_lag = replication_lag_;
  result.recoveries = recoveries_;
  result.events_run = scheduler_.events_run();
  result.virtual_end = scheduler_.now();
  result.peak_sends_in_flight = peak_sends_in_flight_;
  result.expectations = evaluate_expectations(result);
  bound_loss(result);
  result.passed = result.converged && result.within_bound;
  for (const ExpectationResult& e : result.expectations) result.passed = result.passed && e.held;
  result.trace_digest = trace_.digest_hex();
  result.trace_lines = trace_.lines();
  set_assert_context(nullptr);
  return result;
}

void SimWorld::sample_replication_lag() {
  std::map<std::string, std::optional<int64_t>> master_offset;   // group -> master's max offset
  std::map<std::string, std::optional<int64_t>> slave_offset;    // group -> most advanced slave's
  std::set<std::string> replicated;
  for (const auto& machine : machines_) {
    if (machine->spec().role != MachineRole::kBroker) continue;
    const std::string& group = machine->spec().broker_group;
    const std::string& process = machine->spec().processes.front();
    const auto app = apps_.find(process);
    const std::optional<int64_t> offset =
        app == apps_.end() ? std::nullopt : app->second->commit_log_max_offset();
    if (broker_id_of(*machine) == 0) {
      master_offset[group] = offset;
      continue;
    }
    replicated.insert(group);
    std::optional<int64_t>& best = slave_offset[group];
    if (offset && (!best || *offset > *best)) best = offset;
  }
  for (const std::string& group : replicated) {  // std::set: by name
    auto it = std::find_if(replication_lag_.begin(), replication_lag_.end(),
                           [&](const ReplicationLagSeries& s) { return s.broker_group == group; });
    if (it == replication_lag_.end()) {
      replication_lag_.push_back(ReplicationLagSeries{group, {}});
      it = replication_lag_.end() - 1;
    }
    const std::optional<int64_t> master = master_offset[group];
    const std::optional<int64_t> slave = slave_offset[group];
    // A slave briefly ahead (a master restarted on a torn log) lags by nothing.
    it->bytes.push_back(master && slave ? std::optional<int64_t>(std::max<int64_t>(0, *master - *slave))
                                        : std::nullopt);
  }
}

std::vector<ExpectationResult> SimWorld::evaluate_expectations(const RunResult& result) const {
  return evaluate_run_expectations(scenario_.expect, result);  // shared with the checks of real runs
}

}  // namespace mqlab::sim
