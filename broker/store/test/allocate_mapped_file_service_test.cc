// AllocateMappedFileService with MappedFileQueue on the in-memory Env: the
// next segment is prepared ahead under a temporary name and taken at the
// roll; a roll that comes too early creates the segment itself and the
// late preparation is cleaned up; leftovers of a crash are removed on load;
// taken segments are durable like created ones; and a RapidCheck property
// that pre-allocation never changes what the log holds.
#include "broker/store/allocate_mapped_file_service.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "broker/store/commit_log.h"
#include "broker/store/mapped_file_queue.h"
#include "broker/store/test/memory_env.h"

namespace mqlab::store::allocate_mapped_file_service_test {
namespace {

using testing::MemoryEnv;

constexpr int64_t kFileSize = 4096;
const std::string kDir = "/store/commitlog";

std::string segment(int64_t offset) { return kDir + "/" + MappedFile::file_name(offset); }
std::string temp_of(int64_t offset) { return segment(offset) + std::string(AllocateMappedFileService::kTempSuffix); }

// Appends n bytes of value, rolling (padding the rest) when they do not fit.
void append(MappedFileQueue& queue, size_t n, uint8_t value) {
  auto file = queue.last_file_or_create(0);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  if (static_cast<int64_t>(n) > (*file)->free_bytes()) {
    (*file)->set_wrote_position((*file)->file_size());
    file = queue.last_file_or_create(0);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
  }
  const std::vector<uint8_t> bytes(n, value);
  ASSERT_TRUE((*file)->append(bytes).ok());
}

std::vector<std::string> names_in(MemoryEnv& env, const std::string& dir) {
  auto names = env.files().list(dir);
  return names.ok() ? *names : std::vector<std::string>{};
}

TEST(AllocateMappedFileServiceTest, TempNamesAreRecognised) {
  EXPECT_TRUE(AllocateMappedFileService::is_temp_name("00000000000000004096.allocating"));
  EXPECT_FALSE(AllocateMappedFileService::is_temp_name("00000000000000004096"));
  EXPECT_FALSE(AllocateMappedFileService::is_temp_name("0000000004096.allocating"));
  EXPECT_FALSE(AllocateMappedFileService::is_temp_name("abc.allocating"));
}

TEST(AllocateMappedFileServiceTest, RollTakesTheSegmentPreparedAhead) {
  MemoryEnv env;
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/true);
  ASSERT_TRUE(queue.load().ok());
  append(queue, 1000, 1);
  append(queue, 1000, 2);  // the first file has room: the next one is requested
  env.run_all();
  ASSERT_NE(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  EXPECT_EQ(env.memory_files().bytes(temp_of(kFileSize))->size(), static_cast<size_t>(kFileSize));
  EXPECT_EQ(env.memory_files().bytes(segment(kFileSize)), nullptr);  // not a segment until taken

  append(queue, 3000, 3);  // does not fit: rolls onto the prepared file
  EXPECT_EQ(queue.allocator()->taken(), 1u);
  EXPECT_EQ(queue.allocator()->missed(), 1u);  // the log's first segment
  ASSERT_EQ(queue.files().size(), 2u);
  EXPECT_EQ(queue.last_file()->path(), segment(kFileSize));
  EXPECT_EQ(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  std::vector<uint8_t> out(3000);
  auto read = queue.read(kFileSize, out);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 3000u);
  EXPECT_EQ(out, std::vector<uint8_t>(3000, 3));
}

TEST(AllocateMappedFileServiceTest, EarlyRollCreatesTheSegmentAndDropsTheLatePreparation) {
  MemoryEnv env;
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/false);
  ASSERT_TRUE(queue.load().ok());
  append(queue, 1000, 1);
  append(queue, 1000, 2);  // requested, but nothing has run yet
  append(queue, 3000, 3);  // the roll finds nothing ready
  EXPECT_EQ(queue.allocator()->taken(), 0u);
  EXPECT_EQ(queue.allocator()->missed(), 2u);  // the first segment and this roll
  ASSERT_EQ(queue.files().size(), 2u);
  env.run_all();
  // The late preparation was abandoned and its file removed; the one for the
  // segment after the new last one is ready instead.
  EXPECT_EQ(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  append(queue, 10, 4);
  env.run_all();
  EXPECT_NE(env.memory_files().bytes(temp_of(2 * kFileSize)), nullptr);
  EXPECT_EQ(names_in(env, kDir), (std::vector<std::string>{MappedFile::file_name(0), MappedFile::file_name(kFileSize),
                                                           MappedFile::file_name(2 * kFileSize) + ".allocating"}));
}

// A roll that finds the preparation running cancels the Env's work on it
// (on disk it would compete with the put path creating the segment), and a
// cancelled preparation is never taken: wanted again, it starts over.
TEST(AllocateMappedFileServiceTest, AbandoningARunningPreparationCancelsItAndItIsNeverTaken) {
  MemoryEnv env;
  ASSERT_TRUE(env.memory_files().mkdirs(kDir).ok());
  AllocateMappedFileService service(env, /*warm=*/true);
  const std::string path = segment(kFileSize);
  service.request(path, kFileSize);
  EXPECT_TRUE(env.run_one());  // start(): the file opened, prepare_file called; its completion queued
  EXPECT_EQ(service.take(path), nullptr);  // the roll came first
  EXPECT_EQ(env.stopped_preparations(), std::vector<std::string>{temp_of(kFileSize)});
  EXPECT_EQ(service.missed(), 1u);

  service.request(path, kFileSize);  // wanted again before the Env answered
  env.run_all();                     // the cancelled preparation's completion, then a fresh one
  EXPECT_EQ(env.stopped_preparations().size(), 1u);
  ASSERT_TRUE(service.has_ready());
  const std::shared_ptr<env::File> file = service.take(path);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->path(), path);
  EXPECT_EQ(*file->size(), static_cast<uint64_t>(kFileSize));
  EXPECT_EQ(service.taken(), 1u);

  // Abandoned before its file was opened: nothing to cancel.
  service.request(segment(2 * kFileSize), kFileSize);
  service.abandon_all();
  env.run_all();
  EXPECT_EQ(env.stopped_preparations().size(), 1u);
  EXPECT_EQ(env.memory_files().bytes(temp_of(2 * kFileSize)), nullptr);
}

// A roll that finds its segment allocated but still being pre-touched stops
// the preparation and takes the file as it is; the preparation's late
// completion changes nothing, and the next segment is prepared as usual.
TEST(AllocateMappedFileServiceTest, ARollTakesAHalfPreparedSegment) {
  MemoryEnv env;
  env.stop_allocates(true);
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/true);
  ASSERT_TRUE(queue.load().ok());
  append(queue, 1000, 1);
  append(queue, 1000, 2);  // the next segment is requested
  ASSERT_TRUE(env.run_one());  // its file opened and handed to prepare_file, not yet complete
  append(queue, 3000, 3);      // the roll
  EXPECT_EQ(env.stopped_preparations(), std::vector<std::string>{temp_of(kFileSize)});
  EXPECT_EQ(queue.allocator()->taken(), 1u);
  EXPECT_EQ(queue.allocator()->taken_half_prepared(), 1u);
  EXPECT_EQ(queue.allocator()->missed(), 1u);  // only the log's first segment
  ASSERT_EQ(queue.files().size(), 2u);
  EXPECT_EQ(queue.last_file()->path(), segment(kFileSize));
  env.run_all();  // the stopped preparation's completion, and the next segment's preparation
  std::vector<uint8_t> out(3000);
  auto read = queue.read(kFileSize, out);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, 3000u);
  EXPECT_EQ(out, std::vector<uint8_t>(3000, 3));
  EXPECT_EQ(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  append(queue, 10, 4);  // asks for the segment after
  env.run_all();
  EXPECT_EQ(names_in(env, kDir), (std::vector<std::string>{MappedFile::file_name(0), MappedFile::file_name(kFileSize),
                                                           MappedFile::file_name(2 * kFileSize) + ".allocating"}));
  EXPECT_EQ(env.stopped_preparations().size(), 1u);
}

TEST(AllocateMappedFileServiceTest, LoadRemovesUnfinishedPreparations) {
  MemoryEnv env;
  {
    MappedFileQueue queue(env, kDir, kFileSize);
    queue.enable_preallocation(/*warm=*/true);
    ASSERT_TRUE(queue.load().ok());
    append(queue, 1000, 1);
    append(queue, 1000, 2);
    env.run_all();
    ASSERT_NE(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  }  // the process stops with a segment prepared
  MappedFileQueue queue(env, kDir, kFileSize);
  ASSERT_TRUE(queue.load().ok());
  EXPECT_EQ(names_in(env, kDir), (std::vector<std::string>{MappedFile::file_name(0)}));
  ASSERT_EQ(queue.files().size(), 1u);
}

TEST(AllocateMappedFileServiceTest, TakenSegmentSurvivesPowerLossOnceFlushed) {
  MemoryEnv env;
  env.memory_files().make_durable_dir(kDir);
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/true);
  ASSERT_TRUE(queue.load().ok());
  append(queue, 4000, 1);
  append(queue, 10, 2);
  env.run_all();
  append(queue, 500, 3);  // rolls onto the prepared segment
  ASSERT_EQ(queue.allocator()->taken(), 1u);
  Status flushed = Status::Aborted("flush did not complete");
  queue.flush([&](Status status) { flushed = std::move(status); });
  env.run_all();
  ASSERT_TRUE(flushed.ok()) << flushed.to_string();
  env.power_loss();
  MappedFileQueue reloaded(env, kDir, kFileSize);
  ASSERT_TRUE(reloaded.load().ok());
  ASSERT_EQ(reloaded.files().size(), 2u);
  std::vector<uint8_t> out(500);
  ASSERT_TRUE(reloaded.read(kFileSize, out).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(500, 3));
}

TEST(AllocateMappedFileServiceTest, DestroyRemovesAPreparedSegment) {
  MemoryEnv env;
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/false);
  ASSERT_TRUE(queue.load().ok());
  append(queue, 100, 1);
  append(queue, 100, 1);
  env.run_all();
  ASSERT_NE(env.memory_files().bytes(temp_of(kFileSize)), nullptr);
  ASSERT_TRUE(queue.destroy().ok());
  env.run_all();
  EXPECT_TRUE(names_in(env, kDir).empty());
}

TEST(AllocateMappedFileServiceTest, ConfigKeysTurnItOnForTheCommitLog) {
  MemoryEnv env;
  MessageStoreConfig config;
  EXPECT_EQ(CommitLog(env, config).file_queue().allocator(), nullptr);
  ASSERT_TRUE(config.set_property("warmMapedFileEnable", "true").ok());
  EXPECT_TRUE(config.warmMapedFileEnable);
  CommitLog log(env, config);
  ASSERT_NE(log.file_queue().allocator(), nullptr);
  EXPECT_TRUE(log.file_queue().allocator()->warm());
  ASSERT_TRUE(config.set_property("allocateMappedFileEnable", "yes-please").status().code() ==
              StatusCode::kInvalidArgument);
}

// Whatever the interleaving of appends and background completions, the log
// holds the same bytes in the same segments as without pre-allocation, and
// at most one temporary file lies beside them.
RC_GTEST_PROP(AllocateMappedFileServiceProp, NeverChangesWhatTheLogHolds, ()) {
  const auto steps = *rc::gen::container<std::vector<std::pair<bool, int>>>(
      rc::gen::pair(rc::gen::arbitrary<bool>(), rc::gen::inRange(1, 2500)));
  MemoryEnv with_env;
  MemoryEnv without_env;
  MappedFileQueue with(with_env, kDir, kFileSize);
  MappedFileQueue without(without_env, kDir, kFileSize);
  with.enable_preallocation(*rc::gen::arbitrary<bool>());
  RC_ASSERT(with.load().ok());
  RC_ASSERT(without.load().ok());
  uint8_t value = 0;
  for (const auto& [run, n] : steps) {
    ++value;
    append(with, static_cast<size_t>(n), value);
    append(without, static_cast<size_t>(n), value);
    if (run) with_env.run_all();
  }
  with_env.run_all();
  RC_ASSERT(with.max_offset() == without.max_offset());
  RC_ASSERT(with.files().size() == without.files().size());
  for (int64_t offset = 0; offset < without.max_offset(); offset += kFileSize) {
    RC_ASSERT(*with_env.memory_files().bytes(segment(offset)) == *without_env.memory_files().bytes(segment(offset)));
  }
  int temps = 0;
  for (const std::string& name : names_in(with_env, kDir)) temps += AllocateMappedFileService::is_temp_name(name);
  RC_ASSERT(temps <= 1);
  RC_ASSERT(with.allocator()->taken() + with.allocator()->missed() == with.files().size());
}

// An empty log's first segment can be prepared ahead too (the store does it
// before serving): the first append then takes it, and the put path makes
// no file. Without pre-allocation, or with files, nothing is requested.
TEST(AllocateMappedFileServiceTest, TheFirstSegmentIsPreparedWhenAsked) {
  MemoryEnv env;
  MappedFileQueue queue(env, kDir, kFileSize);
  queue.enable_preallocation(/*warm=*/true);
  ASSERT_TRUE(queue.load().ok());
  EXPECT_FALSE(queue.first_file_preparing());
  ASSERT_TRUE(queue.request_first_file(0));
  EXPECT_TRUE(queue.first_file_preparing());
  env.run_all();
  EXPECT_FALSE(queue.first_file_preparing());
  EXPECT_TRUE(queue.allocator()->has_ready());
  append(queue, 1000, 1);
  EXPECT_EQ(queue.allocator()->taken(), 1u);
  EXPECT_EQ(queue.allocator()->missed(), 0u);  // made on the put path: none
  ASSERT_EQ(queue.files().size(), 1u);
  EXPECT_EQ(queue.last_file()->path(), segment(0));
  EXPECT_FALSE(queue.request_first_file(kFileSize));  // it has a file now

  MappedFileQueue plain(env, "/store/plain", kFileSize);
  ASSERT_TRUE(plain.load().ok());
  EXPECT_FALSE(plain.request_first_file(0));
  EXPECT_FALSE(plain.first_file_preparing());
}

}  // namespace
}  // namespace mqlab::store::allocate_mapped_file_service_test
