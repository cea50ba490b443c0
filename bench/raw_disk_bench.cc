// raw_disk_bench: prints the raw disk baselines (bench/raw_disk_baseline.h)
// of the machine it runs on, one `name value unit` line each, for the store
// benchmark to compare against. Runs in a fresh directory under /tmp (or
// --dir) for about 10-15 seconds (defaults) and removes what it wrote.
#include <stdlib.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "bench/raw_disk_baseline.h"

namespace {

using mqlab::bench::BlockState;

// 1024 -> "1k", 1 MiB -> "1m": the size part of a result's name.
std::string size_label(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes % 1024 == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

void print(const std::string& name, double value, const char* unit) {
  std::printf("%s %.1f %s\n", name.c_str(), value, unit);
  std::fflush(stdout);
}

bool run_sequential(const std::string& dir, uint64_t total_bytes, size_t chunk_bytes, BlockState blocks) {
  const std::string name = "raw_pwrite_seq_" + size_label(chunk_bytes) + "_" +
                           std::string(mqlab::bench::block_state_name(blocks));
  auto result = mqlab::bench::measure_sequential_pwrite(dir + "/seq", total_bytes, chunk_bytes, blocks);
  if (!result.ok()) {
    std::cerr << name << ": " << result.status().to_string() << "\n";
    return false;
  }
  print(name, result->bytes_per_second() / 1e6, "MB/s");
  print(name + "_writes", result->writes_per_second(), "writes/s");
  print(name + "_durable", result->durable_bytes_per_second() / 1e6, "MB/s");
  return true;
}

bool run_sync_batches(const std::string& dir, const mqlab::bench::SyncBatchOptions& options) {
  const std::string name = "raw_fdatasync_" + size_label(options.message_bytes) + "_batch" +
                           std::to_string(options.batch_size) + "_" +
                           std::string(mqlab::bench::block_state_name(options.blocks));
  auto result = mqlab::bench::measure_sync_batches(dir + "/sync", options);
  if (!result.ok()) {
    std::cerr << name << ": " << result.status().to_string() << "\n";
    return false;
  }
  print(name + "_syncs", result->syncs_per_second(), "syncs/s");
  print(name + "_msgs", result->messages_per_second(), "msgs/s");
  print(name + "_p50", result->sync_latency_us_at(0.50), "us");
  print(name + "_p99", result->sync_latency_us_at(0.99), "us");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string parent_dir;
  uint64_t total_mib = 0;
  double sync_seconds = 0;
  size_t message_bytes = 0;
  po::options_description description("raw_disk_bench: raw pwrite and fdatasync baselines");
  description.add_options()("help", "show this help")(
      "dir", po::value(&parent_dir)->default_value("/tmp"), "where the scratch directory is made")(
      "seq-mib", po::value(&total_mib)->default_value(256), "MiB written per sequential case")(
      "sync-seconds", po::value(&sync_seconds)->default_value(1.5), "seconds per fdatasync batch case")(
      "message-bytes", po::value(&message_bytes)->default_value(1024), "bytes per message in the fdatasync cases");
  po::variables_map options;
  try {
    po::store(po::parse_command_line(argc, argv, description), options);
    po::notify(options);
  } catch (const po::error& error) {
    std::cerr << error.what() << "\n" << description;
    return 2;
  }
  if (options.count("help")) {
    std::cout << description;
    return 0;
  }

  std::string pattern = parent_dir + "/mqlab_raw_disk_XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    return 1;
  }
  const std::string dir = pattern;
  std::cerr << "raw_disk_bench: scratch directory " << dir << "\n";

  bool ok = true;
  const uint64_t total_bytes = total_mib << 20;
  for (size_t chunk : {size_t{1} << 10, size_t{4} << 10, size_t{1} << 20}) {
    ok &= run_sequential(dir, total_bytes, chunk, BlockState::kFresh);
    if (chunk == (size_t{4} << 10)) ok &= run_sequential(dir, total_bytes, chunk, BlockState::kFallocated);
    ok &= run_sequential(dir, total_bytes, chunk, BlockState::kPretouched);
  }

  mqlab::bench::SyncBatchOptions sync;
  sync.message_bytes = message_bytes;
  sync.max_seconds = sync_seconds;
  sync.max_syncs = 10'000'000;  // bounded by time, so every case gets as many samples as it can
  for (int batch : {1, 8, 64, 256}) {
    sync.batch_size = batch;
    sync.blocks = BlockState::kPretouched;
    ok &= run_sync_batches(dir, sync);
  }
  // Appending to a fresh file and writing fallocated blocks: each fdatasync
  // also commits metadata (the size, the extent conversion).
  sync.batch_size = 1;
  for (BlockState blocks : {BlockState::kFresh, BlockState::kFallocated}) {
    sync.blocks = blocks;
    ok &= run_sync_batches(dir, sync);
  }

  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return ok ? 0 : 1;
}
