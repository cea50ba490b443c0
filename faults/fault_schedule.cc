#include "faults/fault_schedule.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace mqlab::faults {
namespace {

// Machines an event makes unavailable while it lasts.
std::set<std::string> machines_down(const FaultEvent& event, const std::vector<NemesisTarget>& targets) {
  std::set<std::string> down;
  if (!takes_machine_down(event.kind)) return down;
  if (event.kind == FaultKind::kPowerLossAll) {
    for (const NemesisTarget& target : targets) down.insert(target.machine);
    return down;
  }
  for (const NemesisTarget& target : targets) {
    if (target.machine == event.target ||
        std::find(target.processes.begin(), target.processes.end(), event.target) != target.processes.end()) {
      down.insert(target.machine);
    }
  }
  return down;
}

bool overlaps(const FaultEvent& a, Nanos a_end, const FaultEvent& b, Nanos b_end) {
  return a.at < b_end && b.at < a_end;
}

// An exponential inter-arrival time with the given mean, from our own PRNG
// (std::exponential_distribution is implementation-defined).
Nanos exponential(env::Random& random, double mean_ns) {
  const double u = 1.0 - random.unit();  // (0, 1]
  return static_cast<Nanos>(-std::log(u) * mean_ns);
}

FaultEvent draw_event(const NemesisRate& rate, Nanos at, const std::vector<NemesisTarget>& targets,
                      env::Random& random) {
  FaultEvent event;
  event.kind = rate.kind;
  event.at = at;
  event.duration = random.range(rate.min_duration, std::max(rate.min_duration, rate.max_duration));
  const NemesisTarget& target = targets[random.uniform(targets.size())];
  event.target = target.machine;
  switch (rate.kind) {
    case FaultKind::kKillProcess:
    case FaultKind::kPauseProcess:
      if (!target.processes.empty()) event.target = target.processes[random.uniform(target.processes.size())];
      break;
    case FaultKind::kFailDisk:
      event.disk_index = static_cast<int>(random.uniform(static_cast<uint64_t>(std::max(1, target.disks))));
      break;
    case FaultKind::kSlowDisk:
      event.factor = 2.0 + static_cast<double>(random.uniform(19));  // 2x .. 20x
      break;
    case FaultKind::kClockSkew:
      event.skew_ms = random.range(-5000, 5000);
      event.duration = 0;
      break;
    case FaultKind::kPartition:
      // A random split: each machine lands on one side, both sides non-empty.
      for (const NemesisTarget& t : targets) (random.chance(0.5) ? event.side_a : event.side_b).insert(t.machine);
      if (event.side_a.empty()) event.side_a.insert(*event.side_b.begin()), event.side_b.erase(event.side_b.begin());
      if (event.side_b.empty()) event.side_b.insert(*event.side_a.begin()), event.side_a.erase(event.side_a.begin());
      event.target.clear();
      break;
    default:
      break;
  }
  return event;
}

}  // namespace

void FaultSchedule::sort() { std::stable_sort(events.begin(), events.end()); }

FaultSchedule FaultSchedule::without(const std::vector<bool>& keep) const {
  MQ_ASSERT(keep.size() == events.size());
  FaultSchedule kept;
  for (size_t i = 0; i < events.size(); ++i) {
    if (keep[i]) kept.events.push_back(events[i]);
  }
  return kept;
}

std::string FaultSchedule::describe() const {
  if (events.empty()) return "(no faults)\n";
  std::string text;
  for (const FaultEvent& event : events) text += event.describe() + "\n";
  return text;
}

std::vector<FaultAction> timeline(const FaultSchedule& schedule) {
  std::vector<FaultAction> actions;
  for (size_t i = 0; i < schedule.events.size(); ++i) {
    const FaultEvent& event = schedule.events[i];
    actions.push_back(FaultAction{event.at, true, i});
    if (event.duration > 0) actions.push_back(FaultAction{event.end(), false, i});
  }
  std::stable_sort(actions.begin(), actions.end(), [](const FaultAction& a, const FaultAction& b) {
    return std::tie(a.at, a.start, a.event) < std::tie(b.at, b.start, b.event);  // ends (false) first
  });
  return actions;
}

Status validate_nemesis(const NemesisConfig& config, Nanos run_duration) {
  if (config.max_machines_down < 0) return Status::InvalidArgument("nemesis: max_machines_down must be >= 0");
  if (config.quiet_period < 0 || config.quiet_period > run_duration) {
    return Status::InvalidArgument("nemesis: quiet_period must be within the run's duration");
  }
  const Nanos window_end = config.window_end == 0 ? run_duration : config.window_end;
  if (config.window_start < 0 || window_end <= config.window_start) {
    return Status::InvalidArgument("nemesis: the window must be non-empty and start at or after 0");
  }
  for (const NemesisRate& rate : config.rates) {
    if (!(rate.per_minute >= 0)) return Status::InvalidArgument("nemesis: a rate must be >= 0 per minute");
    if (rate.min_duration < 0 || rate.max_duration < rate.min_duration) {
      return Status::InvalidArgument(std::string("nemesis: ") + std::string(fault_kind_name(rate.kind)) +
                                     ": durations must satisfy 0 <= min <= max");
    }
  }
  return Status::Ok();
}

NemesisResult generate_nemesis(const NemesisConfig& config, const std::vector<NemesisTarget>& targets,
                               Nanos run_duration, env::Random& random) {
  MQ_ASSERT(validate_nemesis(config, run_duration).ok());
  NemesisResult result;
  if (targets.empty()) return result;
  const Nanos window_end = std::min(config.window_end == 0 ? run_duration : config.window_end,
                                    run_duration - config.quiet_period);
  // Candidates from each rate's Poisson process, merged by time.
  std::vector<FaultEvent> candidates;
  for (const NemesisRate& rate : config.rates) {
    if (rate.per_minute <= 0) continue;
    const double mean_ns = 60.0 * kNanosPerSecond / rate.per_minute;
    for (Nanos at = config.window_start + exponential(random, mean_ns); at < window_end;
         at += exponential(random, mean_ns)) {
      candidates.push_back(draw_event(rate, at, targets, random));
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.at < b.at; });
  const Nanos quiet_from = run_duration - config.quiet_period;
  for (FaultEvent& candidate : candidates) {
    ++result.candidates;
    // Everything must be over before the quiet period: clip durations, and
    // permanent faults of kinds that end (kills, crashes) get an end too.
    if (candidate.duration == 0 && candidate.kind != FaultKind::kClockSkew) candidate.duration = quiet_from - candidate.at;
    candidate.duration = std::min(candidate.duration, quiet_from - candidate.at);
    if (candidate.kind != FaultKind::kClockSkew && candidate.duration <= 0) {
      ++result.dropped_by_constraints;
      continue;
    }
    const Nanos end = candidate.kind == FaultKind::kClockSkew ? candidate.at + 1 : candidate.end();
    std::set<std::string> down = machines_down(candidate, targets);
    bool ok = true;
    for (const FaultEvent& accepted : result.schedule.events) {
      const Nanos accepted_end = accepted.kind == FaultKind::kClockSkew ? accepted.at + 1 : accepted.end();
      if (!overlaps(candidate, end, accepted, accepted_end)) continue;
      if (config.never_both_disks_of_a_mirror && candidate.kind == FaultKind::kFailDisk &&
          accepted.kind == FaultKind::kFailDisk && accepted.target == candidate.target) {
        const auto it = std::find_if(targets.begin(), targets.end(),
                                     [&](const NemesisTarget& t) { return t.machine == candidate.target; });
        const bool raid10 = it != targets.end() && it->raid10;
        if (accepted.disk_index == candidate.disk_index || (raid10 && (accepted.disk_index ^ 1) == candidate.disk_index)) {
          ok = false;
          break;
        }
      }
    }
    if (ok && !down.empty()) {
      // Count machines down at the candidate's start and at every accepted
      // start inside it: the maximum of a step function is at a step.
      std::vector<Nanos> instants = {candidate.at};
      for (const FaultEvent& accepted : result.schedule.events) {
        if (accepted.at > candidate.at && accepted.at < end) instants.push_back(accepted.at);
      }
      for (Nanos instant : instants) {
        std::set<std::string> all = down;
        for (const FaultEvent& accepted : result.schedule.events) {
          if (accepted.at <= instant && instant < accepted.end()) {
            const std::set<std::string> more = machines_down(accepted, targets);
            all.insert(more.begin(), more.end());
          }
        }
        if (static_cast<int>(all.size()) > config.max_machines_down) ok = false;
      }
    }
    if (!ok) {
      ++result.dropped_by_constraints;
      continue;
    }
    result.schedule.events.push_back(candidate);
  }
  result.schedule.sort();
  return result;
}

}  // namespace mqlab::faults
