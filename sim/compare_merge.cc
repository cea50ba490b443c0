#include "sim/compare_merge.h"

#include <map>
#include <tuple>

#include "broker/common/assert.h"
#include "sim/compare_report.h"

namespace mqlab::sim {
namespace {

using Inputs = std::vector<std::pair<std::string, nlohmann::json>>;
using RunsByKey = std::map<std::pair<std::string, uint64_t>, std::pair<std::string, nlohmann::json>>;

// The header keys every input must agree on (shard differs by design).
constexpr const char* kSameKeys[] = {"schema_version", "mqlab_version", "scenario", "scenario_hash", "scenario_text",
                                     "matrix"};

// What must be equal when two inputs ran the same (cell, seed).
std::tuple<std::string, std::string, std::string> run_identity(const nlohmann::json& record) {
  const nlohmann::json& run = record.at("run");
  return {record.at("verdict").get<std::string>(), run.is_null() ? "" : run.value("trace_digest", ""),
          run.is_null() ? "" : run.value("history_digest", "")};
}

// Whether record names a cell of matrix (so make_compare_report can place it).
bool in_matrix(const nlohmann::json& matrix, const nlohmann::json& record) {
  const auto has = [](const nlohmann::json& list, const nlohmann::json& value) {
    for (const nlohmann::json& item : list) {
      if ((item.is_object() ? item.value("name", nlohmann::json()) : item) == value) return true;
    }
    return false;
  };
  return has(matrix.at("topologies"), record.at("topology")) && has(matrix.at("flush"), record.at("flush")) &&
         has(matrix.at("faults"), record.at("fault"));
}

Status check_inputs(const Inputs& inputs) {
  for (const auto& [name, report] : inputs) {
    if (!is_compare_report(report)) {
      return Status::InvalidArgument(name + ": not a compare report (its \"report\" is not \"" +
                                     std::string(kCompareReportKind) + "\")");
    }
    for (const char* key : {"runs", "matrix", "scenario_file"}) {
      if (!report.contains(key)) return Status::InvalidArgument(name + ": no \"" + key + "\"");
    }
  }
  const auto& [first_name, first] = inputs.front();
  for (const auto& [name, report] : inputs) {
    for (const char* key : kSameKeys) {
      if (report.value(key, nlohmann::json()) != first.value(key, nlohmann::json())) {
        return Status::InvalidArgument(name + " and " + first_name + " differ in \"" + key +
                                       "\": they are not shards of one compare");
      }
    }
    for (const nlohmann::json& record : report.at("runs")) {
      if (!in_matrix(first.at("matrix"), record)) {
        return Status::InvalidArgument(name + ": run " + record.value("cell", "?") + " is not a cell of the matrix");
      }
    }
  }
  return Status::Ok();
}

// Every (cell, seed) once; InvalidArgument when two inputs disagree about one.
Result<RunsByKey> collect_runs(const Inputs& inputs) {
  RunsByKey runs;
  for (const auto& [name, report] : inputs) {
    for (const nlohmann::json& record : report.at("runs")) {
      const std::pair<std::string, uint64_t> key{record.at("cell").get<std::string>(), record.at("seed").get<uint64_t>()};
      auto [it, inserted] = runs.emplace(key, std::make_pair(name, record));
      if (!inserted && run_identity(it->second.second) != run_identity(record)) {
        return Status::InvalidArgument(key.first + " seed " + std::to_string(key.second) + " differs between " +
                                       it->second.first + " and " + name +
                                       " (verdict or digests): one scenario and seed must always run the same way");
      }
    }
  }
  return runs;
}

}  // namespace

bool is_compare_report(const nlohmann::json& document) {
  return document.is_object() && document.value("report", "") == kCompareReportKind;
}

Result<nlohmann::json> merge_compare_reports(const Inputs& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no compare reports to merge");
  // Reports are input: a malformed one is an error naming what is wrong, never a crash.
  try {
    MQ_RETURN_IF_ERROR(check_inputs(inputs));
    MQ_ASSIGN_OR_RETURN(RunsByKey runs, collect_runs(inputs));
    double wall_seconds = 0;
    for (const auto& [name, report] : inputs) wall_seconds += report.value("wall_seconds", 0.0);
    nlohmann::json header = inputs.front().second;
    for (const char* key : {"runs", "configurations", "lost_classes", "totals", "missing_runs", "wall_seconds"}) {
      header.erase(key);
    }
    header["shard"] = nullptr;
    std::vector<nlohmann::json> records;
    for (auto& [key, entry] : runs) records.push_back(std::move(entry.second));
    nlohmann::json merged = make_compare_report(header, std::move(records), wall_seconds);
    MQ_ASSERT(merged.at("shard").is_null());
    return merged;
  } catch (const nlohmann::json::exception& error) {
    return Status::InvalidArgument(std::string("malformed compare report: ") + error.what());
  }
}

}  // namespace mqlab::sim
