// The fault vocabulary: what can go wrong, where and when. The same events
// drive the simulator (sim/sim_fault_injector) and, later, real processes
// (network namespaces, tc netem, kill, SIGSTOP), so nothing here knows how a
// fault is carried out.
//
// A FaultEvent starts at `at`; with a duration it ends at `at + duration`
// (the process restarts, the partition heals, the machine powers back on, the
// disk speeds up). A duration of 0 means the fault is not undone by the
// schedule: a killed process stays down until the end-of-run healing.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::faults {

enum class FaultKind {
  kKillProcess,      // kill -9 of one process; restarts after duration
  kPauseProcess,     // SIGSTOP for duration, then SIGCONT
  kCrashMachine,     // the machine loses power: every process dies, page cache lost; powers on after duration
  kPowerLossAll,     // the whole data centre loses power (target ignored)
  kDestroyMachine,   // the machine is lost for good, disks included
  kFailDisk,         // one disk of a machine fails (disk index); replaced after duration
  kSlowDisk,         // a machine's disks get `factor` times slower for duration
  kStallDisk,        // a machine's disks stop completing requests for duration
  kPartition,        // side_a cannot reach side_b (and back, unless one_way) for duration
  kIsolateMachine,   // target cannot reach anyone, nor anyone it
  kClockSkew,        // target's wall clock jumps by skew_ms
  kPromoteSlave,     // operator failover: the slave of broker group `target` becomes master
};

std::string_view fault_kind_name(FaultKind kind);
// "kill_process" <-> kKillProcess; InvalidArgument listing the known names.
Result<FaultKind> parse_fault_kind(std::string_view name);

// Whether the fault makes its target machine (or process) unavailable while
// it lasts: what a nemesis counts against "at most K machines down".
bool takes_machine_down(FaultKind kind);

struct FaultEvent {
  FaultKind kind = FaultKind::kKillProcess;
  Nanos at = 0;
  Nanos duration = 0;           // 0: not undone by the schedule
  std::string target;           // a machine or process name, by kind
  int disk_index = 0;           // kFailDisk
  double factor = 1.0;          // kSlowDisk
  int64_t skew_ms = 0;          // kClockSkew
  std::set<std::string> side_a; // kPartition
  std::set<std::string> side_b;
  bool one_way = false;         // kPartition: only side_a -> side_b is cut

  Nanos end() const { return at + duration; }
  // "12.500s kill_process broker-a-0 for 10.000s"
  std::string describe() const;
  auto operator<=>(const FaultEvent&) const = default;
};

// Requires nothing; returns InvalidArgument naming what is missing or wrong
// (a partition without sides, a negative time, a slow factor below 1).
Status validate_fault(const FaultEvent& event);

}  // namespace mqlab::faults
