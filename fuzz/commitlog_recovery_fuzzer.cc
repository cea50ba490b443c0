// libFuzzer target: CommitLog recovery over arbitrary segment bytes
// (broker/store/store_recovery.cc, commit_log.cc, message_codec.cc). The
// input becomes a stopped store's files on a simulated disk, then the
// MessageStore starts on them:
//   byte 0     bit 0: an abort file is present (abnormal recovery);
//              bit 1: the next 24 bytes are the checkpoint file;
//              bit 2: the last segment file is left short (as written, not
//              preallocated);
//   the rest   segment 00000000000000000000, then the next segments, each
//              kSegmentBytes (zero-padded unless bit 2).
// Whatever the bytes, start-up succeeds or fails with a Status, never a
// crash; and when it succeeds, a put is answered, and a clean shutdown and
// restart keep the CommitLog's max offset exactly (recovery is idempotent).
// Seeds: fuzz/corpus/commitlog_recovery/ (segments with real records).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/store/mapped_file.h"
#include "broker/store/message_store.h"
#include "sim/disk_profile.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace {

using namespace mqlab;

constexpr int32_t kMaxMessageSize = 1024;
// The smallest segment MessageStoreConfig accepts for kMaxMessageSize.
constexpr int64_t kSegmentBytes = kMaxMessageSize + 64 * 1024 + 8;
constexpr size_t kMaxSegments = 3;
constexpr size_t kCheckpointBytes = 24;

store::MessageStoreConfig fuzz_store_config() {
  store::MessageStoreConfig config;
  config.storePathRootDir = "/store";
  config.maxMessageSize = kMaxMessageSize;
  config.mappedFileSizeCommitLog = kSegmentBytes;
  config.mappedFileSizeConsumeQueue = 20 * 64;
  config.maxHashSlotNum = 64;
  config.maxIndexNum = 256;
  config.flushDiskType = store::FlushDiskType::SYNC_FLUSH;
  return config;
}

// One machine with one disk and the store's process, as StoreSimWorld in the
// store tests (which needs GoogleTest).
class RecoveryWorld {
 public:
  RecoveryWorld()
      : random_(1),
        clock_(scheduler_),
        disk_(scheduler_, sim::DiskProfile::nvme(),
              sim::SimDiskOptions{.name = "disk0", .capacity_bytes = 1ull << 30, .torn_sector_probability = 0},
              random_.split()),
        process_("broker", scheduler_, clock_, {sim::Mount{"/", &disk_}}, random_.split()) {}
  ~RecoveryWorld() {
    if (process_.running()) process_.kill();
    store_.reset();
  }

  void write_file(const std::string& path, std::span<const uint8_t> bytes, uint64_t size) {
    auto file = disk_.open(path, env::OpenOptions{.create = true}, sim::kWorldOwner, path);
    MQ_ASSERT_MSG(file.ok(), file.status().to_string());
    if (!bytes.empty()) MQ_ASSERT((*file)->pwrite(0, bytes).ok());
    if (size > bytes.size()) MQ_ASSERT((*file)->truncate(size).ok());
  }
  sim::SimDisk& disk() { return disk_; }

  Status start() {
    MQ_ASSERT(!store_);
    store_ = std::make_unique<store::MessageStore>(process_.start(), fuzz_store_config(),
                                                   store::HostAddress::ipv4(10, 0, 0, 1, 10911));
    std::optional<Status> started;
    store_->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); });
    MQ_ASSERT(started.has_value());
    if (!started->ok()) {
      process_.kill();
      store_.reset();
    }
    return *started;
  }

  store::PutMessageResult put() {
    store::MessageToStore message;
    message.topic = "TopicA";
    message.queue_id = 0;
    message.body = {'f', 'u', 'z', 'z'};
    message.born_host = store::HostAddress::ipv4(10, 0, 0, 9, 50000);
    message.born_timestamp_ms = 1'700'000'000'000;
    std::optional<store::PutMessageResult> result;
    store_->put_message(std::move(message), [&](store::PutMessageResult r) { result = std::move(r); });
    run_until([&] { return result.has_value(); });
    MQ_ASSERT(result.has_value());
    return *result;
  }

  Status shutdown() {
    std::optional<Status> stopped;
    store_->shutdown([&](Status status) { stopped = status; });
    run_until([&] { return stopped.has_value(); });
    MQ_ASSERT(stopped.has_value());
    process_.kill();
    store_.reset();
    return *stopped;
  }

  store::MessageStore& store() { return *store_; }

 private:
  template <typename Predicate>
  void run_until(Predicate done) {
    const Nanos deadline = scheduler_.now() + seconds(600);
    while (!done() && scheduler_.pending_count() > 0 && scheduler_.next_due() <= deadline) scheduler_.run_one();
  }

  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimDisk disk_;
  sim::SimProcess process_;
  std::unique_ptr<store::MessageStore> store_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::span<const uint8_t> rest(data + 1, size - 1);

  RecoveryWorld world;
  MQ_ASSERT(world.disk().mkdirs("/store/commitlog").ok());
  if (flags & 1) world.write_file("/store/abort", {}, 0);
  if (flags & 2) {
    const size_t take = std::min(kCheckpointBytes, rest.size());
    world.write_file("/store/checkpoint", rest.first(take), 4096);
    rest = rest.subspan(take);
  }
  const bool short_last = (flags & 4) != 0;
  for (size_t segment = 0; segment < kMaxSegments && (segment == 0 || !rest.empty()); ++segment) {
    const size_t take = std::min<size_t>(static_cast<size_t>(kSegmentBytes), rest.size());
    const bool last = take == rest.size();
    const std::string path =
        "/store/commitlog/" + store::MappedFile::file_name(static_cast<int64_t>(segment) * kSegmentBytes);
    world.write_file(path, rest.first(take), last && short_last ? take : static_cast<uint64_t>(kSegmentBytes));
    rest = rest.subspan(take);
  }

  if (!world.start().ok()) return 0;
  (void)world.put();
  const PhyOffset before = world.store().max_phy_offset();
  const Status stopped = world.shutdown();
  if (!stopped.ok()) return 0;
  const Status restarted = world.start();
  MQ_ASSERT_MSG(restarted.ok(), "restart after a clean shutdown failed: " + restarted.to_string());
  MQ_ASSERT_MSG(world.store().max_phy_offset() == before,
                "clean restart moved the max offset from " + std::to_string(before.value()) + " to " +
                    std::to_string(world.store().max_phy_offset().value()));
  MQ_ASSERT(world.shutdown().ok());
  return 0;
}
