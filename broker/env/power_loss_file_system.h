// PowerLossFileSystem: a fault-injecting env::FileSystem over another one
// (PosixFileSystem in mqbroker), so a real broker process can be power-cut
// in a test: cut_power() puts every file back to what the last completed
// sync made durable, then the caller exits without flushing anything, and
// the next process over the same directory sees what a machine coming back
// from a power loss would see (leveldb's FaultInjectionTestEnv, FoundationDB's
// AsyncFileNonDurable, for real files).
//
// What it models:
//   - File bytes. Every pwrite, truncate and allocate first records an undo
//     entry (the bytes it overwrites, the size before) in the file's undo
//     log. When a File::sync issued after it completes ok, the entries
//     before that sync are dropped: those bytes are durable. cut_power()
//     applies the remaining entries newest first.
//   - File creation. A file created through this layer is not durable until
//     a sync_dir of its parent issued after the creation completes ok;
//     cut_power() removes it otherwise (its bytes, synced or not, go with it,
//     as they do when the directory entry is lost).
// What it does not model (see README "Power loss on real processes"):
//   removals, renames and directories made by mkdirs stay done; no torn
//   sectors (an unsynced write is lost whole, a synced one kept whole); the
//   device's own volatile cache is assumed honest about fdatasync.
//
// Threading: every call, including the sync completions it wraps (they run
// on the inner file system's executor), comes from the broker's one thread;
// cut_power() must run there too (mqbroker calls it from a signal_set
// handler on the io_context).
//
// Invariants: one FileState per path, shared by every File open on it; a
// file's undo entries are in increasing sequence order; an entry is dropped
// only by a sync that began after it was recorded.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/env/env.h"

namespace mqlab::env {

struct PowerLossStats {
  int64_t files_reverted = 0;       // files whose unsynced writes were undone
  int64_t files_removed = 0;        // files created and never made durable by a directory sync
  int64_t undo_entries_applied = 0;
  int64_t bytes_restored = 0;       // old bytes written back over unsynced writes
};

class PowerLossFileSystem final : public FileSystem {
 public:
  // Requires: inner outlives this object and every File it opens.
  explicit PowerLossFileSystem(FileSystem& inner);
  ~PowerLossFileSystem() override;

  PowerLossFileSystem(const PowerLossFileSystem&) = delete;
  PowerLossFileSystem& operator=(const PowerLossFileSystem&) = delete;

  Result<std::shared_ptr<File>> open(const std::string& path, OpenOptions options) override;
  Status remove(const std::string& path) override;
  Status rename(const std::string& from, const std::string& to) override;
  Result<std::vector<std::string>> list(const std::string& dir) override { return inner_.list(dir); }
  Status mkdirs(const std::string& dir) override { return inner_.mkdirs(dir); }
  bool exists(const std::string& path) override { return inner_.exists(path); }
  bool is_directory(const std::string& path) override { return inner_.is_directory(path); }
  void sync_dir(const std::string& dir, SyncCallback done) override;
  Result<SpaceInfo> space(const std::string& path) override { return inner_.space(path); }
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override { return inner_.lock(path); }

  // Undoes everything not yet durable, file by file in path order. Errors
  // (the inner file system refusing a write) are collected, not stopped at,
  // so as much as possible is reverted. After this the layer is spent: the
  // caller exits (mqbroker: _exit) without running anything else.
  Result<PowerLossStats> cut_power();

  // Bytes of old data the undo logs hold now (memory cost, for tests).
  int64_t undo_bytes() const;

  struct FileState;  // power_loss_file_system.cc

 private:
  FileSystem& inner_;
  std::map<std::string, std::shared_ptr<FileState>> files_;  // by path; sorted, so cut_power() is ordered
  bool cut_ = false;
};

}  // namespace mqlab::env
