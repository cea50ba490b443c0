// The real file system: env::File and env::FileSystem over POSIX calls.
//
// pwrite/pread/truncate run inline (they touch the page cache and return);
// the slow calls, fdatasync for sync() and fsync of a directory for
// sync_dir(), run on one flush thread per PosixFileSystem, started on the
// first sync and joined when the file system is destroyed. Completions are
// posted back to the io_context, never run inside the call that started them.
//
// Invariants:
//   - A File stays alive (and its fd open) until every sync it started has
//     completed: the queued request holds a shared_ptr to it.
//   - Sync requests for one file that are queued when its fdatasync starts are
//     all answered by that one fdatasync (group commit at the device). Each
//     answer still means "everything written before my sync() is durable",
//     because each request was made before the fdatasync began.
//   - Once an fdatasync of a file failed, every later sync of that file fails
//     too: Linux may mark the lost pages clean after reporting the error, so
//     a later fdatasync could report success over data that never reached the
//     device ("fsyncgate").
//   - A FileLock from lock() holds an flock on its own descriptor until it is
//     destroyed.
//   - Errors carry the path, the operation, the offset where there is one, and
//     the OS's words for errno. ENOSPC and EDQUOT are NoSpace, ENOENT NotFound,
//     EEXIST AlreadyExists; the rest are IoError unless noted.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/env/asio.h"
#include "broker/env/env.h"

namespace mqlab::env {

class FlushThread;  // posix_file_system.cc: the queue and thread that run fdatasync

class PosixFile final : public File, public std::enable_shared_from_this<PosixFile> {
 public:
  // Takes ownership of fd (closed by the destructor).
  // Requires: the object is owned by a shared_ptr (sync() keeps it alive);
  // both flushers outlive every sync() call: syncs go to flusher, or to
  // isolated_flusher once isolate_syncs() was called.
  PosixFile(std::string path, int fd, FlushThread& flusher, FlushThread& isolated_flusher);
  ~PosixFile() override;

  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override;
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override;
  Status truncate(uint64_t size) override;
  Result<uint64_t> size() override;
  // Extends the file to at least size with zero-filled blocks
  // (posix_fallocate; when the file system cannot, writes zeros past the
  // current end). Never shrinks the file; bytes already written are unchanged.
  Status allocate(uint64_t size) override;
  void sync(SyncCallback done) override;
  // Maps [0, size) shared, read-write; pwrites of under
  // kMappedWriteMaxBytes wholly inside it are then a memcpy (pread stays a
  // system call: it may read past the mapping, and its pages are the
  // written ones either way). False, with nothing mapped, when the file is
  // shorter than size or mmap fails. Called again, keeps a mapping at least
  // that large.
  bool map_for_appends(uint64_t size) override;
  // A page or more goes by pwrite even inside the mapping. A copy saves the
  // system call, one per write; but each page written through the mapping
  // faults when first written and again after every writeback (which write-
  // protects it, with a TLB shootdown across the CPUs), a cost per page.
  // One put a write (1 KiB) is cheaper copied; a group write of many puts
  // is cheaper as one system call. store_bench, 1 KiB ASYNC_FLUSH puts on
  // this VM (2026-12-05), pre-touched segments: at 8 / 64 / 256 in flight
  // 0.37-0.42M msgs/s copying every write, 0.91-2.04M with this bound
  // (two runs); at 1 in flight the same (every write is one put).
  static constexpr size_t kMappedWriteMaxBytes = 4096;
  // The mapping's pages ahead of the last copy into it are faulted in on
  // the FileOffloader's thread (file_offloader.h), up to this far ahead;
  // more once the copies come within half of it. A write's page fault is
  // then the offloader's, not the put's: store_bench, 1 KiB ASYNC_FLUSH
  // puts at 1 in flight on this VM (2026-12-06), three runs each:
  // 0.60-0.68 of the raw pwrite loop's rate -> 0.88-1.11 on pre-touched
  // segments, 0.72 -> 0.99-1.36 on fresh ones, 0.38-0.64 -> 0.57-0.95 on
  // recycled ones; copying against a pwrite a put, 1.17 -> 1.58-2.17. A page
  // faulted in ahead that a flush writes back before it is written faults
  // once more (write-protected), as every page did.
  static constexpr uint64_t kPopulateAheadBytes = uint64_t{1} << 20;
  // Hands the mapping to the FileOffloader: its munmap (about 1 ms for a
  // 64 MiB mapping written through) is not the caller's.
  void unmap() override;
  void isolate_syncs() override;
  // Every later sync() posts its fdatasync to the io_context (it runs on
  // that thread, after the tasks queued before it) and then its completion,
  // as a flush thread's is posted.
  void sync_on_caller() override;

  // fdatasync on the calling thread (retried on EINTR), the error coded as
  // every other call's here. No memory of earlier failures: sync() is the
  // Env's, with it; this is for threads that sync a file of their own (the
  // segment preparer).
  Status fdatasync_now();

  // For the real network's sendfile of a file region.
  int fd() const { return fd_; }
  // The mapped size (0: none) and where it is mapped; for tests.
  uint64_t mapped_size() const { return mapped_size_; }
  const uint8_t* mapped_address() const { return mapped_; }

 private:
  friend class FlushThread;

  Status write_zeros(uint64_t from, uint64_t to);
  // After a copy into the mapping that ended at written_to: hands the next
  // pages to populate to the offloader when the copies came close.
  void populate_ahead_of(uint64_t written_to);
  // unmap(), returning the FileOffloader's ticket for it (0: nothing mapped).
  uint64_t unmap_and_ticket();

  const std::string path_;
  const int fd_;
  FlushThread& flusher_;
  FlushThread& isolated_flusher_;
  // On the io_context thread, as sync(): whether syncs go to
  // isolated_flusher_, and whether one was issued (the switch must come
  // first: a file's syncs stay on one thread, in order).
  bool isolated_ = false;
  bool on_caller_ = false;  // sync_on_caller(): syncs run on the io_context thread
  bool synced_ = false;
  // map_for_appends' mapping of [0, mapped_size_), or null.
  uint8_t* mapped_ = nullptr;
  uint64_t mapped_size_ = 0;
  // The mapping's pages from the first copy's next page up to this offset
  // were handed to the offloader to populate; page-aligned (0: none yet).
  uint64_t populated_to_ = 0;
  // Touched only on the thread that runs the file's syncs (its flush thread,
  // or the io_context thread after sync_on_caller()): the first fdatasync
  // failure, repeated to every later sync of this file.
  std::string sync_failure_;
};

class PosixFileSystem final : public FileSystem {
 public:
  // Completions of sync() and sync_dir() are posted to io. Syncs run on a
  // flush thread, those of files that asked (File::isolate_syncs) on a
  // second one: behind the first, a CommitLog group commit waited for
  // eight ConsumeQueue syncs in a row, 2-40 ms each, once a second.
  // Requires: io outlives this object.
  // sync_file is the fdatasync the flush threads run (tests hold it).
  using SyncFile = std::function<Status(PosixFile&)>;
  static Status fdatasync_file(PosixFile& file) { return file.fdatasync_now(); }
  explicit PosixFileSystem(boost::asio::io_context& io, SyncFile sync_file = fdatasync_file);
  // Finishes the syncs already queued, then joins the flush thread. Their
  // completions, and any not yet run, are dropped: nothing of a destroyed Env
  // calls back into a broker. Files opened here may outlive this object but
  // must not call sync() afterwards. (Both flush threads.)
  ~PosixFileSystem() override;

  PosixFileSystem(const PosixFileSystem&) = delete;
  PosixFileSystem& operator=(const PosixFileSystem&) = delete;

  // Opens read-write with O_CLOEXEC. Requires: options.exclusive implies
  // options.create.
  Result<std::shared_ptr<File>> open(const std::string& path, OpenOptions options) override;
  // Removing a non-empty directory fails with InvalidArgument.
  Status remove(const std::string& path) override;
  Status rename(const std::string& from, const std::string& to) override;
  Result<std::vector<std::string>> list(const std::string& dir) override;
  Status mkdirs(const std::string& dir) override;
  bool exists(const std::string& path) override;
  bool is_directory(const std::string& path) override;
  void sync_dir(const std::string& dir, SyncCallback done) override;
  // On the isolated files' flush thread.
  void sync_dir_isolated(const std::string& dir, SyncCallback done) override;
  Result<SpaceInfo> space(const std::string& path) override;
  // flock(LOCK_EX | LOCK_NB) on the file, which then holds "pid <n>": the
  // kernel drops the lock when the descriptor closes or the process dies,
  // so a crashed broker leaves no stale lock. flock locks belong to the open
  // file description, so a second lock() in the same process is refused too.
  // Refused: Unavailable naming the path and the holder's pid as written.
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override;

 private:
  std::unique_ptr<FlushThread> flusher_;
  std::unique_ptr<FlushThread> isolated_flusher_;  // started by the first isolated sync
};

}  // namespace mqlab::env
