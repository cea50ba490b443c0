#include "sim/checker_report.h"

#include <cstdio>
#include <string>

namespace mqlab::sim {
namespace {

std::string ms_text(Nanos ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(ns) / kNanosPerMilli);
  return text;
}

}  // namespace

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

nlohmann::json checker_figures_json(const CheckerReport& c) {
  return {{"sent", c.sent},
          {"acknowledged", c.acknowledged},
          {"stored_unconfirmed", c.stored_unconfirmed},
          {"failed", c.failed},
          {"unknown_outcome", c.unknown_outcome},
          {"lost", c.lost},
          {"lost_per_million",
           c.acknowledged > 0 ? 1e6 * static_cast<double>(c.lost) / static_cast<double>(c.acknowledged) : 0.0},
          {"lost_unconfirmed", c.lost_unconfirmed},
          {"unknown", c.unknown},
          {"unknown_delivered", c.unknown_delivered},
          {"failed_delivered", c.failed_delivered},
          {"expired_by_retention", c.expired_by_retention},
          {"duplicates", c.duplicates},
          {"duplicates_by_cause",
           {{"redelivered", c.duplicates_by_cause.redelivered},
            {"retried", c.duplicates_by_cause.retried},
            {"stored_twice", c.duplicates_by_cause.stored_twice}}},
          {"messages_stored_twice", c.messages_stored_twice},
          {"reordered", c.reordered},
          {"corrupted", c.corrupted},
          {"unavailable_write_s", c.write_unavailable_s},
          {"unavailable_read_s", c.read_unavailable_s},
          {"throughput_msgs_per_s", c.throughput_msgs_per_s},
          {"send_latency", latency_json(c.send_latency)},
          {"e2e_latency", latency_json(c.e2e_latency)}};
}

void print_checker_figures(std::ostream& out, const CheckerReport& c) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s %10s\n", "figure", "value");
  out << line;
  auto row = [&](const char* name, const std::string& value) {
    std::snprintf(line, sizeof(line), "%-22s %10s\n", name, value.c_str());
    out << line;
  };
  row("sent", std::to_string(c.sent));
  row("acknowledged", std::to_string(c.acknowledged));
  row("lost", std::to_string(c.lost));
  if (c.expired_by_retention > 0) row("expired by retention", std::to_string(c.expired_by_retention));
  row("unknown", std::to_string(c.unknown));
  row("failed", std::to_string(c.failed));
  row("duplicates", std::to_string(c.duplicates));
  // Harmless redelivery (at-least-once) apart from messages stored twice.
  if (c.duplicates > 0) {
    row("  redelivered", std::to_string(c.duplicates_by_cause.redelivered));
    row("  retried", std::to_string(c.duplicates_by_cause.retried));
    row("  stored twice", std::to_string(c.duplicates_by_cause.stored_twice) + " (" +
                              std::to_string(c.messages_stored_twice) + " msgs)");
  }
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
}

}  // namespace mqlab::sim
