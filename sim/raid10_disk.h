// Raid10Disk: four member disks as two mirrored pairs, striped (RAID 1+0).
// Members 0 and 1 mirror stripe set A, members 2 and 3 stripe set B.
//
// The model, chosen as the simplest honest one: the array's content lives in
// one SimDisk, the volume (file system, page cache, durable image, device
// queue); the members carry only their health. Every file larger than a
// stripe, and the file system's own metadata, is spread over both pairs, so
// losing one whole pair loses the file system: the volume fails and all data
// is gone. A pair stays whole while one of its members is healthy.
//   - fail_member(i): member i is gone. If its partner is not healthy (failed,
//     or still rebuilding and so without a full copy), the array fails.
//   - replace_member(i): a new disk rebuilds from its partner, which takes the
//     pair's share of the data (used bytes / 2) at the slower of the partner's
//     read and the member's write bandwidth. Until then it is no copy: losing
//     the partner mid-rebuild loses the array, the classic RAID10 window.
//     On a failed array a replaced member is simply blank; once no member is
//     failed the array is recreated, empty (the volume is replaced).
//   - power_loss() and the like are the volume's: call them on volume().
// Timing: striping over two pairs doubles the members' bandwidths; latency is
// one member's. A degraded pair is not slower (not modelled).
//
// Invariants: the volume is failed iff some pair has no healthy member or an
// array failure has not yet been repaired by replacing every failed member.
#pragma once

#include <array>
#include <cstdint>

#include "broker/env/random.h"
#include "sim/disk_profile.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"

namespace mqlab::sim {

class Raid10Disk {
 public:
  static constexpr int kMemberCount = 4;
  enum class MemberState : uint8_t { kHealthy, kFailed, kRebuilding };

  // member_profile: one member disk. options: the array volume's (capacity is
  // the usable capacity, half the members' raw total).
  Raid10Disk(Scheduler& scheduler, const DiskProfile& member_profile, SimDiskOptions options, env::Random random,
             OwnerId owner = kWorldOwner);
  ~Raid10Disk();
  Raid10Disk(const Raid10Disk&) = delete;
  Raid10Disk& operator=(const Raid10Disk&) = delete;

  // The file system on the array; mount this one.
  SimDisk& volume() { return volume_; }
  const SimDisk& volume() const { return volume_; }

  // Requires: 0 <= member < kMemberCount. Failing a failed member is a no-op.
  void fail_member(int member);
  // Requires: the member is failed.
  void replace_member(int member);

  MemberState member_state(int member) const;
  bool array_failed() const { return volume_.failed(); }
  static int partner_of(int member) { return member ^ 1; }

 private:
  void fail_array();
  void finish_rebuild(int member);
  void check_invariants() const;

  Scheduler& scheduler_;
  const DiskProfile member_profile_;
  const OwnerId owner_;
  SimDisk volume_;
  std::array<MemberState, kMemberCount> members_{};
  std::array<EventId, kMemberCount> rebuilds_{};  // kNoEvent unless rebuilding
};

}  // namespace mqlab::sim
