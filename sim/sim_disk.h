// SimDisk: one simulated disk, the file system on it and the machine's page
// cache above it. It is the fault model of storage in mqsim.
//
// What it models (sim/inode.h and sim/directory_tree.h hold the two halves of
// the state; sim/disk_queue.h the device's request queue):
//   - pwrite lands in the page cache at once and reads see it. Files are
//     sparse; allocate() reserves blocks and extends the size with zeros.
//   - sync(done) snapshots the file's dirty pages and size at the call and
//     queues a flush on the device: sync_base_latency + bytes / bandwidth +
//     a seek per discontiguous run (DiskProfile), times the slowdown, after
//     whatever the device is already doing. When it completes, exactly that
//     snapshot is durable (later writes are not, even to the same page) and
//     done(ok) is posted to the process that opened the file.
//   - create, rename and remove change only the live directory tree; an entry
//     is durable once sync_dir of its parent completes (or at the profile's
//     optional journal commit).
//   - the kernel flusher (a machine-level timer, armed only while something
//     is dirty): every dirty_writeback_interval it writes back inodes dirty
//     for longer than dirty_expire, and at once when dirty data exceeds
//     dirty_background_bytes, oldest first, through the same device queue.
//   - kill -9 of a process: nothing happens here; its page cache survives. A
//     completion for a killed process is dropped by the Scheduler.
//   - power_loss(): queued flushes vanish unanswered; every dirty sector is
//     lost except that each reaches the medium with torn_sector_probability
//     (sector_size granularity, drawn from the Random given); the directory
//     tree reverts to its durable view. Old handles fail afterwards.
//   - fail(): contents gone, queued syncs answer IoError, every call fails
//     with IoError until replace() puts in a new, empty disk.
//   - stall(d), set_slowdown(f): flushes finish late. Capacity: a write or
//     allocate that needs blocks beyond capacity fails with NoSpace and
//     changes nothing. Bit-rot: with bit_rot_probability a read returns one
//     flipped bit (the medium stays intact).
// Every random choice comes from a seeded env::Random; one seed, one result.
//
// Invariants: used_bytes() == 4 KiB x the blocks of every live inode;
// dirty_bytes() == 4 KiB x their dirty pages; an inode is in dirty_inodes_
// iff it is dirty; while failed() nothing is stored.
//
// Lifetime: the Scheduler outlives the disk, and the disk outlives every use
// of the handles it gave out (destroying a handle later is fine).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/env/random.h"
#include "sim/directory_tree.h"
#include "sim/disk_profile.h"
#include "sim/disk_queue.h"
#include "sim/inode.h"
#include "sim/scheduler.h"

namespace mqlab::sim {

struct SimDiskOptions {
  std::string name = "disk";
  uint64_t capacity_bytes = 256ull << 30;
  // Chance that one dirty sector reaches the medium at a power cut anyway.
  double torn_sector_probability = 0.5;
  // Chance that one pread returns one flipped bit.
  double bit_rot_probability = 0.0;
};

struct DiskCounters {
  uint64_t bytes_written = 0;  // accepted by pwrite
  uint64_t bytes_flushed = 0;  // reached the medium through sync or writeback (whole pages)
  uint64_t syncs_requested = 0;
  uint64_t syncs_completed = 0;
  uint64_t dir_syncs_completed = 0;
  uint64_t writebacks = 0;  // flusher requests completed
  uint64_t journal_commits = 0;
  uint64_t no_space_errors = 0;
  uint64_t bit_flips = 0;
  uint64_t power_losses = 0;
  uint64_t failures = 0;
  uint64_t bytes_lost_last_power_loss = 0;    // dirty sectors that did not reach the medium
  uint64_t torn_sectors_last_power_loss = 0;  // dirty sectors that did
};

class SimDisk {
 public:
  // owner: who the disk's own events belong to (the machine, or the world).
  SimDisk(Scheduler& scheduler, DiskProfile profile, SimDiskOptions options, env::Random random,
          OwnerId owner = kWorldOwner);
  ~SimDisk();
  SimDisk(const SimDisk&) = delete;
  SimDisk& operator=(const SimDisk&) = delete;

  // --- the file system. Paths are disk-relative and normalised ("/",
  // "/a/b"; see is_normal_path). `caller` is the process whose executor gets
  // the completions; `shown_path` is how that process named the file.
  Result<std::shared_ptr<env::File>> open(const std::string& path, env::OpenOptions options, OwnerId caller,
                                          const std::string& shown_path);
  Status remove(const std::string& path);
  Status rename(const std::string& from, const std::string& to);
  Result<std::vector<std::string>> list(const std::string& dir) const;
  Status mkdirs(const std::string& dir);
  bool exists(const std::string& path) const;
  bool is_directory(const std::string& path) const;
  void sync_dir(const std::string& dir, OwnerId caller, env::SyncCallback done);
  Result<env::SpaceInfo> space();

  // --- faults
  void power_loss(env::Random& random);
  void fail();
  void replace();
  // An operator's copy of source's store onto this new disk, then a sync
  // (rsync of a live slave's store directory to rebuild its master): every
  // directory and file source's live view shows, with the bytes its page
  // cache holds, made durable here. Sparse: only written pages are copied.
  // NoSpace (and this disk emptied again) when they do not fit.
  // Requires: this disk healthy and empty (just replaced); source healthy.
  Status restore_from(const SimDisk& source);
  void stall(Nanos duration);
  // Multiplies the service time of flushes issued from now on. Requires: > 0.
  void set_slowdown(double factor);
  void set_capacity_bytes(uint64_t capacity_bytes) { options_.capacity_bytes = capacity_bytes; }
  void set_torn_sector_probability(double probability);
  void set_bit_rot_probability(double probability);

  // --- observation
  const std::string& name() const { return options_.name; }
  const DiskProfile& profile() const { return profile_; }
  bool failed() const { return failed_; }
  uint64_t capacity_bytes() const { return options_.capacity_bytes; }
  uint64_t used_bytes() const { return used_bytes_; }
  uint64_t dirty_bytes() const { return dirty_pages_ * kPageSizeBytes; }
  size_t requests_in_flight() const { return queue_.in_flight(); }
  const DiskCounters& counters() const { return counters_; }

 private:
  class SimFile;  // env::File over one inode; in sim_disk.cc
  struct Usage {
    uint64_t blocks = 0;
    size_t dirty_pages = 0;
  };
  using Batch = std::vector<std::pair<std::shared_ptr<Inode>, InodeSnapshot>>;

  // SimFile's operations.
  Status check_handle(const SimFile& file) const;
  Status file_write(SimFile& file, uint64_t offset, std::span<const uint8_t> data);
  Result<size_t> file_read(SimFile& file, uint64_t offset, std::span<uint8_t> out);
  Status file_truncate(SimFile& file, uint64_t size);
  Status file_allocate(SimFile& file, uint64_t size);
  void file_sync(SimFile& file, env::SyncCallback done);

  // Accounting around a change to one inode.
  static Usage usage_of(const Inode& inode) { return {inode.block_count(), inode.dirty_page_count()}; }
  void track(const Inode& inode, Usage before);
  Status reserve_blocks(uint64_t blocks, const std::string& path, const char* operation, uint64_t offset);
  void apply_snapshot(Inode& inode, const InodeSnapshot& snapshot);
  void sweep_inodes();
  void recount_usage();
  void forget_contents();
  void check_invariants() const;

  // The device and the kernel around it.
  uint64_t count_seeks(uint64_t inode_id, const InodeSnapshot& snapshot);
  Nanos scaled(Nanos service_ns) const;
  void deliver(OwnerId caller, env::SyncCallback done, Status status);
  Status failed_status() const { return Status::IoError("disk " + options_.name + " failed"); }
  void arm_writeback();
  void writeback_tick();
  void start_writeback();
  void arm_journal();
  void journal_tick();
  void cancel_timers();

  Scheduler& scheduler_;
  const DiskProfile profile_;
  SimDiskOptions options_;
  env::Random random_;  // bit-rot draws
  const OwnerId owner_;
  DiskQueue queue_;
  DirectoryTree tree_;
  std::map<uint64_t, std::shared_ptr<Inode>> inodes_;  // every inode anything refers to
  std::set<uint64_t> dirty_inodes_;
  uint64_t next_inode_id_ = 1;
  uint64_t write_version_ = 0;
  uint64_t used_bytes_ = 0;
  uint64_t dirty_pages_ = 0;
  // Bumped by power loss, failure and replacement: handles from before fail.
  uint64_t generation_ = 0;
  bool failed_ = false;
  double slowdown_ = 1.0;
  // Where the last flush left the head: a flush starting elsewhere seeks.
  uint64_t head_inode_ = 0;
  uint64_t head_offset_ = 0;
  EventId writeback_timer_ = kNoEvent;
  Nanos writeback_due_ = 0;
  bool writeback_in_flight_ = false;  // one flusher, as one per device in Linux
  EventId journal_timer_ = kNoEvent;
  DiskCounters counters_;
};

}  // namespace mqlab::sim
