// MappedFileQueue: the ordered list of fixed-size segment files of one log
// (the CommitLog, or one ConsumeQueue), addressed by absolute offset.
//
// Invariants: files are contiguous (each starts where the previous one's
// file_size ends); only the last file is written to; min_offset() is the
// first file's start; flushed_where() <= max_offset(). Directory entries of
// files created since the last flush are made durable by the next flush
// before it reports success, so a flushed byte survives a power loss.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/common/latency_buckets.h"
#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/store/allocate_mapped_file_service.h"
#include "broker/store/mapped_file.h"

namespace mqlab::store {

class MappedFileQueue {
 public:
  MappedFileQueue(env::Env& env, std::string dir, int64_t file_size);

  const std::string& dir() const { return dir_; }
  int64_t file_size() const { return file_size_; }

  // Opens the segment files found in dir (creating dir when missing). Names
  // that are not 20-digit offsets, offsets not aligned to file_size and files
  // after a gap are reported and left alone (never deleted, never read).
  // A file shorter than file_size (a crash during pre-allocation) is extended
  // with zeros; a longer one is an error naming it. Positions are set to the
  // full file; recovery truncates them to the verified end.
  Status load();

  const std::vector<std::shared_ptr<MappedFile>>& files() const { return files_; }
  bool empty() const { return files_.empty(); }
  std::shared_ptr<MappedFile> first_file() const { return files_.empty() ? nullptr : files_.front(); }
  std::shared_ptr<MappedFile> last_file() const { return files_.empty() ? nullptr : files_.back(); }

  // The last file when it has room, else a new file starting where the last
  // ends (or at start_offset when there are none). start_offset must be a
  // multiple of file_size. With pre-allocation, the new file is the one
  // prepared in the background when it is ready, and the file after the last
  // is requested whenever it has not been yet. The pointer is valid until
  // the list of files next changes (a create, a delete, a truncation): not
  // a shared_ptr, whose copy costs two locked atomic operations, on the
  // path of every put and every ConsumeQueue entry.
  Result<MappedFile*> last_file_or_create(int64_t start_offset);

  // Segments are from now on created ahead by an AllocateMappedFileService
  // (warm: pre-touched too). Call before the first last_file_or_create.
  void enable_preallocation(bool warm);
  // An empty queue's first segment is prepared ahead too (the put path would
  // create it, fallocated only): requests it, starting at start_offset.
  // Returns false, requesting nothing, without pre-allocation or when the
  // queue has files. first_file_preparing() says when it is done.
  bool request_first_file(int64_t start_offset);
  bool first_file_preparing() const;
  const AllocateMappedFileService* allocator() const { return allocator_.get(); }

  // The last file is from now on mapped for its appends
  // (env::File::map_for_appends: pwrites into it cost no system call on the
  // real Env; the simulator's ignores the hint), and unmapped when the next
  // file takes over, is cut by a truncation, or goes.
  void enable_mapped_appends() { map_appends_ = true; }

  // New files are sized with a hole (ftruncate) instead of allocated
  // (fallocate), as RocketMQ's FileChannel.map sizes every mapped file: the
  // ConsumeQueue's, of which a broker has one per queue (8,000 for 1,000
  // topics of 8 queues, 6 MB each at the default size), so allocating them
  // took 48 GB of disk for a few GB of entries, and the disk-usage rule
  // (diskMaxUsedSpaceRatio) then refused every put. Its files are written
  // with pwrite, so a full disk is a write's NoSpace, never a fault in a
  // mapping. Call before load() and the first create.
  void use_sparse_files();

  // Every file's syncs run apart from other files' (env::File::isolate_syncs:
  // the CommitLog's, which acknowledgements wait for, must not queue behind
  // the ConsumeQueues'). Call before load() and the first create.
  void isolate_syncs();
  // Every file's syncs run on the thread that asks for them
  // (env::File::sync_on_caller: SYNC_FLUSH's CommitLog, whose puts wait for
  // each flush). Call before load() and the first create.
  void sync_on_caller();

  // Files buffer appends in memory, up to max_pending_bytes each (see
  // MappedFile's write-behind). Only the last file ever holds buffered
  // bytes: a full one is committed before the next is created.
  void enable_write_behind(size_t max_pending_bytes, bool keep_last_commit = false);
  // Writes the last file's buffered bytes (one pwrite).
  Status commit();
  // Whether a flush commits the buffered bytes first (MappedFile's "commit
  // on flush"); on by default. Off, a flush covers only committed bytes.
  void set_commit_on_flush(bool commit_on_flush);
  // The end of the bytes the files hold: max_offset() less the last file's
  // buffered bytes.
  int64_t committed_offset() const;

  // The file holding offset, or nullptr when no file covers it.
  std::shared_ptr<MappedFile> find_file(int64_t offset) const;

  int64_t min_offset() const;     // first file's start (0 when empty)
  int64_t max_offset() const;     // last file's start + wrote position
  int64_t flushed_where() const { return flushed_where_; }
  void set_flushed_where(int64_t offset);
  int64_t unflushed_bytes() const { return max_offset() - flushed_where_; }

  // Reads [offset, offset + out.size()) within one file and below
  // max_offset(); returns the bytes read (0 past the end).
  Result<size_t> read(int64_t offset, std::span<uint8_t> out) const;

  // Syncs every file holding bytes in [flushed_where, max_offset) (and the
  // directory, when files were created), then advances flushed_where to the
  // max_offset seen at the call. done gets the first error, if any.
  void flush(std::function<void(Status)> done);
  // How long the flushes that had something to sync took, call to
  // completion (fsyncs plus the directory sync): /metrics' flush latency.
  const LatencyBuckets& flush_latency() const { return flush_latency_; }

  // Drops everything at and past offset: later files are removed, the file
  // holding offset is cut and its tail zero-filled, so that stale records
  // past the cut can never be read back as valid by a later recovery.
  Status truncate_dirty_files(int64_t offset);

  // Expired segments may be recycled from now on (recycleExpiredCommitLogEnable,
  // allocate_mapped_file_service.h): delete_first_file(recycle) keeps one
  // as "<offset>.recycled", and the next segment requested ahead, once that
  // name is durable, is made from it. Every file writes an end marker after
  // its writes (MappedFile::set_end_marker): after a restart nothing tells
  // a recycled segment from a fresh one. Requires: enable_preallocation
  // first; call before load() and the first create.
  void enable_recycling();
  bool recycling() const { return recycling_; }
  // Whether an expired segment is kept for reuse (not yet handed over).
  bool holds_recycled() const { return recycled_.has_value(); }
  const std::string& recycled_path() const {
    MQ_ASSERT(recycled_.has_value());
    return recycled_->path;
  }
  // Removes the kept segment, if any (retention deleting for disk space:
  // its blocks count as used).
  Status drop_recycled();

  // Removes the first file (retention), or with recycle (and recycling
  // enabled, and no file kept yet) keeps it for reuse, renamed out of the
  // log; returns whether it was kept. Requires: more than one file.
  Result<bool> delete_first_file(bool recycle = false);
  // Removes every file (a queue whose log vanished).
  Status destroy();

 private:
  // Extends file to file_size_: allocated, or with a hole (use_sparse_files).
  Status extend(env::File& file) const;
  // Gives a file this queue's sync hints (isolate_syncs, sync_on_caller),
  // before its first sync: every file loaded, created or taken prepared.
  void hint_syncs(env::File& file) const;
  Result<std::shared_ptr<MappedFile>> create_file(int64_t start_offset);
  // With mapped appends: unmaps the file mapped so far, maps the last one.
  void map_last_file();
  // Unmaps the mapped file, if any; the next append maps the last file again.
  void release_mapping();

  env::Env& env_;
  std::string dir_;
  int64_t file_size_;
  bool isolate_syncs_ = false;
  bool syncs_on_caller_ = false;
  bool sparse_files_ = false;  // use_sparse_files()
  std::vector<std::shared_ptr<MappedFile>> files_;
  int64_t flushed_where_ = 0;
  // Directory changes (creates, removes) counted, and how many a completed
  // sync_dir covers: a flush started while another's sync_dir is in flight
  // must sync again, or it could report ok before a new entry is durable.
  uint64_t dir_changes_ = 0;
  uint64_t dir_changes_synced_ = 0;
  LatencyBuckets flush_latency_;
  std::unique_ptr<AllocateMappedFileService> allocator_;  // null: created on the put path
  int64_t requested_next_ = -1;  // start offset of the segment last requested ahead
  int64_t first_file_offset_ = -1;  // request_first_file's, while the queue is empty
  size_t write_behind_bytes_ = 0;  // 0: every append is a pwrite
  bool keep_last_commit_ = false;   // MappedFile's "last commit kept"
  bool commit_on_flush_ = true;
  bool map_appends_ = false;
  bool recycling_ = false;
  // The expired segment kept for reuse, and the directory change that
  // renamed it: handed to the allocator once a sync_dir covers that change
  // (before, a power loss could bring the old name back, and with it a
  // segment of the log holding another segment's new records).
  struct Recycled {
    std::string path;
    uint64_t dir_change = 0;
  };
  std::optional<Recycled> recycled_;
  // The file map_last_file() last asked to map (whether or not the Env
  // mapped it: asked once per file), or null.
  std::shared_ptr<env::File> mapped_file_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::store
