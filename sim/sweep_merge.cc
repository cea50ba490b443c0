#include "sim/sweep_merge.h"

#include <algorithm>
#include <map>

#include "broker/common/assert.h"
#include "sim/sweep_report.h"

namespace mqlab::sim {
namespace {

struct Input {
  const std::string* file = nullptr;
  SweepHeader header;
  const nlohmann::json* runs = nullptr;
  double wall_seconds = 0;
};

// The header of a report read from a file. nlohmann throws on a missing key
// or a wrong type; that is bad input, so it becomes a Status here.
Result<Input> read_input(const std::string& file, const nlohmann::json& report) {
  try {
    if (!report.is_object() || report.value("report", "") != kSweepReportKind) {
      return Status::InvalidArgument(file + ": not an mqsim sweep report (no \"report\": \"" +
                                     std::string(kSweepReportKind) + "\"); write one with mqsim sweep --json");
    }
    Input input;
    input.file = &file;
    input.header.scenario = report.at("scenario").get<std::string>();
    input.header.scenario_file = report.at("scenario_file").get<std::string>();
    input.header.scenario_hash = report.at("scenario_hash").get<std::string>();
    input.header.mqlab_version = report.at("mqlab_version").get<std::string>();
    for (const nlohmann::json& range : report.at("seed_ranges")) {
      input.header.seed_ranges.push_back(SeedRange{range.at("first").get<uint64_t>(), range.at("last").get<uint64_t>()});
    }
    if (!report.at("shard").is_null()) {
      input.header.shard = Shard{report.at("shard").at("index").get<uint64_t>(),
                                 report.at("shard").at("count").get<uint64_t>()};
    }
    input.runs = &report.at("runs");
    for (const nlohmann::json& run : *input.runs) {
      (void)run.at("seed").get<uint64_t>();
      (void)run.at("verdict").get<std::string>();
    }
    input.wall_seconds = report.at("wall_seconds").get<double>();
    return input;
  } catch (const nlohmann::json::exception& error) {
    return Status::InvalidArgument(file + ": not a well-formed mqsim sweep report: " + error.what());
  }
}

std::string what_it_sweeps(const Input& input) {
  return "'" + input.header.scenario + "' (" + input.header.scenario_file + ", scenario hash " +
         input.header.scenario_hash + ", mqlab " + input.header.mqlab_version + ")";
}

Status check_same_question(const Input& first, const Input& other) {
  if (other.header.scenario_hash != first.header.scenario_hash) {
    return Status::InvalidArgument("refusing to merge reports of different scenario files: " + *other.file +
                                   " sweeps " + what_it_sweeps(other) + " but " + *first.file + " sweeps " +
                                   what_it_sweeps(first) + "; merge only shards of one scenario file");
  }
  if (other.header.mqlab_version != first.header.mqlab_version) {
    return Status::InvalidArgument("refusing to merge reports of different mqlab versions: " + *other.file +
                                   " sweeps " + what_it_sweeps(other) + " but " + *first.file + " sweeps " +
                                   what_it_sweeps(first));
  }
  return Status::Ok();
}

// Sorted, with overlapping and adjacent ranges joined.
std::vector<SeedRange> union_of(std::vector<SeedRange> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<SeedRange> joined;
  for (const SeedRange& range : ranges) {
    if (!joined.empty() && (joined.back().last == UINT64_MAX || range.first <= joined.back().last + 1)) {
      joined.back().last = std::max(joined.back().last, range.last);
    } else {
      joined.push_back(range);
    }
  }
  return joined;
}

Status check_same_result(uint64_t seed, const nlohmann::json& a, const std::string& a_file, const nlohmann::json& b,
                         const std::string& b_file) {
  for (const char* key : {"verdict", "trace_digest", "history_digest"}) {
    if (a.at(key) == b.at(key)) continue;
    return Status::InvalidArgument("seed " + std::to_string(seed) + " has " + key + " " + a.at(key).dump() + " in " +
                                   a_file + " but " + b.at(key).dump() + " in " + b_file +
                                   ": one scenario and seed ran two ways (nondeterminism); replay both and diff the "
                                   "traces");
  }
  return Status::Ok();
}

}  // namespace

Result<nlohmann::json> merge_sweep_reports(const std::vector<std::pair<std::string, nlohmann::json>>& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("nothing to merge: give one or more sweep reports");
  std::vector<Input> read;
  for (const auto& [file, report] : inputs) {
    MQ_ASSIGN_OR_RETURN(Input input, read_input(file, report));
    if (!read.empty()) MQ_RETURN_IF_ERROR(check_same_question(read.front(), input));
    read.push_back(std::move(input));
  }
  SweepHeader header = read.front().header;
  std::vector<SeedRange> ranges;
  double wall_seconds = 0;
  std::map<uint64_t, std::pair<const nlohmann::json*, const std::string*>> runs;  // seed -> run, its file
  for (const Input& input : read) {
    ranges.insert(ranges.end(), input.header.seed_ranges.begin(), input.header.seed_ranges.end());
    wall_seconds += input.wall_seconds;
    for (const nlohmann::json& run : *input.runs) {
      const uint64_t seed = run.at("seed").get<uint64_t>();
      const auto [it, added] = runs.emplace(seed, std::make_pair(&run, input.file));
      if (!added) MQ_RETURN_IF_ERROR(check_same_result(seed, *it->second.first, *it->second.second, run, *input.file));
    }
  }
  // The merge is about the whole of its ranges: seeds no shard ran are missing.
  header.shard.reset();
  header.seed_ranges = union_of(std::move(ranges));
  std::vector<nlohmann::json> merged;
  for (const auto& [seed, run] : runs) merged.push_back(*run.first);
  return make_sweep_report(header, std::move(merged), wall_seconds);
}

}  // namespace mqlab::sim
