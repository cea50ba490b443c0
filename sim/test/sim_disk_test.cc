// Checks SimDisk's fault model (durability of data and directory entries,
// power loss with torn sectors, writeback, failure, ENOSPC, bit-rot, stalls),
// Raid10Disk, and SimFileSystem, by driving a disk through a process's Env
// and comparing what survives with what the model promises. RapidCheck
// properties check the power-loss and RAID claims on random histories.
#include "sim/sim_disk.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "broker/env/path.h"
#include "sim/raid10_disk.h"
#include "sim/sim_env.h"

namespace mqlab::sim::sim_disk_test {
namespace {

std::vector<uint8_t> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

// A test profile: instant, except syncs take 1 ms so that they can be
// pending, and the flusher stays away unless a test invites it.
DiskProfile slow_sync_profile() {
  DiskProfile profile = DiskProfile::instant();
  profile.sync_base_latency_ns = millis(1);
  profile.dirty_expire_ns = seconds(1'000'000);
  profile.dirty_background_bytes = 1ull << 40;
  return profile;
}

SimDiskOptions options_with(double torn_probability, uint64_t capacity_bytes = 1ull << 30) {
  SimDiskOptions options;
  options.name = "test-disk";
  options.capacity_bytes = capacity_bytes;
  options.torn_sector_probability = torn_probability;
  return options;
}

// One machine with one disk mounted at "/" and one process on it.
struct World {
  explicit World(DiskProfile profile = slow_sync_profile(), SimDiskOptions options = options_with(0.0))
      : disk(scheduler, std::move(profile), std::move(options), env::Random(11)),
        env(scheduler, clock, {Mount{"/", &disk}}, env::Random(12)) {}

  std::shared_ptr<env::File> open(const std::string& path, env::OpenOptions options = {.create = true}) {
    Result<std::shared_ptr<env::File>> file = env.files().open(path, options);
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? *file : nullptr;
  }

  // Runs the world until done reports; returns its status.
  Status wait(std::optional<Status>& result) {
    while (!result.has_value() && scheduler.run_one()) {
    }
    EXPECT_TRUE(result.has_value()) << "completion never came";
    return result.value_or(Status::Aborted("never completed"));
  }
  Status sync(env::File& file) {
    std::optional<Status> result;
    file.sync([&](Status status) { result = status; });
    EXPECT_FALSE(result.has_value()) << "completions must never run inline";
    return wait(result);
  }
  Status sync_dir(const std::string& dir) {
    std::optional<Status> result;
    env.files().sync_dir(dir, [&](Status status) { result = status; });
    EXPECT_FALSE(result.has_value()) << "completions must never run inline";
    return wait(result);
  }
  // A new file whose directory entry is already durable.
  std::shared_ptr<env::File> create_durable(const std::string& path) {
    std::shared_ptr<env::File> file = open(path);
    EXPECT_TRUE(sync_dir(env::parent_dir(path)).ok());
    return file;
  }

  std::string read(const std::string& path) {
    Result<std::shared_ptr<env::File>> file = env.files().open(path, {});
    if (!file.ok()) return "<" + std::string(status_code_name(file.status().code())) + ">";
    const uint64_t size = (*file)->size().value();
    std::string out(size, '\0');
    const Result<size_t> read = (*file)->pread(0, std::span(reinterpret_cast<uint8_t*>(out.data()), out.size()));
    EXPECT_TRUE(read.ok());
    EXPECT_EQ(read.value(), size);
    return out;
  }

  void power_loss(uint64_t seed = 99) {
    env::Random random(seed);
    disk.power_loss(random);
  }

  Scheduler scheduler;
  SimClock clock{scheduler};
  SimDisk disk;
  SimEnv env;
};

Status write(env::File& file, uint64_t offset, std::string_view text) { return file.pwrite(offset, bytes_of(text)); }

// ---------------------------------------------------------------------------
// Page cache, sparse files

TEST(SimDisk, WritesLandInThePageCacheAndReadsSeeThem) {
  World world;
  auto file = world.open("/a");
  ASSERT_TRUE(write(*file, 0, "hello world").ok());
  ASSERT_TRUE(write(*file, 6, "WORLD").ok());
  EXPECT_EQ(world.read("/a"), "hello WORLD");
  std::vector<uint8_t> out(100, 0xEE);
  EXPECT_EQ(file->pread(6, out).value(), 5u);  // short only at end of file
  EXPECT_EQ(file->pread(11, out).value(), 0u);
  EXPECT_EQ(file->pread(1000, out).value(), 0u);
  EXPECT_EQ(world.disk.counters().bytes_written, 16u);
  EXPECT_EQ(world.disk.dirty_bytes(), kPageSizeBytes);
}

TEST(SimDisk, FilesAreSparseAndHolesReadAsZeros) {
  World world;
  auto file = world.open("/segment");
  const uint64_t one_gib = 1ull << 30;
  ASSERT_TRUE(write(*file, one_gib, std::string(4096, 'x')).ok());
  EXPECT_EQ(file->size().value(), one_gib + 4096);
  EXPECT_EQ(world.disk.used_bytes(), kPageSizeBytes);
  std::vector<uint8_t> hole(8192, 0xEE);
  ASSERT_EQ(file->pread(one_gib / 2, hole).value(), hole.size());
  EXPECT_TRUE(std::all_of(hole.begin(), hole.end(), [](uint8_t b) { return b == 0; }));
}

TEST(SimDisk, AllocateReservesBlocksAndExtendsWithZeros) {
  World world;
  const Status no_dir = world.env.files().open("/commitlog/00000000000000000000", {.create = true}).status();
  EXPECT_EQ(no_dir.code(), StatusCode::kNotFound) << no_dir.to_string();
  ASSERT_TRUE(world.env.files().mkdirs("/commitlog").ok());
  auto file = world.open("/commitlog/00000000000000000000");
  const uint64_t segment = 1ull << 30;
  ASSERT_TRUE(file->allocate(segment).ok());
  EXPECT_EQ(file->size().value(), segment);
  EXPECT_EQ(world.disk.used_bytes(), segment);
  EXPECT_EQ(world.disk.dirty_bytes(), 0u);  // reserved, not written: no memory
  ASSERT_TRUE(write(*file, 4096, "msg").ok());
  EXPECT_EQ(world.disk.used_bytes(), segment);  // inside the reservation
  std::vector<uint8_t> out(4);
  ASSERT_EQ(file->pread(4095, out).value(), 4u);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 'm', 's', 'g'}));
}

// ---------------------------------------------------------------------------
// Data durability and power loss

TEST(SimDisk, SyncedDataSurvivesPowerLossAndUnsyncedDataDoesNot) {
  World world;
  auto file = world.create_durable("/a");
  ASSERT_TRUE(write(*file, 0, "durable").ok());
  ASSERT_TRUE(world.sync(*file).ok());
  ASSERT_TRUE(write(*file, 7, "+volatile").ok());
  EXPECT_EQ(world.read("/a"), "durable+volatile");
  world.power_loss();
  EXPECT_EQ(world.read("/a"), "durable");
  EXPECT_EQ(world.disk.counters().torn_sectors_last_power_loss, 0u);
  EXPECT_GT(world.disk.counters().bytes_lost_last_power_loss, 0u);
  // Handles from before the power cut belong to dead processes.
  EXPECT_EQ(write(*file, 0, "x").code(), StatusCode::kIoError);
}

TEST(SimDisk, SyncCompletesAfterItsLatencyOnTheCallersExecutor) {
  World world;
  auto file = world.create_durable("/a");
  const Nanos start = world.scheduler.now();
  ASSERT_TRUE(write(*file, 0, "x").ok());
  std::optional<Nanos> done_at;
  file->sync([&](Status status) {
    EXPECT_TRUE(status.ok());
    done_at = world.scheduler.now();
  });
  world.scheduler.run_until(start + millis(1) - 1);
  EXPECT_FALSE(done_at.has_value());
  world.scheduler.run_until_idle();
  EXPECT_EQ(done_at, start + millis(1));
  EXPECT_EQ(world.disk.counters().syncs_completed, world.disk.counters().syncs_requested);
}

TEST(SimDisk, WritesAfterTheSyncCallAreNotCoveredByIt) {
  World world;
  auto file = world.create_durable("/a");
  ASSERT_TRUE(write(*file, 0, "AAAA").ok());
  std::optional<Status> result;
  file->sync([&](Status status) { result = status; });
  // Same page, and past the end: neither may ride on the pending sync.
  ASSERT_TRUE(write(*file, 0, "BB").ok());
  ASSERT_TRUE(write(*file, 4, "CCCC").ok());
  ASSERT_TRUE(world.wait(result).ok());
  EXPECT_EQ(world.disk.dirty_bytes(), kPageSizeBytes);  // still dirty: newer than the flush
  world.power_loss();
  EXPECT_EQ(world.read("/a"), "AAAA");
}

TEST(SimDisk, PowerLossTearsDirtySectorsIndependently) {
  DiskProfile profile = slow_sync_profile();
  profile.sector_size_bytes = 512;
  World world(profile, options_with(0.5));
  auto file = world.create_durable("/a");
  const std::string old_content(64 * 512, 'o');
  ASSERT_TRUE(write(*file, 0, old_content).ok());
  ASSERT_TRUE(world.sync(*file).ok());
  const std::string new_content(64 * 512, 'n');
  ASSERT_TRUE(write(*file, 0, new_content).ok());
  world.power_loss(/*seed=*/5);

  const std::string after = world.read("/a");
  ASSERT_EQ(after.size(), old_content.size());
  uint64_t torn = 0;
  for (size_t sector = 0; sector < 64; ++sector) {
    const std::string piece = after.substr(sector * 512, 512);
    ASSERT_TRUE(piece == std::string(512, 'o') || piece == std::string(512, 'n')) << "sector " << sector;
    if (piece[0] == 'n') ++torn;
  }
  EXPECT_EQ(torn, world.disk.counters().torn_sectors_last_power_loss);
  EXPECT_EQ((64 - torn) * 512, world.disk.counters().bytes_lost_last_power_loss);
  EXPECT_GT(torn, 10u);  // p = 0.5 over 64 sectors
  EXPECT_LT(torn, 54u);
}

TEST(SimDisk, TruncateReachesTheMediumOnlyWithASync) {
  World world;
  auto file = world.create_durable("/a");
  ASSERT_TRUE(write(*file, 0, std::string(10000, 'a')).ok());
  ASSERT_TRUE(world.sync(*file).ok());
  ASSERT_TRUE(file->truncate(100).ok());
  world.power_loss();
  EXPECT_EQ(world.read("/a"), std::string(10000, 'a'));

  file = world.open("/a");
  ASSERT_TRUE(file->truncate(0).ok());
  ASSERT_TRUE(file->allocate(10000).ok());  // re-extended: must read zeros, never old bytes
  ASSERT_TRUE(world.sync(*file).ok());
  world.power_loss();
  EXPECT_EQ(world.read("/a"), std::string(10000, '\0'));
}

TEST(SimDisk, SyncOnACleanFileCompletesAtOnceButStillAsynchronously) {
  World world;
  auto file = world.create_durable("/a");
  const Nanos start = world.scheduler.now();
  ASSERT_TRUE(world.sync(*file).ok());
  EXPECT_EQ(world.scheduler.now(), start);
}

// ---------------------------------------------------------------------------
// Directory entries

TEST(SimDisk, ACreatedFileNeedsADirectorySyncToSurvive) {
  World world;
  ASSERT_TRUE(world.env.files().mkdirs("/store/commitlog").ok());
  auto file = world.open("/store/commitlog/0");
  ASSERT_TRUE(write(*file, 0, "data").ok());
  ASSERT_TRUE(world.sync(*file).ok());  // the data is durable; the name is not
  world.power_loss();
  EXPECT_FALSE(world.env.files().exists("/store"));

  ASSERT_TRUE(world.env.files().mkdirs("/store/commitlog").ok());
  file = world.open("/store/commitlog/0");
  ASSERT_TRUE(write(*file, 0, "data").ok());
  ASSERT_TRUE(world.sync(*file).ok());
  ASSERT_TRUE(world.sync_dir("/store/commitlog").ok());
  world.power_loss();
  // Synced child of an unsynced directory: the directory is gone, so is it.
  EXPECT_FALSE(world.env.files().exists("/store/commitlog/0"));

  ASSERT_TRUE(world.env.files().mkdirs("/store/commitlog").ok());
  file = world.open("/store/commitlog/0");
  ASSERT_TRUE(write(*file, 0, "data").ok());
  ASSERT_TRUE(world.sync(*file).ok());
  for (const char* dir : {"/", "/store", "/store/commitlog"}) ASSERT_TRUE(world.sync_dir(dir).ok());
  world.power_loss();
  EXPECT_EQ(world.read("/store/commitlog/0"), "data");
}

TEST(SimDisk, AnUnsyncedRenameRevertsToTheOldName) {
  World world;
  auto config = world.create_durable("/config.json");
  ASSERT_TRUE(write(*config, 0, "old").ok());
  ASSERT_TRUE(world.sync(*config).ok());
  // The classic atomic replace: write tmp, sync it, rename over, sync dir.
  auto tmp = world.open("/config.json.tmp");
  ASSERT_TRUE(write(*tmp, 0, "new").ok());
  ASSERT_TRUE(world.sync(*tmp).ok());
  ASSERT_TRUE(world.env.files().rename("/config.json.tmp", "/config.json").ok());
  EXPECT_EQ(world.read("/config.json"), "new");
  world.power_loss();
  EXPECT_EQ(world.read("/config.json"), "old");
  EXPECT_FALSE(world.env.files().exists("/config.json.tmp"));

  tmp = world.open("/config.json.tmp");
  ASSERT_TRUE(write(*tmp, 0, "new").ok());
  ASSERT_TRUE(world.sync(*tmp).ok());
  ASSERT_TRUE(world.env.files().rename("/config.json.tmp", "/config.json").ok());
  ASSERT_TRUE(world.sync_dir("/").ok());
  world.power_loss();
  EXPECT_EQ(world.read("/config.json"), "new");
  EXPECT_FALSE(world.env.files().exists("/config.json.tmp"));
}

TEST(SimDisk, AnUnsyncedRemoveComesBack) {
  World world;
  auto file = world.create_durable("/abort");
  file.reset();
  ASSERT_TRUE(world.env.files().remove("/abort").ok());
  EXPECT_FALSE(world.env.files().exists("/abort"));
  world.power_loss();
  EXPECT_TRUE(world.env.files().exists("/abort"));
  ASSERT_TRUE(world.env.files().remove("/abort").ok());
  ASSERT_TRUE(world.sync_dir("/").ok());
  world.power_loss();
  EXPECT_FALSE(world.env.files().exists("/abort"));
}

TEST(SimDisk, ADirectorySyncCoversOnlyEntriesMadeBeforeTheCall) {
  World world;
  world.open("/early");
  std::optional<Status> result;
  world.env.files().sync_dir("/", [&](Status status) { result = status; });
  world.open("/late");
  ASSERT_TRUE(world.wait(result).ok());
  world.power_loss();
  EXPECT_TRUE(world.env.files().exists("/early"));
  EXPECT_FALSE(world.env.files().exists("/late"));
}

TEST(SimDisk, AJournalCommitMakesEntriesDurableWhenTheProfileAsks) {
  DiskProfile profile = slow_sync_profile();
  profile.journal_commit_interval_ns = seconds(5);
  World world(profile);
  world.open("/created");
  world.scheduler.run_until(seconds(5));
  EXPECT_EQ(world.disk.counters().journal_commits, 1u);
  world.power_loss();
  EXPECT_TRUE(world.env.files().exists("/created"));
  EXPECT_EQ(world.read("/created"), "");  // the name, not data nobody synced
}

// ---------------------------------------------------------------------------
// Kernel writeback

TEST(SimDisk, DirtyDataIsWrittenBackAfterDirtyExpire) {
  DiskProfile profile = slow_sync_profile();
  profile.dirty_expire_ns = seconds(30);
  World world(profile);
  auto file = world.create_durable("/a");
  const Nanos written_at = world.scheduler.now();
  ASSERT_TRUE(write(*file, 0, "eventually").ok());
  world.scheduler.run_until(written_at + seconds(29));
  EXPECT_EQ(world.disk.dirty_bytes(), kPageSizeBytes);
  world.scheduler.run_until(written_at + seconds(36));  // the 5 s flusher tick after expiry
  EXPECT_EQ(world.disk.dirty_bytes(), 0u);
  EXPECT_EQ(world.disk.counters().writebacks, 1u);
  EXPECT_EQ(world.scheduler.pending_count(), 0u);  // the flusher sleeps when nothing is dirty
  world.power_loss();
  EXPECT_EQ(world.read("/a"), "eventually");
}

TEST(SimDisk, WritebackStartsAtOnceAboveTheBackgroundThreshold) {
  DiskProfile profile = slow_sync_profile();
  profile.dirty_background_bytes = 64 * 1024;
  profile.write_bandwidth_bytes_per_sec = 100'000'000;
  World world(profile);
  auto file = world.create_durable("/a");
  const Nanos start = world.scheduler.now();
  ASSERT_TRUE(write(*file, 0, std::string(256 * 1024, 'w')).ok());
  world.scheduler.run_until(start + millis(50));  // well before any 5 s tick
  EXPECT_LE(world.disk.dirty_bytes(), profile.dirty_background_bytes);
  EXPECT_GE(world.disk.counters().writebacks, 1u);
}

// ---------------------------------------------------------------------------
// Device timing: profile, queueing, stalls

TEST(SimDisk, HddSyncsPayBaseLatencyTransferAndSeeksAndQueueBehindEachOther) {
  World world(DiskProfile::hdd());
  auto a = world.create_durable("/a");
  auto b = world.create_durable("/b");
  const Nanos start = world.scheduler.now();
  ASSERT_TRUE(write(*a, 0, std::string(4096, 'a')).ok());
  ASSERT_TRUE(write(*b, 0, std::string(4096, 'b')).ok());
  std::vector<Nanos> done;
  a->sync([&](Status) { done.push_back(world.scheduler.now()); });
  b->sync([&](Status) { done.push_back(world.scheduler.now()); });
  world.scheduler.run_until_idle();
  const DiskProfile hdd = DiskProfile::hdd();
  const Nanos one = hdd.sync_base_latency_ns + hdd.seek_latency_ns + 4096 * kNanosPerSecond / 150'000'000;
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], start + one);
  EXPECT_EQ(done[1], start + 2 * one);  // the device serialises; b's head position is a seek away
}

TEST(SimDisk, SequentialFlushesOfOneFileDoNotSeek) {
  World world(DiskProfile::hdd());
  auto file = world.create_durable("/log");
  ASSERT_TRUE(write(*file, 0, std::string(4096, 'a')).ok());
  ASSERT_TRUE(world.sync(*file).ok());
  const Nanos start = world.scheduler.now();
  ASSERT_TRUE(write(*file, 4096, std::string(8192, 'b')).ok());
  ASSERT_TRUE(world.sync(*file).ok());
  const DiskProfile hdd = DiskProfile::hdd();
  EXPECT_EQ(world.scheduler.now() - start, hdd.sync_base_latency_ns + 8192 * kNanosPerSecond / 150'000'000);
}

TEST(SimDisk, StallsAndSlowdownsDelaySyncs) {
  World world;
  auto file = world.create_durable("/a");
  ASSERT_TRUE(write(*file, 0, "x").ok());
  Nanos start = world.scheduler.now();
  std::optional<Status> result;
  file->sync([&](Status status) { result = status; });
  world.disk.stall(seconds(2));  // also delays the request already queued
  ASSERT_TRUE(world.wait(result).ok());
  EXPECT_EQ(world.scheduler.now() - start, seconds(2) + millis(1));

  world.disk.set_slowdown(3.0);
  ASSERT_TRUE(write(*file, 0, "y").ok());
  start = world.scheduler.now();
  ASSERT_TRUE(world.sync(*file).ok());
  EXPECT_EQ(world.scheduler.now() - start, millis(3));
}

// ---------------------------------------------------------------------------
// Processes

TEST(SimDisk, AKilledProcessNeverHearsItsPendingSyncButTheDataStillLands) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimDisk disk(scheduler, slow_sync_profile(), options_with(0.0), env::Random(1));
  SimProcess broker("broker", scheduler, clock, {Mount{"/", &disk}}, env::Random(2));
  SimEnv& first = broker.start();
  auto file = first.files().open("/commitlog", {.create = true}).value();
  bool dir_synced = false;
  first.files().sync_dir("/", [&](Status status) { dir_synced = status.ok(); });
  scheduler.run_until_idle();
  ASSERT_TRUE(dir_synced);

  ASSERT_TRUE(write(*file, 0, "acked?").ok());
  bool heard = false;
  file->sync([&](Status) { heard = true; });
  broker.kill();  // kill -9 while the flush is in flight
  file.reset();
  scheduler.run_until_idle();
  EXPECT_FALSE(heard);
  EXPECT_EQ(disk.counters().syncs_completed, 1u);  // the device finished it regardless

  env::Random random(3);
  disk.power_loss(random);
  SimEnv& second = broker.start();
  auto again = second.files().open("/commitlog", {}).value();
  std::vector<uint8_t> out(6);
  ASSERT_EQ(again->pread(0, out).value(), 6u);
  EXPECT_EQ(out, bytes_of("acked?"));
}

// ---------------------------------------------------------------------------
// Failure, capacity, bit-rot

TEST(SimDisk, AFailedDiskLosesEverythingAndAReplacementIsEmpty) {
  World world;
  auto file = world.create_durable("/a");
  ASSERT_TRUE(write(*file, 0, "precious").ok());
  ASSERT_TRUE(world.sync(*file).ok());
  ASSERT_TRUE(write(*file, 0, "pending").ok());
  std::optional<Status> pending;
  file->sync([&](Status status) { pending = status; });
  world.disk.fail();
  EXPECT_EQ(world.wait(pending).code(), StatusCode::kIoError);  // the waiting fsync gets EIO
  EXPECT_EQ(write(*file, 0, "x").code(), StatusCode::kIoError);
  std::vector<uint8_t> out(8);
  EXPECT_EQ(file->pread(0, out).status().code(), StatusCode::kIoError);
  EXPECT_EQ(world.env.files().open("/a", {}).status().code(), StatusCode::kIoError);
  EXPECT_EQ(world.env.files().mkdirs("/b").code(), StatusCode::kIoError);
  EXPECT_EQ(world.env.files().space("/").status().code(), StatusCode::kIoError);
  EXPECT_FALSE(world.env.files().exists("/a"));
  EXPECT_EQ(world.sync_dir("/").code(), StatusCode::kIoError);
  EXPECT_EQ(world.sync(*file).code(), StatusCode::kIoError);

  world.disk.replace();
  EXPECT_FALSE(world.disk.failed());
  EXPECT_EQ(world.env.files().list("/").value(), std::vector<std::string>{});
  EXPECT_EQ(write(*file, 0, "x").code(), StatusCode::kIoError);  // a handle to the old disk
  auto fresh = world.open("/a");
  ASSERT_TRUE(write(*fresh, 0, "new life").ok());
  EXPECT_EQ(world.read("/a"), "new life");
  EXPECT_EQ(world.disk.used_bytes(), kPageSizeBytes);
}

// rebuild_from_slave's copy: the source's live view (page cache included,
// unsynced names too), sparse, and durable on the new disk at once.
TEST(SimDisk, ARestoredDiskHoldsTheSourcesLiveFilesDurably) {
  World source;
  ASSERT_TRUE(source.env.files().mkdirs("/store/commitlog").ok());
  auto segment = source.create_durable("/store/commitlog/00000000000000000000");
  ASSERT_TRUE(write(*segment, 0, "durable").ok());
  ASSERT_TRUE(source.sync(*segment).ok());
  ASSERT_TRUE(write(*segment, 7, "+cached").ok());           // only in the page cache
  ASSERT_TRUE(write(*segment, 1ull << 30, "far").ok());      // a sparse gap of 1 GiB
  auto config = source.open("/store/config.json");           // its name not synced either
  ASSERT_TRUE(write(*config, 0, "{}").ok());

  World target;
  target.disk.fail();
  target.disk.replace();
  ASSERT_TRUE(target.disk.restore_from(source.disk).ok());
  EXPECT_EQ(target.env.files().list("/store").value(), (std::vector<std::string>{"commitlog", "config.json"}));
  EXPECT_EQ(target.read("/store/config.json"), "{}");
  auto copy = target.open("/store/commitlog/00000000000000000000", {});
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->size().value(), (1ull << 30) + 3);
  std::vector<uint8_t> head(14);
  ASSERT_EQ(copy->pread(0, head).value(), head.size());
  EXPECT_EQ(std::string(head.begin(), head.end()), "durable+cached");
  EXPECT_EQ(target.disk.used_bytes(), source.disk.used_bytes());  // two pages each, not a GiB
  EXPECT_EQ(target.disk.dirty_bytes(), 0u);
  // Durable: a power cut right after keeps all of it.
  target.power_loss();
  EXPECT_EQ(target.read("/store/config.json"), "{}");
  auto after = target.open("/store/commitlog/00000000000000000000", {});
  ASSERT_NE(after, nullptr);
  ASSERT_EQ(after->pread(0, head).value(), head.size());
  EXPECT_EQ(std::string(head.begin(), head.end()), "durable+cached");
  // The source is untouched.
  EXPECT_EQ(source.read("/store/config.json"), "{}");
  EXPECT_GT(source.disk.dirty_bytes(), 0u);
}

TEST(SimDisk, NoSpaceIsAllOrNothingAndWritesResumeWhenSpaceReturns) {
  World world(slow_sync_profile(), options_with(0.0, /*capacity_bytes=*/4 * kPageSizeBytes));
  auto a = world.open("/a");
  auto b = world.open("/b");
  ASSERT_TRUE(write(*a, 0, std::string(3 * kPageSizeBytes, 'a')).ok());
  const Status full = write(*b, 0, std::string(2 * kPageSizeBytes, 'b'));
  EXPECT_EQ(full.code(), StatusCode::kNoSpace) << full.to_string();
  EXPECT_EQ(b->size().value(), 0u);  // nothing of it was written
  EXPECT_EQ(world.disk.used_bytes(), 3 * kPageSizeBytes);
  EXPECT_EQ(b->allocate(2 * kPageSizeBytes).code(), StatusCode::kNoSpace);
  EXPECT_EQ(world.disk.counters().no_space_errors, 2u);
  ASSERT_TRUE(write(*a, 100, "overwrite in place needs no block").ok());
  ASSERT_TRUE(write(*b, 0, std::string(kPageSizeBytes, 'b')).ok());  // exactly fills it
  EXPECT_EQ(world.env.files().space("/").value().available_bytes, 0u);

  // Space returns: a file is removed (its handle closed) ...
  a.reset();
  ASSERT_TRUE(world.env.files().remove("/a").ok());
  EXPECT_EQ(world.env.files().space("/").value().available_bytes, 3 * kPageSizeBytes);
  ASSERT_TRUE(write(*b, kPageSizeBytes, std::string(2 * kPageSizeBytes, 'b')).ok());
  // ... or the disk grows (an operator cleaned up elsewhere).
  EXPECT_EQ(write(*b, 3 * kPageSizeBytes, std::string(2 * kPageSizeBytes, 'c')).code(), StatusCode::kNoSpace);
  world.disk.set_capacity_bytes(8 * kPageSizeBytes);
  ASSERT_TRUE(write(*b, 3 * kPageSizeBytes, std::string(2 * kPageSizeBytes, 'c')).ok());
  EXPECT_EQ(b->size().value(), 5 * kPageSizeBytes);
}

TEST(SimDisk, BitRotFlipsOneBitPerReadDeterministically) {
  const auto reads = [](uint64_t seed) {
    Scheduler scheduler;
    SimClock clock(scheduler);
    SimDiskOptions options = options_with(0.0);
    options.bit_rot_probability = 1.0;
    SimDisk disk(scheduler, slow_sync_profile(), options, env::Random(seed));
    SimEnv env(scheduler, clock, {Mount{"/", &disk}}, env::Random(1));
    auto file = env.files().open("/a", {.create = true}).value();
    const std::vector<uint8_t> zeros(256, 0);
    EXPECT_TRUE(file->pwrite(0, zeros).ok());
    std::vector<std::vector<uint8_t>> seen;
    for (int i = 0; i < 8; ++i) {
      std::vector<uint8_t> out(256);
      EXPECT_EQ(file->pread(0, out).value(), 256u);
      int bits = 0;
      for (uint8_t byte : out) bits += __builtin_popcount(byte);
      EXPECT_EQ(bits, 1);  // exactly one flipped bit, on a copy: the medium is intact
      seen.push_back(out);
    }
    EXPECT_EQ(disk.counters().bit_flips, 8u);
    return seen;
  };
  EXPECT_EQ(reads(5), reads(5));
  EXPECT_NE(reads(5), reads(6));
}

// ---------------------------------------------------------------------------
// Determinism

// A random history of writes, syncs, dir syncs, time and a power cut; the
// digest covers every surviving byte and the counters.
uint64_t run_history(uint64_t seed) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  env::Random world(seed);
  DiskProfile profile = DiskProfile::sata_ssd();
  profile.sector_size_bytes = 512;
  SimDisk disk(scheduler, profile, options_with(0.5), world.split());
  SimEnv env(scheduler, clock, {Mount{"/", &disk}}, world.split());
  env::Random workload = world.split();
  std::vector<std::shared_ptr<env::File>> files;
  for (const char* name : {"/0", "/1", "/2"}) files.push_back(env.files().open(name, {.create = true}).value());
  for (int step = 0; step < 300; ++step) {
    env::File& file = *files[workload.uniform(files.size())];
    switch (workload.uniform(5)) {
      case 0:
      case 1: {
        std::vector<uint8_t> data(workload.range(1, 9000), static_cast<uint8_t>(workload.next_u64()));
        EXPECT_TRUE(file.pwrite(workload.uniform(50'000), data).ok());
        break;
      }
      case 2: file.sync([](Status) {}); break;
      case 3: env.files().sync_dir("/", [](Status) {}); break;
      default: scheduler.run_for(workload.range(0, 2'000'000)); break;
    }
  }
  env::Random power = world.split();
  disk.power_loss(power);
  uint64_t digest = 1469598103934665603ull;  // FNV-1a
  const auto mix = [&](uint64_t value) { digest = (digest ^ value) * 1099511628211ull; };
  const std::vector<std::string> names = env.files().list("/").value();
  for (const std::string& name : names) {
    auto file = env.files().open("/" + name, {}).value();
    std::vector<uint8_t> content(file->size().value());
    EXPECT_EQ(file->pread(0, content).value(), content.size());
    for (uint8_t byte : content) mix(byte);
    mix(content.size());
  }
  mix(disk.counters().torn_sectors_last_power_loss);
  mix(disk.counters().bytes_lost_last_power_loss);
  mix(disk.counters().syncs_completed);
  mix(static_cast<uint64_t>(scheduler.now()));
  return digest;
}

TEST(SimDisk, SameSeedSameResult) {
  EXPECT_EQ(run_history(2024), run_history(2024));
  EXPECT_NE(run_history(2024), run_history(2025));
}

// ---------------------------------------------------------------------------
// SimFileSystem

TEST(SimFileSystem, ListsSortedAndHandlesDirectories) {
  World world;
  env::FileSystem& fs = world.env.files();
  ASSERT_TRUE(fs.mkdirs("/store/consumequeue/TopicA/0").ok());
  ASSERT_TRUE(fs.mkdirs("/store/consumequeue").ok());  // exists: ok
  for (const char* name : {"/store/b", "/store/a", "/store/B", "/store/a-1"}) world.open(name);
  EXPECT_EQ(fs.list("/store").value(), (std::vector<std::string>{"B", "a", "a-1", "b", "consumequeue"}));
  EXPECT_EQ(fs.list("/nope").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(fs.is_directory("/store/consumequeue"));
  EXPECT_FALSE(fs.is_directory("/store/a"));
  EXPECT_TRUE(fs.exists("/store/a"));
  EXPECT_TRUE(fs.exists("store/a/"));  // relative to "/", trailing '/' ignored
  EXPECT_EQ(fs.open("/store/../etc", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fs.mkdirs("/store/a/sub").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(fs.remove("/store/consumequeue/TopicA").code(), StatusCode::kInvalidArgument);  // not empty
  ASSERT_TRUE(fs.remove("/store/consumequeue/TopicA/0").ok());
  ASSERT_TRUE(fs.remove("/store/consumequeue/TopicA").ok());
  EXPECT_EQ(fs.remove("/store/consumequeue/TopicA").code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.open("/store/new", {.create = true, .exclusive = true}).status().code(), StatusCode::kOk);
  EXPECT_EQ(fs.open("/store/new", {.create = true, .exclusive = true}).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(fs.open("/store/missing", {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.open("/store", {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(SimFileSystem, RenameReplacesAtomicallyAndOpenTruncates) {
  World world;
  env::FileSystem& fs = world.env.files();
  auto a = world.open("/a");
  ASSERT_TRUE(write(*a, 0, "from a").ok());
  auto b = world.open("/b");
  ASSERT_TRUE(write(*b, 0, "from b, longer").ok());
  ASSERT_TRUE(fs.rename("/a", "/b").ok());
  EXPECT_FALSE(fs.exists("/a"));
  EXPECT_EQ(world.read("/b"), "from a");
  ASSERT_TRUE(write(*a, 0, "FROM").ok());  // the handle follows the inode, not the name
  EXPECT_EQ(world.read("/b"), "FROM a");
  EXPECT_EQ(fs.rename("/missing", "/x").code(), StatusCode::kNotFound);
  auto truncated = world.open("/b", {.truncate = true});
  EXPECT_EQ(truncated->size().value(), 0u);
}

TEST(SimFileSystem, MountsRouteByLongestPrefixAndReportSpacePerDisk) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimDisk system_disk(scheduler, slow_sync_profile(), options_with(0.0, 1 << 20), env::Random(1));
  SimDisk store_disk(scheduler, slow_sync_profile(), options_with(0.0, 1 << 24), env::Random(2));
  SimEnv env(scheduler, clock, {Mount{"/", &system_disk}, Mount{"/store", &store_disk}}, env::Random(3));
  env::FileSystem& fs = env.files();
  auto file = fs.open("/store/commitlog", {.create = true}).value();
  ASSERT_TRUE(file->pwrite(0, bytes_of("x")).ok());
  EXPECT_EQ(store_disk.used_bytes(), kPageSizeBytes);
  EXPECT_EQ(system_disk.used_bytes(), 0u);
  EXPECT_EQ(fs.space("/store/commitlog").value().capacity_bytes, 1u << 24);
  EXPECT_EQ(fs.space("/etc").value().capacity_bytes, 1u << 20);
  EXPECT_TRUE(fs.is_directory("/store"));
  EXPECT_EQ(fs.list("/store").value(), std::vector<std::string>{"commitlog"});
  EXPECT_EQ(fs.rename("/store/commitlog", "/commitlog").code(), StatusCode::kInvalidArgument);  // EXDEV
  EXPECT_EQ(fs.remove("/store").code(), StatusCode::kInvalidArgument);  // a mount point
  store_disk.fail();
  EXPECT_FALSE(fs.exists("/store/commitlog"));
  EXPECT_TRUE(fs.open("/etc", {.create = true}).ok());  // the other disk is fine
}

// ---------------------------------------------------------------------------
// RAID10

struct RaidWorld {
  RaidWorld()
      : raid(scheduler, DiskProfile::sata_ssd(), options_with(0.0), env::Random(4)),
        env(scheduler, clock, {Mount{"/", &raid.volume()}}, env::Random(5)) {}

  void store_durably(const std::string& path, std::string_view text) {
    auto file = env.files().open(path, {.create = true}).value();
    EXPECT_TRUE(file->pwrite(0, bytes_of(text)).ok());
    file->sync([](Status status) { EXPECT_TRUE(status.ok()); });
    env.files().sync_dir("/", [](Status status) { EXPECT_TRUE(status.ok()); });
    scheduler.run_until_idle();
  }
  std::string read(const std::string& path) {
    Result<std::shared_ptr<env::File>> file = env.files().open(path, {});
    if (!file.ok()) return "<" + std::string(status_code_name(file.status().code())) + ">";
    std::string out((*file)->size().value(), '\0');
    EXPECT_TRUE((*file)->pread(0, std::span(reinterpret_cast<uint8_t*>(out.data()), out.size())).ok());
    return out;
  }

  Scheduler scheduler;
  SimClock clock{scheduler};
  Raid10Disk raid;
  SimEnv env;
};

TEST(Raid10Disk, SurvivesOneFailurePerMirror) {
  RaidWorld world;
  world.store_durably("/data", "striped and mirrored");
  world.raid.fail_member(0);
  EXPECT_FALSE(world.raid.array_failed());
  world.raid.fail_member(3);  // the other mirror
  EXPECT_FALSE(world.raid.array_failed());
  EXPECT_EQ(world.read("/data"), "striped and mirrored");
  EXPECT_EQ(world.raid.member_state(0), Raid10Disk::MemberState::kFailed);
  EXPECT_EQ(world.raid.member_state(1), Raid10Disk::MemberState::kHealthy);
}

TEST(Raid10Disk, LosesEverythingWhenBothDisksOfOneMirrorFail) {
  RaidWorld world;
  world.store_durably("/data", "gone");
  world.raid.fail_member(2);
  world.raid.fail_member(3);
  EXPECT_TRUE(world.raid.array_failed());
  EXPECT_EQ(world.read("/data"), "<IoError>");
  // Put in new disks: the array is recreated, empty.
  world.raid.replace_member(2);
  EXPECT_TRUE(world.raid.array_failed());
  world.raid.replace_member(3);
  EXPECT_FALSE(world.raid.array_failed());
  EXPECT_EQ(world.read("/data"), "<NotFound>");
}

TEST(Raid10Disk, APartnerLostDuringRebuildLosesTheArray) {
  RaidWorld world;
  auto file = world.env.files().open("/big", {.create = true}).value();
  ASSERT_TRUE(file->pwrite(0, std::vector<uint8_t>(8 << 20, 7)).ok());
  world.raid.fail_member(0);
  world.raid.replace_member(0);
  EXPECT_EQ(world.raid.member_state(0), Raid10Disk::MemberState::kRebuilding);
  // 4 MiB share at 550 MB/s: about 7.6 ms.
  world.scheduler.run_for(millis(20));
  EXPECT_EQ(world.raid.member_state(0), Raid10Disk::MemberState::kHealthy);
  world.raid.fail_member(1);  // after the rebuild: survives
  EXPECT_FALSE(world.raid.array_failed());
  world.raid.replace_member(1);
  world.raid.fail_member(0);  // during member 1's rebuild: the only full copy is gone
  EXPECT_TRUE(world.raid.array_failed());
}

// ---------------------------------------------------------------------------
// Properties

// Ops of a random single-file history: (kind, a, b, byte).
using HistoryOp = std::tuple<int, uint32_t, uint32_t, uint8_t>;

RC_GTEST_PROP(SimDisk, PowerLossLeavesEachSectorDurableOrWrittenAndSyncedDataSurvives,
              (const std::vector<HistoryOp>& ops, uint64_t seed)) {
  const double torn_probability = *rc::gen::element(0.0, 0.3, 1.0);
  Scheduler scheduler;
  SimClock clock(scheduler);
  DiskProfile profile = slow_sync_profile();
  profile.sector_size_bytes = 512;
  SimDisk disk(scheduler, profile, options_with(torn_probability), env::Random(seed));
  SimEnv env(scheduler, clock, {Mount{"/", &disk}}, env::Random(seed + 1));
  auto file = env.files().open("/f", {.create = true}).value();
  env.files().sync_dir("/", [](Status) {});
  scheduler.run_until_idle();

  // The model: the bytes written so far, and the bytes as of the call of the
  // last sync that completed; pending syncs' snapshots in call order.
  std::vector<uint8_t> written;
  std::vector<uint8_t> durable;
  std::deque<std::vector<uint8_t>> pending;
  for (const auto& [kind_raw, a, b, byte] : ops) {
    switch (kind_raw % 5) {
      case 0:
      case 1: {  // write
        const uint64_t offset = a % 20'000;
        const std::vector<uint8_t> data(1 + b % 3'000, byte);
        RC_ASSERT(file->pwrite(offset, data).ok());
        if (written.size() < offset + data.size()) written.resize(offset + data.size(), 0);
        std::copy(data.begin(), data.end(), written.begin() + static_cast<ptrdiff_t>(offset));
        break;
      }
      case 2:  // sync
        pending.push_back(written);
        file->sync([&](Status status) {
          RC_ASSERT(status.ok());
          RC_ASSERT(!pending.empty());
          durable = std::move(pending.front());
          pending.pop_front();
        });
        break;
      case 3:  // time passes; some syncs complete
        scheduler.run_for((a % 3'000) * kNanosPerMicro);
        break;
      default: {  // truncate
        const uint64_t size = a % 20'000;
        RC_ASSERT(file->truncate(size).ok());
        written.resize(size, 0);
        break;
      }
    }
  }
  env::Random power(seed ^ 0xABCDEF);
  disk.power_loss(power);
  auto after = env.files().open("/f", {}).value();
  const uint64_t size = after->size().value();
  RC_ASSERT(size == durable.size());
  std::vector<uint8_t> content(size);
  RC_ASSERT(after->pread(0, content).value() == size);
  written.resize(std::max<size_t>(written.size(), size), 0);
  for (uint64_t begin = 0; begin < size; begin += 512) {
    const auto length = static_cast<ptrdiff_t>(std::min<uint64_t>(512, size - begin));
    const auto at = static_cast<ptrdiff_t>(begin);
    const bool as_durable = std::equal(content.begin() + at, content.begin() + at + length, durable.begin() + at);
    const bool as_written = std::equal(content.begin() + at, content.begin() + at + length, written.begin() + at);
    RC_ASSERT(as_durable || as_written);
    if (torn_probability == 0.0) RC_ASSERT(as_durable);
  }
}

// Fail and replace members at random: the array is failed exactly when some
// mirror has lost both disks since the array was (re)built.
RC_GTEST_PROP(Raid10Disk, FailsExactlyWhenAMirrorLosesBothDisks, (const std::vector<uint8_t>& actions)) {
  Scheduler scheduler;
  Raid10Disk raid(scheduler, DiskProfile::instant(), options_with(0.0), env::Random(1));
  std::array<bool, 4> present{true, true, true, true};
  bool model_failed = false;
  for (uint8_t action : actions) {
    const int member = action % 4;
    if (present[member]) {
      raid.fail_member(member);
      present[member] = false;
      if (!present[Raid10Disk::partner_of(member)]) model_failed = true;
    } else {
      raid.replace_member(member);
      present[member] = true;
      if (model_failed && std::all_of(present.begin(), present.end(), [](bool p) { return p; })) {
        model_failed = false;  // every slot filled: a new, empty array
      }
      scheduler.run_until_idle();  // instant members rebuild at once
    }
    RC_ASSERT(raid.array_failed() == model_failed);
  }
}

}  // namespace
}  // namespace mqlab::sim::sim_disk_test
