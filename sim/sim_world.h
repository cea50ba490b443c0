// SimWorld: one run of one scenario with one seed. It builds the cluster the
// scenario names (broker groups, NameServers, client machines, their disks
// and clocks, on a SimNet), runs the same BrokerController, NamesrvController,
// Producer and PushConsumer code mqbroker and real clients run, drives the
// workload, injects the fault schedule, and records a History.
//
// A run has two phases, as the best simulators do:
//   safety    [0, duration): the workload runs and faults are injected;
//   liveness  the producers stop, every fault is healed, every process whose
//             machine and disks survive is restarted, and the consumers must
//             receive every acknowledged message within liveness_bound. A run
//             that does not converge is a liveness failure, not loss.
// Then the checker computes the figures and the expectations are evaluated.
//
// Determinism: everything derives from the seed through split Random streams
// (network, disks, workload, faults, each process); the trace digest of two
// runs with the same scenario and seed is identical.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/env/random.h"
#include "sim/checker.h"
#include "sim/history.h"
#include "sim/loss_bound.h"
#include "sim/run_series.h"
#include "sim/scenario.h"
#include "sim/scheduler.h"
#include "sim/sim_net.h"
#include "sim/trace.h"

namespace mqlab::broker {
class BrokerController;
}

namespace mqlab::sim {

class SimMachine;
class SimApp;

struct RecoveryRecord {
  std::string process;
  Nanos started_at = 0;
  Nanos ready_at = -1;  // -1: never became ready
  bool abnormal = false;
  std::string stop_reason;  // what recovery truncated, if anything
};

struct ExpectationResult {
  std::string metric;
  double measured = 0;
  bool held = true;
  std::string describe;  // "lost: 0 (measured 3)"
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 0;
  std::string replay_key;  // scenario hash + seed + mqlab version
  std::string parameters;  // describe(scenario) plus the expanded fault schedule
  faults::FaultSchedule schedule;
  CheckerReport report;
  bool converged = true;
  std::string liveness_failure;
  std::vector<RecoveryRecord> recoveries;
  std::vector<ExpectationResult> expectations;
  // How many acknowledged messages the configuration may lose to this
  // run's faults (sim/loss_bound.h); the run fails when it lost more. It is
  // also the last entry of expectations, metric "loss_bound".
  LossBound loss_bound;
  bool within_bound = true;
  bool passed = true;  // converged, within the loss bound, and every expectation held
  uint64_t events_run = 0;
  Nanos virtual_end = 0;
  std::string trace_digest;
  uint64_t trace_lines = 0;
  RunSeries series;  // latency histograms and replication lag, for reports
  // The most sends one producer ever had outstanding at once: at most the
  // workload's max_in_flight.
  int peak_sends_in_flight = 0;
};

// The audit consumer group: started when the liveness phase begins, it
// reads every queue from the start, so an acknowledged message it never sees
// is gone from the brokers' storage, whatever the workload's consumers saw
// before a fault (they may have read a message from a page cache that a
// power cut then destroyed).
inline constexpr char kAuditGroup[] = "mqsim_audit";

class SimWorld {
 public:
  // trace: optional; the digest is computed either way.
  // schedule: when given, the run injects exactly these faults instead of the
  // scenario's (its fixed list plus the seed's nemesis draw); mqsim shrink
  // reruns a failing seed with fewer faults. Every random stream is split as
  // it would be without it, so the faults are the only difference.
  // Requires: each event is valid for the scenario (as a subset of the seed's
  // own schedule is).
  SimWorld(const Scenario& scenario, uint64_t seed, std::ostream* trace_out = nullptr,
           std::optional<faults::FaultSchedule> schedule = std::nullopt);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  // Runs both phases and checks. Call once.
  RunResult run();
  // The faults the run injects, known from construction: the scenario's
  // fixed list plus the seed's nemesis draw, or the schedule given above.
  const faults::FaultSchedule& schedule() const { return schedule_; }

  // --- for the apps and the fault injector
  Scheduler& scheduler() { return scheduler_; }
  SimNet& network() { return *network_; }
  History& history() { return history_; }
  Trace& trace() { return trace_; }
  const Scenario& scenario() const { return scenario_; }
  env::Random& workload_random() { return workload_random_; }
  bool producing() const { return producing_; }
  void note(std::string_view machine, std::string_view process, std::string_view event);
  std::vector<std::string> namesrv_addresses() const;
  const std::map<std::string, std::string>& broker_group_of() const { return broker_group_of_; }
  void record_ready(const std::string& process, Nanos started_at, bool ok, bool abnormal, std::string stop_reason);
  // A producer now has in_flight sends outstanding (RunResult::peak_sends_in_flight).
  void note_sends_in_flight(int in_flight) { peak_sends_in_flight_ = std::max(peak_sends_in_flight_, in_flight); }
  // A broker machine's brokerId now: its spec's, until a promote_slave
  // swapped its group's master and slave (sim_world_failover.cc).
  int broker_id_of(const SimMachine& machine) const;

  // --- for tests and tools that look inside a run (between or after run()'s events)
  SimMachine* find_machine(const std::string& name) { return machine_of(name); }
  // The broker process's controller while it is up and serving, else nullptr.
  broker::BrokerController* running_broker(const std::string& process);
  // Every broker's store state at the start of each fault (sim_world_loss_bound.cc).
  const std::vector<FaultInstant>& fault_instants() const { return fault_instants_; }
  // The retention head a broker process had when it last stopped, if its
  // retention had deleted segments since it started; nullptr otherwise. A
  // restarted store counts deletions from zero, but its log still starts
  // where retention left it (retention_expiry.cc).
  const RetentionHead* retention_head_at_stop(const std::string& process) const;

 private:
  void build();
  void start_process(const std::string& process);
  void stop_process(const std::string& process);
  void start_machine(SimMachine& machine);
  void stop_machine(SimMachine& machine);
  SimMachine* machine_of(const std::string& name);
  std::unique_ptr<SimApp> make_app(const std::string& process, SimMachine& machine);
  void schedule_faults();
  void apply_fault(const faults::FaultEvent& event, bool start, int index);
  void heal_everything();
  void rebuild_from_slave(SimMachine& master);
  void promote_slave(const std::string& broker_group);
  bool all_acknowledged_received() const;
  bool converged() const;
  std::vector<std::string> checked_groups() const;
  void start_audit_consumer();
  void sample_replication_lag();
  std::vector<ExpectationResult> evaluate_expectations(const RunResult& result) const;
  void record_fault_instant(int index);
  void bound_loss(RunResult& result) const;

  Scenario scenario_;
  uint64_t seed_;
  env::Random random_;
  env::Random workload_random_;
  Scheduler scheduler_;
  std::unique_ptr<SimNet> network_;
  History history_;
  Trace trace_;
  std::vector<std::unique_ptr<SimMachine>> machines_;
  std::map<std::string, SimMachine*> machine_of_process_;
  std::map<std::string, std::unique_ptr<SimApp>> apps_;
  std::map<std::string, std::string> broker_group_of_;  // machine/process -> broker group
  std::map<std::string, Nanos> started_at_;
  std::vector<RecoveryRecord> recoveries_;
  faults::FaultSchedule schedule_;
  std::optional<faults::FaultSchedule> schedule_override_;  // replaces schedule_ when set
  std::map<int, bool> active_faults_;  // fault index -> active
  bool producing_ = false;
  bool ran_ = false;
  int peak_sends_in_flight_ = 0;
  std::map<std::string, int> broker_id_override_;  // machine -> brokerId after a promotion
  std::set<std::string> fenced_;                   // demoted masters, kept down until the healing
  std::vector<FaultInstant> fault_instants_;       // one per fault started, in time order
  std::map<std::string, RetentionHead> retention_head_at_stop_;  // broker process -> head when it last stopped
  std::vector<ReplicationLagSeries> replication_lag_;  // one per group with slaves, by group name
};

}  // namespace mqlab::sim
