// StoreSimWorld: a MessageStore on one simulated machine (a SimDisk under a
// SimProcess on the virtual-time Scheduler), with the faults the store tests
// need: kill -9, power loss with torn sectors, restart. "Write, lose power,
// recover, compare" is a few lines and takes microseconds.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/store/message_codec.h"
#include "broker/store/message_store.h"
#include "sim/disk_profile.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::store::testing {

// Small segments and a tiny index so that tests roll files quickly.
inline MessageStoreConfig small_store_config(FlushDiskType flush = FlushDiskType::SYNC_FLUSH) {
  MessageStoreConfig config;
  config.storePathRootDir = "/store";
  config.maxMessageSize = 4096;
  config.mappedFileSizeCommitLog = 64 * 1024 + 4096 + 8 + 4096;  // a few dozen small records per segment
  config.mappedFileSizeConsumeQueue = 20 * 64;
  config.maxHashSlotNum = 64;
  config.maxIndexNum = 256;
  config.flushDiskType = flush;
  return config;
}

inline const HostAddress kStoreHost = HostAddress::ipv4(10, 0, 0, 1, 10911);

class StoreSimWorld {
 public:
  explicit StoreSimWorld(MessageStoreConfig config, sim::DiskProfile profile = sim::DiskProfile::sata_ssd(),
                         uint64_t seed = 1, double torn_sector_probability = 0.5)
      : config_(std::move(config)),
        random_(seed),
        clock_(scheduler_),
        disk_(scheduler_, profile,
              sim::SimDiskOptions{.name = "disk0", .capacity_bytes = 1ull << 30,
                                  .torn_sector_probability = torn_sector_probability},
              random_.split()),
        process_("broker", scheduler_, clock_, {sim::Mount{"/", &disk_}}, random_.split()) {}

  ~StoreSimWorld() { store_.reset(); }

  // Starts (or restarts) the store and runs until it reports; returns its status.
  Status start() {
    MQ_ASSERT(!store_);
    sim::SimEnv& env = process_.start();
    store_ = std::make_unique<MessageStore>(env, config_, kStoreHost);
    std::optional<Status> started;
    store_->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); });
    MQ_ASSERT(started.has_value());
    if (!started->ok()) {
      store_.reset();
      process_.kill();
    }
    return *started;
  }

  Status shutdown() {
    std::optional<Status> stopped;
    store_->shutdown([&](Status status) { stopped = status; });
    run_until([&] { return stopped.has_value(); });
    MQ_ASSERT(stopped.has_value());
    store_.reset();
    process_.kill();
    return *stopped;
  }

  // kill -9: the page cache survives.
  void crash() {
    process_.kill();
    store_.reset();
  }
  // Power loss: the process dies and unsynced data is lost (some sectors torn).
  void power_loss() {
    crash();
    disk_.power_loss(random_);
  }

  // Puts and runs the world until the put is answered.
  PutMessageResult put(MessageToStore message) {
    std::optional<PutMessageResult> result;
    store_->put_message(std::move(message), [&](PutMessageResult r) { result = std::move(r); });
    run_until([&] { return result.has_value(); });
    MQ_ASSERT(result.has_value());
    return *result;
  }

  // Runs events until done() holds (or nothing is left to run).
  template <typename Predicate>
  void run_until(Predicate done, Nanos limit = seconds(600)) {
    const Nanos deadline = scheduler_.now() + limit;
    while (!done() && scheduler_.pending_count() > 0 && scheduler_.next_due() <= deadline) scheduler_.run_one();
  }
  void run_for(Nanos duration) { scheduler_.run_until(scheduler_.now() + duration); }

  MessageStore& store() { return *store_; }
  bool running() const { return store_ != nullptr; }
  sim::Scheduler& scheduler() { return scheduler_; }
  sim::SimDisk& disk() { return disk_; }
  MessageStoreConfig& config() { return config_; }
  env::Random& random() { return random_; }

  // The body of the message at offset in one queue, as consumer group "cg"
  // gets it; "" when the store does not serve it (not dispatched, or gone).
  std::string body_at(const std::string& topic, int32_t queue_id, QueueOffset offset) {
    GetMessageResult got = store_->get_message("cg", topic, queue_id, offset, 1);
    if (got.status != GetMessageStatus::FOUND) return "";
    EXPECT_EQ(got.messages.size(), 1u);
    Result<std::vector<uint8_t>> bytes = MessageStore::read_region(got.messages[0]);
    EXPECT_TRUE(bytes.ok());
    if (!bytes.ok()) return "";
    Result<DecodedRecord> decoded = decode_record(*bytes);
    EXPECT_TRUE(decoded.ok());
    if (!decoded.ok()) return "";
    return std::string(decoded->message.body.begin(), decoded->message.body.end());
  }

  // Deletes a file or a directory with everything below it, as an operator
  // (or a lost disk) would while the store is stopped.
  void remove_tree(const std::string& path) {
    if (disk_.is_directory(path)) {
      Result<std::vector<std::string>> names = disk_.list(path);
      ASSERT_TRUE(names.ok()) << path;
      for (const std::string& name : *names) remove_tree(path + "/" + name);
    }
    ASSERT_TRUE(disk_.remove(path).ok()) << path;
  }

 private:
  MessageStoreConfig config_;
  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimDisk disk_;
  sim::SimProcess process_;
  std::unique_ptr<MessageStore> store_;
};

inline MessageToStore make_message(const std::string& topic, int32_t queue_id, std::string body,
                                   std::string keys = "", std::string tags = "") {
  MessageToStore message;
  message.topic = topic;
  message.queue_id = queue_id;
  message.body.assign(body.begin(), body.end());
  if (!keys.empty()) message.properties[std::string(kPropertyKeys)] = keys;
  if (!tags.empty()) message.properties[std::string(kPropertyTags)] = tags;
  message.born_host = HostAddress::ipv4(10, 0, 0, 9, 50000);
  message.born_timestamp_ms = 1'700'000'000'000;
  return message;
}

}  // namespace mqlab::store::testing
