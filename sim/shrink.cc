#include "sim/shrink.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <set>

#include "broker/common/assert.h"
#include "sim/forked_runs.h"
#include "sim/sim_world.h"
#include "sim/sweep_report.h"

namespace mqlab::sim {
namespace {

using faults::FaultEvent;
using faults::FaultKind;
using faults::FaultSchedule;

// ------------------------------------------------------------ ddmin

// current split into `parts` contiguous chunks of nearly equal size.
std::vector<std::vector<size_t>> split_into(const std::vector<size_t>& current, size_t parts) {
  MQ_ASSERT(parts >= 1 && parts <= current.size());
  std::vector<std::vector<size_t>> chunks;
  size_t from = 0;
  for (size_t part = 0; part < parts; ++part) {
    const size_t size = (current.size() - from) / (parts - part);
    chunks.emplace_back(current.begin() + static_cast<std::ptrdiff_t>(from),
                        current.begin() + static_cast<std::ptrdiff_t>(from + size));
    from += size;
  }
  MQ_ASSERT(from == current.size());
  return chunks;
}

std::vector<size_t> without_chunk(const std::vector<size_t>& current, const std::vector<size_t>& chunk) {
  std::vector<size_t> rest;
  std::set_difference(current.begin(), current.end(), chunk.begin(), chunk.end(), std::back_inserter(rest));
  return rest;
}

// ------------------------------------------------------------ YAML

// Seconds, exactly (a scenario file reads up to nine decimals): "30s",
// "12.345678901s"; nemesis times are arbitrary nanoseconds.
std::string duration_yaml(Nanos nanos) {
  const bool negative = nanos < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string text = (negative ? "-" : "") + std::to_string(magnitude / kNanosPerSecond);
  std::string fraction = std::to_string(magnitude % kNanosPerSecond);
  if (fraction != "0") {
    fraction.insert(0, 9 - fraction.size(), '0');
    fraction.erase(fraction.find_last_not_of('0') + 1);
    text += "." + fraction;
  }
  return text + "s";
}

std::string number_yaml(double value) {
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), value);  // shortest exact form
  MQ_ASSERT(error == std::errc());
  return std::string(text, end);
}

std::string names_yaml(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return "[" + text + "]";
}

// Only the keys the kind takes (a scenario file rejects the others).
std::string fault_yaml(const FaultEvent& event) {
  std::string text = "{at: " + duration_yaml(event.at) + ", kind: " + std::string(faults::fault_kind_name(event.kind));
  switch (event.kind) {
    case FaultKind::kPartition:
      text += ", side_a: " + names_yaml(event.side_a) + ", side_b: " + names_yaml(event.side_b);
      if (event.one_way) text += ", one_way: true";
      break;
    case FaultKind::kPowerLossAll:
      break;
    case FaultKind::kFailDisk:
      text += ", target: " + event.target + ", disk_index: " + std::to_string(event.disk_index);
      break;
    case FaultKind::kSlowDisk:
      text += ", target: " + event.target + ", factor: " + number_yaml(event.factor);
      break;
    case FaultKind::kClockSkew:
      text += ", target: " + event.target + ", skew: " + std::to_string(event.skew_ms) + "ms";
      break;
    default:
      text += ", target: " + event.target;
      break;
  }
  if (event.duration > 0) text += ", duration: " + duration_yaml(event.duration);
  return text + "}";
}

// ------------------------------------------------------------ running candidates

// The ways a run failed: expectations it missed, liveness, a crash.
std::set<std::string> failure_signature(const TaskOutcome& outcome) {
  if (outcome.crashed) return {"crash"};
  std::set<std::string> failures;
  for (const nlohmann::json& expectation : outcome.run.at("expectations")) {
    if (!expectation.at("held").get<bool>()) failures.insert("expect " + expectation.at("metric").get<std::string>());
  }
  if (!outcome.run.at("converged").get<bool>()) failures.insert("liveness");
  return failures;
}

bool fails_the_same_way(const std::set<std::string>& original, const TaskOutcome& outcome) {
  const std::set<std::string> failures = failure_signature(outcome);
  return std::any_of(failures.begin(), failures.end(), [&](const std::string& f) { return original.count(f) > 0; });
}

FaultSchedule subset_of(const FaultSchedule& schedule, const std::vector<size_t>& kept) {
  std::vector<bool> keep(schedule.events.size(), false);
  for (size_t index : kept) keep.at(index) = true;
  return schedule.without(keep);
}

// Subsets of one schedule run as ddmin asks for them, `jobs` at a time, each
// run at most once.
class CandidateRuns {
 public:
  CandidateRuns(const Scenario& scenario, const std::string& scenario_path, const ShrinkOptions& options,
                const FaultSchedule& schedule, std::set<std::string> failure)
      : scenario_(scenario), scenario_path_(scenario_path), options_(options), schedule_(schedule),
        failure_(std::move(failure)) {}

  std::optional<size_t> first_failing(const std::vector<std::vector<size_t>>& candidates);
  int runs() const { return runs_; }
  const Status& status() const { return status_; }

 private:
  Status run_batch(const std::vector<std::vector<size_t>>& batch);

  const Scenario& scenario_;
  const std::string& scenario_path_;
  const ShrinkOptions& options_;
  const FaultSchedule& schedule_;
  const std::set<std::string> failure_;
  std::map<std::vector<size_t>, bool> still_fails_;
  int runs_ = 0;
  Status status_ = Status::Ok();
};

std::optional<size_t> CandidateRuns::first_failing(const std::vector<std::vector<size_t>>& candidates) {
  const size_t jobs = static_cast<size_t>(options_.jobs);
  for (size_t from = 0; from < candidates.size() && status_.ok(); from += jobs) {
    const size_t to = std::min(candidates.size(), from + jobs);
    std::vector<std::vector<size_t>> unknown;
    for (size_t i = from; i < to; ++i) {
      if (!still_fails_.count(candidates[i]) &&
          std::find(unknown.begin(), unknown.end(), candidates[i]) == unknown.end()) {
        unknown.push_back(candidates[i]);
      }
    }
    if (!unknown.empty()) status_ = run_batch(unknown);
    if (!status_.ok()) break;  // the caller reads status()
    // The first in ddmin's order, whatever finished first: jobs cannot change the result.
    for (size_t i = from; i < to; ++i) {
      if (still_fails_.at(candidates[i])) return i;
    }
  }
  return std::nullopt;
}

Status CandidateRuns::run_batch(const std::vector<std::vector<size_t>>& batch) {
  std::vector<RunTask> tasks;
  for (const std::vector<size_t>& kept : batch) tasks.push_back(RunTask{options_.seed, subset_of(schedule_, kept)});
  MQ_ASSIGN_OR_RETURN(const std::vector<TaskOutcome> outcomes,
                      run_forked(scenario_, scenario_path_, tasks, options_.jobs));
  MQ_ASSERT(outcomes.size() == batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const bool fails = fails_the_same_way(failure_, outcomes[i]);
    still_fails_[batch[i]] = fails;
    ++runs_;
    if (options_.progress) {
      *options_.progress << "  try " << batch[i].size() << " of " << schedule_.events.size() << " faults: "
                         << (fails ? "still fails" : "passes") << "\n";
    }
  }
  return Status::Ok();
}

// One run of the seed in a child, as every run here is (a crash is an outcome).
Result<TaskOutcome> run_one(const Scenario& scenario, const std::string& scenario_path, uint64_t seed) {
  const std::vector<RunTask> tasks = {RunTask{seed, std::nullopt}};
  MQ_ASSIGN_OR_RETURN(std::vector<TaskOutcome> outcomes, run_forked(scenario, scenario_path, tasks, 1));
  MQ_ASSERT(outcomes.size() == 1);
  return std::move(outcomes.front());
}

// The minimal list written into the scenario as its fixed faults, with the
// nemesis gone: what a person who pastes the printed YAML will run.
Result<bool> fails_as_fixed_list(const Scenario& scenario, const std::string& scenario_path,
                                 const ShrinkOptions& options, const FaultSchedule& minimal,
                                 const std::set<std::string>& failure) {
  Scenario fixed = scenario;
  fixed.faults.schedule = minimal;
  fixed.faults.nemesis.reset();
  fixed.faults.nemesis_machines.clear();
  MQ_ASSIGN_OR_RETURN(const TaskOutcome outcome, run_one(fixed, scenario_path, options.seed));
  return fails_the_same_way(failure, outcome);
}

}  // namespace

std::vector<size_t> minimize_failing_set(size_t n, const FirstFailing& first_failing) {
  std::vector<size_t> current(n);
  std::iota(current.begin(), current.end(), size_t{0});
  // A failure without any of the elements needs none of them.
  if (n == 0 || first_failing(std::vector<std::vector<size_t>>{std::vector<size_t>{}})) return {};
  size_t parts = 2;
  while (current.size() >= 2) {
    parts = std::min(parts, current.size());
    const std::vector<std::vector<size_t>> chunks = split_into(current, parts);
    if (const std::optional<size_t> i = first_failing(chunks)) {
      current = chunks[*i];
      parts = 2;
      continue;
    }
    if (parts > 2) {  // with two parts each complement is the other part, just tried
      std::vector<std::vector<size_t>> complements;
      for (const std::vector<size_t>& chunk : chunks) complements.push_back(without_chunk(current, chunk));
      if (const std::optional<size_t> i = first_failing(complements)) {
        current = complements[*i];
        parts = std::max<size_t>(parts - 1, 2);
        continue;
      }
    }
    if (parts == current.size()) break;  // no single element can go: 1-minimal
    parts = std::min(parts * 2, current.size());
  }
  return current;
}

std::string fault_schedule_yaml(const FaultSchedule& schedule) {
  if (schedule.events.empty()) return "faults: []\n";
  std::string text = "faults:\n";
  for (const FaultEvent& event : schedule.events) text += "  - " + fault_yaml(event) + "\n";
  return text;
}

Result<ShrinkResult> shrink_schedule(const Scenario& scenario, const std::string& scenario_path,
                                     const ShrinkOptions& options) {
  MQ_ASSERT(options.jobs >= 1);
  ShrinkResult result;
  result.original = SimWorld(scenario, options.seed).schedule();  // built, not run
  MQ_ASSIGN_OR_RETURN(const TaskOutcome first, run_one(scenario, scenario_path, options.seed));
  result.runs = 1;
  const std::set<std::string> failure = failure_signature(first);
  if (failure.empty()) return result;  // it passes: nothing to shrink
  result.failed = true;
  result.failure = seed_record(options.seed, first).at("reason").get<std::string>();
  if (options.progress) {
    *options.progress << "seed " << options.seed << " fails: " << result.failure << "; shrinking its "
                      << result.original.events.size() << " faults\n";
  }

  CandidateRuns candidates(scenario, scenario_path, options, result.original, failure);
  const std::vector<size_t> kept =
      minimize_failing_set(result.original.events.size(),
                           [&candidates](const std::vector<std::vector<size_t>>& c) { return candidates.first_failing(c); });
  MQ_RETURN_IF_ERROR(candidates.status());
  result.runs += candidates.runs();
  result.minimal = subset_of(result.original, kept);
  if (scenario.faults.nemesis) {
    MQ_ASSIGN_OR_RETURN(result.fails_as_fixed_list,
                        fails_as_fixed_list(scenario, scenario_path, options, result.minimal, failure));
    ++result.runs;
  }
  return result;
}

}  // namespace mqlab::sim
