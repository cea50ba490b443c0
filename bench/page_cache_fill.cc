// page_cache_fill: fills the machine's free memory with clean page cache
// (a sparse file, read once) and leaves it there, so the benchmarks that run
// next meet the memory of a machine that has been running a while: every new
// page-cache page then comes from reclaiming an old one, not from free memory
// the hypervisor has never backed. The caller deletes the file when done.
//
// Why: on this virtual machine a guest page the hypervisor does not back
// costs a fault in the host the first time it is written: 8.5-9.5 us per
// 4 KiB page here (2026-12-03; 52-59 us later that day, the host busier),
// against 1.2-1.3 us for a page the guest used a moment ago. And the guest
// hands freed memory back: its balloon driver
// reports free pages to the host, which drops them, so a page freed half a
// minute ago costs the host's fault again (touching 20 GiB twice, 30 s apart:
// 2.75 then 9.46 us per page). Free memory is therefore cold, however often
// it was used. A broker storing 1 KiB messages takes a new page-cache page
// every 4 messages: about 2 us of the host's work per message, in the
// broker's system time. mqbroker's ASYNC_FLUSH produce case at 16 in flight
// measured 3.3-4.5 us of system time per message while free memory lasted
// and 1.4-2.2 us once the page cache had filled the memory (200-215k vs
// 226-253k msgs/s). redis-server barely meets the effect: its AOF rewrites
// free the pages its appends reuse at once. A deployment meets it only on
// its first pass through memory; the benchmarks' young machine meets it in
// every case, unequally, depending on which side of a ratio runs first.
//
// A hole reads as zeros through the page cache: the file costs no disk space
// and no disk I/O, only the pages. Clean and read once, they are the first
// to go when the benchmarks need memory; nothing else is evicted for them.
//
// Run it again to top the cache up: memory freed since (deleted files, ended
// processes) is free, and cold, again; a run with nothing free returns at
// once. Prints `name value unit` lines: how much it filled, and the cost per
// page (--name sets the prefix).
#include <fcntl.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr size_t kPageBytes = 4096;
constexpr size_t kReadBytes = size_t{1} << 20;

// /proc/meminfo's MemFree, in bytes; 0 when it cannot be read.
uint64_t mem_free_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemFree:") return kib * 1024;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string path;
  uint64_t reserve_mib = 1024;
  std::string name = "page_cache_fill";
  po::options_description options(
      "page_cache_fill --file PATH: fill the free memory with clean page cache (see the source's head for why)");
  options.add_options()("help,h", "this help")("file", po::value(&path), "the sparse file to create and read (delete it after)")(
      "reserve-mib", po::value(&reserve_mib)->default_value(reserve_mib), "leave this much memory free")(
      "name", po::value(&name)->default_value(name), "the printed figures' name prefix");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "page_cache_fill: " << e.what() << "\n" << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (path.empty()) {
    std::cerr << "page_cache_fill: --file is required\n" << options;
    return 2;
  }

  const uint64_t reserve = reserve_mib << 20;
  const uint64_t free_at_start = mem_free_bytes();
  const uint64_t size = free_at_start > reserve ? (free_at_start - reserve) / kReadBytes * kReadBytes : 0;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::cerr << "page_cache_fill: cannot create " << path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    std::cerr << "page_cache_fill: cannot size " << path << " to " << size << " bytes: " << std::strerror(errno) << "\n";
    ::close(fd);
    return 1;
  }
  std::vector<char> buffer(kReadBytes);
  uint64_t filled = 0;
  const auto start = std::chrono::steady_clock::now();
  // Stops at the reserve as well, should something beside it take memory
  // meanwhile (checked every 256 MiB).
  while (filled < size) {
    if (filled % (kReadBytes * 256) == 0 && mem_free_bytes() < reserve) break;
    const ssize_t got = ::pread(fd, buffer.data(), kReadBytes, static_cast<off_t>(filled));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      std::cerr << "page_cache_fill: reading " << path << " at " << filled << ": "
                << (got < 0 ? std::strerror(errno) : "unexpected end") << "\n";
      ::close(fd);
      return 1;
    }
    filled += static_cast<uint64_t>(got);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(fd);

  // What the reads took from free memory: the cache they filled. Less than
  // what was read when the file system keeps no pages for holes (tmpfs
  // maps its zero page), so a fill that did nothing says so.
  const uint64_t free_at_end = mem_free_bytes();
  const uint64_t cached = free_at_start > free_at_end ? free_at_start - free_at_end : 0;
  std::printf("%s_filled %llu MiB\n", name.c_str(), static_cast<unsigned long long>(filled >> 20));
  std::printf("%s_free_memory_taken %llu MiB\n", name.c_str(), static_cast<unsigned long long>(cached >> 20));
  std::printf("%s_seconds %.1f s\n", name.c_str(), seconds);
  if (filled > 0) {
    std::printf("%s_per_page %.2f us/page\n", name.c_str(), seconds * 1e6 / static_cast<double>(filled / kPageBytes));
  }
  return 0;
}
