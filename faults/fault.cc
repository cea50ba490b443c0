#include "faults/fault.h"

#include <array>
#include <cstdio>
#include <utility>

namespace mqlab::faults {
namespace {
constexpr std::array<std::pair<FaultKind, std::string_view>, 12> kNames = {{
    {FaultKind::kKillProcess, "kill_process"},
    {FaultKind::kPauseProcess, "pause_process"},
    {FaultKind::kCrashMachine, "crash_machine"},
    {FaultKind::kPowerLossAll, "power_loss_all"},
    {FaultKind::kDestroyMachine, "destroy_machine"},
    {FaultKind::kFailDisk, "fail_disk"},
    {FaultKind::kSlowDisk, "slow_disk"},
    {FaultKind::kStallDisk, "stall_disk"},
    {FaultKind::kPartition, "partition"},
    {FaultKind::kIsolateMachine, "isolate_machine"},
    {FaultKind::kClockSkew, "clock_skew"},
    {FaultKind::kPromoteSlave, "promote_slave"},
}};

std::string seconds_text(Nanos ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3fs", static_cast<double>(ns) / kNanosPerSecond);
  return text;
}

std::string join(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ",") + name;
  return "{" + text + "}";
}
}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

Result<FaultKind> parse_fault_kind(std::string_view name) {
  for (const auto& [kind, known] : kNames) {
    if (known == name) return kind;
  }
  std::string all;
  for (const auto& [kind, known] : kNames) all += (all.empty() ? "" : ", ") + std::string(known);
  return Status::InvalidArgument("unknown fault kind '" + std::string(name) + "'; expected one of: " + all);
}

bool takes_machine_down(FaultKind kind) {
  switch (kind) {
    case FaultKind::kKillProcess:
    case FaultKind::kPauseProcess:
    case FaultKind::kCrashMachine:
    case FaultKind::kDestroyMachine:
    case FaultKind::kIsolateMachine:
    case FaultKind::kPowerLossAll:
      return true;
    default:
      return false;
  }
}

std::string FaultEvent::describe() const {
  std::string text = seconds_text(at) + " " + std::string(fault_kind_name(kind));
  switch (kind) {
    case FaultKind::kPartition:
      text += " " + join(side_a) + (one_way ? " -/-> " : " <-/-> ") + join(side_b);
      break;
    case FaultKind::kPowerLossAll:
      break;
    case FaultKind::kFailDisk:
      text += " " + target + " disk " + std::to_string(disk_index);
      break;
    case FaultKind::kSlowDisk:
      text += " " + target + " x" + std::to_string(factor);
      break;
    case FaultKind::kClockSkew:
      text += " " + target + " " + std::to_string(skew_ms) + "ms";
      break;
    default:
      text += " " + target;
  }
  if (duration > 0) text += " for " + seconds_text(duration);
  return text;
}

Status validate_fault(const FaultEvent& event) {
  if (event.at < 0) return Status::InvalidArgument(event.describe() + ": time must be >= 0");
  if (event.duration < 0) return Status::InvalidArgument(event.describe() + ": duration must be >= 0");
  switch (event.kind) {
    case FaultKind::kPartition:
      if (event.side_a.empty() || event.side_b.empty()) {
        return Status::InvalidArgument(event.describe() + ": a partition needs two non-empty sides");
      }
      for (const std::string& name : event.side_a) {
        if (event.side_b.count(name)) {
          return Status::InvalidArgument(event.describe() + ": '" + name + "' is on both sides");
        }
      }
      return Status::Ok();
    case FaultKind::kPowerLossAll:
      return Status::Ok();
    case FaultKind::kSlowDisk:
      if (!(event.factor >= 1.0)) return Status::InvalidArgument(event.describe() + ": factor must be >= 1");
      break;
    case FaultKind::kFailDisk:
      if (event.disk_index < 0) return Status::InvalidArgument(event.describe() + ": disk index must be >= 0");
      break;
    case FaultKind::kPauseProcess:
    case FaultKind::kStallDisk:
      if (event.duration == 0) {
        return Status::InvalidArgument(event.describe() + ": needs a duration (it would never end)");
      }
      break;
    default:
      break;
  }
  if (event.target.empty()) return Status::InvalidArgument(event.describe() + ": needs a target");
  return Status::Ok();
}

}  // namespace mqlab::faults
