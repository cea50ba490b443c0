// SimFileSystem: one simulated process's env::FileSystem, a mount table over
// its machine's SimDisks. A path belongs to the disk mounted at its longest
// matching prefix ("/" or a directory such as "/store"); the rest of the path
// is the path inside that disk. Completions (sync, sync_dir) go to the
// process's owner id, so a killed process never hears them.
//
// Paths: '/'-separated. A relative path is taken from "/" (the simulated
// working directory); a trailing '/' is ignored; empty, "." and ".."
// components are InvalidArgument. A path under no mount is NotFound.
//
// Invariants: mounts are normalised, distinct, and sorted longest first; the
// disks outlive this view.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/env/env.h"
#include "broker/env/in_process_lock_table.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"

namespace mqlab::sim {

struct Mount {
  std::string path;  // "/", "/store", ...
  SimDisk* disk = nullptr;
};

class SimFileSystem final : public env::FileSystem {
 public:
  SimFileSystem(Scheduler& scheduler, std::vector<Mount> mounts, OwnerId owner);

  Result<std::shared_ptr<env::File>> open(const std::string& path, env::OpenOptions options) override;
  Status remove(const std::string& path) override;
  Status rename(const std::string& from, const std::string& to) override;
  Result<std::vector<std::string>> list(const std::string& dir) override;
  Status mkdirs(const std::string& dir) override;
  bool exists(const std::string& path) override;
  bool is_directory(const std::string& path) override;
  void sync_dir(const std::string& dir, env::SyncCallback done) override;
  Result<env::SpaceInfo> space(const std::string& path) override;
  // flock's model: the file holds "sim owner <id>" of the incarnation that
  // took it, and the lock is held while that incarnation is alive (a kill or
  // power loss releases it, as the kernel releases a dead process's flock) or,
  // within this incarnation, while the FileLock lives. A holder newer than
  // this incarnation cannot be checked and counts as alive. Refused:
  // Unavailable naming the path and the holder.
  Result<std::unique_ptr<env::FileLock>> lock(const std::string& path) override;

  const std::vector<Mount>& mounts() const { return mounts_; }

 private:
  struct Resolved {
    SimDisk* disk = nullptr;
    std::string inner;  // the path inside the disk, normalised
  };
  Result<Resolved> resolve(const std::string& path) const;

  Scheduler& scheduler_;
  std::vector<Mount> mounts_;
  const OwnerId owner_;
  env::InProcessLockTable locks_;  // keyed by normalised path
};

// "a//b/" -> InvalidArgument; "store/x/" -> "/store/x".
Result<std::string> normalize_path(const std::string& path);

}  // namespace mqlab::sim
