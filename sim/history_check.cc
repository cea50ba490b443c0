#include "sim/history_check.h"

#include <cstdio>

#include "sim/checker_report.h"
#include "sim/run_metrics.h"
#include "sim/run_report.h"
#include "sim/run_series.h"

namespace mqlab::sim {
namespace {

// Machine and process names -> broker group, as SimWorld builds it.
std::map<std::string, std::string> broker_groups(const Scenario& scenario) {
  std::map<std::string, std::string> group_of;
  for (const MachineSpec& spec : scenario_machines(scenario)) {
    if (spec.broker_group.empty()) continue;
    group_of[spec.name] = spec.broker_group;
    for (const std::string& process : spec.processes) group_of[process] = spec.broker_group;
  }
  return group_of;
}

// "producer-0 seq 17" for a History seq.
std::string message_name(const LoadedHistory& loaded, uint64_t seq) {
  const std::optional<SendRecord> send = loaded.history.send(seq);
  MQ_ASSERT(send.has_value());
  MQ_ASSERT(seq < loaded.producer_seqs.size());
  return send->producer.str() + " seq " + std::to_string(loaded.producer_seqs[seq]);
}

}  // namespace

RunResult check_loaded_history(const LoadedHistory& loaded, const HistoryCheckOptions& options) {
  CheckerOptions checker;
  checker.consumer_groups = options.consumer_groups.empty() ? loaded.consumer_groups : options.consumer_groups;
  checker.run_end = loaded.end;
  if (options.schedule) {
    checker.schedule = *options.schedule;
  } else if (options.scenario != nullptr) {
    checker.schedule = options.scenario->faults.schedule;
  }
  if (options.scenario != nullptr) checker.broker_group_of = broker_groups(*options.scenario);

  RunResult result;
  result.scenario = options.scenario != nullptr ? options.scenario->name : "history";
  result.replay_key = "real run (no replay)";
  result.schedule = checker.schedule;
  result.report = check_history(loaded.history, checker);
  result.series = latency_series(loaded.history);
  result.virtual_end = loaded.end;
  result.loss_bound.reason = "not computed for a real run (the bound needs the simulator's view of each fault)";
  result.converged = result.report.lost == 0;
  if (!result.converged) {
    result.liveness_failure = std::to_string(result.report.lost) + " acknowledged messages never reached " +
                              "every checked group by the end of the history";
  }
  if (options.scenario != nullptr) {
    result.expectations = evaluate_run_expectations(options.scenario->expect, result);
    result.passed = true;
    for (const ExpectationResult& e : result.expectations) result.passed = result.passed && e.held;
  } else {
    result.passed = result.report.lost == 0;
  }
  result.within_bound = result.passed;
  return result;
}

nlohmann::json history_check_to_json(const RunResult& result, const LoadedHistory& loaded) {
  nlohmann::json report = run_to_json(result);
  report["source"] = "real";
  report["history"] = {{"files", loaded.files},
                       {"origin_wall_ns", loaded.origin_wall_ns},
                       {"end_s", seconds_of(loaded.end)},
                       {"producers", loaded.producers},
                       {"consumer_groups", loaded.consumer_groups},
                       {"sends", loaded.history.sends().size()},
                       {"receipts", loaded.history.receipts().size()},
                       {"events", loaded.history.events().size()},
                       {"receipts_without_send", loaded.receipts_without_send},
                       {"completions_before_invocation", loaded.completions_before_invocation}};
  nlohmann::json& lost = report["lost_messages"];
  for (size_t i = 0; i < lost.size() && i < result.report.lost_messages.size(); ++i) {
    const uint64_t seq = result.report.lost_messages[i].seq;
    lost[i]["producer"] = loaded.history.send(seq)->producer.str();
    lost[i]["producer_seq"] = loaded.producer_seqs[seq];
  }
  return report;
}

void print_history_check(std::ostream& out, const RunResult& r, const LoadedHistory& loaded) {
  const CheckerReport& c = r.report;
  out << "history of " << r.scenario << ": " << loaded.files.size() << " file(s), " << loaded.producers.size()
      << " producer(s), groups";
  for (const std::string& group : loaded.consumer_groups) out << " " << group;
  char line[256];
  std::snprintf(line, sizeof(line), ", %.1f s, %zu sends, %zu receipts\n", seconds_of(loaded.end),
                loaded.history.sends().size(), loaded.history.receipts().size());
  out << line;
  print_checker_figures(out, c);
  if (loaded.receipts_without_send > 0) {
    out << "  " << loaded.receipts_without_send
        << " receipts name a send no file holds (is a producer's history missing?)\n";
  }
  for (const auto& [queue, count] : c.reordered_by_queue) out << "  reordered " << count << " from " << queue << "\n";
  for (const Window& w : c.write_unavailable) {
    std::snprintf(line, sizeof(line), "  sends to %s failed from %.2f s to %.2f s\n", w.broker_name.c_str(),
                  seconds_of(w.from), seconds_of(w.to));
    out << line;
  }
  size_t listed = 0;
  for (const LostMessage& m : c.lost_messages) {
    if (++listed > 10) {
      out << "  ... (" << c.lost_messages.size() << " listed in the JSON report)\n";
      break;
    }
    std::snprintf(line, sizeof(line), "  lost: %s (%s, acknowledged at %.3f s) never reached %s: %s\n",
                  message_name(loaded, m.seq).c_str(), m.broker_name.c_str(), seconds_of(m.acked_at),
                  m.group.c_str(), m.fault.c_str());
    out << line;
  }
  for (const ExpectationResult& e : r.expectations) out << (e.held ? "  ok    " : "  FAIL  ") << e.describe << "\n";
  out << (r.passed ? "PASSED" : "FAILED") << "\n";
}

}  // namespace mqlab::sim
