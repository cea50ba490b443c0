#include "broker/env/posix_file_system.h"

#include <dirent.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "broker/env/file_offloader.h"

namespace mqlab::env {
namespace {

constexpr uint64_t kMaxFileOffset = static_cast<uint64_t>(std::numeric_limits<off_t>::max());
constexpr size_t kWriteZerosChunkBytes = 1 << 20;  // write_zeros() fallback: 1 MiB per pwrite

// "<path>: <operation>[ at <offset>]: <strerror>", with the code errno means to
// the broker. std::generic_category() uses strerror_r: safe on the flush thread.
Status os_error(int error, std::string_view path, std::string_view operation,
                std::optional<uint64_t> offset = std::nullopt) {
  std::string message(path);
  message += ": ";
  message += operation;
  if (offset) message += " at " + std::to_string(*offset);
  message += ": ";
  message += std::generic_category().message(error);
  switch (error) {
    case ENOSPC:
    case EDQUOT: return Status::NoSpace(std::move(message));
    case ENOENT: return Status::NotFound(std::move(message));
    case EEXIST: return Status::AlreadyExists(std::move(message));
    default: return Status::IoError(std::move(message));
  }
}

Status make_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  const int error = errno;
  if (error != EEXIST) return os_error(error, dir, "mkdir");
  struct stat info {};
  if (::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return Status::Ok();
  return Status::AlreadyExists(dir + ": mkdir: exists and is not a directory");
}

// Holds an flock on fd until destroyed; closing the descriptor releases it.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) { MQ_ASSERT(fd_ >= 0); }
  ~PosixFileLock() override { ::close(fd_); }
  PosixFileLock(const PosixFileLock&) = delete;
  PosixFileLock& operator=(const PosixFileLock&) = delete;
  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
};

// The first line of a lock file, as its holder wrote it ("pid 1234"), for the
// refusal message; empty when unreadable. The bytes are another process's:
// only printable characters are kept.
std::string read_lock_holder(int fd) {
  char buffer[128] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string holder;
  for (ssize_t i = 0; i < n && buffer[i] != '\n'; ++i) {
    if (buffer[i] >= 0x20 && buffer[i] < 0x7f) holder += buffer[i];
  }
  return holder;
}

}  // namespace

// A background thread of a PosixFileSystem (it has two): a queue of sync requests,
// those for one file or directory answered in request order, each completion
// posted to the io_context.
class FlushThread {
 public:
  FlushThread(boost::asio::io_context& io, PosixFileSystem::SyncFile sync_file)
      : io_(io), sync_file_(std::move(sync_file)), open_(std::make_shared<std::atomic<bool>>(true)) {
    MQ_ASSERT(sync_file_ != nullptr);
  }

  ~FlushThread() {
    open_->store(false);  // completions not yet run are dropped
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
      // The file system owns this object; its own worker never destroys it.
      MQ_ASSERT(thread_.get_id() != std::this_thread::get_id());
      thread_.join();
    }
    MQ_ASSERT(queue_.empty());
  }

  FlushThread(const FlushThread&) = delete;
  FlushThread& operator=(const FlushThread&) = delete;

  void sync_file(std::shared_ptr<PosixFile> file, SyncCallback done) {
    MQ_ASSERT(file != nullptr);
    enqueue(Request{std::move(file), std::string(), std::move(done), boost::asio::make_work_guard(io_)});
  }

  // A sync of a file that asked for File::sync_on_caller: its fdatasync
  // runs on the io_context thread, in a task of its own posted now, so
  // that what is already queued there (replies, a pull response, the push
  // to a slave: each socket write is a task) goes out before the thread
  // blocks. Its completion is posted as the flush thread's completions are.
  void sync_file_on_caller(std::shared_ptr<PosixFile> file, SyncCallback done) {
    MQ_ASSERT(file != nullptr && done != nullptr);
    boost::asio::post(io_, [this, open = open_, file = std::move(file), done = std::move(done)]() mutable {
      if (!open->load()) return;  // the file system is gone, and this with it: dropped, as completions are
      const Status status = sync_file_now(*file);
      std::vector<Request> batch;
      batch.push_back(Request{std::move(file), std::string(), std::move(done), boost::asio::make_work_guard(io_)});
      complete(std::move(batch), status);
    });
  }

  void sync_dir(std::string dir, SyncCallback done) {
    MQ_ASSERT(!dir.empty());
    enqueue(Request{nullptr, std::move(dir), std::move(done), boost::asio::make_work_guard(io_)});
  }

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

  struct Request {
    std::shared_ptr<PosixFile> file;  // keeps the file open; null for a directory
    std::string dir;
    SyncCallback done;
    WorkGuard work;  // io_context::run() must not return while a sync is pending

    bool same_target(const Request& other) const {
      return file ? file == other.file : (other.file == nullptr && dir == other.dir);
    }
  };

  void enqueue(Request request) {
    MQ_ASSERT(request.done != nullptr);
    {
      std::lock_guard lock(mutex_);
      MQ_ASSERT(!stopping_);
      queue_.push_back(std::move(request));
      if (!thread_.joinable()) thread_ = std::thread([this] { run(); });  // started lazily
    }
    wake_.notify_one();
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every queued sync answered
      std::vector<Request> batch = take_batch();
      lock.unlock();
      const Status status = batch.front().file ? sync_file_now(*batch.front().file) : sync_dir_now(batch.front().dir);
      complete(std::move(batch), status);
      lock.lock();
    }
  }

  // The front request and every queued request for the same target: one
  // fdatasync started after all of them were made covers them all.
  // Requires: mutex_ held.
  std::vector<Request> take_batch() {
    MQ_ASSERT(!queue_.empty());
    std::vector<Request> batch;
    batch.push_back(std::move(queue_.front()));
    queue_.pop_front();
    std::deque<Request> rest;
    for (Request& request : queue_) {
      if (request.same_target(batch.front())) {
        batch.push_back(std::move(request));
      } else {
        rest.push_back(std::move(request));
      }
    }
    queue_.swap(rest);
    return batch;
  }

  Status sync_file_now(PosixFile& file) const {
    if (!file.sync_failure_.empty()) {
      return Status::IoError(file.path() + ": an earlier fdatasync failed, so unsynced data may be lost: " +
                             file.sync_failure_);
    }
    Status status = sync_file_(file);
    if (!status.ok()) file.sync_failure_ = status.to_string();
    return status;
  }

  static Status sync_dir_now(const std::string& dir) {
    int fd = -1;
    do {
      fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return os_error(errno, dir, "open directory");
    Status status;
    if (::fsync(fd) != 0) status = os_error(errno, dir, "fsync directory");
    ::close(fd);
    return status;
  }

  // Posts each completion in request order. The file reference travels with
  // the completion, so the last reference drops on the io_context thread.
  void complete(std::vector<Request> batch, const Status& status) {
    for (Request& request : batch) {
      boost::asio::post(io_, [open = open_, done = std::move(request.done), file = std::move(request.file), status] {
        if (open->load()) done(status);
      });
      request.work.reset();
    }
  }

  boost::asio::io_context& io_;
  const PosixFileSystem::SyncFile sync_file_;
  // False once the file system is destroyed: its completions then run nothing,
  // as a destroyed executor's timers do not. Read on the io_context thread.
  const std::shared_ptr<std::atomic<bool>> open_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Request> queue_;  // guarded by mutex_
  bool stopping_ = false;      // guarded by mutex_
  std::thread thread_;         // started by the first enqueue, under mutex_
};

// ---------------------------------------------------------------------------
// PosixFile

PosixFile::PosixFile(std::string path, int fd, FlushThread& flusher, FlushThread& isolated_flusher)
    : path_(std::move(path)), fd_(fd), flusher_(flusher), isolated_flusher_(isolated_flusher) {
  MQ_ASSERT(fd_ >= 0);
}

// An unlinked segment's last close frees its pages: not on the broker core.
PosixFile::~PosixFile() {
  unmap();
  close_file_descriptor(fd_);
}

Status PosixFile::pwrite(uint64_t offset, std::span<const uint8_t> data) {
  MQ_ASSERT(offset <= kMaxFileOffset - data.size());
  if (mapped_ != nullptr && data.size() < kMappedWriteMaxBytes && offset <= mapped_size_ &&
      data.size() <= mapped_size_ - offset) {
    // In the page cache once copied, as a pwrite's bytes are (env.h).
    std::memcpy(mapped_ + offset, data.data(), data.size());
    if (offset + data.size() + kPopulateAheadBytes / 2 > populated_to_) populate_ahead_of(offset + data.size());
    return Status::Ok();
  }
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + written, data.size() - written, static_cast<off_t>(offset + written));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(errno, path_, "pwrite", offset + written);
    // pwrite of a non-empty buffer to a regular file makes progress or fails;
    // zero would loop forever.
    if (n == 0) return Status::IoError(path_ + ": pwrite at " + std::to_string(offset + written) + ": wrote nothing");
    written += static_cast<size_t>(n);
  }
  MQ_ASSERT(written == data.size());
  return Status::Ok();
}

void PosixFile::populate_ahead_of(uint64_t written_to) {
  MQ_ASSERT(mapped_ != nullptr && written_to <= mapped_size_);
  const uint64_t page = system_page_bytes();
  // Appends that jumped ahead (the first after recovery) start the window
  // after their own page, which they just wrote (and which the offloader
  // should not read while the next put copies into it).
  const uint64_t from = std::max(populated_to_, (written_to + page - 1) / page * page);
  const uint64_t to = std::min(mapped_size_ / page * page, (written_to + kPopulateAheadBytes) / page * page);
  if (to <= from) return;
  FileOffloader::instance().populate_later(mapped_ + from, static_cast<size_t>(to - from));
  populated_to_ = to;
}

Result<size_t> PosixFile::pread(uint64_t offset, std::span<uint8_t> out) {
  MQ_ASSERT(offset <= kMaxFileOffset - out.size());
  size_t read = 0;
  while (read < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + read, out.size() - read, static_cast<off_t>(offset + read));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error(errno, path_, "pread", offset + read);
    if (n == 0) break;  // end of file
    read += static_cast<size_t>(n);
  }
  MQ_ASSERT(read <= out.size());
  return read;
}

Status PosixFile::truncate(uint64_t size) {
  MQ_ASSERT(size <= kMaxFileOffset);
  // Mapped pages past the end would fault (SIGBUS) on the next copy, and
  // on the offloader's reads of the pages it populates: those are done
  // before the file shrinks.
  if (size < mapped_size_) {
    const bool populating = populated_to_ > 0;
    const uint64_t unmapped = unmap_and_ticket();
    if (populating) FileOffloader::instance().wait_done(unmapped);
  }
  int result = 0;
  do {
    result = ::ftruncate(fd_, static_cast<off_t>(size));
  } while (result != 0 && errno == EINTR);
  if (result != 0) return os_error(errno, path_, "ftruncate to", size);
  return Status::Ok();
}

Result<uint64_t> PosixFile::size() {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) return os_error(errno, path_, "fstat");
  MQ_ASSERT(info.st_size >= 0);
  return static_cast<uint64_t>(info.st_size);
}

Status PosixFile::allocate(uint64_t size) {
  MQ_ASSERT(size <= kMaxFileOffset);
  if (size == 0) return Status::Ok();
  int error = 0;
  do {
    error = ::posix_fallocate(fd_, 0, static_cast<off_t>(size));  // returns the error, not errno
  } while (error == EINTR);
  if (error == 0) return Status::Ok();
  // glibc already emulates posix_fallocate where fallocate(2) is missing; what
  // still fails with these is a file system that refuses both. Zeros written
  // past the end do the job; holes before the end stay holes.
  if (error != EOPNOTSUPP && error != EINVAL) return os_error(error, path_, "posix_fallocate to", size);
  MQ_ASSIGN_OR_RETURN(const uint64_t current, this->size());
  if (current >= size) return Status::Ok();
  return write_zeros(current, size);
}

Status PosixFile::write_zeros(uint64_t from, uint64_t to) {
  MQ_ASSERT(from <= to);
  const std::vector<uint8_t> zeros(static_cast<size_t>(std::min<uint64_t>(kWriteZerosChunkBytes, to - from)), 0);
  for (uint64_t offset = from; offset < to;) {
    const size_t length = static_cast<size_t>(std::min<uint64_t>(zeros.size(), to - offset));
    MQ_RETURN_IF_ERROR(pwrite(offset, std::span(zeros.data(), length)));
    offset += length;
  }
  return Status::Ok();
}

void PosixFile::sync(SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  synced_ = true;
  FlushThread& flusher = isolated_ ? isolated_flusher_ : flusher_;
  if (on_caller_) {
    flusher.sync_file_on_caller(shared_from_this(), std::move(done));
  } else {
    flusher.sync_file(shared_from_this(), std::move(done));
  }
}

Status PosixFile::fdatasync_now() {
  int result = 0;
  do {
    result = ::fdatasync(fd_);
  } while (result != 0 && errno == EINTR);
  if (result != 0) return os_error(errno, path_, "fdatasync");
  return Status::Ok();
}

bool PosixFile::map_for_appends(uint64_t size) {
  MQ_ASSERT(size > 0 && size <= std::numeric_limits<size_t>::max());
  if (mapped_ != nullptr && mapped_size_ >= size) return true;
  const Result<uint64_t> current = this->size();
  if (!current.ok() || *current < size) return false;  // a page past the end would fault
  unmap();
  void* const address = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (address == MAP_FAILED) return false;  // pwrite goes on working without it
  mapped_ = static_cast<uint8_t*>(address);
  mapped_size_ = size;
  populated_to_ = 0;
  return true;
}

void PosixFile::isolate_syncs() {
  MQ_ASSERT(!synced_);  // sync_failure_ and the order of completions belong to one thread
  isolated_ = true;
}

void PosixFile::sync_on_caller() {
  MQ_ASSERT(!synced_);  // no sync of this file may be left on a flush thread
  on_caller_ = true;
}

void PosixFile::unmap() { (void)unmap_and_ticket(); }

uint64_t PosixFile::unmap_and_ticket() {
  if (mapped_ == nullptr) return 0;
  const uint64_t ticket = FileOffloader::instance().unmap_later(mapped_, static_cast<size_t>(mapped_size_));
  mapped_ = nullptr;
  mapped_size_ = 0;
  populated_to_ = 0;
  return ticket;
}

// ---------------------------------------------------------------------------
// PosixFileSystem

PosixFileSystem::PosixFileSystem(boost::asio::io_context& io, SyncFile sync_file)
    : flusher_(std::make_unique<FlushThread>(io, sync_file)),
      isolated_flusher_(std::make_unique<FlushThread>(io, sync_file)) {}

PosixFileSystem::~PosixFileSystem() = default;

Result<std::shared_ptr<File>> PosixFileSystem::open(const std::string& path, OpenOptions options) {
  if (options.exclusive) MQ_ASSERT(options.create);
  int flags = O_RDWR | O_CLOEXEC;
  if (options.create) flags |= O_CREAT;
  if (options.exclusive) flags |= O_EXCL;
  if (options.truncate) flags |= O_TRUNC;
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return os_error(errno, path, "open");
  return std::shared_ptr<File>(std::make_shared<PosixFile>(path, fd, *flusher_, *isolated_flusher_));
}

Status PosixFileSystem::remove(const std::string& path) {
  if (::unlink(path.c_str()) == 0) return Status::Ok();
  const int unlink_error = errno;
  // Linux says EISDIR for unlink(2) of a directory; POSIX allows EPERM.
  if (unlink_error != EISDIR && unlink_error != EPERM) return os_error(unlink_error, path, "unlink");
  if (::rmdir(path.c_str()) == 0) return Status::Ok();
  const int rmdir_error = errno;
  if (rmdir_error == ENOTDIR) return os_error(unlink_error, path, "unlink");
  if (rmdir_error == ENOTEMPTY || rmdir_error == EEXIST) {
    return Status::InvalidArgument(path + ": rmdir: directory not empty");
  }
  return os_error(rmdir_error, path, "rmdir");
}

Status PosixFileSystem::rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return Status::Ok();
  return os_error(errno, from, "rename to " + to);
}

Result<std::vector<std::string>> PosixFileSystem::list(const std::string& dir) {
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) return os_error(errno, dir, "opendir");
  std::vector<std::string> names;
  for (;;) {
    errno = 0;  // readdir reports errors only through errno
    const dirent* entry = ::readdir(stream);
    if (entry == nullptr) break;
    const std::string_view name(entry->d_name);
    if (name != "." && name != "..") names.emplace_back(name);
  }
  const int error = errno;
  ::closedir(stream);
  if (error != 0) return os_error(error, dir, "readdir");
  std::sort(names.begin(), names.end());  // bytewise, as the contract says
  return names;
}

Status PosixFileSystem::mkdirs(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("mkdirs: empty path");
  // Each prefix ending before a '/' is a parent; "a//b" and a trailing '/'
  // yield prefixes ending in '/', which name a directory already made.
  for (size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string prefix = dir.substr(0, end);
    if (prefix.back() != '/') MQ_RETURN_IF_ERROR(make_directory(prefix));
    if (end == std::string::npos) break;
  }
  return Status::Ok();
}

bool PosixFileSystem::exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

bool PosixFileSystem::is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

void PosixFileSystem::sync_dir(const std::string& dir, SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  flusher_->sync_dir(dir, std::move(done));
}

void PosixFileSystem::sync_dir_isolated(const std::string& dir, SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  isolated_flusher_->sync_dir(dir, std::move(done));
}

Result<SpaceInfo> PosixFileSystem::space(const std::string& path) {
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0) return os_error(errno, path, "statvfs");
  SpaceInfo space;
  space.capacity_bytes = static_cast<uint64_t>(info.f_blocks) * info.f_frsize;
  space.available_bytes = static_cast<uint64_t>(info.f_bavail) * info.f_frsize;  // what a non-root user may use
  return space;
}

Result<std::unique_ptr<FileLock>> PosixFileSystem::lock(const std::string& path) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return os_error(errno, path, "open lock file");
  int result = 0;
  do {
    result = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (result != 0 && errno == EINTR);
  if (result != 0) {
    const int error = errno;
    const std::string holder = read_lock_holder(fd);
    ::close(fd);
    if (error != EWOULDBLOCK) return os_error(error, path, "flock");
    return Status::Unavailable(path + ": locked by another process" + (holder.empty() ? "" : " (" + holder + ")"));
  }
  auto held = std::make_unique<PosixFileLock>(path, fd);  // closes fd on every path from here
  const std::string identity = "pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0) return os_error(errno, path, "ftruncate lock file");
  const ssize_t wrote = ::pwrite(fd, identity.data(), identity.size(), 0);
  if (wrote < 0) return os_error(errno, path, "write lock file");
  if (static_cast<size_t>(wrote) != identity.size()) return Status::IoError(path + ": write lock file: short write");
  return std::unique_ptr<FileLock>(std::move(held));
}

}  // namespace mqlab::env
