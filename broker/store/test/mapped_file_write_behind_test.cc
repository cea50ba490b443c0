// MappedFile's write-behind on the in-memory Env: buffered bytes read back
// at once and merged with the file's, reach the file only on commit (full
// buffer, flush), survive truncation below the cut; and a RapidCheck
// property that any interleaving of appends, commits, flushes and cuts reads
// back exactly as a file written at once would.
#include "broker/store/mapped_file.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/store/test/memory_env.h"

namespace mqlab::store::mapped_file_write_behind_test {
namespace {

using testing::MemoryEnv;
using Bytes = std::vector<uint8_t>;

constexpr int64_t kFileSize = 256;
constexpr size_t kMaxPending = 64;

std::shared_ptr<MappedFile> open_file(MemoryEnv& env, const std::string& path) {
  auto file = env.files().open(path, env::OpenOptions{.create = true, .exclusive = false, .truncate = true});
  EXPECT_TRUE(file.ok());
  EXPECT_TRUE((*file)->allocate(kFileSize).ok());
  return std::make_shared<MappedFile>(*file, 0, kFileSize);
}

Bytes read(const MappedFile& file, int64_t position, size_t length) {
  Bytes out(length, 0xEE);
  auto got = file.read(position, out);
  EXPECT_TRUE(got.ok());
  EXPECT_EQ(*got, length);
  return out;
}

// What the file itself holds, bypassing the buffer.
Bytes on_file(const MappedFile& file, int64_t position, size_t length) {
  Bytes out(length, 0xEE);
  auto got = file.file()->pread(static_cast<uint64_t>(position), out);
  EXPECT_TRUE(got.ok());
  return out;
}

Bytes filled(size_t length, uint8_t value) { return Bytes(length, value); }

TEST(MappedFileWriteBehind, BufferedBytesReadBackAndReachTheFileOnCommit) {
  MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending);
  ASSERT_TRUE(file->append(filled(10, 1)).ok());
  ASSERT_TRUE(file->commit().ok());
  ASSERT_TRUE(file->append(filled(10, 2)).ok());
  EXPECT_EQ(file->wrote_position(), 20);
  EXPECT_EQ(file->committed_position(), 10);
  EXPECT_TRUE(file->has_pending());
  // A read across the committed end: file bytes, then buffered ones, then zeros.
  Bytes expected = filled(10, 1);
  expected.resize(20, 2);
  expected.resize(30, 0);
  EXPECT_EQ(read(*file, 0, 30), expected);
  EXPECT_EQ(on_file(*file, 10, 10), filled(10, 0));  // not written yet
  ASSERT_TRUE(file->commit().ok());
  EXPECT_FALSE(file->has_pending());
  EXPECT_EQ(on_file(*file, 10, 10), filled(10, 2));
}

TEST(MappedFileWriteBehind, AFullBufferIsCommittedBeforeTheNextAppend) {
  MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending);
  ASSERT_TRUE(file->append(filled(60, 3)).ok());
  EXPECT_EQ(file->committed_position(), 0);
  ASSERT_TRUE(file->append(filled(10, 4)).ok());  // 70 > 64: the 60 go first
  EXPECT_EQ(file->committed_position(), 60);
  EXPECT_EQ(on_file(*file, 0, 60), filled(60, 3));
  ASSERT_TRUE(file->append(filled(kMaxPending, 5)).ok());  // too big to buffer: written at once
  EXPECT_FALSE(file->has_pending());
  EXPECT_EQ(on_file(*file, 70, kMaxPending), filled(kMaxPending, 5));
}

TEST(MappedFileWriteBehind, FlushCommitsThenSyncs) {
  MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending);
  env.files().sync_dir("/", [](Status status) { ASSERT_TRUE(status.ok()); });  // the entry survives
  env.run_all();
  ASSERT_TRUE(file->append(filled(20, 6)).ok());
  Status flushed = Status::Aborted("pending");
  file->flush([&flushed](Status status) { flushed = status; });
  env.run_all();
  ASSERT_TRUE(flushed.ok()) << flushed.to_string();
  EXPECT_EQ(file->flushed_position(), 20);
  ASSERT_TRUE(file->append(filled(5, 8)).ok());
  ASSERT_TRUE(file->commit().ok());  // in the page cache, not durable
  env.power_loss();
  EXPECT_EQ(on_file(*file, 0, 25), [] {
    Bytes bytes = filled(20, 6);
    bytes.resize(25, 0);
    return bytes;
  }());
}

TEST(MappedFileWriteBehind, CutKeepsBufferedBytesBelowIt) {
  MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending);
  ASSERT_TRUE(file->append(filled(30, 7)).ok());
  file->set_wrote_position(12);
  EXPECT_EQ(file->committed_position(), 0);
  EXPECT_EQ(read(*file, 0, 16), [] {
    Bytes bytes = filled(12, 7);
    bytes.resize(16, 0);
    return bytes;
  }());
  ASSERT_TRUE(file->commit().ok());
  EXPECT_EQ(on_file(*file, 0, 12), filled(12, 7));
  EXPECT_EQ(on_file(*file, 12, 18), filled(18, 0));
}

// Any sequence of operations reads back as the same appends made to a file
// without write-behind, and after a final commit the file holds that too.
RC_GTEST_PROP(MappedFileWriteBehind, ReadsAsAFileWrittenAtOnce, ()) {
  MemoryEnv env;
  auto buffered = open_file(env, "/buffered");
  auto direct = open_file(env, "/direct");
  // Also with the last commit kept for readers (the CommitLog's setting).
  const bool keep_last_commit = *rc::gen::arbitrary<bool>();
  buffered->enable_write_behind(kMaxPending, keep_last_commit);
  const int steps = *rc::gen::inRange(1, 40);
  uint8_t value = 1;
  for (int step = 0; step < steps; ++step) {
    const int action = *rc::gen::inRange(0, 11);
    if (action < 7) {
      const auto length = *rc::gen::inRange<int64_t>(1, 80);
      if (buffered->wrote_position() + length > kFileSize) continue;
      const Bytes bytes = filled(static_cast<size_t>(length), value++);
      RC_ASSERT(buffered->append(bytes).ok());
      RC_ASSERT(direct->append(bytes).ok());
    } else if (action == 7) {
      RC_ASSERT(buffered->commit().ok());
    } else if (action == 10) {
      // A segment's end, as CommitLog::write_blank does it: commit, then the
      // rest of the file is padding that reads as zeros.
      RC_ASSERT(buffered->commit().ok());
      for (const auto& file : {buffered, direct}) file->set_wrote_position(kFileSize);
    } else {
      // A cut, as truncation does it: the file past the cut reads as zeros.
      const auto cut = *rc::gen::inRange<int64_t>(0, buffered->wrote_position() + 1);
      for (const auto& file : {buffered, direct}) {
        RC_ASSERT(file->file()->truncate(static_cast<uint64_t>(cut)).ok());
        RC_ASSERT(file->file()->allocate(kFileSize).ok());
        file->set_wrote_position(cut);
      }
    }
    RC_ASSERT(buffered->wrote_position() == direct->wrote_position());
    RC_ASSERT(buffered->committed_position() <= buffered->wrote_position());
    const auto from = *rc::gen::inRange<int64_t>(0, kFileSize);
    const auto length = static_cast<size_t>(*rc::gen::inRange<int64_t>(0, kFileSize - from + 1));
    RC_ASSERT(read(*buffered, from, length) == read(*direct, from, length));
  }
  RC_ASSERT(buffered->commit().ok());
  RC_ASSERT(on_file(*buffered, 0, kFileSize) == on_file(*direct, 0, kFileSize));
}

TEST(MappedFileWriteBehind, TheKeptLastCommitServesReadsUntilTheNextCommitReplacesIt) {
  MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending, /*keep_last_commit=*/true);
  ASSERT_TRUE(file->append(filled(10, 1)).ok());
  ASSERT_TRUE(file->commit().ok());
  ASSERT_TRUE(file->append(filled(10, 2)).ok());
  ASSERT_TRUE(file->append(filled(10, 3)).ok());
  ASSERT_TRUE(file->commit().ok());
  // The file changed behind the store's back: reads of the last commit still
  // come from memory (what was committed), older bytes from the file.
  ASSERT_TRUE(file->file()->pwrite(0, filled(30, 9)).ok());
  Bytes last_commit = filled(10, 2);
  last_commit.insert(last_commit.end(), 10, 3);
  EXPECT_EQ(read(*file, 10, 20), last_commit);
  EXPECT_EQ(read(*file, 0, 10), filled(10, 9)) << "before the last commit: the file";
  // A batch too big to buffer is written at once: the kept copy no longer
  // ends at the committed position and is dropped.
  ASSERT_TRUE(file->append(filled(kMaxPending, 4)).ok());
  ASSERT_TRUE(file->file()->pwrite(10, filled(20, 8)).ok());
  EXPECT_EQ(read(*file, 10, 20), filled(20, 8));
  EXPECT_EQ(read(*file, 30, kMaxPending), filled(kMaxPending, 4));
}

}  // namespace
}  // namespace mqlab::store::mapped_file_write_behind_test
