// StoreCheckpoint: {storePathRootDir}/checkpoint, the three timestamps that
// bound how far back abnormal recovery must replay the CommitLog
// (apache/rocketmq store/…/store/StoreCheckpoint.java; reference 2.3, 2.5).
//
// File layout (4.x; a 4096-byte file of which the first 24 bytes are used):
//   | field              | offset | size | encoding                |
//   | physicMsgTimestamp |      0 |    8 | big-endian long, ms     |
//   | logicsMsgTimestamp |      8 |    8 | big-endian long, ms     |
//   | indexMsgTimestamp  |     16 |    8 | big-endian long, ms     |
//   | zero               |     24 | 4072 | (5.x: masterFlushedOffset @24, confirmPhyOffset @32) |
//
// No checksum, to keep 4.x's layout. A torn or foreign checkpoint is caught
// by plausibility instead: the file must hold 24 bytes and each timestamp must
// lie in [0, kMaxPlausibleTimestampMs]; otherwise load() logs a warning and
// starts from zeros. Zero is always safe (abnormal recovery then replays from
// the first CommitLog file: slower, never lossy), which is why a doubtful
// checkpoint is dropped rather than trusted. A flush rewrites 24 bytes inside
// the first 512-byte sector, which disks write atomically, so a power loss
// mid-flush leaves the old or the new values, not a mix.
//
// Durability: flush() pwrites the bytes, File::syncs, and, the first time in
// this process, also syncs the directory before reporting ok: the file may
// be new, or may have been created by a process that never synced its entry.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::store {

class StoreCheckpoint {
 public:
  static constexpr size_t kFileSize = 4096;
  static constexpr size_t kUsedBytes = 24;
  // 2100-01-01T00:00:00Z. Far beyond any real store timestamp, far below what
  // random bytes decode to (a random long lands under it with p ~ 2^-22).
  static constexpr int64_t kMaxPlausibleTimestampMs = 4'102'444'800'000;

  StoreCheckpoint(env::Env& env, std::string path);
  StoreCheckpoint(const StoreCheckpoint&) = delete;
  StoreCheckpoint& operator=(const StoreCheckpoint&) = delete;

  // Reads the file. Missing: zeros and an info line. Shorter than 24 bytes or
  // implausible: zeros and a warning. Either way Ok; only a failed read is an
  // error (IoError naming the file).
  Status load();

  int64_t physic_msg_timestamp() const { return physic_msg_timestamp_; }
  int64_t logics_msg_timestamp() const { return logics_msg_timestamp_; }
  int64_t index_msg_timestamp() const { return index_msg_timestamp_; }
  void set_physic_msg_timestamp(int64_t ms) { physic_msg_timestamp_ = ms; }
  void set_logics_msg_timestamp(int64_t ms) { logics_msg_timestamp_ = ms; }
  void set_index_msg_timestamp(int64_t ms) { index_msg_timestamp_ = ms; }

  // min(physic, logics) - 3000 ms, floored at 0: where abnormal recovery may
  // start (the 3 s margin covers clock jitter between the flushers).
  int64_t min_timestamp() const;
  // min(min_timestamp(), index), when the index must be rebuilt too.
  int64_t min_timestamp_index() const;

  // Writes the three values as they are now and makes them durable; the file
  // is created (4096 bytes) on the first flush. done runs on the executor.
  // Requires: the directory exists.
  void flush(std::function<void(Status)> done);

  const std::string& path() const { return path_; }

 private:
  std::array<uint8_t, kUsedBytes> encode() const;
  Status write(const std::array<uint8_t, kUsedBytes>& header);
  void after_file_sync(Status status, std::function<void(Status)> done);
  void after_dir_sync(Status status);
  void fail_later(std::function<void(Status)> done, Status status);

  env::Env& env_;
  std::string path_;
  std::string dir_;
  int64_t physic_msg_timestamp_ = 0;
  int64_t logics_msg_timestamp_ = 0;
  int64_t index_msg_timestamp_ = 0;

  std::shared_ptr<env::File> file_;
  bool page_written_ = false;   // this process wrote the whole 4 KiB page
  bool entry_durable_ = false;  // a sync_dir of dir_ succeeded after the file existed
  bool dir_sync_in_flight_ = false;
  // Flushes whose bytes are durable, waiting for the directory sync.
  std::vector<std::function<void(Status)>> waiting_for_dir_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
