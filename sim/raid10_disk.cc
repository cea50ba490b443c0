#include "sim/raid10_disk.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

DiskProfile striped(const DiskProfile& member) {
  DiskProfile profile = member;
  profile.name = "raid10(" + member.name + ")";
  // Saturating: instant() members have "infinite" bandwidth already.
  const auto twice = [](uint64_t bandwidth) { return bandwidth > UINT64_MAX / 2 ? UINT64_MAX : bandwidth * 2; };
  profile.write_bandwidth_bytes_per_sec = twice(member.write_bandwidth_bytes_per_sec);
  profile.read_bandwidth_bytes_per_sec = twice(member.read_bandwidth_bytes_per_sec);
  return profile;
}

void check_member(int member) { MQ_ASSERT(member >= 0 && member < Raid10Disk::kMemberCount); }

}  // namespace

Raid10Disk::Raid10Disk(Scheduler& scheduler, const DiskProfile& member_profile, SimDiskOptions options,
                       env::Random random, OwnerId owner)
    : scheduler_(scheduler),
      member_profile_(member_profile),
      owner_(owner),
      volume_(scheduler, striped(member_profile), std::move(options), random, owner) {
  members_.fill(MemberState::kHealthy);
  rebuilds_.fill(kNoEvent);
  check_invariants();
}

Raid10Disk::~Raid10Disk() {
  for (EventId rebuild : rebuilds_) {
    if (rebuild != kNoEvent) scheduler_.cancel(rebuild);
  }
}

void Raid10Disk::fail_member(int member) {
  check_member(member);
  if (members_[member] == MemberState::kFailed) return;
  if (rebuilds_[member] != kNoEvent) scheduler_.cancel(rebuilds_[member]);
  rebuilds_[member] = kNoEvent;
  members_[member] = MemberState::kFailed;
  // The pair had two copies only if the partner was healthy; a rebuilding
  // partner holds a partial copy, which is no copy.
  if (members_[partner_of(member)] != MemberState::kHealthy) fail_array();
  check_invariants();
}

void Raid10Disk::replace_member(int member) {
  check_member(member);
  MQ_ASSERT(members_[member] == MemberState::kFailed);
  if (array_failed()) {
    // Nothing to rebuild from: the new disk is blank, and once every slot
    // holds a working disk the array is created afresh, empty.
    members_[member] = MemberState::kHealthy;
    const bool all_present = std::none_of(members_.begin(), members_.end(),
                                          [](MemberState state) { return state == MemberState::kFailed; });
    if (all_present) volume_.replace();
    check_invariants();
    return;
  }
  MQ_ASSERT(members_[partner_of(member)] == MemberState::kHealthy);  // else the array would have failed
  // The pair holds half the stripes: copy that share from the partner.
  const uint64_t share_bytes = volume_.used_bytes() / 2;
  const uint64_t bandwidth =
      std::min(member_profile_.read_bandwidth_bytes_per_sec, member_profile_.write_bandwidth_bytes_per_sec);
  MQ_ASSERT(bandwidth > 0);
  const Nanos duration =
      static_cast<Nanos>(static_cast<unsigned __int128>(share_bytes) * kNanosPerSecond / bandwidth);
  members_[member] = MemberState::kRebuilding;
  rebuilds_[member] = scheduler_.schedule_after(duration, [this, member] { finish_rebuild(member); }, owner_);
  check_invariants();
}

Raid10Disk::MemberState Raid10Disk::member_state(int member) const {
  check_member(member);
  return members_[member];
}

void Raid10Disk::fail_array() {
  volume_.fail();
  // A rebuild in the other pair copies stripes of a file system that no
  // longer exists: the new disk is simply present, and blank.
  for (int member = 0; member < kMemberCount; ++member) {
    if (members_[member] != MemberState::kRebuilding) continue;
    scheduler_.cancel(rebuilds_[member]);
    rebuilds_[member] = kNoEvent;
    members_[member] = MemberState::kHealthy;
  }
  MQ_ASSERT(array_failed());
}

void Raid10Disk::finish_rebuild(int member) {
  MQ_ASSERT(members_[member] == MemberState::kRebuilding);
  MQ_ASSERT(!array_failed());  // a failure of the partner cancels the rebuild
  rebuilds_[member] = kNoEvent;
  members_[member] = MemberState::kHealthy;
  check_invariants();
}

void Raid10Disk::check_invariants() const {
  for (int member = 0; member < kMemberCount; ++member) {
    MQ_ASSERT((rebuilds_[member] != kNoEvent) == (members_[member] == MemberState::kRebuilding));
    if (members_[member] == MemberState::kRebuilding) MQ_ASSERT(!array_failed());
  }
  for (int pair = 0; pair < kMemberCount; pair += 2) {
    const bool whole = members_[pair] == MemberState::kHealthy || members_[pair + 1] == MemberState::kHealthy;
    if (!whole) MQ_ASSERT(array_failed());
  }
}

}  // namespace mqlab::sim
