// AllocateMappedFileService: gets a log's next segment file ready before the
// put path needs it (RocketMQ's AllocateMappedFileService; with warm, its
// warmMapedFileEnable). Creating a segment costs a file creation and a
// fallocate, and on a thin-provisioned disk every never-written block writes
// several times slower than a rewritten one: paid on the put path, a segment
// roll stalls every put behind it. Here the file is created in its own task
// and allocated (and, with warm, written with zeros and synced) through
// Env::prepare_file, off the broker core.
//
// A segment is prepared under a temporary name, "<20-digit offset>.allocating",
// and renamed to its segment name only when the log takes it: a crash leaves
// at most a temporary file (MappedFileQueue::load removes it), never a
// segment recovery would have to explain.
//
// Recycling (recycleExpiredCommitLogEnable): a request may name a recycled
// file, an expired segment retention renamed to "<20-digit offset>.recycled"
// instead of removing it (MappedFileQueue::delete_first_file). Its blocks
// are written already, so it is renamed to the temporary name and is ready
// at once: no allocation, no zeros (RocksDB's recycle_log_file_num,
// PostgreSQL's recycled WAL segments). It holds the expired segment's
// records; recovery tells them from the new ones by PHYSICALOFFSET, and the
// new ones are followed by an end marker (MappedFile::set_end_marker).
//
// Invariants: at most one segment is being prepared or waiting to be taken
// per path; a preparation the log no longer wants (another segment was
// requested, or the log was destroyed) is abandoned, the Env's work on it
// stopped (Env::stop_preparing_file), and its temporary file removed once
// the Env is done with it. A roll that finds its segment still being
// pre-touched stops the preparation and takes the file as it is, when the
// Env says it is allocated; otherwise a stopped preparation is never taken.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "broker/common/lifetime.h"
#include "broker/env/env.h"

namespace mqlab::store {

class AllocateMappedFileService {
 public:
  static constexpr std::string_view kTempSuffix = ".allocating";
  // An expired segment kept for reuse: 20 digits (its old offset) + this.
  static constexpr std::string_view kRecycledSuffix = ".recycled";
  // Whether name is a temporary file of this service or a recycled segment
  // waiting for reuse: 20 digits + kTempSuffix or kRecycledSuffix. Neither
  // is part of the log; a load removes them.
  static bool is_temp_name(std::string_view name);

  AllocateMappedFileService(env::Env& env, bool warm);

  AllocateMappedFileService(const AllocateMappedFileService&) = delete;
  AllocateMappedFileService& operator=(const AllocateMappedFileService&) = delete;

  // Starts preparing the segment file at path (file_size bytes), unless it
  // is already being prepared or ready. Abandons any other segment. With
  // recycled_from (a recycled segment of file_size bytes, whose name is
  // durable), that file becomes the segment, ready without any writing; it
  // is this service's from now on (removed if never taken). When it cannot
  // be used, the segment is prepared as without it.
  void request(const std::string& path, int64_t file_size, const std::string& recycled_from = "");
  // The segment file at path, renamed into place and reopened under its
  // name, when its preparation completed; nullptr when it did not (still
  // running, failed, never requested): the caller then creates the file
  // itself, and a preparation still running is abandoned.
  std::shared_ptr<env::File> take(const std::string& path);
  // Abandons every preparation (the log is being destroyed).
  void abandon_all();

  bool warm() const { return warm_; }
  // Whether a segment is prepared and waiting to be taken.
  bool has_ready() const;
  // Whether the segment at path is still being prepared (requested, not yet
  // ready, failed or stopped).
  bool preparing(const std::string& path) const;
  // Segments taken ready, and segments the log had to create itself (each
  // a stall on the put path; the first segment of an empty log is one).
  uint64_t taken() const { return taken_; }
  uint64_t missed() const { return missed_; }
  // Of taken(): segments taken while still being pre-touched (allocated,
  // partly written with zeros), so the preparations are behind the puts.
  uint64_t taken_half_prepared() const { return taken_half_prepared_; }
  // Segments made ready from a recycled file (taken or not).
  uint64_t recycled() const { return recycled_; }

 private:
  enum class State { kOpening, kPreparing, kReady, kAbandoned };
  struct Entry {
    std::string temp_path;
    int64_t file_size = 0;
    std::string recycled_from;  // a recycled file to use instead of preparing one
    State state = State::kOpening;
    std::shared_ptr<env::File> file;  // set once opened
    // The Env was asked to stop preparing it (Env::stop_preparing_file): its
    // contents are unknown, so it is never taken ready.
    bool stopped = false;
    // Which request this is: a completion for an earlier one is ignored.
    uint64_t generation = 0;
  };
  // Marks a preparation unwanted, stopping the Env's work on it if it runs
  // (a ready one is then discarded by the caller).
  void abandon(Entry& entry);
  // Renames the entry's file to its segment name, reopens it and forgets the
  // entry; nullptr (counted missed) when the file system refuses.
  std::shared_ptr<env::File> adopt(std::map<std::string, Entry>::iterator it);
  void start(const std::string& path);
  // start()'s part for a recycled file: renamed to the temporary name and
  // ready. False (the file removed) when that fails: prepare as usual.
  bool adopt_recycled(Entry& entry);
  void on_prepared(const std::string& path, uint64_t generation, Status status);
  void discard(const std::string& path);
  // Removes a file of this service's, logging a failure (nothing else to do).
  void remove_file(const std::string& path);

  env::Env& env_;
  const bool warm_;
  std::map<std::string, Entry> entries_;  // by segment path
  uint64_t taken_ = 0;
  uint64_t missed_ = 0;
  uint64_t taken_half_prepared_ = 0;
  uint64_t recycled_ = 0;
  uint64_t generations_ = 0;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
