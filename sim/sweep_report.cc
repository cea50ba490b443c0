#include "sim/sweep_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "broker/common/assert.h"
#include "sim/run_report.h"

namespace mqlab::sim {
namespace {

constexpr size_t kMaxListedMissingSeeds = 100;

// Why a finished run failed: its failed expectations, then liveness.
std::string failure_reason(const nlohmann::json& run) {
  std::string reason;
  const auto add = [&reason](const std::string& part) { reason += (reason.empty() ? "" : "; ") + part; };
  for (const nlohmann::json& expectation : run.at("expectations")) {
    if (!expectation.at("held").get<bool>()) add(expectation.at("describe").get<std::string>());
  }
  if (!run.at("converged").get<bool>()) add("liveness: " + run.at("liveness_failure").get<std::string>());
  return reason;
}

// "send_latency": {"p99_ms": 3} -> "send_latency.p99_ms": [3, ...]
void collect_figures(const nlohmann::json& figures, const std::string& prefix,
                     std::map<std::string, std::vector<nlohmann::json>>& values) {
  for (const auto& [name, value] : figures.items()) {
    if (value.is_object()) {
      collect_figures(value, prefix + name + ".", values);
    } else if (value.is_number()) {
      values[prefix + name].push_back(value);
    }
  }
}

// min, median (the mean of the middle two for an even count) and max.
nlohmann::json spread(std::vector<nlohmann::json> values) {
  MQ_ASSERT(!values.empty());
  std::stable_sort(values.begin(), values.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.get<double>() < b.get<double>();
  });
  const size_t middle = values.size() / 2;
  const nlohmann::json median = values.size() % 2 == 1
                                    ? values[middle]
                                    : nlohmann::json((values[middle - 1].get<double>() + values[middle].get<double>()) / 2);
  return {{"min", values.front()}, {"median", median}, {"max", values.back()}};
}

nlohmann::json figure_spreads(const std::vector<nlohmann::json>& runs) {
  std::map<std::string, std::vector<nlohmann::json>> values;
  for (const nlohmann::json& run : runs) {
    if (run.at("figures").is_object()) collect_figures(run.at("figures"), "", values);
  }
  nlohmann::json spreads = nlohmann::json::object();
  for (auto& [name, list] : values) spreads[name] = spread(std::move(list));
  return spreads;
}

// Seeds the header says the report is about that have no run.
nlohmann::json missing_seeds(const SweepHeader& header, const std::set<uint64_t>& present, uint64_t& count) {
  nlohmann::json listed = nlohmann::json::array();
  count = 0;
  const Shard shard = header.shard.value_or(Shard{});
  for (const SeedRange& range : header.seed_ranges) {
    for (uint64_t seed : shard_seeds(range, shard)) {
      if (present.count(seed)) continue;
      if (++count <= kMaxListedMissingSeeds) listed.push_back(seed);
    }
  }
  return listed;
}

nlohmann::json header_json(const SweepHeader& header) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const SeedRange& range : header.seed_ranges) ranges.push_back({{"first", range.first}, {"last", range.last}});
  nlohmann::json shard = nullptr;
  if (header.shard) shard = {{"index", header.shard->index}, {"count", header.shard->count}};
  return {{"report", kSweepReportKind},   {"scenario", header.scenario},
          {"scenario_file", header.scenario_file}, {"scenario_hash", header.scenario_hash},
          {"mqlab_version", header.mqlab_version}, {"seed_ranges", ranges},
          {"shard", shard}};
}


// An integer as is; a real number with two decimals unless it is whole.
std::string sweep_number_text(const nlohmann::json& value) {
  if (!value.is_number()) return "-";
  if (value.is_number_integer()) return value.dump();
  const double number = value.get<double>();
  char text[48];
  std::snprintf(text, sizeof(text), std::floor(number) == number && std::fabs(number) < 1e15 ? "%.0f" : "%.2f",
                number);
  return text;
}

// "1-100", "1-10, 20-30 (shard 2/8)"
std::string coverage_text(const nlohmann::json& report) {
  std::string text;
  for (const nlohmann::json& range : report.at("seed_ranges")) {
    if (!text.empty()) text += ", ";
    text += std::to_string(range.at("first").get<uint64_t>()) + "-" + std::to_string(range.at("last").get<uint64_t>());
  }
  const nlohmann::json& shard = report.at("shard");
  if (!shard.is_null()) text += " (shard " + shard.at("index").dump() + "/" + shard.at("count").dump() + ")";
  return text;
}

void print_runs_table(std::ostream& out, const nlohmann::json& runs) {
  char line[256];
  std::snprintf(line, sizeof(line), "%8s  %-8s %9s %7s %8s %6s %12s  %-16s  %s\n", "seed", "verdict", "acked", "lost",
                "unknown", "dups", "p99 send ms", "trace digest", "history digest");
  out << line;
  for (const nlohmann::json& run : runs) {
    const nlohmann::json& f = run.at("figures");
    const auto figure = [&f](const char* name) { return f.is_object() ? sweep_number_text(f.value(name, nlohmann::json())) : "-"; };
    const std::string p99 = f.is_object() ? sweep_number_text(f.at("send_latency").at("p99_ms")) : "-";
    std::string verdict = run.at("verdict").get<std::string>();
    std::transform(verdict.begin(), verdict.end(), verdict.begin(), [](unsigned char c) { return std::toupper(c); });
    std::snprintf(line, sizeof(line), "%8s  %-8s %9s %7s %8s %6s %12s  %-16s  %s\n", run.at("seed").dump().c_str(),
                  verdict.c_str(), figure("acknowledged").c_str(), figure("lost").c_str(), figure("unknown").c_str(),
                  figure("duplicates").c_str(), p99.c_str(), run.at("trace_digest").get<std::string>().c_str(),
                  run.at("history_digest").get<std::string>().c_str());
    out << line;
  }
}

void print_figures_table(std::ostream& out, const nlohmann::json& figures) {
  if (figures.empty()) return;
  char line[256];
  std::snprintf(line, sizeof(line), "%-28s %12s %12s %12s\n", "figure", "min", "median", "max");
  out << line;
  for (const auto& [name, spread] : figures.items()) {
    std::snprintf(line, sizeof(line), "%-28s %12s %12s %12s\n", name.c_str(), sweep_number_text(spread.at("min")).c_str(),
                  sweep_number_text(spread.at("median")).c_str(), sweep_number_text(spread.at("max")).c_str());
    out << line;
  }
}

void print_failing_and_missing(std::ostream& out, const nlohmann::json& report) {
  const nlohmann::json& failing = report.at("failing_seeds");
  if (!failing.empty()) out << "failing seeds (replay each with the command below it):\n";
  for (const nlohmann::json& seed : failing) {
    out << "  seed " << seed.at("seed").dump() << "  " << seed.at("verdict").get<std::string>() << ": "
        << seed.at("reason").get<std::string>() << "\n    " << seed.at("replay").get<std::string>() << "\n";
  }
  const uint64_t missing = report.at("totals").at("missing").get<uint64_t>();
  if (missing == 0) return;
  out << "missing seeds (no run in any report): ";
  std::string listed;
  for (const nlohmann::json& seed : report.at("missing_seeds")) listed += (listed.empty() ? "" : ", ") + seed.dump();
  out << listed;
  if (missing > report.at("missing_seeds").size()) out << " and " << missing - report.at("missing_seeds").size() << " more";
  out << "\n";
}

}  // namespace

nlohmann::json seed_record(uint64_t seed, const TaskOutcome& outcome) {
  if (outcome.crashed) {
    return {{"seed", seed},         {"verdict", "crashed"}, {"reason", outcome.crash}, {"figures", nullptr},
            {"trace_digest", ""},   {"history_digest", ""}, {"events_run", 0},         {"virtual_end_s", 0.0},
            {"wall_seconds", 0.0}};
  }
  const nlohmann::json& run = outcome.run;
  MQ_ASSERT(run.at("seed").get<uint64_t>() == seed);  // the child ran the task it was given
  const bool passed = run.at("passed").get<bool>();
  return {{"seed", seed},
          {"verdict", passed ? "passed" : "failed"},
          {"reason", passed ? "" : failure_reason(run)},
          {"figures", run.at("figures")},
          {"trace_digest", run.at("trace_digest")},
          {"history_digest", run.at("history_digest")},
          {"events_run", run.at("events_run")},
          {"virtual_end_s", run.at("virtual_end_s")},
          {"wall_seconds", run.at("wall_seconds")}};
}

nlohmann::json make_sweep_report(const SweepHeader& header, std::vector<nlohmann::json> runs, double wall_seconds) {
  std::stable_sort(runs.begin(), runs.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.at("seed").get<uint64_t>() < b.at("seed").get<uint64_t>();
  });
  std::set<uint64_t> present;
  std::map<std::string, int64_t> verdicts = {{"passed", 0}, {"failed", 0}, {"crashed", 0}};
  nlohmann::json failing = nlohmann::json::array();
  for (const nlohmann::json& run : runs) {
    const uint64_t seed = run.at("seed").get<uint64_t>();
    MQ_ASSERT(present.insert(seed).second);  // merge deduplicates before this
    const std::string verdict = run.at("verdict").get<std::string>();
    MQ_ASSERT(verdicts.count(verdict) == 1);
    ++verdicts[verdict];
    if (verdict == "passed") continue;
    failing.push_back({{"seed", seed}, {"verdict", verdict}, {"reason", run.at("reason")},
                       {"replay", replay_command(header.scenario_file, seed)}});
  }
  uint64_t missing_count = 0;
  nlohmann::json missing = missing_seeds(header, present, missing_count);
  nlohmann::json report = header_json(header);
  report["totals"] = {{"runs", runs.size()},          {"passed", verdicts["passed"]},
                      {"failed", verdicts["failed"]}, {"crashed", verdicts["crashed"]},
                      {"missing", missing_count}};
  report["figures"] = figure_spreads(runs);
  report["failing_seeds"] = std::move(failing);
  report["missing_seeds"] = std::move(missing);
  report["runs"] = std::move(runs);
  report["wall_seconds"] = wall_seconds;
  return report;
}

bool sweep_passed(const nlohmann::json& report) {
  const nlohmann::json& totals = report.at("totals");
  return totals.at("failed").get<int64_t>() == 0 && totals.at("crashed").get<int64_t>() == 0 &&
         totals.at("missing").get<uint64_t>() == 0;
}

void print_sweep_summary(std::ostream& out, const nlohmann::json& report) {
  out << "sweep of " << report.at("scenario").get<std::string>() << " ("
      << report.at("scenario_file").get<std::string>() << ", scenario hash "
      << report.at("scenario_hash").get<std::string>() << "), seeds " << coverage_text(report) << "\n";
  print_runs_table(out, report.at("runs"));
  const nlohmann::json& totals = report.at("totals");
  out << "totals: " << totals.at("runs").dump() << " runs: " << totals.at("passed").dump() << " passed, "
      << totals.at("failed").dump() << " failed, " << totals.at("crashed").dump() << " crashed";
  if (totals.at("missing").get<uint64_t>() > 0) out << ", " << totals.at("missing").dump() << " seeds missing";
  out << "\n";
  print_figures_table(out, report.at("figures"));
  print_failing_and_missing(out, report);
  out << (sweep_passed(report) ? "PASSED" : "FAILED") << "\n";
}

}  // namespace mqlab::sim
