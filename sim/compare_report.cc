#include "sim/compare_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "broker/common/assert.h"
#include "faults/fault.h"

namespace mqlab::sim {
namespace {

constexpr size_t kMaxListedMissing = 100;

// The machines a fault list hits: "*" for all of them. A partition hits its
// smaller side (isolating one machine is one failure).
std::set<std::string> machines_hit(const faults::FaultSchedule& schedule) {
  std::set<std::string> hit;
  for (const faults::FaultEvent& e : schedule.events) {
    if (e.kind == faults::FaultKind::kPowerLossAll) {
      hit.insert("*");
    } else if (e.kind == faults::FaultKind::kPartition) {
      const std::set<std::string>& smaller = e.side_a.size() <= e.side_b.size() ? e.side_a : e.side_b;
      hit.insert(smaller.begin(), smaller.end());
    } else if (!e.target.empty()) {
      hit.insert(e.target);
    }
  }
  return hit;
}

nlohmann::json fault_events_of(const faults::FaultSchedule& schedule) {
  nlohmann::json events = nlohmann::json::array();
  for (const faults::FaultEvent& e : schedule.events) {
    events.push_back({{"kind", std::string(faults::fault_kind_name(e.kind))},
                      {"target", e.target},
                      {"at_s", seconds_of(e.at)},
                      {"duration_s", seconds_of(e.duration)},
                      {"describe", e.describe()}});
  }
  return events;
}

nlohmann::json matrix_json(const MatrixSpec& matrix, const SeedRange& seeds) {
  // The rows' labels: a topology, or "topology+client" with matrix.clients.
  nlohmann::json topologies = nlohmann::json::array();
  for (const MatrixSpec::Row& row : matrix.rows()) topologies.push_back(row.label);
  nlohmann::json flush = nlohmann::json::array();
  for (const store::FlushDiskType type : matrix.flush) flush.push_back(std::string(store::flush_disk_type_name(type)));
  nlohmann::json faults = nlohmann::json::array();
  MQ_ASSERT(!matrix.topologies.empty());
  // Aliases resolve per topology; the first topology's list describes the fault.
  const auto& schedules = matrix.schedules.at(matrix.topologies.front());
  for (const std::string& name : matrix.fault_names) {
    const faults::FaultSchedule& schedule = schedules.at(name);
    const std::set<std::string> hit = machines_hit(schedule);
    faults.push_back({{"name", name},
                      {"single_failure", hit.size() <= 1 && !hit.count("*")},
                      {"events", fault_events_of(schedule)}});
  }
  return {{"topologies", topologies},
          {"flush", flush},
          {"faults", faults},
          {"seeds", {{"first", seeds.first}, {"last", seeds.last}}}};
}

// Overlapping or touching windows of one broker joined into one: the
// checker reports a read window per unread message, thousands in an outage.
nlohmann::json merged_windows(const nlohmann::json& windows) {
  std::map<std::string, std::vector<std::pair<double, double>>> by_broker;
  for (const nlohmann::json& w : windows) {
    by_broker[w.value("broker", "")].emplace_back(w.at("from_s").get<double>(), w.at("to_s").get<double>());
  }
  nlohmann::json merged = nlohmann::json::array();
  for (auto& [broker, list] : by_broker) {
    std::sort(list.begin(), list.end());
    std::vector<std::pair<double, double>> joined;
    for (const auto& [from, to] : list) {
      if (!joined.empty() && from <= joined.back().second) {
        joined.back().second = std::max(joined.back().second, to);
      } else {
        joined.emplace_back(from, to);
      }
    }
    for (const auto& [from, to] : joined) merged.push_back({{"broker", broker}, {"from_s", from}, {"to_s", to}});
  }
  return merged;
}

// A run's lost messages by (fault that caused it, broker): distinct
// messages, and the span of their acknowledgements. The checker lists at
// most a thousand (lost_messages); when it listed fewer than were lost
// (`lost`), a run with one class still counts them all, but its span and a
// run with several classes cover only the listed ones: "complete" says which.
nlohmann::json run_lost_classes(const nlohmann::json& lost_messages, int64_t lost) {
  struct Class {
    std::string fault;
    std::set<uint64_t> seqs;
    double first_acked_s = 0;
    double last_acked_s = 0;
  };
  std::map<std::pair<int, std::string>, Class> classes;
  for (const nlohmann::json& m : lost_messages) {
    const std::pair<int, std::string> key{m.at("fault_index").get<int>(), m.value("broker", "")};
    Class& c = classes[key];
    const double acked = m.at("acked_at_s").get<double>();
    if (c.seqs.empty()) c.first_acked_s = c.last_acked_s = acked;
    c.fault = m.value("fault", "");
    c.seqs.insert(m.at("seq").get<uint64_t>());
    c.first_acked_s = std::min(c.first_acked_s, acked);
    c.last_acked_s = std::max(c.last_acked_s, acked);
  }
  std::set<uint64_t> listed;
  for (const auto& [key, c] : classes) listed.insert(c.seqs.begin(), c.seqs.end());
  MQ_ASSERT(static_cast<int64_t>(listed.size()) <= lost);
  const bool complete = static_cast<int64_t>(listed.size()) == lost;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, c] : classes) {
    const int64_t messages = classes.size() == 1 ? lost : static_cast<int64_t>(c.seqs.size());
    list.push_back({{"fault_index", key.first},
                    {"fault", c.fault},
                    {"broker", key.second},
                    {"messages", messages},
                    {"first_acked_s", c.first_acked_s},
                    {"last_acked_s", c.last_acked_s},
                    {"complete", complete}});
  }
  return list;
}

// The run's report as a compare keeps it: lost messages summarised, read
// windows merged; every figure stays.
nlohmann::json compact_run(nlohmann::json run) {
  MQ_ASSERT(run.is_object());
  run["lost_classes"] = run_lost_classes(run.value("lost_messages", nlohmann::json::array()),
                                         run.at("figures").at("lost").get<int64_t>());
  run["lost_messages_listed"] = run.value("lost_messages", nlohmann::json::array()).size();
  run.erase("lost_messages");
  run["unavailable_read_windows"] = merged_windows(run.value("unavailable_read_windows", nlohmann::json::array()));
  run["unavailable_write_windows"] = merged_windows(run.value("unavailable_write_windows", nlohmann::json::array()));
  return run;
}

// Matrix order of a run: (topology, flush, fault) indexes, then the seed.
using RunKey = std::tuple<size_t, size_t, size_t, uint64_t>;

size_t index_in(const nlohmann::json& list, const std::string& value) {
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    if ((item.is_string() ? item.get<std::string>() : item.at("name").get<std::string>()) == value) return i;
  }
  MQ_UNREACHABLE("'" + value + "' is not in the matrix");
}

RunKey run_key(const nlohmann::json& matrix, const nlohmann::json& run) {
  return {index_in(matrix.at("topologies"), run.at("topology").get<std::string>()),
          index_in(matrix.at("flush"), run.at("flush").get<std::string>()),
          index_in(matrix.at("faults"), run.at("fault").get<std::string>()), run.at("seed").get<uint64_t>()};
}

double figure(const nlohmann::json& run, const char* name) { return run.at("figures").at(name).get<double>(); }
double latency(const nlohmann::json& run, const char* which, const char* name) {
  return run.at("figures").at(which).at(name).get<double>();
}

// Longest restart-to-serving time of a broker restarted after the run began;
// null when none was.
nlohmann::json recovery_s(const nlohmann::json& run) {
  std::optional<double> worst;
  for (const nlohmann::json& r : run.at("recoveries")) {
    if (r.at("started_at_s").get<double>() <= 0 || !r.at("ready").get<bool>()) continue;
    worst = std::max(worst.value_or(0.0), r.at("recovery_s").get<double>());
  }
  return worst ? nlohmann::json(*worst) : nlohmann::json(nullptr);
}

// The loss bound figures of a cell, when its runs carry them (loss_bound,
// within_bound: sim/loss_bound.h); null otherwise. Like lost, the bound is
// summed over the seeds, and so is by how much each seed exceeded its own.
nlohmann::json cell_loss_bound(const std::vector<const nlohmann::json*>& runs) {
  nlohmann::json bound = nullptr;
  for (const nlohmann::json* run : runs) {
    if (!run->contains("loss_bound") || !(*run)["loss_bound"].is_object()) continue;
    const nlohmann::json& b = (*run)["loss_bound"];
    const double messages = b.value("messages", 0.0);
    const double lost = figure(*run, "lost");
    const bool within = run->value("within_bound", lost <= messages);
    if (bound.is_null()) {
      bound = {{"messages", 0.0}, {"reason", b.value("reason", "")}, {"within_bound", true}, {"exceeded_by", 0.0}};
    }
    bound["messages"] = bound["messages"].get<double>() + messages;
    bound["within_bound"] = bound["within_bound"].get<bool>() && within;
    if (!within) bound["exceeded_by"] = bound["exceeded_by"].get<double>() + std::max(0.0, lost - messages);
  }
  return bound;
}

std::string cell_outcome(int64_t finished, int64_t crashed, int64_t lost, const nlohmann::json& bound) {
  if (crashed > 0) return "crashed";
  if (finished == 0) return "no_runs";
  if (lost == 0) return "no_loss";
  if (bound.is_null()) return "loss";
  return bound.at("within_bound").get<bool>() ? "loss_within_bound" : "loss_exceeds_bound";
}

// One cell's figures over its seeds: counts summed, lost per million of the
// sums, seconds and latencies of the worst seed, throughput the mean.
nlohmann::json cell_figures(const std::string& fault, const std::vector<const nlohmann::json*>& records) {
  std::vector<const nlohmann::json*> runs;
  int64_t crashed = 0, failed = 0;
  for (const nlohmann::json* record : records) {
    if (record->at("verdict") == "crashed") {
      ++crashed;
      continue;
    }
    if (record->at("verdict") != "passed") ++failed;
    runs.push_back(&record->at("run"));
  }
  int64_t sent = 0, acknowledged = 0, lost = 0, unknown = 0, duplicates = 0, stored_twice = 0, expired = 0;
  // Figures a run's report gained later (sim/checker.h): 0 in older reports.
  const auto count_of = [](const nlohmann::json& run, const char* key, const char* part = nullptr) {
    const nlohmann::json& figures = run.at("figures");
    if (!figures.contains(key)) return int64_t{0};
    return part == nullptr ? figures.at(key).get<int64_t>() : figures.at(key).value(part, int64_t{0});
  };
  double unavailable_write = 0, unavailable_read = 0, p50 = 0, p99 = 0, p999 = 0, e2e_p99 = 0, throughput = 0;
  nlohmann::json recovery = nullptr;
  uint64_t worst_seed = records.empty() ? 0 : records.front()->at("seed").get<uint64_t>();
  double worst_lost = -1;
  for (const nlohmann::json* run : runs) {
    sent += static_cast<int64_t>(figure(*run, "sent"));
    acknowledged += static_cast<int64_t>(figure(*run, "acknowledged"));
    lost += static_cast<int64_t>(figure(*run, "lost"));
    unknown += static_cast<int64_t>(figure(*run, "unknown"));
    duplicates += static_cast<int64_t>(figure(*run, "duplicates"));
    stored_twice += count_of(*run, "duplicates_by_cause", "stored_twice");
    expired += count_of(*run, "expired_by_retention");
    unavailable_write = std::max(unavailable_write, figure(*run, "unavailable_write_s"));
    unavailable_read = std::max(unavailable_read, figure(*run, "unavailable_read_s"));
    p50 = std::max(p50, latency(*run, "send_latency", "p50_ms"));
    p99 = std::max(p99, latency(*run, "send_latency", "p99_ms"));
    p999 = std::max(p999, latency(*run, "send_latency", "p999_ms"));
    e2e_p99 = std::max(e2e_p99, latency(*run, "e2e_latency", "p99_ms"));
    throughput += figure(*run, "throughput_msgs_per_s") / static_cast<double>(runs.size());
    const nlohmann::json r = recovery_s(*run);
    if (!r.is_null()) recovery = std::max(recovery.is_null() ? 0.0 : recovery.get<double>(), r.get<double>());
    if (figure(*run, "lost") > worst_lost) {
      worst_lost = figure(*run, "lost");
      worst_seed = run->at("seed").get<uint64_t>();
    }
  }
  const nlohmann::json bound = cell_loss_bound(runs);
  return {{"fault", fault},
          {"seeds", runs.size()},
          {"crashed", crashed},
          {"failed", failed},
          {"sent", sent},
          {"acknowledged", acknowledged},
          {"lost", lost},
          {"lost_per_million", acknowledged > 0 ? 1e6 * static_cast<double>(lost) / static_cast<double>(acknowledged) : 0.0},
          {"unknown", unknown},
          {"duplicates", duplicates},
          {"duplicates_stored_twice", stored_twice},
          {"expired_by_retention", expired},
          {"unavailable_write_s", unavailable_write},
          {"unavailable_read_s", unavailable_read},
          {"send_p50_ms", p50},
          {"send_p99_ms", p99},
          {"send_p999_ms", p999},
          {"e2e_p99_ms", e2e_p99},
          {"throughput_msgs_per_s", throughput},
          {"throughput_relative", nullptr},  // filled in once every configuration is known
          {"recovery_s", recovery},
          {"loss_bound", bound},
          {"outcome", cell_outcome(static_cast<int64_t>(runs.size()), crashed, lost, bound)},
          {"worst_seed", worst_seed}};
}

// Each cell's throughput over the fastest configuration's under the same fault.
void fill_relative_throughput(nlohmann::json& configurations, size_t faults) {
  for (size_t f = 0; f < faults; ++f) {
    double fastest = 0;
    for (const nlohmann::json& config : configurations) {
      fastest = std::max(fastest, config["cells"][f]["throughput_msgs_per_s"].get<double>());
    }
    for (nlohmann::json& config : configurations) {
      nlohmann::json& cell = config["cells"][f];
      if (fastest > 0 && cell["seeds"].get<size_t>() > 0) {
        cell["throughput_relative"] = cell["throughput_msgs_per_s"].get<double>() / fastest;
      }
    }
  }
}

// Every (cell, causing fault) that lost messages, over its seeds.
nlohmann::json lost_classes(const std::vector<nlohmann::json>& runs, const std::string& scenario_path) {
  struct Class {
    std::string cell, topology, flush, fault_name, cause;
    int64_t messages = 0;
    std::set<std::string> brokers;
    std::vector<uint64_t> seeds;
    uint64_t worst_seed = 0;
    int64_t worst_messages = -1;
    double window_ms = 0;  // longest span of acknowledgements lost in one run
    bool complete = true;  // every run listed all its lost messages
  };
  std::map<std::pair<std::string, std::string>, Class> classes;
  std::vector<std::pair<std::string, std::string>> order;  // first seen: matrix order
  for (const nlohmann::json& record : runs) {
    if (record.at("run").is_null()) continue;
    std::map<std::string, std::pair<int64_t, std::pair<double, double>>> per_cause;  // this run
    for (const nlohmann::json& c : record.at("run").at("lost_classes")) {
      auto& [count, span] = per_cause[c.at("fault").get<std::string>()];
      const double first = c.at("first_acked_s").get<double>(), last = c.at("last_acked_s").get<double>();
      span = count == 0 ? std::make_pair(first, last)
                        : std::make_pair(std::min(span.first, first), std::max(span.second, last));
      count += c.at("messages").get<int64_t>();
      const std::pair<std::string, std::string> key{record.at("cell").get<std::string>(), c.at("fault").get<std::string>()};
      if (!classes.count(key)) order.push_back(key);
      classes[key].brokers.insert(c.value("broker", ""));
      classes[key].complete = classes[key].complete && c.value("complete", true);
    }
    for (const auto& [cause, count_span] : per_cause) {
      const std::pair<std::string, std::string> key{record.at("cell").get<std::string>(), cause};
      Class& c = classes[key];
      c.cell = key.first;
      c.topology = record.at("topology");
      c.flush = record.at("flush");
      c.fault_name = record.at("fault");
      c.cause = cause;
      c.messages += count_span.first;
      c.seeds.push_back(record.at("seed").get<uint64_t>());
      c.window_ms = std::max(c.window_ms, 1000.0 * (count_span.second.second - count_span.second.first));
      if (count_span.first > c.worst_messages) {
        c.worst_messages = count_span.first;
        c.worst_seed = record.at("seed").get<uint64_t>();
      }
    }
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& key : order) {
    const Class& c = classes.at(key);
    list.push_back({{"cell", c.cell},
                    {"topology", c.topology},
                    {"flush", c.flush},
                    {"fault", c.fault_name},
                    {"cause", c.cause},
                    {"messages", c.messages},
                    {"brokers", c.brokers},
                    {"seeds", c.seeds},
                    {"worst_seed", c.worst_seed},
                    {"worst_seed_messages", c.worst_messages},
                    {"acked_span_ms", c.window_ms},
                    {"complete", c.complete},
                    {"replay", cell_replay_command(scenario_path, c.cell, c.worst_seed)}});
  }
  return list;
}

// The (cell, seed) pairs of this report's share, in matrix order.
std::vector<std::pair<std::string, uint64_t>> expected_runs(const nlohmann::json& header) {
  const nlohmann::json& m = header.at("matrix");
  const SeedRange seeds{m.at("seeds").at("first").get<uint64_t>(), m.at("seeds").at("last").get<uint64_t>()};
  Shard shard;
  if (header.contains("shard") && header["shard"].is_object()) {
    shard = Shard{header["shard"].at("index").get<uint64_t>(), header["shard"].at("count").get<uint64_t>()};
  }
  std::vector<std::pair<std::string, uint64_t>> all;
  for (const nlohmann::json& topology : m.at("topologies")) {
    for (const nlohmann::json& flush : m.at("flush")) {
      for (const nlohmann::json& fault : m.at("faults")) {
        const std::string cell = topology.get<std::string>() + "/" + flush.get<std::string>() + "/" +
                                 fault.at("name").get<std::string>();
        for (uint64_t seed = seeds.first; seed <= seeds.last && seed >= seeds.first; ++seed) {
          all.emplace_back(cell, seed);
          if (seed == seeds.last) break;
        }
      }
    }
  }
  std::vector<std::pair<std::string, uint64_t>> share;
  for (size_t i = shard.index; i < all.size(); i += shard.count) share.push_back(all[i]);
  return share;
}

}  // namespace

nlohmann::json compare_header(const Scenario& base, const std::string& scenario_path, const std::string& scenario_text,
                              const SeedRange& seeds, const Shard& shard) {
  MQ_ASSERT(base.matrix.has_value());
  MQ_ASSERT(shard.index < shard.count);
  const ProducerSpec& p = base.workload.producers;
  return {{"report", kCompareReportKind},
          {"schema_version", kCompareSchemaVersion},
          {"mqlab_version", MQLAB_VERSION},
          {"scenario", base.name},
          {"description", base.description},
          {"scenario_file", scenario_path},
          {"scenario_hash", base.hash},
          {"scenario_text", scenario_text},
          {"duration_s", seconds_of(base.duration)},
          {"workload",
           {{"producers", p.count},
            {"rate_per_sec", p.rate_per_sec},
            {"message_size_min_bytes", p.size_min_bytes},
            {"message_size_max_bytes", p.size_max_bytes},
            {"consumer_groups", base.workload.consumer_groups.size()}}},
          {"broker",
           {{"flushIntervalCommitLog", base.broker.store.flushIntervalCommitLog},
            {"syncFlushTimeout", base.broker.store.syncFlushTimeout}}},
          {"matrix", matrix_json(*base.matrix, seeds)},
          {"shard", shard.count > 1 ? nlohmann::json{{"index", shard.index}, {"count", shard.count}}
                                    : nlohmann::json(nullptr)}};
}

std::string cell_replay_command(const std::string& scenario_path, const std::string& cell, uint64_t seed) {
  return "mqsim replay " + scenario_path + " --cell " + cell + " --seed " + std::to_string(seed) +
         " --trace trace.txt";
}

nlohmann::json compare_run_record(const CompareCell& cell, uint64_t seed, const TaskOutcome& outcome,
                                  const std::string& scenario_path) {
  const bool passed = !outcome.crashed && outcome.run.value("passed", false);
  nlohmann::json record = {{"cell", cell.name},
                           {"topology", cell.topology},
                           {"flush", cell.flush},
                           {"fault", cell.fault},
                           {"seed", seed},
                           {"verdict", outcome.crashed ? "crashed" : passed ? "passed" : "failed"},
                           {"crash", outcome.crash},
                           {"replay", cell_replay_command(scenario_path, cell.name, seed)},
                           {"run", outcome.crashed ? nlohmann::json(nullptr) : compact_run(outcome.run)}};
  if (!outcome.crashed) MQ_ASSERT(record["run"].at("seed").get<uint64_t>() == seed);
  return record;
}

nlohmann::json make_compare_report(const nlohmann::json& header, std::vector<nlohmann::json> runs,
                                   double wall_seconds) {
  MQ_ASSERT(header.at("report") == kCompareReportKind);
  const nlohmann::json& matrix = header.at("matrix");
  std::sort(runs.begin(), runs.end(), [&](const nlohmann::json& a, const nlohmann::json& b) {
    return run_key(matrix, a) < run_key(matrix, b);
  });
  for (size_t i = 1; i < runs.size(); ++i) MQ_ASSERT(run_key(matrix, runs[i - 1]) != run_key(matrix, runs[i]));

  std::map<std::string, std::vector<const nlohmann::json*>> by_cell;
  nlohmann::json totals = {{"runs", runs.size()}, {"passed", 0}, {"failed", 0}, {"crashed", 0}, {"missing", 0}};
  for (const nlohmann::json& run : runs) {
    by_cell[run.at("cell").get<std::string>()].push_back(&run);
    const std::string verdict = run.at("verdict");
    totals[verdict] = totals[verdict].get<int64_t>() + 1;
  }
  nlohmann::json configurations = nlohmann::json::array();
  for (const nlohmann::json& topology : matrix.at("topologies")) {
    for (const nlohmann::json& flush : matrix.at("flush")) {
      nlohmann::json cells = nlohmann::json::array();
      for (const nlohmann::json& fault : matrix.at("faults")) {
        const std::string name = fault.at("name");
        const std::string cell = topology.get<std::string>() + "/" + flush.get<std::string>() + "/" + name;
        cells.push_back(cell_figures(name, by_cell[cell]));
      }
      configurations.push_back({{"topology", topology}, {"flush", flush}, {"cells", cells}});
    }
  }
  fill_relative_throughput(configurations, matrix.at("faults").size());

  std::set<std::pair<std::string, uint64_t>> ran;
  for (const nlohmann::json& run : runs) ran.emplace(run.at("cell"), run.at("seed").get<uint64_t>());
  nlohmann::json missing = nlohmann::json::array();
  int64_t missing_count = 0;
  for (const auto& [cell, seed] : expected_runs(header)) {
    if (ran.count({cell, seed})) continue;
    ++missing_count;
    if (missing.size() < kMaxListedMissing) missing.push_back({{"cell", cell}, {"seed", seed}});
  }
  totals["missing"] = missing_count;

  nlohmann::json report = header;
  report["lost_classes"] = lost_classes(runs, header.at("scenario_file"));
  report["runs"] = std::move(runs);
  report["configurations"] = std::move(configurations);
  report["totals"] = totals;
  report["missing_runs"] = missing;
  report["wall_seconds"] = wall_seconds;
  return report;
}

bool compare_passed(const nlohmann::json& report) {
  const nlohmann::json& t = report.at("totals");
  return t.at("failed").get<int64_t>() == 0 && t.at("crashed").get<int64_t>() == 0 &&
         t.at("missing").get<int64_t>() == 0;
}

void print_compare_summary(std::ostream& out, const nlohmann::json& report) {
  const nlohmann::json& t = report.at("totals");
  out << "runs: " << t.at("passed") << " passed, " << t.at("failed") << " failed, " << t.at("crashed")
      << " crashed, " << t.at("missing") << " missing\n";
  // Lost messages (all seeds) / worst seed's write-unavailable seconds, per configuration and fault.
  char line[64];
  out << "lost / unavailable-write s (worst seed), per configuration and fault:\n";
  std::snprintf(line, sizeof(line), "%-34s", "configuration");
  out << line;
  for (const nlohmann::json& fault : report.at("matrix").at("faults")) {
    std::snprintf(line, sizeof(line), " %13.13s", fault.at("name").get<std::string>().c_str());
    out << line;
  }
  out << "\n";
  for (const nlohmann::json& config : report.at("configurations")) {
    const std::string name = config.at("topology").get<std::string>() + " " + config.at("flush").get<std::string>();
    std::snprintf(line, sizeof(line), "%-34s", name.c_str());
    out << line;
    for (const nlohmann::json& cell : config.at("cells")) {
      std::snprintf(line, sizeof(line), " %6lld/%6.1f", static_cast<long long>(cell.at("lost").get<int64_t>()),
                    cell.at("unavailable_write_s").get<double>());
      out << (cell.at("seeds").get<int64_t>() > 0 ? std::string(line) : std::string("             -"));
    }
    out << "\n";
  }
  for (const nlohmann::json& run : report.at("runs")) {
    if (run.at("verdict") == "passed") continue;
    out << "  " << run.at("verdict").get<std::string>() << ": " << run.at("cell").get<std::string>() << " seed "
        << run.at("seed") << (run.at("crash").get<std::string>().empty() ? "" : " (" + run.at("crash").get<std::string>() + ")")
        << "; " << run.at("replay").get<std::string>() << "\n";
  }
  for (const nlohmann::json& m : report.at("missing_runs")) {
    out << "  missing: " << m.at("cell").get<std::string>() << " seed " << m.at("seed") << "\n";
  }
}

}  // namespace mqlab::sim
