// The Env: the only way broker code reaches the world.
//
// mqbroker passes the real Env (POSIX files, Boost.Asio); mqsim passes a
// simulated one (virtual time, SimDisk, SimNet, the scenario seed). Broker
// code cannot tell which. Rules every implementation keeps:
//   - Nothing blocks. pwrite/pread land in (or read from) the page cache and
//     return at once; sync() and sync_dir() complete later, on the executor,
//     never inline inside the call that started them.
//   - Every completion runs on the Env's executor, the single thread of the
//     broker core.
//   - A file's bytes written before a sync() call are durable when that sync's
//     completion reports ok. Nothing else is promised to survive a power loss.
//   - Directory entries (create, rename, remove) are durable only after
//     sync_dir() of the parent directory completes ok.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/network.h"
#include "broker/env/random.h"
#include "broker/env/task.h"

namespace mqlab::env {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic instant in nanoseconds; never goes back.
  virtual Nanos now_ns() = 0;
  // Wall clock in milliseconds since the Unix epoch, for stored timestamps.
  // May jump or be skewed (a simulated machine's clock can be).
  virtual int64_t wall_ms() = 0;
  // Wall clock in nanoseconds since the Unix epoch, for histories that
  // processes of one host merge (mqadmin perf --history). Millisecond
  // resolution unless the Env has better.
  virtual Nanos wall_ns() { return wall_ms() * kNanosPerMilli; }
};

// Task (broker/env/task.h): a move-only void() callable, inline up to 56 bytes.
using TimerId = uint64_t;
constexpr TimerId kNoTimer = 0;

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs task soon, after the current task returns. Tasks posted from one task
  // run in the order they were posted. By rvalue reference: the task is
  // moved once, into the queue (by value it was moved twice, and a post
  // runs several times a simulated message).
  virtual void post(Task&& task) = 0;
  // Runs task once delay has passed (delay >= 0). Timers due at the same
  // instant run in the order they were scheduled. Returns a non-zero id.
  virtual TimerId run_after(Nanos delay, Task&& task) = 0;  // moved once, as post's
  // Cancels a timer that has not run yet; returns whether it was pending.
  virtual bool cancel(TimerId id) = 0;
};

using SyncCallback = std::function<void(Status)>;

// One open file. Shared, because an outstanding sync keeps it alive.
class File {
 public:
  virtual ~File() = default;
  virtual const std::string& path() const = 0;
  // Writes all of data at offset (extending the file if needed) or fails:
  // NoSpace when the device is full, IoError when it failed. Never partial.
  virtual Status pwrite(uint64_t offset, std::span<const uint8_t> data) = 0;
  // Reads up to out.size() bytes at offset; fewer only at end of file.
  virtual Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) = 0;
  virtual Status truncate(uint64_t size) = 0;
  virtual Result<uint64_t> size() = 0;
  // Extends the file to size bytes (zero-filled) when it is shorter, and
  // reserves blocks for [0, size) so later writes in that range cannot fail
  // with NoSpace (the CommitLog's segments, which may be written through a
  // mapping; RocketMQ's warmMapedFileEnable touches them for the same end).
  // Never shrinks.
  virtual Status allocate(uint64_t size) = 0;
  // fdatasync: when done reports ok, every byte written before this call is
  // durable. done runs on the executor, never inside this call.
  virtual void sync(SyncCallback done) = 0;

  // A hint: [0, size) is now written front to back in small pieces (a log's
  // active segment). An Env may then serve pwrite inside that range without
  // a system call each; the real one maps it (MAP_SHARED) and copies, as
  // RocketMQ writes its MappedByteBuffer. Nothing else changes: a write is
  // in the page cache when pwrite returns, sync() makes it durable, pread
  // and other descriptors see it. Returns whether the Env took the hint
  // (this default, the simulator's: no). Requires: the file is allocated to
  // at least size. Cost of taking it: a read error under a page being
  // written kills the process (SIGBUS) instead of failing the pwrite; pages
  // written are the recently pre-touched or fallocated ones, rarely read.
  virtual bool map_for_appends(uint64_t size) {
    (void)size;
    return false;
  }
  // The hint's end: the file is full or no longer written. Its pwrites are
  // system calls again. Also ended by truncate() below the mapped size and
  // by destruction.
  virtual void unmap() {}

  // A hint: acknowledgements wait for this file's syncs (a CommitLog
  // segment's), so they should not queue behind other files' syncs. The real
  // Env runs them on a flush thread of their own, as RocketMQ gives its
  // CommitLog a flush service of its own (GroupCommitService,
  // FlushRealTimeService) apart from FlushConsumeQueueService's. The
  // simulator's disk queues every sync on the device, as a disk does, and
  // ignores the hint. Requires: no sync() of this file yet.
  virtual void isolate_syncs() {}
  // A hint: whoever syncs this file has nothing to do but wait for it
  // (SYNC_FLUSH's CommitLog segments: every put's reply waits for the group
  // commit, and while one runs the next group only gathers). The real Env
  // then runs each fdatasync of the file on the calling thread (the event
  // loop), in a task of its own after the tasks already queued, instead of
  // handing it to a flush thread and back: two thread wake-ups fewer per
  // sync, for a loop that blocks while the device works. done still runs
  // on the executor, never inside sync(). The simulator's disk takes the
  // same time either way and ignores the hint. Requires: no sync() of this
  // file yet.
  virtual void sync_on_caller() {}
};

struct OpenOptions {
  bool create = false;     // create when missing
  bool exclusive = false;  // with create: fail with AlreadyExists when present
  bool truncate = false;   // empty the file when opened
};

// An exclusive advisory lock on a file, held while this object lives
// (RocketMQ's storePathRootDir/lock). Dropping it releases the lock, and so
// does the death of the process holding it: a crash never leaves a stale
// lock behind. Destruction does no I/O beyond closing a descriptor.
class FileLock {
 public:
  virtual ~FileLock() = default;
  virtual const std::string& path() const = 0;
};

struct SpaceInfo {
  uint64_t capacity_bytes = 0;
  uint64_t available_bytes = 0;
};

// Paths are '/'-separated strings; the real Env maps them onto the host file
// system, the simulated one onto its disks.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual Result<std::shared_ptr<File>> open(const std::string& path, OpenOptions options) = 0;
  // Removes a file or an empty directory. NotFound when missing.
  virtual Status remove(const std::string& path) = 0;
  // Atomically replaces `to` with `from` (POSIX rename semantics).
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // Names (not paths) of the entries of a directory, sorted bytewise.
  // NotFound when the directory does not exist.
  virtual Result<std::vector<std::string>> list(const std::string& dir) = 0;
  // Creates the directory and its missing parents; ok when it exists.
  virtual Status mkdirs(const std::string& dir) = 0;
  virtual bool exists(const std::string& path) = 0;
  virtual bool is_directory(const std::string& path) = 0;
  // Makes the directory's entries durable; done runs on the executor.
  virtual void sync_dir(const std::string& dir, SyncCallback done) = 0;
  // sync_dir for the directory of files that took File::isolate_syncs (the
  // CommitLog's, whose flush after a new segment waits for it): apart from
  // other syncs too, where the Env runs those apart. This default: sync_dir.
  virtual void sync_dir_isolated(const std::string& dir, SyncCallback done) { sync_dir(dir, std::move(done)); }
  virtual Result<SpaceInfo> space(const std::string& path) = 0;
  // Creates path when missing and takes an exclusive lock on it without
  // waiting. When another holder (another process, or another lock object of
  // this one) has it: Unavailable, naming the holder when it is known. The
  // holder's identity is written into the file, so a refused caller can name it.
  virtual Result<std::unique_ptr<FileLock>> lock(const std::string& path) = 0;
};

// What a broker, a NameServer or a client process is given.
class Env {
 public:
  virtual ~Env() = default;
  virtual Clock& clock() = 0;
  virtual Executor& executor() = 0;
  virtual FileSystem& files() = 0;
  virtual Network& network() = 0;
  virtual Random& random() = 0;

  // Gets a new segment file ready off the broker core (RocketMQ's
  // AllocateMappedFileService): reserves blocks for [0, size) as
  // File::allocate does and, with pretouch (warmMapedFileEnable), writes every
  // block once with zeros and makes them durable. A thin-provisioned or
  // copy-on-write disk writes never-written blocks several times slower than
  // rewritten ones, so a pre-touched segment fills at the disk's full speed.
  // done runs on the executor, never inside this call; until then only this
  // call may use file. pretouch is a hint: an Env whose device has no
  // first-write cost (the simulator's, this default) may only allocate.
  virtual void prepare_file(std::shared_ptr<File> file, uint64_t size, bool pretouch, SyncCallback done) {
    (void)pretouch;
    executor().post([file = std::move(file), size, done = std::move(done)] { done(file->allocate(size)); });
  }
  // Stops a prepare_file of file that has not completed; once this returns
  // the preparation writes nothing more to file. Returns whether file is
  // already allocated to its size, so the caller may use it as it is (blocks
  // pre-touched so far are rewrites, the rest first writes): a segment roll
  // that finds its next segment half prepared takes it, instead of creating
  // and allocating another file on the put path while the preparation
  // competes for the disk (fallocate took 25-100 ms there under load). False
  // when not allocated yet, or not known. done still runs, later, on the
  // executor: Aborted, or whatever the preparation had come to. May wait for
  // the write or allocate in progress. This default (preparing is one posted
  // task) stops nothing and says false.
  virtual bool stop_preparing_file(const std::shared_ptr<File>& file) {
    (void)file;
    return false;
  }
};

}  // namespace mqlab::env
