// store_bench: appends 1 KiB messages through the MessageStore on the real
// POSIX Env and compares with the raw disk doing the same bytes in the same
// run (these machines are shared and noisy: only ratios mean something).
//   ASYNC_FLUSH: msgs/s and MB/s vs sequential pwrite of the same record bytes.
//   SYNC_FLUSH group commit with 1, 8, 64, 256 puts in flight vs pwrite +
//   fdatasync every 1, 8, 64, 256 writes.
// Output: one line per figure, `name value unit [ratio=x.xx vs BASELINE]`.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "bench/raw_disk_baseline.h"
#include "broker/common/log.h"
#include "broker/env/posix_env.h"
#include "broker/store/message_store.h"

namespace {
using namespace mqlab;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string dir;
  double seconds_per_case = 2.0;
  int64_t async_messages = 400'000;
  int body_bytes = 1024;
};

store::MessageStoreConfig bench_config(const std::string& root, store::FlushDiskType flush) {
  store::MessageStoreConfig config;
  config.storePathRootDir = root;
  config.mappedFileSizeCommitLog = 256LL << 20;
  config.maxMessageSize = 64 * 1024;
  config.flushDiskType = flush;
  config.messageIndexEnable = false;  // the raw baseline writes one file
  return config;
}

store::MessageToStore bench_message(int body_bytes, int32_t queue_id) {
  store::MessageToStore message;
  message.topic = "BenchTopic";
  message.queue_id = queue_id;
  message.body.assign(static_cast<size_t>(body_bytes), 0x5A);
  message.born_host = store::HostAddress::ipv4(127, 0, 0, 1, 40000);
  message.born_timestamp_ms = 1;
  return message;
}

struct RunResult {
  int64_t messages = 0;
  int64_t bytes = 0;
  double seconds = 0;
  int64_t failures = 0;
  double msgs_per_second() const { return static_cast<double>(messages) / seconds; }
  double mb_per_second() const { return static_cast<double>(bytes) / seconds / 1e6; }
};

// Keeps `in_flight` puts outstanding until `max_messages` or `seconds` pass.
RunResult run_puts(const Options& options, store::FlushDiskType flush, int in_flight, int64_t max_messages,
                   double seconds, int64_t* record_bytes) {
  const std::string root = options.dir + "/store-" + std::to_string(static_cast<int>(flush)) + "-" +
                           std::to_string(in_flight);
  std::filesystem::remove_all(root);
  env::PosixEnv env(uint64_t{1});
  store::MessageStore store(env, bench_config(root, flush), store::HostAddress::ipv4(127, 0, 0, 1, 10911));
  bool started = false;
  store.start([&](Status status) {
    if (!status.ok()) {
      std::fprintf(stderr, "store start failed: %s\n", status.to_string().c_str());
      std::exit(2);
    }
    started = true;
  });
  env.run_until([&] { return started; }, std::chrono::seconds(30));

  RunResult result;
  int64_t issued = 0;
  int outstanding = 0;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::function<void()> issue = [&] {
    while (outstanding < in_flight && issued < max_messages && Clock::now() < deadline) {
      ++issued;
      ++outstanding;
      store.put_message(bench_message(options.body_bytes, static_cast<int32_t>(issued % 8)),
                        [&](store::PutMessageResult put) {
                          --outstanding;
                          if (put.status == store::PutMessageStatus::PUT_OK) {
                            ++result.messages;
                            result.bytes += put.append.wrote_bytes;
                            *record_bytes = put.append.wrote_bytes;
                          } else {
                            ++result.failures;
                          }
                          issue();
                        });
    }
  };
  issue();
  env.run_until([&] { return outstanding == 0 && (issued >= max_messages || Clock::now() >= deadline); },
                std::chrono::seconds(120));
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  bool stopped = false;
  store.shutdown([&](Status) { stopped = true; });
  env.run_until([&] { return stopped; }, std::chrono::seconds(30));
  std::filesystem::remove_all(root);
  return result;
}

void print(const std::string& name, double value, const std::string& unit, double baseline = 0,
           const std::string& baseline_name = "") {
  if (baseline > 0) {
    std::printf("%s %.1f %s ratio=%.2f vs %s\n", name.c_str(), value, unit.c_str(), value / baseline,
                baseline_name.c_str());
  } else {
    std::printf("%s %.1f %s\n", name.c_str(), value, unit.c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  Options options;
  po::options_description description("store_bench: MessageStore appends vs the raw disk");
  description.add_options()("help,h", "show this help")(
      "dir", po::value(&options.dir)->default_value(""), "scratch directory (default: a fresh one under /tmp)")(
      "seconds", po::value(&options.seconds_per_case)->default_value(2.0), "seconds per SYNC_FLUSH case")(
      "async-messages", po::value(&options.async_messages)->default_value(400'000), "messages in the ASYNC_FLUSH run");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, description), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    std::cerr << "store_bench: " << error.what() << "\n" << description;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << description;
    return 0;
  }
  set_log_level(LogLevel::kError);
  bool own_dir = false;
  if (options.dir.empty()) {
    char pattern[] = "/tmp/mqlab-store-bench-XXXXXX";
    options.dir = ::mkdtemp(pattern);
    own_dir = true;
  }

  // ASYNC_FLUSH: the page-cache append rate against sequential pwrite.
  int64_t record_bytes = 0;
  const RunResult async = run_puts(options, store::FlushDiskType::ASYNC_FLUSH, 256, options.async_messages, 60.0,
                                   &record_bytes);
  const uint64_t raw_total = static_cast<uint64_t>(async.messages) * static_cast<uint64_t>(record_bytes);
  auto raw = bench::measure_sequential_pwrite(options.dir + "/raw-seq", raw_total, static_cast<size_t>(record_bytes),
                                              bench::BlockState::kFallocated);
  if (!raw.ok()) {
    std::fprintf(stderr, "raw baseline failed: %s\n", raw.status().to_string().c_str());
    return 1;
  }
  print("raw_pwrite_seq_1k", raw->bytes_per_second() / 1e6, "MB/s");
  print("store_async_flush_1k", async.mb_per_second(), "MB/s", raw->bytes_per_second() / 1e6, "raw_pwrite_seq_1k");
  print("store_async_flush_1k_rate", async.msgs_per_second(), "msgs/s", raw->writes_per_second(),
        "raw_pwrite_seq_1k_rate");

  // SYNC_FLUSH: group commit against pwrite + fdatasync at the same batch.
  for (int in_flight : {1, 8, 64, 256}) {
    const RunResult sync = run_puts(options, store::FlushDiskType::SYNC_FLUSH, in_flight, INT64_MAX,
                                    options.seconds_per_case, &record_bytes);
    bench::SyncBatchOptions raw_options;
    raw_options.message_bytes = static_cast<size_t>(record_bytes);
    raw_options.batch_size = in_flight;
    raw_options.max_seconds = options.seconds_per_case;
    raw_options.max_syncs = 1'000'000;
    raw_options.blocks = bench::BlockState::kFallocated;
    auto raw_sync = bench::measure_sync_batches(options.dir + "/raw-sync", raw_options);
    if (!raw_sync.ok()) {
      std::fprintf(stderr, "raw sync baseline failed: %s\n", raw_sync.status().to_string().c_str());
      return 1;
    }
    const std::string suffix = "_inflight" + std::to_string(in_flight);
    print("raw_pwrite_fdatasync_1k_batch" + std::to_string(in_flight), raw_sync->messages_per_second(), "msgs/s");
    print("store_sync_flush_1k" + suffix, sync.msgs_per_second(), "msgs/s", raw_sync->messages_per_second(),
          "raw_pwrite_fdatasync_1k_batch" + std::to_string(in_flight));
    if (sync.failures > 0) print("store_sync_flush_1k" + suffix + "_failures", static_cast<double>(sync.failures), "puts");
  }
  if (own_dir) std::filesystem::remove_all(options.dir);
  return 0;
}
