// Raw disk baselines: what the device and the page cache give with plain
// POSIX calls and no broker in the way, so the store benchmark can say how
// close the CommitLog comes to the hardware.
//
//   (a) measure_sequential_pwrite: N bytes in C-byte pwrites to one file, then
//       one fdatasync. The pwrite loop alone is the page-cache speed (what an
//       ASYNC_FLUSH put pays); adding the fdatasync gives the durable speed.
//   (b) measure_sync_batches: C-byte pwrites with an fdatasync after every B of
//       them, as a SYNC_FLUSH group commit of B messages does. Reports syncs/s,
//       messages/s and the fdatasync latency distribution.
//
// BlockState says what the written range held before the timed pass:
//   kFresh       a new empty file; every write allocates blocks and grows it,
//                and every fdatasync also commits the new size (journal).
//   kFallocated  posix_fallocate'd: blocks reserved as unwritten extents; the
//                first write still converts them (metadata on fdatasync).
//   kPretouched  written with zeros and synced once; the timed pass overwrites
//                blocks that exist and pages already cached, as a RocketMQ
//                MappedFile does after warming (warmMappedFile).
//
// Benchmarks sit outside the deterministic core: plain POSIX and
// std::chrono::steady_clock are fine here. Units: MB = 10^6 bytes.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/status.h"

namespace mqlab::bench {

enum class BlockState { kFresh, kFallocated, kPretouched };

inline std::string_view block_state_name(BlockState blocks) {
  switch (blocks) {
    case BlockState::kFresh: return "fresh";
    case BlockState::kFallocated: return "fallocated";
    case BlockState::kPretouched: return "pretouched";
  }
  return "unknown";
}

struct SequentialWriteResult {
  uint64_t bytes = 0;
  uint64_t writes = 0;
  double write_seconds = 0;  // the pwrite loop: page-cache speed
  double sync_seconds = 0;   // the one fdatasync after it: write-back of it all
  // CPU time of the pwrite loop's thread: unlike wall time, it does not grow
  // when other processes crowd the machine's CPUs.
  double write_cpu_seconds = 0;
  double write_system_cpu_seconds = 0;  // of which in the kernel

  double bytes_per_second() const { return static_cast<double>(bytes) / write_seconds; }
  double writes_per_second() const { return static_cast<double>(writes) / write_seconds; }
  double cpu_us_per_write() const { return write_cpu_seconds * 1e6 / static_cast<double>(writes); }
  double system_cpu_us_per_write() const { return write_system_cpu_seconds * 1e6 / static_cast<double>(writes); }
  double durable_bytes_per_second() const { return static_cast<double>(bytes) / (write_seconds + sync_seconds); }
};

struct SyncBatchOptions {
  size_t message_bytes = 1024;
  int batch_size = 1;  // pwrites per fdatasync
  uint64_t max_syncs = 5000;
  double max_seconds = 1.0;  // stop after this long even if max_syncs is not reached
  BlockState blocks = BlockState::kPretouched;
  // kFallocated/kPretouched: writes cycle through this prepared region, so
  // every timed write lands on prepared blocks. kFresh appends without bound.
  uint64_t region_bytes = uint64_t{64} << 20;
};

struct SyncBatchResult {
  int batch_size = 0;
  uint64_t messages = 0;
  uint64_t syncs = 0;
  double seconds = 0;                  // the whole loop: pwrites and fdatasyncs
  std::vector<double> sync_latency_us;  // each fdatasync, sorted ascending

  double syncs_per_second() const { return static_cast<double>(syncs) / seconds; }
  double messages_per_second() const { return static_cast<double>(messages) / seconds; }
  // Nearest-rank percentile, q in (0, 1].
  double sync_latency_us_at(double q) const {
    MQ_ASSERT(!sync_latency_us.empty());
    MQ_ASSERT(q > 0 && q <= 1);
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sync_latency_us.size())));
    return sync_latency_us[std::max<size_t>(rank, 1) - 1];
  }
};

namespace detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time the calling thread has used so far.
inline double thread_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The part of it spent in the kernel (getrusage's tick-sampled split, good
// to about a percent over a run of a second or more).
inline double thread_system_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) * 1e-6;
}

inline Status errno_status(std::string_view path, std::string_view operation, int error) {
  return Status::IoError(std::string(path) + ": " + std::string(operation) + ": " +
                         std::generic_category().message(error));
}

// Owns one fd; removes nothing (the caller owns the file's name).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&&) = delete;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

inline Status write_all(int fd, const std::string& path, const uint8_t* data, size_t length, uint64_t offset) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pwrite(fd, data + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_status(path, "pwrite at " + std::to_string(offset + done), n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

inline Status sync_data(int fd, const std::string& path) {
  while (::fdatasync(fd) != 0) {
    if (errno != EINTR) return errno_status(path, "fdatasync", errno);
  }
  return Status::Ok();
}

// A fresh file at path (replacing any), its first `bytes` prepared as blocks says.
inline Result<ScopedFd> create_prepared(const std::string& path, BlockState blocks, uint64_t bytes) {
  ScopedFd file(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (file.get() < 0) return errno_status(path, "open", errno);
  const int fd = file.get();
  if (blocks == BlockState::kFallocated) {
    const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (error != 0) return errno_status(path, "posix_fallocate", error);
  } else if (blocks == BlockState::kPretouched) {
    // 64 KiB per pwrite, as PosixFilePreparer pre-touches a segment: the
    // size of these writes sets the page cache's folio size, and with it
    // the kernel's cost of every later small overwrite (posix_file_preparer.cc).
    const std::vector<uint8_t> zeros(size_t{64} << 10, 0);
    for (uint64_t offset = 0; offset < bytes; offset += zeros.size()) {
      const size_t length = static_cast<size_t>(std::min<uint64_t>(zeros.size(), bytes - offset));
      MQ_RETURN_IF_ERROR(write_all(fd, path, zeros.data(), length, offset));
    }
  }
  // Whatever preparation dirtied must not be written back inside the timed pass.
  MQ_RETURN_IF_ERROR(sync_data(fd, path));
  return file;
}

}  // namespace detail

// (a) total_bytes in chunk_bytes pwrites to a fresh file at path, then one
// fdatasync. Removes the file afterwards. Requires: chunk_bytes divides total_bytes.
inline Result<SequentialWriteResult> measure_sequential_pwrite(const std::string& path, uint64_t total_bytes,
                                                              size_t chunk_bytes, BlockState blocks) {
  MQ_ASSERT(chunk_bytes > 0);
  MQ_ASSERT(total_bytes % chunk_bytes == 0);
  MQ_ASSIGN_OR_RETURN(const detail::ScopedFd file, detail::create_prepared(path, blocks, total_bytes));
  const int fd = file.get();
  const std::vector<uint8_t> chunk(chunk_bytes, 0xA5);  // non-zero: differs from the pre-touched zeros

  SequentialWriteResult result;
  const auto start = detail::Clock::now();
  const double cpu_start = detail::thread_cpu_seconds();
  const double system_cpu_start = detail::thread_system_cpu_seconds();
  for (uint64_t offset = 0; offset < total_bytes; offset += chunk_bytes) {
    MQ_RETURN_IF_ERROR(detail::write_all(fd, path, chunk.data(), chunk.size(), offset));
    ++result.writes;
  }
  result.write_cpu_seconds = detail::thread_cpu_seconds() - cpu_start;
  result.write_system_cpu_seconds = detail::thread_system_cpu_seconds() - system_cpu_start;
  result.write_seconds = detail::seconds_since(start);
  const auto sync_start = detail::Clock::now();
  MQ_RETURN_IF_ERROR(detail::sync_data(fd, path));
  result.sync_seconds = detail::seconds_since(sync_start);
  result.bytes = total_bytes;
  MQ_ASSERT(result.writes * chunk_bytes == total_bytes);
  ::unlink(path.c_str());
  return result;
}

// (b) message_bytes pwrites, an fdatasync after every batch_size of them,
// until max_syncs or max_seconds. Removes the file afterwards.
inline Result<SyncBatchResult> measure_sync_batches(const std::string& path, const SyncBatchOptions& options) {
  MQ_ASSERT(options.message_bytes > 0);
  MQ_ASSERT(options.batch_size > 0);
  MQ_ASSERT(options.region_bytes >= options.message_bytes * static_cast<uint64_t>(options.batch_size));
  const bool cycle = options.blocks != BlockState::kFresh;
  MQ_ASSIGN_OR_RETURN(const detail::ScopedFd file,
                      detail::create_prepared(path, options.blocks, cycle ? options.region_bytes : 0));
  const int fd = file.get();
  const std::vector<uint8_t> message(options.message_bytes, 0xA5);

  SyncBatchResult result;
  result.batch_size = options.batch_size;
  uint64_t position = 0;
  const auto start = detail::Clock::now();
  while (result.syncs < options.max_syncs && detail::seconds_since(start) < options.max_seconds) {
    for (int i = 0; i < options.batch_size; ++i) {
      if (cycle && position + message.size() > options.region_bytes) position = 0;
      MQ_RETURN_IF_ERROR(detail::write_all(fd, path, message.data(), message.size(), position));
      position += message.size();
    }
    const auto sync_start = detail::Clock::now();
    MQ_RETURN_IF_ERROR(detail::sync_data(fd, path));
    result.sync_latency_us.push_back(detail::seconds_since(sync_start) * 1e6);
    ++result.syncs;
    result.messages += static_cast<uint64_t>(options.batch_size);
  }
  result.seconds = detail::seconds_since(start);
  std::sort(result.sync_latency_us.begin(), result.sync_latency_us.end());
  MQ_ASSERT(result.syncs == result.sync_latency_us.size());
  ::unlink(path.c_str());
  return result;
}

}  // namespace mqlab::bench
