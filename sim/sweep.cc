#include "sim/sweep.h"

#include <charconv>
#include <cstdio>
#include <iostream>

#include "sim/forked_runs.h"
#include "sim/seed_run.h"
#include "sim/sweep_report.h"

namespace mqlab::sim {
namespace {

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "1:05" or "2:03:05".
std::string clock_text(double seconds) {
  const auto total = static_cast<long long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lld:%02lld", total / 60, total % 60);
  }
  return text;
}

// The line a person watching a sweep sees redrawn as each run finishes.
class ProgressLine {
 public:
  ProgressLine(size_t total, bool enabled) : total_(total), enabled_(enabled), started_(wall_clock_seconds()) {}

  void finished(const TaskOutcome& outcome) {
    ++done_;
    if (outcome.crashed || !outcome.run.value("passed", false)) ++failures_;
    if (!enabled_) return;
    const double elapsed = wall_clock_seconds() - started_;
    const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
    std::printf("\r\033[K%zu/%zu runs done, %zu failed, %s elapsed, ETA %s", done_, total_, failures_,
                clock_text(elapsed).c_str(), clock_text(eta).c_str());
    std::fflush(stdout);
  }

  void erase() {
    if (!enabled_ || done_ == 0) return;
    std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  size_t total_;
  bool enabled_;
  double started_;
  size_t done_ = 0;
  size_t failures_ = 0;
};

}  // namespace

Result<SeedRange> parse_seed_range(std::string_view text) {
  const auto bad = [&] {
    return Status::InvalidArgument("--seeds: '" + std::string(text) + "' is not a seed range; expected A-B or N");
  };
  size_t split = text.find("..");
  size_t separator_size = 2;
  if (split == std::string_view::npos) {
    split = text.find('-');
    separator_size = 1;
  }
  const std::optional<uint64_t> first = parse_u64(text.substr(0, split));
  const std::optional<uint64_t> last =
      split == std::string_view::npos ? first : parse_u64(text.substr(split + separator_size));
  if (!first || !last) return bad();
  if (*first > *last) return Status::InvalidArgument("--seeds: " + std::string(text) + " is empty (A > B)");
  return SeedRange{*first, *last};
}

Result<Shard> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  const std::optional<uint64_t> index = parse_u64(text.substr(0, slash));
  const std::optional<uint64_t> count =
      slash == std::string_view::npos ? std::nullopt : parse_u64(text.substr(slash + 1));
  if (!index || !count || *count == 0 || *index >= *count) {
    return Status::InvalidArgument("--shard: '" + std::string(text) + "' is not a shard; expected i/n with 0 <= i < n");
  }
  return Shard{*index, *count};
}

std::vector<uint64_t> shard_seeds(const SeedRange& range, const Shard& shard) {
  MQ_ASSERT(shard.index < shard.count);
  MQ_ASSERT(range.first <= range.last);
  std::vector<uint64_t> seeds;
  for (uint64_t offset = shard.index; offset <= range.last - range.first; offset += shard.count) {
    seeds.push_back(range.first + offset);
    if (range.last - range.first - offset < shard.count) break;  // the next step would pass UINT64_MAX
  }
  return seeds;
}

Result<nlohmann::json> run_sweep(const Scenario& scenario, const std::string& scenario_path,
                                 const SweepOptions& options) {
  MQ_ASSERT(options.jobs >= 1);
  const double wall_start = wall_clock_seconds();
  const std::vector<uint64_t> seeds = shard_seeds(options.seeds, options.shard);
  std::vector<RunTask> tasks;
  for (uint64_t seed : seeds) tasks.push_back(RunTask{seed, std::nullopt});
  ProgressLine progress(tasks.size(), options.progress);
  Result<std::vector<TaskOutcome>> outcomes =
      run_forked(scenario, scenario_path, tasks, options.jobs,
                 [&progress](size_t, const TaskOutcome& outcome) { progress.finished(outcome); });
  progress.erase();
  if (!outcomes.ok()) return outcomes.status();
  MQ_ASSERT(outcomes->size() == seeds.size());

  std::vector<nlohmann::json> runs;
  for (size_t i = 0; i < seeds.size(); ++i) runs.push_back(seed_record(seeds[i], (*outcomes)[i]));
  SweepHeader header;
  header.scenario = scenario.name;
  header.scenario_file = scenario_path;
  header.scenario_hash = scenario.hash;
  header.seed_ranges = {options.seeds};
  if (options.shard.count > 1) header.shard = options.shard;
  return make_sweep_report(header, std::move(runs), wall_clock_seconds() - wall_start);
}

}  // namespace mqlab::sim
