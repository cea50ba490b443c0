// store_bench: appends 1 KiB messages through the MessageStore on the real
// POSIX Env and compares with the raw disk doing the same bytes in the same
// run (these machines are shared and noisy: only ratios mean something).
//   ASYNC_FLUSH with 1, 8, 64, 256 puts in flight: msgs/s vs sequential
//   pwrite of the same record bytes.
//   SYNC_FLUSH group commit with 1, 8, 64, 256 puts in flight vs pwrite +
//   fdatasync every 1, 8, 64, 256 writes.
//   Keyed (--cases keyed): ASYNC_FLUSH with the IndexFile on and a UNIQ_KEY
//   per message, as every message a broker receives carries one, vs the same
//   store without keys in the same run: the index's cost per put.
//   Pool (--cases pool): ASYNC_FLUSH with transientStorePoolEnable (puts
//   acknowledged from the write buffer, committed every 200 ms) vs without
//   and vs sequential pwrite of the same bytes, in the same run.
//   Mapped (--cases mapped): ASYNC_FLUSH writing the active segment through
//   its mapping (commitLogMappedWriteEnable, the default) vs with a pwrite
//   per group write, in the same run, on each block state of --blocks.
//   Put thread (--cases putthread): SYNC_FLUSH with the group commit's
//   fdatasync on the put thread (groupCommitOnPutThreadEnable, the default)
//   vs on a flush thread, pre-touched, in the same run.
// Each three times: on pre-touched blocks (the store with warmMapedFileEnable, the
// raw file written with zeros and synced first), on fresh ones (the store
// creating and fallocating each segment on the put path, as before
// pre-allocation; the raw file fallocated only): a thin-provisioned disk
// writes never-written blocks several times slower; and on recycled ones
// (recycleExpiredCommitLogEnable, retention deleting every segment but the
// active one ten times a second: the steady state of a broker whose
// retention keeps pace, each new segment made from an expired one, whose
// blocks are written already; against the pre-touched raw file, which is
// rewritten the same way). With pre-touching, each segment rolled onto in a
// window was written with zeros while the puts ran: the disk wrote it twice.
// Also the latency of the put that rolls onto a new segment, and with
// --scaling-gib a run of N GiB with segment rolls and retention deleting old
// segments as it goes (usage stays under a few segments).
// --label names the store's figures (default "store"; the raw baselines keep
// "raw_"): make bench runs the profile-guided build's store_bench (make pgo)
// as "store_pgo" on the ASYNC_FLUSH cases.
// Output: one line per figure, `name value unit [ratio=x.xx vs BASELINE]`.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bench/figure_label.h"
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
  int64_t async_messages = 200'000;
  int body_bytes = 1024;
  int64_t segment_mib = 64;
  std::string scaling_gib;  // "1,4": the scaling runs; empty: none
  std::string blocks = "pretouched,fresh,recycled";
  std::vector<int> in_flight = {1, 8, 64, 256};
  bool keyed = false;  // a UNIQ_KEY per message, messageIndexEnable on
  bool transient_store_pool = false;  // transientStorePoolEnable
  bool mapped_write = true;  // commitLogMappedWriteEnable (ASYNC_FLUSH only)
  bool sync_on_put_thread = true;  // groupCommitOnPutThreadEnable (SYNC_FLUSH only)
  std::string label = "store";  // the store figures' names start with it (raw_* keep theirs)
};

// Pre-touched: segments prepared and warmed off the put path. Fresh: created
// and fallocated on the put path, as mqlab did before pre-allocation.
// Recycled: pre-touched, and expired segments recycled into new ones.
enum class Segments { kWarm, kFresh, kRecycled };
const char* segments_name(Segments segments) {
  switch (segments) {
    case Segments::kWarm: return "pretouched";
    case Segments::kFresh: return "fresh";
    case Segments::kRecycled: return "recycled";
  }
  return "?";
}

store::MessageStoreConfig bench_config(const Options& options, const std::string& root, store::FlushDiskType flush,
                                       Segments segments) {
  store::MessageStoreConfig config;
  config.storePathRootDir = root;
  config.mappedFileSizeCommitLog = options.segment_mib << 20;
  config.maxMessageSize = 64 * 1024;
  config.flushDiskType = flush;
  // The raw baseline writes one file; the keyed case measures the index
  // with RocketMQ's default layout (a 420 MB file, 5M slots).
  config.messageIndexEnable = options.keyed;
  config.transientStorePoolEnable = options.transient_store_pool;
  config.commitLogMappedWriteEnable = options.mapped_write;
  config.groupCommitOnPutThreadEnable = options.sync_on_put_thread;
  config.warmMapedFileEnable = segments != Segments::kFresh;
  config.allocateMappedFileEnable = segments != Segments::kFresh;
  config.recycleExpiredCommitLogEnable = segments == Segments::kRecycled;
  // Retention as tight as it goes: every segment but the active one is
  // deleted once a second, so a long run stays within a few segments of disk.
  // The machine's disk is shared and fuller than the default thresholds.
  config.fileReservedTime = 0;
  config.diskMaxUsedSpaceRatio = 10;
  config.cleanResourceInterval = 1'000;
  config.diskSpaceWarningLevelRatio = 0.99;
  config.diskSpaceCleanForciblyRatio = 0.99;
  if (segments == Segments::kRecycled) {
    // Deletion by age at every hour, not for space (which never recycles),
    // often enough that each roll's request finds an expired segment kept.
    config.deleteWhen = "00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;15;16;17;18;19;20;21;22;23";
    config.diskMaxUsedSpaceRatio = 95;
    config.cleanResourceInterval = 100;
  }
  return config;
}

// Message number n. Keyed: a 32-hex-digit UNIQ_KEY unique to n, the length
// of the Java client's MessageClientIDSetter ids.
store::MessageToStore bench_message(int body_bytes, int64_t n, bool keyed) {
  store::MessageToStore message;
  message.topic = "BenchTopic";
  message.queue_id = static_cast<int32_t>(n % 8);
  message.body.assign(static_cast<size_t>(body_bytes), 0x5A);
  message.born_host = store::HostAddress::ipv4(127, 0, 0, 1, 40000);
  message.born_timestamp_ms = 1;
  if (keyed) {
    char uniq_key[40];
    std::snprintf(uniq_key, sizeof(uniq_key), "7F000001%08X%016llX", 40000u, static_cast<unsigned long long>(n));
    message.properties[std::string(store::kPropertyUniqKey)] = uniq_key;
  }
  return message;
}

struct RunResult {
  int64_t messages = 0;
  int64_t bytes = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // the broker core's thread (this one) over the timed puts
  double system_cpu_seconds = 0;  // of which in the kernel
  int64_t failures = 0;
  int64_t record_bytes = 0;
  std::vector<double> put_us;   // every timed put, issue to reply
  std::vector<double> roll_us;  // the puts that opened a new segment
  uint64_t segments_taken_ready = 0;
  uint64_t segments_taken_half_prepared = 0;  // of those ready: stopped mid pre-touch and taken
  uint64_t segments_made_on_put_path = 0;
  uint64_t segments_recycled = 0;  // made ready from an expired segment
  uint64_t segments_deleted = 0;
  double msgs_per_second() const { return static_cast<double>(messages) / seconds; }
  double mb_per_second() const { return static_cast<double>(bytes) / seconds / 1e6; }
  double cpu_us_per_msg() const { return cpu_seconds * 1e6 / static_cast<double>(messages); }
  double system_cpu_us_per_msg() const { return system_cpu_seconds * 1e6 / static_cast<double>(messages); }
};

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

// Keeps `in_flight` puts outstanding until `max_bytes` are stored or
// `seconds` pass. First an untimed warm-up fills the first segment, so the
// timed puts land on a segment made the way `segments` says (the first
// segment of an empty log is always made on the put path).
RunResult run_puts(const Options& options, store::FlushDiskType flush, Segments segments, int in_flight,
                   int64_t max_bytes, double seconds) {
  const std::string root = options.dir + "/store";
  std::filesystem::remove_all(root);
  env::PosixEnv env(uint64_t{1});
  const int64_t segment_bytes = options.segment_mib << 20;
  store::MessageStore store(env, bench_config(options, root, flush, segments),
                            store::HostAddress::ipv4(127, 0, 0, 1, 10911));
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
  bool timing = false;
  int64_t issued = 0;
  int64_t stored_bytes = 0;
  int outstanding = 0;
  auto start = Clock::now();
  auto deadline = start + std::chrono::hours(1);
  // The bench's own share of a put, kept small: the raw baseline's loop is
  // a bare pwrite. One clock read per put issued (its start, and the
  // deadline check) and one per timed reply; each put's callback is a
  // pointer and a start time, which std::function holds without allocating.
  const Clock::time_point untimed{};
  std::function<void()> issue;
  std::function<void(const store::PutMessageResult&, Clock::time_point)> on_reply =
      [&](const store::PutMessageResult& put, Clock::time_point put_start) {
        --outstanding;
        const bool timed = put_start != untimed;
        if (put.status == store::PutMessageStatus::PUT_OK) {
          stored_bytes += put.append.wrote_bytes;
          result.record_bytes = put.append.wrote_bytes;
          if (timed) {
            ++result.messages;
            result.bytes += put.append.wrote_bytes;
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - put_start).count();
            result.put_us.push_back(us);
            if (put.append.wrote_offset.value() % segment_bytes == 0) result.roll_us.push_back(us);
          }
        } else if (timed) {
          ++result.failures;
        }
        issue();
      };
  issue = [&] {
    while (outstanding < in_flight && stored_bytes + outstanding * 1100 < max_bytes) {
      const Clock::time_point now = Clock::now();
      if (now >= deadline) break;
      ++issued;
      ++outstanding;
      const Clock::time_point put_start = timing ? now : untimed;
      store.put_message(bench_message(options.body_bytes, issued, options.keyed),
                        [reply = &on_reply, put_start](store::PutMessageResult put) { (*reply)(put, put_start); });
    }
  };
  // Warm-up, untimed: past the first roll (in_flight 256 for speed), each
  // time letting a pre-allocated segment get ready first, so the timed puts
  // start on a segment made as `segments` says, with the next one prepared
  // (the steady state of a broker that is not saturated).
  const auto* allocator = store.commit_log().file_queue().allocator();
  auto wait_for_prepared = [&] {
    if (allocator) env.run_until([&] { return allocator->has_ready(); }, std::chrono::seconds(60));
  };
  {
    const int timed_in_flight = in_flight;
    const int64_t timed_max = max_bytes;
    in_flight = 1;
    max_bytes = 2200;
    issue();
    env.run_until([&] { return outstanding == 0; }, std::chrono::seconds(30));
    wait_for_prepared();
    in_flight = 256;
    // Recycled: three segments, so that retention has expired ones to keep.
    max_bytes = (segments == Segments::kRecycled ? 3 : 1) * segment_bytes + 8192;
    issue();
    env.run_until([&] { return outstanding == 0; }, std::chrono::seconds(300));
    wait_for_prepared();
    if (segments == Segments::kRecycled) {
      const store::MappedFileQueue& queue = store.commit_log().file_queue();
      env.run_until([&] { return queue.holds_recycled() || allocator->recycled() > 0; }, std::chrono::seconds(30));
    }
    max_bytes = timed_max;
    in_flight = timed_in_flight;
  }
  const uint64_t taken_before = allocator ? allocator->taken() : 0;
  const uint64_t missed_before = allocator ? allocator->missed() : 0;
  const uint64_t half_prepared_before = allocator ? allocator->taken_half_prepared() : 0;
  const uint64_t recycled_before = allocator ? allocator->recycled() : 0;
  const uint64_t deleted_before = store.stats().segments_deleted;
  timing = true;
  stored_bytes = 0;
  const double cpu_start = bench::detail::thread_cpu_seconds();
  const double system_cpu_start = bench::detail::thread_system_cpu_seconds();
  start = Clock::now();
  deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  issue();
  env.run_until([&] { return outstanding == 0 && (stored_bytes + 1100 >= max_bytes || Clock::now() >= deadline); },
                std::chrono::seconds(3600));
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = bench::detail::thread_cpu_seconds() - cpu_start;
  result.system_cpu_seconds = bench::detail::thread_system_cpu_seconds() - system_cpu_start;
  if (allocator) {
    result.segments_taken_ready = allocator->taken() - taken_before;
    result.segments_taken_half_prepared = allocator->taken_half_prepared() - half_prepared_before;
    result.segments_made_on_put_path = allocator->missed() - missed_before;
    result.segments_recycled = allocator->recycled() - recycled_before;
  } else {
    result.segments_made_on_put_path = result.roll_us.size();
  }
  result.segments_deleted = store.stats().segments_deleted - deleted_before;
  bool stopped = false;
  store.shutdown([&](Status) { stopped = true; });
  env.run_until([&] { return stopped; }, std::chrono::seconds(60));
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

bench::BlockState raw_blocks(Segments segments) {
  return segments == Segments::kFresh ? bench::BlockState::kFallocated : bench::BlockState::kPretouched;
}

[[noreturn]] void fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "store_bench: %s: %s\n", what.c_str(), status.to_string().c_str());
  std::exit(1);
}

void run_async(const Options& options, Segments segments) {
  const std::string tag = segments_name(segments);
  std::vector<double> roll_us;
  for (int in_flight : options.in_flight) {
    const RunResult store = run_puts(options, store::FlushDiskType::ASYNC_FLUSH, segments, in_flight,
                                     options.async_messages * 1100, 60.0);
    // The same bytes in record-sized pwrites, right after, on blocks prepared alike.
    const uint64_t total = static_cast<uint64_t>(store.messages) * static_cast<uint64_t>(store.record_bytes);
    auto raw = bench::measure_sequential_pwrite(options.dir + "/raw-seq", total,
                                                static_cast<size_t>(store.record_bytes), raw_blocks(segments));
    if (!raw.ok()) fail("raw sequential pwrite", raw.status());
    const std::string name = options.label + "_async_flush_1k_inflight" + std::to_string(in_flight) + "_" + tag;
    const std::string raw_name = "raw_pwrite_seq_1k_" + tag;
    print(raw_name + "_for_inflight" + std::to_string(in_flight), raw->writes_per_second(), "writes/s");
    print(name, store.msgs_per_second(), "msgs/s", raw->writes_per_second(), raw_name);
    print(name + "_mb", store.mb_per_second(), "MB/s", raw->bytes_per_second() / 1e6, raw_name + "_mb");
    // CPU per message: stable on a crowded machine, where wall time is not.
    // The ratio is raw / store, so higher is better as for msgs/s.
    print(raw_name + "_cpu_for_inflight" + std::to_string(in_flight), raw->cpu_us_per_write(), "us/write");
    std::printf("%s_cpu %.2f us/msg ratio=%.2f vs %s_cpu\n", name.c_str(), store.cpu_us_per_msg(),
                raw->cpu_us_per_write() / store.cpu_us_per_msg(), raw_name.c_str());
    // The kernel's share of each: where a put's extra CPU goes.
    std::printf("%s_cpu_system_for_inflight%d %.2f us/write\n", raw_name.c_str(), in_flight,
                raw->system_cpu_us_per_write());
    std::printf("%s_cpu_system %.2f us/msg\n", name.c_str(), store.system_cpu_us_per_msg());
    print(name + "_put_p50", percentile(store.put_us, 0.5), "us");
    print(name + "_put_p99", percentile(store.put_us, 0.99), "us");
    if (store.failures > 0) print(name + "_failures", static_cast<double>(store.failures), "puts");
    // A roll onto a segment the allocator had not finished takes it half
    // prepared (allocated, pre-touched part way) or, when not even allocated,
    // makes one on the put path: either way the preparer fell behind the puts.
    print(name + "_segments_ready", static_cast<double>(store.segments_taken_ready), "segments");
    print(name + "_segments_on_put_path", static_cast<double>(store.segments_made_on_put_path), "segments");
    print(name + "_segments_half_prepared", static_cast<double>(store.segments_taken_half_prepared), "segments");
    if (segments == Segments::kRecycled) {
      print(name + "_segments_recycled", static_cast<double>(store.segments_recycled), "segments");
    }
    roll_us.insert(roll_us.end(), store.roll_us.begin(), store.roll_us.end());
  }
  if (!roll_us.empty()) {
    double sum = 0;
    for (double us : roll_us) sum += us;
    print(options.label + "_async_flush_roll_put_mean_" + tag, sum / static_cast<double>(roll_us.size()), "us");
    print(options.label + "_async_flush_roll_put_max_" + tag, *std::max_element(roll_us.begin(), roll_us.end()), "us");
    print(options.label + "_async_flush_rolls_" + tag, static_cast<double>(roll_us.size()), "rolls");
  }
}

void run_sync(const Options& options, Segments segments) {
  const std::string tag = segments_name(segments);
  for (int in_flight : options.in_flight) {
    const RunResult store = run_puts(options, store::FlushDiskType::SYNC_FLUSH, segments, in_flight, INT64_MAX,
                                     options.seconds_per_case);
    bench::SyncBatchOptions raw_options;
    raw_options.message_bytes = static_cast<size_t>(store.record_bytes);
    raw_options.batch_size = in_flight;
    raw_options.max_seconds = options.seconds_per_case;
    raw_options.max_syncs = 10'000'000;
    raw_options.blocks = raw_blocks(segments);
    // Fresh blocks must stay fresh for the whole case: a region larger than
    // the case writes (fallocate is instant); pre-touched ones cycle in 64 MiB.
    raw_options.region_bytes = segments == Segments::kFresh ? (uint64_t{2} << 30) : (uint64_t{64} << 20);
    auto raw = bench::measure_sync_batches(options.dir + "/raw-sync", raw_options);
    if (!raw.ok()) fail("raw sync baseline", raw.status());
    const std::string raw_name = "raw_pwrite_fdatasync_1k_batch" + std::to_string(in_flight) + "_" + tag;
    const std::string name = options.label + "_sync_flush_1k_inflight" + std::to_string(in_flight) + "_" + tag;
    print(raw_name, raw->messages_per_second(), "msgs/s");
    print(raw_name + "_sync_p50", raw->sync_latency_us_at(0.5), "us");
    print(name, store.msgs_per_second(), "msgs/s", raw->messages_per_second(), raw_name);
    print(name + "_put_p50", percentile(store.put_us, 0.5), "us");
    print(name + "_put_p99", percentile(store.put_us, 0.99), "us");
    // Each roll in the window had the next segment prepared (written with
    // zeros and synced, pre-touched) while these puts ran, on the same disk:
    // the raw baseline rewrites one pre-touched region and prepares nothing.
    print(name + "_rolls",
          static_cast<double>(store.segments_taken_ready + store.segments_taken_half_prepared +
                              store.segments_made_on_put_path),
          "rolls");
    // Of the segments made ready in the window, those made from expired ones
    // (no zeros written): the rest were pre-touched while the puts ran.
    if (segments == Segments::kRecycled) {
      print(name + "_recycled", static_cast<double>(store.segments_recycled), "segments");
    }
    if (store.failures > 0) print(name + "_failures", static_cast<double>(store.failures), "puts");
  }
}

// One run with the switch off, then one with it on, back to back in this
// run, on pre-touched blocks (their ratio is the switch's cost or gain).
// ASYNC_FLUSH runs put async_messages; SYNC_FLUSH ones run seconds_per_case.
struct OffOn {
  RunResult without;
  RunResult with;
};
OffOn run_off_then_on(const Options& options, bool Options::*on_off, int in_flight,
                      store::FlushDiskType flush = store::FlushDiskType::ASYNC_FLUSH,
                      Segments segments = Segments::kWarm) {
  Options off = options;
  off.*on_off = false;
  Options on = options;
  on.*on_off = true;
  const bool sync = flush == store::FlushDiskType::SYNC_FLUSH;
  const int64_t max_bytes = sync ? INT64_MAX : options.async_messages * 1100;
  const double seconds = sync ? options.seconds_per_case : 60.0;
  RunResult without = run_puts(off, flush, segments, in_flight, max_bytes, seconds);
  RunResult with = run_puts(on, flush, segments, in_flight, max_bytes, seconds);
  return OffOn{std::move(without), std::move(with)};
}

// ASYNC_FLUSH with a UNIQ_KEY per message vs the same without keys, one
// after the other in this run: the ratio is the index's share of a put.
void run_keyed(const Options& options) {
  for (int in_flight : options.in_flight) {
    const auto [without, with] = run_off_then_on(options, &Options::keyed, in_flight);
    const std::string base = options.label + "_async_flush_1k_inflight" + std::to_string(in_flight) + "_nokey";
    const std::string name = options.label + "_async_flush_1k_keyed_inflight" + std::to_string(in_flight);
    print(base, without.msgs_per_second(), "msgs/s");
    print(name, with.msgs_per_second(), "msgs/s", without.msgs_per_second(), base);
    print(base + "_cpu", without.cpu_us_per_msg(), "us/msg");
    // Higher is better, as for msgs/s: nokey / keyed.
    std::printf("%s_cpu %.2f us/msg ratio=%.2f vs %s_cpu\n", name.c_str(), with.cpu_us_per_msg(),
                without.cpu_us_per_msg() / with.cpu_us_per_msg(), base.c_str());
    print(name + "_put_p50", percentile(with.put_us, 0.5), "us");
    print(name + "_put_p99", percentile(with.put_us, 0.99), "us");
    if (with.failures > 0) print(name + "_failures", static_cast<double>(with.failures), "puts");
  }
}

// ASYNC_FLUSH with transientStorePoolEnable vs without, then sequential
// pwrite of the pool run's bytes, one after the other in this run.
void run_pool(const Options& options) {
  for (int in_flight : options.in_flight) {
    const auto [without, with] = run_off_then_on(options, &Options::transient_store_pool, in_flight);
    const uint64_t total = static_cast<uint64_t>(with.messages) * static_cast<uint64_t>(with.record_bytes);
    auto raw = bench::measure_sequential_pwrite(options.dir + "/raw-seq", total, static_cast<size_t>(with.record_bytes),
                                                bench::BlockState::kPretouched);
    if (!raw.ok()) fail("raw sequential pwrite", raw.status());
    const std::string suffix = "_inflight" + std::to_string(in_flight);
    const std::string base = options.label + "_async_flush_1k" + suffix + "_nopool";
    const std::string name = options.label + "_async_flush_1k_pool" + suffix;
    const std::string raw_name = "raw_pwrite_seq_1k_pretouched";
    print(raw_name + "_for_pool" + suffix, raw->writes_per_second(), "writes/s");
    print(base, without.msgs_per_second(), "msgs/s", raw->writes_per_second(), raw_name);
    print(name, with.msgs_per_second(), "msgs/s", raw->writes_per_second(), raw_name);
    // CPU per message; ratios raw / store (higher is better, as for msgs/s).
    print(raw_name + "_cpu_for_pool" + suffix, raw->cpu_us_per_write(), "us/write");
    std::printf("%s_cpu %.2f us/msg ratio=%.2f vs %s_cpu\n", base.c_str(), without.cpu_us_per_msg(),
                raw->cpu_us_per_write() / without.cpu_us_per_msg(), raw_name.c_str());
    std::printf("%s_cpu %.2f us/msg ratio=%.2f vs %s_cpu\n", name.c_str(), with.cpu_us_per_msg(),
                raw->cpu_us_per_write() / with.cpu_us_per_msg(), raw_name.c_str());
    std::printf("%s_cpu_vs_nopool %.2f us/msg ratio=%.2f vs %s_cpu\n", name.c_str(), with.cpu_us_per_msg(),
                without.cpu_us_per_msg() / with.cpu_us_per_msg(), base.c_str());
    print(name + "_put_p50", percentile(with.put_us, 0.5), "us");
    print(name + "_put_p99", percentile(with.put_us, 0.99), "us");
    if (with.failures > 0) print(name + "_failures", static_cast<double>(with.failures), "puts");
  }
}

// ASYNC_FLUSH writing through the active segment's mapping vs a pwrite per
// group write, one after the other in this run, on each block state (the
// names of pre-touched ones carry no state, as before there were others:
// on a VM whose TLB shootdowns are dear, the writeback of mapped pages
// costs most on recycled segments).
void run_mapped(const Options& options, Segments segments) {
  for (int in_flight : options.in_flight) {
    const auto [without, with] =
        run_off_then_on(options, &Options::mapped_write, in_flight, store::FlushDiskType::ASYNC_FLUSH, segments);
    const std::string suffix = "_inflight" + std::to_string(in_flight) +
                               (segments == Segments::kWarm ? std::string() : std::string("_") + segments_name(segments));
    const std::string base = options.label + "_async_flush_1k_pwrite" + suffix;
    const std::string name = options.label + "_async_flush_1k_mapped" + suffix;
    print(base, without.msgs_per_second(), "msgs/s");
    print(name, with.msgs_per_second(), "msgs/s", without.msgs_per_second(), base);
    // CPU to two decimals (print() has one): the two differ by tenths.
    std::printf("%s_cpu %.2f us/msg\n", base.c_str(), without.cpu_us_per_msg());
    // Higher is better, as for msgs/s: pwrite / mapped.
    std::printf("%s_cpu %.2f us/msg ratio=%.2f vs %s_cpu\n", name.c_str(), with.cpu_us_per_msg(),
                without.cpu_us_per_msg() / with.cpu_us_per_msg(), base.c_str());
    std::printf("%s_cpu_system %.2f us/msg\n", base.c_str(), without.system_cpu_us_per_msg());
    std::printf("%s_cpu_system %.2f us/msg\n", name.c_str(), with.system_cpu_us_per_msg());
    print(name + "_put_p99", percentile(with.put_us, 0.99), "us");
    if (with.failures > 0) print(name + "_failures", static_cast<double>(with.failures), "puts");
  }
}

// SYNC_FLUSH with the group commit's fdatasync on a flush thread, then on
// the put thread, one after the other in this run: the two thread hops a
// sync costs against the overlap of the next puts with it.
void run_put_thread(const Options& options) {
  for (int in_flight : options.in_flight) {
    const auto [without, with] =
        run_off_then_on(options, &Options::sync_on_put_thread, in_flight, store::FlushDiskType::SYNC_FLUSH);
    const std::string suffix = "_inflight" + std::to_string(in_flight);
    const std::string base = options.label + "_sync_flush_1k_flushthread" + suffix;
    const std::string name = options.label + "_sync_flush_1k_putthread" + suffix;
    print(base, without.msgs_per_second(), "msgs/s");
    print(name, with.msgs_per_second(), "msgs/s", without.msgs_per_second(), base);
    print(base + "_put_p50", percentile(without.put_us, 0.5), "us");
    print(name + "_put_p50", percentile(with.put_us, 0.5), "us");
    print(base + "_put_p99", percentile(without.put_us, 0.99), "us");
    print(name + "_put_p99", percentile(with.put_us, 0.99), "us");
    if (without.failures > 0) print(base + "_failures", static_cast<double>(without.failures), "puts");
    if (with.failures > 0) print(name + "_failures", static_cast<double>(with.failures), "puts");
  }
}

// N GiB through an ASYNC_FLUSH store with warm pre-allocation, retention
// deleting segments as it goes: msgs/s should not fall with N.
void run_scaling(const Options& options, double gib) {
  const RunResult store = run_puts(options, store::FlushDiskType::ASYNC_FLUSH, Segments::kWarm, 64,
                                   static_cast<int64_t>(gib * (1LL << 30)), 3600.0);
  std::ostringstream label;
  label << options.label << "_scaling_async_" << gib << "gib";
  print(label.str(), store.msgs_per_second(), "msgs/s");
  print(label.str() + "_mb", store.mb_per_second(), "MB/s");
  print(label.str() + "_seconds", store.seconds, "s");
  print(label.str() + "_put_p99", percentile(store.put_us, 0.99), "us");
  print(label.str() + "_segments_ready", static_cast<double>(store.segments_taken_ready), "segments");
  print(label.str() + "_segments_on_put_path", static_cast<double>(store.segments_made_on_put_path), "segments");
  print(label.str() + "_segments_half_prepared", static_cast<double>(store.segments_taken_half_prepared), "segments");
  if (!store.roll_us.empty()) {
    print(label.str() + "_roll_put_max", *std::max_element(store.roll_us.begin(), store.roll_us.end()), "us");
  }
  print(label.str() + "_segments_deleted", static_cast<double>(store.segments_deleted), "segments");
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  Options options;
  std::string cases;
  std::string in_flight = "1,8,64,256";
  po::options_description description("store_bench: MessageStore appends vs the raw disk");
  description.add_options()("help,h", "show this help")(
      "dir", po::value(&options.dir)->default_value(""), "scratch directory (default: a fresh one under /tmp)")(
      "seconds", po::value(&options.seconds_per_case)->default_value(2.0), "seconds per SYNC_FLUSH case")(
      "async-messages", po::value(&options.async_messages)->default_value(200'000),
      "messages per ASYNC_FLUSH case")("segment-mib", po::value(&options.segment_mib)->default_value(64),
                                       "CommitLog segment size (MiB)")(
      "blocks", po::value(&options.blocks)->default_value("pretouched,fresh,recycled"),
      "block states to run: pretouched,fresh,recycled")(
      "cases", po::value(&cases)->default_value("async,sync"), "which cases: async,sync,keyed,pool,mapped,putthread")(
      "inflight", po::value(&in_flight)->default_value("1,8,64,256"), "puts in flight, comma-separated")(
      "scaling-gib", po::value(&options.scaling_gib)->default_value(""),
      "comma-separated GiB totals for the scaling runs (e.g. 1,4,16)")(
      "label", po::value(&options.label)->default_value(options.label),
      "first word of the store figures' names (make bench: store_pgo for the profile-guided build)");
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
  if (options.segment_mib < 4) {
    std::cerr << "store_bench: --segment-mib must be at least 4\n";
    return 2;
  }
  if (!bench::is_figure_label(options.label)) {
    std::cerr << "store_bench: --label must be one word, not '" << options.label << "'\n";
    return 2;
  }
  set_log_level(LogLevel::kError);
  bool own_dir = false;
  if (options.dir.empty()) {
    char pattern[] = "/tmp/mqlab-store-bench-XXXXXX";
    options.dir = ::mkdtemp(pattern);
    own_dir = true;
  }
  options.in_flight.clear();
  for (const std::string& item : split(in_flight)) {
    const int value = std::atoi(item.c_str());
    if (value < 1 || value > 4096) {
      std::cerr << "store_bench: --inflight: '" << item << "' is not a count in 1..4096\n";
      return 2;
    }
    options.in_flight.push_back(value);
  }
  std::vector<Segments> block_states;
  for (const std::string& item : split(options.blocks)) {
    if (item == "pretouched") {
      block_states.push_back(Segments::kWarm);
    } else if (item == "fresh") {
      block_states.push_back(Segments::kFresh);
    } else if (item == "recycled") {
      block_states.push_back(Segments::kRecycled);
    } else {
      std::cerr << "store_bench: --blocks: '" << item << "' is none of pretouched, fresh, recycled\n";
      return 2;
    }
  }
  for (const std::string& item : split(cases)) {
    if (item != "async" && item != "sync" && item != "keyed" && item != "pool" && item != "mapped" &&
        item != "putthread") {
      std::cerr << "store_bench: --cases: '" << item << "' is none of async, sync, keyed, pool, mapped, putthread\n";
      return 2;
    }
    if (item == "putthread") {
      run_put_thread(options);  // pre-touched blocks only: where the sync runs is the variable
      continue;
    }
    if (item == "mapped") {
      for (Segments segments : block_states) run_mapped(options, segments);
      continue;
    }
    if (item == "pool") {
      run_pool(options);  // pre-touched blocks only: the pool is the variable
      continue;
    }
    if (item == "keyed") {
      run_keyed(options);  // pre-touched blocks only: the index is the variable
      continue;
    }
    for (Segments segments : block_states) {
      if (item == "async") run_async(options, segments);
      if (item == "sync") run_sync(options, segments);
    }
  }
  for (const std::string& item : split(options.scaling_gib)) run_scaling(options, std::stod(item));
  if (own_dir) std::filesystem::remove_all(options.dir);
  return 0;
}
