#include "sim/run_report.h"

#include <cstdio>

namespace mqlab::sim {
namespace {

nlohmann::json latency_json(const LatencySummary& s) {
  auto ms = [](Nanos ns) { return static_cast<double>(ns) / kNanosPerMilli; };
  return {{"count", s.count}, {"p50_ms", ms(s.p50)}, {"p90_ms", ms(s.p90)}, {"p99_ms", ms(s.p99)},
          {"p999_ms", ms(s.p999)}, {"max_ms", ms(s.max)}};
}

nlohmann::json windows_json(const std::vector<Window>& windows) {
  nlohmann::json list = nlohmann::json::array();
  for (const Window& w : windows) {
    list.push_back({{"broker", w.broker_name},
                    {"from_s", static_cast<double>(w.from) / kNanosPerSecond},
                    {"to_s", static_cast<double>(w.to) / kNanosPerSecond}});
  }
  return list;
}

std::string ms_text(Nanos ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(ns) / kNanosPerMilli);
  return text;
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
                    {"fault", m.fault}});
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
  return {
      {"scenario", r.scenario},
      {"seed", r.seed},
      {"replay_key", r.replay_key},
      {"mqlab_version", MQLAB_VERSION},
      {"passed", r.passed},
      {"converged", r.converged},
      {"liveness_failure", r.liveness_failure},
      {"faults", faults},
      {"figures",
       {{"sent", c.sent},
        {"acknowledged", c.acknowledged},
        {"stored_unconfirmed", c.stored_unconfirmed},
        {"failed", c.failed},
        {"unknown_outcome", c.unknown_outcome},
        {"lost", c.lost},
        {"lost_per_million", c.acknowledged > 0 ? 1e6 * static_cast<double>(c.lost) / static_cast<double>(c.acknowledged) : 0.0},
        {"lost_unconfirmed", c.lost_unconfirmed},
        {"unknown", c.unknown},
        {"unknown_delivered", c.unknown_delivered},
        {"failed_delivered", c.failed_delivered},
        {"duplicates", c.duplicates},
        {"reordered", c.reordered},
        {"corrupted", c.corrupted},
        {"unavailable_write_s", c.write_unavailable_s},
        {"unavailable_read_s", c.read_unavailable_s},
        {"throughput_msgs_per_s", c.throughput_msgs_per_s},
        {"send_latency", latency_json(c.send_latency)},
        {"e2e_latency", latency_json(c.e2e_latency)}}},
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
}

void print_run_summary(std::ostream& out, const RunResult& r, const std::string& scenario_path) {
  const CheckerReport& c = r.report;
  char line[256];
  out << "scenario " << r.scenario << "  seed " << r.seed << "  replay key " << r.replay_key << "\n";
  std::snprintf(line, sizeof(line), "%-22s %10s\n", "figure", "value");
  out << line;
  auto row = [&](const char* name, const std::string& value) {
    std::snprintf(line, sizeof(line), "%-22s %10s\n", name, value.c_str());
    out << line;
  };
  row("sent", std::to_string(c.sent));
  row("acknowledged", std::to_string(c.acknowledged));
  row("lost", std::to_string(c.lost));
  row("unknown", std::to_string(c.unknown));
  row("failed", std::to_string(c.failed));
  row("duplicates", std::to_string(c.duplicates));
  row("reordered", std::to_string(c.reordered));
  row("corrupted", std::to_string(c.corrupted));
  std::snprintf(line, sizeof(line), "%.2f", c.write_unavailable_s);
  row("unavailable write s", line);
  std::snprintf(line, sizeof(line), "%.2f", c.read_unavailable_s);
  row("unavailable read s", line);
  row("send p50 ms", ms_text(c.send_latency.p50));
  row("send p99 ms", ms_text(c.send_latency.p99));
  row("send p999 ms", ms_text(c.send_latency.p999));
  row("e2e p99 ms", ms_text(c.e2e_latency.p99));
  std::snprintf(line, sizeof(line), "%.1f", c.throughput_msgs_per_s);
  row("throughput msgs/s", line);
  for (const auto& [index, count] : c.lost_by_fault) {
    out << "  lost " << count << " to "
        << (index < 0 ? std::string("no fault (a bug?)") : r.schedule.events[static_cast<size_t>(index)].describe())
        << "\n";
  }
  out << "liveness: " << (r.converged ? "converged" : "FAILED: " + r.liveness_failure) << "\n";
  for (const ExpectationResult& e : r.expectations) {
    out << (e.held ? "  ok    " : "  FAIL  ") << e.describe << "\n";
  }
  out << (r.passed ? "PASSED" : "FAILED") << "  (trace digest " << r.trace_digest << ")\n";
  if (!r.passed) out << "replay with: " << replay_command(scenario_path, r.seed) << "\n";
}

}  // namespace mqlab::sim
