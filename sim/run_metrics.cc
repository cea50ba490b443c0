#include "sim/run_metrics.h"

#include <algorithm>
#include <sstream>

#include "broker/common/assert.h"

namespace mqlab::sim {

double run_metric_value(const std::string& metric, const RunResult& r) {
  const CheckerReport& c = r.report;
  auto ms = [](Nanos ns) { return static_cast<double>(ns) / kNanosPerMilli; };
  if (metric == "lost") return static_cast<double>(c.lost);
  if (metric == "unknown") return static_cast<double>(c.unknown);
  if (metric == "duplicates") return static_cast<double>(c.duplicates);
  if (metric == "expired_by_retention") return static_cast<double>(c.expired_by_retention);
  if (metric == "stored_twice") return static_cast<double>(c.duplicates_by_cause.stored_twice);
  if (metric == "reordered") return static_cast<double>(c.reordered);
  if (metric == "corrupted") return static_cast<double>(c.corrupted);
  if (metric == "unavailable_write_s") return c.write_unavailable_s;
  if (metric == "unavailable_read_s") return c.read_unavailable_s;
  if (metric == "p50_send_ms") return ms(c.send_latency.p50);
  if (metric == "p90_send_ms") return ms(c.send_latency.p90);
  if (metric == "p99_send_ms") return ms(c.send_latency.p99);
  if (metric == "p999_send_ms") return ms(c.send_latency.p999);
  if (metric == "max_send_ms") return ms(c.send_latency.max);
  if (metric == "p50_e2e_ms") return ms(c.e2e_latency.p50);
  if (metric == "p99_e2e_ms") return ms(c.e2e_latency.p99);
  if (metric == "p999_e2e_ms") return ms(c.e2e_latency.p999);
  if (metric == "throughput_msgs_per_s") return c.throughput_msgs_per_s;
  if (metric == "max_recovery_s") {
    double worst = 0;
    for (const RecoveryRecord& rec : r.recoveries) {
      if (rec.ready_at >= 0) worst = std::max(worst, static_cast<double>(rec.ready_at - rec.started_at) / kNanosPerSecond);
    }
    return worst;
  }
  MQ_UNREACHABLE("metric " + metric + " passed scenario validation but has no value");
}

std::vector<ExpectationResult> evaluate_run_expectations(const std::map<std::string, Expectation>& expect,
                                                         const RunResult& result) {
  std::vector<ExpectationResult> results;
  for (const auto& [metric, expectation] : expect) {
    ExpectationResult r;
    r.metric = metric;
    r.measured = run_metric_value(metric, result);
    r.held = expectation.holds(r.measured);
    std::ostringstream text;
    text << expectation.describe() << " (measured " << r.measured << ")";
    r.describe = text.str();
    results.push_back(r);
  }
  return results;
}

}  // namespace mqlab::sim
