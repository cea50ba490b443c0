#include "sim/run_report.h"

#include <algorithm>
#include <cstdio>

#include "faults/fault.h"
#include "sim/checker_report.h"

namespace mqlab::sim {
namespace {

// Each fault with its active window; one not undone by the schedule lasts
// until the end-of-run healing, shown as the run's end.
nlohmann::json fault_events_json(const faults::FaultSchedule& schedule, Nanos run_end) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < schedule.events.size(); ++i) {
    const faults::FaultEvent& e = schedule.events[i];
    const Nanos to = e.duration > 0 ? e.end() : run_end;
    list.push_back({{"index", i},
                    {"kind", std::string(faults::fault_kind_name(e.kind))},
                    {"target", e.target},
                    {"from_s", static_cast<double>(e.at) / kNanosPerSecond},
                    {"to_s", static_cast<double>(std::max(to, e.at)) / kNanosPerSecond},
                    {"healed_by_schedule", e.duration > 0},
                    {"describe", e.describe()}});
  }
  return list;
}

// The run's loss bound (sim/loss_bound.h): what its faults may destroy by
// design, fault by fault, with the replication lag where it applies.
nlohmann::json loss_bound_json(const LossBound& bound, const CheckerReport& report) {
  nlohmann::json faults = nlohmann::json::array();
  for (const FaultLossBound& f : bound.faults) {
    nlohmann::json fault = {{"fault_index", f.fault_index}, {"fault", f.fault},       {"messages", f.messages},
                            {"destroyed", f.destroyed},     {"skipped", f.skipped}, {"reason", f.reason}};
    if (f.lag_messages >= 0) {
      fault["replication"] = {{"master_max_offset", f.master_max_offset},
                              {"slave_confirmed_offset", f.slave_confirmed_offset},
                              {"slave_complete_end", f.slave_complete_end},
                              {"lag_bytes", f.lag_bytes},
                              {"lag_messages", f.lag_messages},
                              {"lag_ms", f.lag_ms}};
    }
    faults.push_back(std::move(fault));
  }
  return {{"messages", bound.messages},
          {"reason", bound.reason},
          {"lost_outside", report.lost_outside_bound},
          {"faults", faults}};
}

}  // namespace

std::string replay_command(const std::string& scenario_path, uint64_t seed) {
  return "mqsim replay " + scenario_path + " --seed " + std::to_string(seed) + " --trace trace.txt";
}

nlohmann::json run_to_json(const RunResult& r) {
  const CheckerReport& c = r.report;
  nlohmann::json lost = nlohmann::json::array();
  for (const LostMessage& m : c.lost_messages) {
    lost.push_back({{"seq", m.seq}, {"group", m.group}, {"broker", m.broker_name},
                    {"acked_at_s", static_cast<double>(m.acked_at) / kNanosPerSecond}, {"fault_index", m.fault_index},
                    {"fault", m.fault}, {"within_bound", m.within_bound}});
  }
  nlohmann::json by_fault = nlohmann::json::object();
  for (const auto& [index, count] : c.lost_by_fault) {
    const std::string name = index < 0 ? "no fault" : r.schedule.events[static_cast<size_t>(index)].describe();
    by_fault[name] = count;
  }
  nlohmann::json recoveries = nlohmann::json::array();
  for (const RecoveryRecord& rec : r.recoveries) {
    recoveries.push_back({{"process", rec.process},
                          {"started_at_s", static_cast<double>(rec.started_at) / kNanosPerSecond},
                          {"ready", rec.ready_at >= 0},
                          {"recovery_s", rec.ready_at >= 0 ? static_cast<double>(rec.ready_at - rec.started_at) / kNanosPerSecond : -1.0},
                          {"abnormal", rec.abnormal},
                          {"truncated_at", rec.stop_reason}});
  }
  nlohmann::json expectations = nlohmann::json::array();
  for (const ExpectationResult& e : r.expectations) {
    expectations.push_back({{"metric", e.metric}, {"measured", e.measured}, {"held", e.held}, {"describe", e.describe}});
  }
  nlohmann::json faults = nlohmann::json::array();
  for (const faults::FaultEvent& e : r.schedule.events) faults.push_back(e.describe());
  nlohmann::json report = {
      {"scenario", r.scenario},
      {"seed", r.seed},
      {"replay_key", r.replay_key},
      {"mqlab_version", MQLAB_VERSION},
      {"passed", r.passed},
      {"loss_bound", loss_bound_json(r.loss_bound, c)},
      {"within_bound", r.within_bound},
      {"converged", r.converged},
      {"liveness_failure", r.liveness_failure},
      {"faults", faults},
      {"figures", checker_figures_json(c)},
      {"reordered_by_queue", c.reordered_by_queue},
      {"expired_by_rule", c.expired_by_rule},
      {"expired_by_group", c.expired_by_group},
      {"stored_twice_by_broker", c.stored_twice_by_broker},
      {"unavailable_write_windows", windows_json(c.write_unavailable)},
      {"unavailable_read_windows", windows_json(c.read_unavailable)},
      {"lost_by_fault", by_fault},
      {"lost_messages", lost},
      {"recoveries", recoveries},
      {"expectations", expectations},
      {"events_run", r.events_run},
      {"virtual_end_s", static_cast<double>(r.virtual_end) / kNanosPerSecond},
      {"trace_digest", r.trace_digest},
      {"trace_lines", r.trace_lines},
  };
  // For reports' timelines and plots (sim/run_series.h): when each fault
  // was active, latency histograms, replication lag over time.
  report["fault_events"] = fault_events_json(r.schedule, r.virtual_end);
  report["series"] = run_series_to_json(r.series);
  return report;
}

void print_run_summary(std::ostream& out, const RunResult& r, const std::string& scenario_path) {
  const CheckerReport& c = r.report;
  char line[256];
  out << "scenario " << r.scenario << "  seed " << r.seed << "  replay key " << r.replay_key << "\n";
  print_checker_figures(out, c);
  auto row = [&](const char* name, const std::string& value) {
    std::snprintf(line, sizeof(line), "%-22s %10s\n", name, value.c_str());
    out << line;
  };
  row("loss bound", std::to_string(r.loss_bound.messages));
  for (const auto& [index, count] : c.lost_by_fault) {
    out << "  lost " << count << " to "
        << (index < 0 ? std::string("no fault (a bug?)") : r.schedule.events[static_cast<size_t>(index)].describe())
        << "\n";
  }
  for (const auto& [rule, count] : c.expired_by_rule) {
    out << "  expired " << count << " by retention (not lost): " << rule << "\n";
  }
  out << "loss bound: " << r.loss_bound.reason << "\n";
  if (c.lost_outside_bound > 0) out << "  " << c.lost_outside_bound << " lost messages the bound did not foresee\n";
  out << "liveness: " << (r.converged ? "converged" : "FAILED: " + r.liveness_failure) << "\n";
  for (const ExpectationResult& e : r.expectations) {
    out << (e.held ? "  ok    " : "  FAIL  ") << e.describe << "\n";
  }
  out << (r.passed ? "PASSED" : "FAILED") << "  (trace digest " << r.trace_digest << ")\n";
  if (!r.passed) out << "replay with: " << replay_command(scenario_path, r.seed) << "\n";
}

}  // namespace mqlab::sim
