// ConsumeQueue: append/read, segment roll, recovery of torn and garbage
// tails, re-dispatch, truncation, retention, time search and durability, on
// the in-memory Env with 5-entry segment files; plus a RapidCheck property
// that a queue rebuilt from a replayed dispatch stream equals the original.
#include "broker/store/consume_queue.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/store/mapped_file.h"
#include "broker/store/test/memory_env.h"

namespace mqlab::store::consume_queue_test {

void PrintTo(const ConsumeQueueEntry& entry, std::ostream* out) {
  *out << "{queue offset " << entry.queue_offset.value() << ", offset " << entry.offset.value() << ", size "
       << entry.size << ", tags " << entry.tags_code << "}";
}

namespace {

using testing::MemoryEnv;

constexpr int64_t kEntriesPerFile = 5;
constexpr int32_t kMessageSize = 100;
const std::string kTopic = "TopicA";
constexpr int32_t kQueueId = 1;

MessageStoreConfig small_config(std::string root = "/store") {
  MessageStoreConfig config;
  config.storePathRootDir = std::move(root);
  config.mappedFileSizeConsumeQueue = kEntriesPerFile * kConsumeQueueEntrySize;
  return config;
}

// Message i of a simple stream: at commitlog offset i x 100, 100 bytes.
DispatchRequest request_at(int64_t queue_offset, int64_t phy_offset, int32_t size = kMessageSize,
                           int64_t tags_code = 7) {
  DispatchRequest request;
  request.topic = kTopic;
  request.queue_id = kQueueId;
  request.commit_log_offset = PhyOffset(phy_offset);
  request.msg_size = size;
  request.tags_code = tags_code;
  request.consume_queue_offset = QueueOffset(queue_offset);
  return request;
}

DispatchRequest message(int64_t i) { return request_at(i, i * kMessageSize, kMessageSize, i + 1000); }

ConsumeQueueEntry entry_of(const DispatchRequest& request) {
  return ConsumeQueueEntry{.queue_offset = request.consume_queue_offset,
                           .offset = request.commit_log_offset,
                           .size = request.msg_size,
                           .tags_code = request.tags_code};
}

class ConsumeQueueTest : public ::testing::Test {
 protected:
  ConsumeQueueTest() : config_(small_config()) { env_.memory_files().make_durable_dir("/store"); }

  std::unique_ptr<ConsumeQueue> open_queue() {
    auto queue = std::make_unique<ConsumeQueue>(env_, config_, kTopic, kQueueId);
    EXPECT_TRUE(queue->load().ok());
    const Status recovered = queue->recover();
    EXPECT_TRUE(recovered.ok()) << recovered.to_string();
    return queue;
  }

  void put_messages(ConsumeQueue& queue, int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) ASSERT_TRUE(queue.put(message(i)).ok()) << i;
  }

  Status flush(ConsumeQueue& queue, int32_t least_pages = 0) {
    Status result = Status::Aborted("flush did not complete");
    queue.flush(least_pages, [&result](Status status) { result = std::move(status); });
    env_.run_all();
    return result;
  }

  std::vector<ConsumeQueueEntry> read_all(const ConsumeQueue& queue) {
    if (queue.max_offset() == queue.min_offset()) return {};
    auto entries = queue.read(queue.min_offset(), static_cast<int32_t>(queue.max_offset() - queue.min_offset()));
    EXPECT_TRUE(entries.ok()) << entries.status().to_string();
    return entries.ok() ? *entries : std::vector<ConsumeQueueEntry>{};
  }

  std::string queue_dir() const { return "/store/consumequeue/TopicA/1"; }
  std::string segment_path(int64_t first_entry) const {
    return queue_dir() + "/" + MappedFile::file_name(first_entry * kConsumeQueueEntrySize);
  }

  MemoryEnv env_;
  MessageStoreConfig config_;
};

TEST_F(ConsumeQueueTest, AppendThenReadMinMax) {
  auto queue = open_queue();
  EXPECT_EQ(queue->min_offset(), QueueOffset(0));
  EXPECT_EQ(queue->max_offset(), QueueOffset(0));
  put_messages(*queue, 0, 3);
  EXPECT_EQ(queue->min_offset(), QueueOffset(0));
  EXPECT_EQ(queue->max_offset(), QueueOffset(3));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(300));

  auto entries = queue->read(QueueOffset(0), 10);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ((*entries)[static_cast<size_t>(i)], entry_of(message(i)));

  auto one = queue->get(QueueOffset(1));
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ(**one, entry_of(message(1)));
  EXPECT_FALSE(queue->get(QueueOffset(3))->has_value());
  EXPECT_TRUE(queue->read(QueueOffset(3), 5)->empty());
  EXPECT_EQ(queue->read(QueueOffset(1), 1)->size(), 1u);
}

TEST_F(ConsumeQueueTest, RollsAcrossSegmentFiles) {
  auto queue = open_queue();
  put_messages(*queue, 0, 12);
  auto names = env_.files().list(queue_dir());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"00000000000000000000", "00000000000000000100",
                                              "00000000000000000200"}));
  auto across = queue->read(QueueOffset(3), 5);  // entries 3..7, in two files
  ASSERT_TRUE(across.ok());
  ASSERT_EQ(across->size(), 5u);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ((*across)[static_cast<size_t>(i)], entry_of(message(3 + i)));
  EXPECT_EQ(read_all(*queue).size(), 12u);
}

// A read longer than ConsumeQueue::read's stack chunk (64 entries), from
// the middle of a file, across many files, gives every entry in order.
TEST_F(ConsumeQueueTest, LongReadsCrossChunksAndFiles) {
  auto queue = open_queue();
  put_messages(*queue, 0, 150);
  for (const auto& [from, count] : std::vector<std::pair<int64_t, int32_t>>{{3, 140}, {0, 150}, {64, 65}, {7, 64}}) {
    auto entries = queue->read(QueueOffset(from), count);
    ASSERT_TRUE(entries.ok()) << entries.status().to_string();
    ASSERT_EQ(entries->size(), static_cast<size_t>(std::min<int64_t>(count, 150 - from)));
    for (size_t i = 0; i < entries->size(); ++i) {
      EXPECT_EQ((*entries)[i], entry_of(message(from + static_cast<int64_t>(i)))) << from << "+" << i;
    }
  }
}

TEST_F(ConsumeQueueTest, RecoverAfterReloadKeepsEntries) {
  {
    auto queue = open_queue();
    put_messages(*queue, 0, 7);
  }
  auto queue = open_queue();
  EXPECT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(queue->min_offset(), QueueOffset(0));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(700));
  EXPECT_EQ(read_all(*queue).size(), 7u);
  put_messages(*queue, 7, 9);  // appends continue where recovery ended
  EXPECT_EQ(queue->max_offset(), QueueOffset(9));
}

TEST_F(ConsumeQueueTest, RecoverTruncatesGarbageTail) {
  {
    auto queue = open_queue();
    put_messages(*queue, 0, 7);  // file 1 holds entries 5 and 6
  }
  // Entry 7: plausible fields but ending before entry 6 does; entry 8 valid
  // again, which recovery must not resurrect. Then a third file of noise.
  std::vector<uint8_t>& second = *env_.memory_files().bytes(segment_path(5));
  put_u64_be(second.data() + 2 * kConsumeQueueEntrySize, 50);
  put_u32_be(second.data() + 2 * kConsumeQueueEntrySize + 8, 10);
  put_u64_be(second.data() + 3 * kConsumeQueueEntrySize, 800);
  put_u32_be(second.data() + 3 * kConsumeQueueEntrySize + 8, 100);
  auto noise = env_.files().open(segment_path(10), env::OpenOptions{.create = true});
  ASSERT_TRUE(noise.ok());
  ASSERT_TRUE((*noise)->pwrite(0, std::vector<uint8_t>(kEntriesPerFile * kConsumeQueueEntrySize, 0xAB)).ok());

  auto queue = open_queue();
  ASSERT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(700));
  EXPECT_FALSE(env_.files().exists(segment_path(10)));
  // The cut bytes are zeroed, so a later recovery cannot see them either.
  EXPECT_EQ(get_i64_be(env_.memory_files().bytes(segment_path(5))->data() + 3 * kConsumeQueueEntrySize), 0);
  put_messages(*queue, 7, 8);
  EXPECT_EQ(read_all(*queue).back(), entry_of(message(7)));
}

TEST_F(ConsumeQueueTest, RecoverOfZeroTailAtFileBoundary) {
  {
    auto queue = open_queue();
    put_messages(*queue, 0, 5);  // exactly one full file
    auto next = env_.files().open(segment_path(5), env::OpenOptions{.create = true});  // a pre-made empty file
    ASSERT_TRUE(next.ok());
    ASSERT_TRUE((*next)->allocate(kEntriesPerFile * kConsumeQueueEntrySize).ok());
  }
  auto queue = open_queue();
  EXPECT_EQ(queue->max_offset(), QueueOffset(5));
  put_messages(*queue, 5, 6);
  EXPECT_EQ(read_all(*queue).size(), 6u);
}

TEST_F(ConsumeQueueTest, DuplicatePutIsSkipped) {
  auto queue = open_queue();
  put_messages(*queue, 0, 5);
  const auto before = read_all(*queue);
  EXPECT_TRUE(queue->put(message(2)).ok());  // a re-dispatch after recovery
  EXPECT_TRUE(queue->put(message(4)).ok());
  EXPECT_EQ(queue->max_offset(), QueueOffset(5));
  EXPECT_EQ(read_all(*queue), before);
}

TEST_F(ConsumeQueueTest, FirstFileStartingLateIsGapFilled) {
  {
    auto queue = open_queue();
    ASSERT_TRUE(queue->put(request_at(7, 5000)).ok());  // in the segment of entries 5..9
    EXPECT_EQ(queue->min_offset(), QueueOffset(7));
    EXPECT_EQ(queue->max_offset(), QueueOffset(8));
    EXPECT_EQ(queue->read(QueueOffset(5), 1).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(read_all(*queue), (std::vector{entry_of(request_at(7, 5000))}));
    ASSERT_TRUE(queue->put(request_at(8, 5100)).ok());
  }
  auto names = env_.files().list(queue_dir());
  EXPECT_EQ(*names, std::vector<std::string>{"00000000000000000100"});
  const std::vector<uint8_t>& bytes = *env_.memory_files().bytes(segment_path(5));
  for (int i = 0; i < 2; ++i) {  // RocketMQ's fillPreBlank placeholders
    EXPECT_EQ(get_i64_be(bytes.data() + i * kConsumeQueueEntrySize), 0);
    EXPECT_EQ(get_i32_be(bytes.data() + i * kConsumeQueueEntrySize + 8), INT32_MAX);
    EXPECT_EQ(get_i64_be(bytes.data() + i * kConsumeQueueEntrySize + 12), 0);
  }
  auto queue = open_queue();  // recovery accepts placeholders and skips them for min
  EXPECT_EQ(queue->min_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_offset(), QueueOffset(9));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(5200));
  queue->correct_min_offset(PhyOffset(0));
  EXPECT_EQ(queue->min_offset(), QueueOffset(7));
}

TEST_F(ConsumeQueueTest, OffsetMismatchIsCorruption) {
  auto queue = open_queue();
  put_messages(*queue, 0, 2);
  const Status gap = queue->put(request_at(5, 500));
  EXPECT_EQ(gap.code(), StatusCode::kCorruption);
  EXPECT_NE(gap.message().find("TopicA/1"), std::string::npos) << gap.message();
  EXPECT_NE(gap.message().find("expected queue offset 2, got 5"), std::string::npos) << gap.message();
  const Status behind = queue->put(request_at(1, 500));  // not a duplicate: it ends past the max
  EXPECT_EQ(behind.code(), StatusCode::kCorruption);
  EXPECT_EQ(queue->put(request_at(-1, 500)).code(), StatusCode::kCorruption);
  EXPECT_EQ(queue->put(request_at(2, 500, 0)).code(), StatusCode::kCorruption);
  EXPECT_EQ(queue->max_offset(), QueueOffset(2));
  EXPECT_TRUE(queue->put(request_at(2, 500)).ok());
}

TEST_F(ConsumeQueueTest, TruncateDirtyDropsEntriesPastTheEnd) {
  auto queue = open_queue();
  put_messages(*queue, 0, 12);
  ASSERT_TRUE(queue->truncate_dirty(PhyOffset(650)).ok());  // entry 6 (600) stays, 7 (700) goes
  EXPECT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(700));
  EXPECT_FALSE(env_.files().exists(segment_path(10)));
  ASSERT_TRUE(queue->truncate_dirty(PhyOffset(5000)).ok());  // nothing past: no change
  EXPECT_EQ(queue->max_offset(), QueueOffset(7));
  ASSERT_TRUE(queue->put(request_at(7, 700, 50)).ok());  // the CommitLog reassigns offset 7

  ASSERT_TRUE(queue->truncate_dirty(PhyOffset(0)).ok());
  EXPECT_EQ(queue->max_offset(), QueueOffset(0));
  EXPECT_EQ(queue->min_offset(), QueueOffset(0));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(0));
  put_messages(*queue, 0, 2);
  EXPECT_EQ(read_all(*queue).size(), 2u);
}

TEST_F(ConsumeQueueTest, TruncatingALateQueueKeepsItsPosition) {
  auto queue = open_queue();
  ASSERT_TRUE(queue->put(request_at(7, 5000)).ok());
  ASSERT_TRUE(queue->put(request_at(8, 5100)).ok());
  ASSERT_TRUE(queue->truncate_dirty(PhyOffset(5000)).ok());
  EXPECT_EQ(queue->min_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(0));
  ASSERT_TRUE(queue->put(request_at(7, 5000)).ok());
  EXPECT_EQ(queue->max_offset(), QueueOffset(8));
}

TEST_F(ConsumeQueueTest, DeleteExpiredFilesThenCorrectMin) {
  auto queue = open_queue();
  put_messages(*queue, 0, 12);  // files [0..4] [5..9] [10, 11]
  auto deleted = queue->delete_expired_files(PhyOffset(520));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);  // the first file ends at 400 < 520; the second at 900
  EXPECT_EQ(queue->min_offset(), QueueOffset(6));  // first entry at or past 520
  EXPECT_EQ(queue->read(QueueOffset(5), 1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(queue->read(QueueOffset(6), 1)->front(), entry_of(message(6)));

  deleted = queue->delete_expired_files(PhyOffset(1'000'000));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);  // never the last file
  EXPECT_TRUE(env_.files().exists(segment_path(10)));
  EXPECT_EQ(queue->min_offset(), QueueOffset(12));  // nothing readable is left
  EXPECT_EQ(queue->max_offset(), QueueOffset(12));
  put_messages(*queue, 12, 13);
  queue->correct_min_offset(PhyOffset(1150));
  EXPECT_EQ(queue->min_offset(), QueueOffset(12));
}

TEST_F(ConsumeQueueTest, OffsetByTimestampFindsTheFirstNotOlder) {
  auto queue = open_queue();
  put_messages(*queue, 0, 12);
  std::map<int64_t, int64_t> store_time;  // commitlog offset -> ms
  for (int64_t i = 0; i < 12; ++i) store_time[i * kMessageSize] = 1000 + i * 10;
  auto time_of = [&store_time](PhyOffset offset, int32_t size) -> Result<int64_t> {
    EXPECT_EQ(size, kMessageSize);
    auto it = store_time.find(offset.value());
    if (it == store_time.end()) return Status::NotFound("deleted");
    return it->second;
  };
  EXPECT_EQ(*queue->offset_by_timestamp(1035, time_of), QueueOffset(4));
  EXPECT_EQ(*queue->offset_by_timestamp(1040, time_of), QueueOffset(4));
  EXPECT_EQ(*queue->offset_by_timestamp(0, time_of), QueueOffset(0));
  EXPECT_EQ(*queue->offset_by_timestamp(99'999, time_of), QueueOffset(12));
  store_time.erase(0);  // retention removed the first record: counts as older
  store_time.erase(100);
  EXPECT_EQ(*queue->offset_by_timestamp(0, time_of), QueueOffset(2));
  auto failing = [](PhyOffset, int32_t) -> Result<int64_t> { return Status::IoError("disk"); };
  EXPECT_EQ(queue->offset_by_timestamp(1035, failing).status().code(), StatusCode::kIoError);
}

TEST_F(ConsumeQueueTest, FlushedQueueSurvivesPowerLoss) {
  {
    auto queue = open_queue();
    put_messages(*queue, 0, 7);
    const Status flushed = flush(*queue);
    ASSERT_TRUE(flushed.ok()) << flushed.to_string();
    put_messages(*queue, 7, 9);  // not flushed: may be lost
  }
  env_.power_loss();
  auto queue = open_queue();
  ASSERT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(read_all(*queue).back(), entry_of(message(6)));
}

TEST_F(ConsumeQueueTest, UnflushedNewQueueVanishesOnPowerLoss) {
  {
    auto queue = open_queue();
    put_messages(*queue, 0, 3);
    EXPECT_TRUE(flush(*queue, 2).ok());  // fewer than 2 dirty pages: skipped
  }
  env_.power_loss();
  EXPECT_FALSE(env_.files().exists("/store/consumequeue"));
  auto queue = open_queue();
  EXPECT_EQ(queue->max_offset(), QueueOffset(0));
}

// Write-behind (the store's mode): entries are readable at once from the
// buffer, reach the file a page at a time or on flush, and a process crash
// loses only what never reached the file.
TEST_F(ConsumeQueueTest, WriteBehindEntriesAreReadableBeforeTheyReachTheFile) {
  auto queue = std::make_unique<ConsumeQueue>(env_, config_, kTopic, kQueueId);
  queue->enable_write_behind();
  ASSERT_TRUE(queue->load().ok());
  ASSERT_TRUE(queue->recover().ok());
  put_messages(*queue, 0, 7);  // two files: the first is written when the second starts
  ASSERT_EQ(read_all(*queue).size(), 7u);
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(read_all(*queue)[static_cast<size_t>(i)], entry_of(message(i)));
  auto across = queue->read(QueueOffset(3), 4);  // file, then buffer
  ASSERT_TRUE(across.ok());
  ASSERT_EQ(across->size(), 4u);
  EXPECT_EQ((*across)[3], entry_of(message(6)));
  queue.reset();  // a process crash: entries 5 and 6 were only buffered
  queue = open_queue();
  EXPECT_EQ(queue->max_offset(), QueueOffset(5));
  EXPECT_EQ(read_all(*queue).back(), entry_of(message(4)));
}

TEST_F(ConsumeQueueTest, WriteBehindFlushWritesTheBufferAndSurvivesPowerLoss) {
  {
    auto queue = std::make_unique<ConsumeQueue>(env_, config_, kTopic, kQueueId);
    queue->enable_write_behind();
    ASSERT_TRUE(queue->load().ok());
    ASSERT_TRUE(queue->recover().ok());
    put_messages(*queue, 0, 3);
    // A skipped flush (too few dirty pages) still hands the buffer to the file.
    ASSERT_TRUE(flush(*queue, 1000).ok());
    put_messages(*queue, 3, 4);
    const Status flushed = flush(*queue);
    ASSERT_TRUE(flushed.ok()) << flushed.to_string();
    put_messages(*queue, 4, 5);  // buffered only
  }
  env_.power_loss();
  auto queue = open_queue();
  ASSERT_EQ(queue->max_offset(), QueueOffset(4));
  EXPECT_EQ(read_all(*queue).back(), entry_of(message(3)));
}

TEST_F(ConsumeQueueTest, WriteBehindTruncateDropsBufferedEntriesPastTheCut) {
  auto queue = std::make_unique<ConsumeQueue>(env_, config_, kTopic, kQueueId);
  queue->enable_write_behind();
  ASSERT_TRUE(queue->load().ok());
  ASSERT_TRUE(queue->recover().ok());
  put_messages(*queue, 0, 9);  // entries 5..8 buffered in the second file
  ASSERT_TRUE(queue->truncate_dirty(PhyOffset(7 * kMessageSize)).ok());
  EXPECT_EQ(queue->max_offset(), QueueOffset(7));
  EXPECT_EQ(queue->max_physical_end(), PhyOffset(7 * kMessageSize));
  put_messages(*queue, 7, 8);
  ASSERT_TRUE(flush(*queue).ok());
  queue.reset();
  queue = open_queue();
  ASSERT_EQ(queue->max_offset(), QueueOffset(8));
  const std::vector<ConsumeQueueEntry> entries = read_all(*queue);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(entries[static_cast<size_t>(i)], entry_of(message(i)));
}

TEST_F(ConsumeQueueTest, SiblingQueueFlushDoesNotDependOnAnother) {
  auto first = open_queue();
  put_messages(*first, 0, 1);
  auto sibling = std::make_unique<ConsumeQueue>(env_, config_, kTopic, 2);
  ASSERT_TRUE(sibling->load().ok());
  ASSERT_TRUE(sibling->recover().ok());
  DispatchRequest other = message(0);
  other.queue_id = 2;
  ASSERT_TRUE(sibling->put(other).ok());
  ASSERT_TRUE(flush(*sibling).ok());  // the first queue never flushes
  first.reset();
  sibling.reset();
  env_.power_loss();
  EXPECT_TRUE(env_.files().exists("/store/consumequeue/TopicA/2/00000000000000000000"));
  EXPECT_FALSE(env_.files().exists("/store/consumequeue/TopicA/1/00000000000000000000"));
}

TEST_F(ConsumeQueueTest, FirstPutLoadsAQueueNeverLoaded) {
  {
    ConsumeQueue fresh(env_, config_, kTopic, kQueueId);  // the store's first dispatch to a topic
    put_messages(fresh, 0, 2);
    EXPECT_TRUE(flush(fresh).ok());
  }
  env_.power_loss();
  ConsumeQueue again(env_, config_, kTopic, kQueueId);  // files exist: the first put recovers them
  put_messages(again, 2, 3);
  EXPECT_EQ(again.max_offset(), QueueOffset(3));
  EXPECT_EQ(read_all(again).size(), 3u);
}

TEST_F(ConsumeQueueTest, DestroyEmptiesTheQueue) {
  auto queue = open_queue();
  put_messages(*queue, 0, 7);
  ASSERT_TRUE(queue->destroy().ok());
  EXPECT_EQ(queue->max_offset(), QueueOffset(0));
  EXPECT_TRUE(env_.files().list(queue_dir())->empty());
  put_messages(*queue, 0, 1);
}

// A dispatch stream for one queue: consecutive queue offsets from `first`,
// records at increasing commitlog offsets (other queues' records between).
struct Stream {
  int64_t first = 0;
  std::vector<DispatchRequest> requests;
};

Stream generate_stream() {
  Stream stream;
  stream.first = *rc::gen::inRange<int64_t>(0, 3 * kEntriesPerFile);
  const auto count = *rc::gen::inRange<int64_t>(0, 4 * kEntriesPerFile);
  int64_t phy = *rc::gen::inRange<int64_t>(0, 1000);
  for (int64_t i = 0; i < count; ++i) {
    const auto size = *rc::gen::inRange<int32_t>(1, 300);
    stream.requests.push_back(request_at(stream.first + i, phy, size, *rc::gen::arbitrary<int64_t>()));
    phy += size + *rc::gen::inRange<int64_t>(0, 200);
  }
  return stream;
}

std::vector<ConsumeQueueEntry> contents(const ConsumeQueue& queue) {
  if (queue.max_offset() == queue.min_offset()) return {};
  auto entries = queue.read(queue.min_offset(), static_cast<int32_t>(queue.max_offset() - queue.min_offset()));
  RC_ASSERT(entries.ok());
  return *entries;
}

// The original is built once from the stream. The rebuilt queue lives
// through a crash at a random point (its unflushed tail may be lost), then,
// like abnormal recovery, gets the stream replayed from a random earlier
// point; every entry it already holds must be skipped, the rest appended.
RC_GTEST_PROP(ConsumeQueue, RebuiltFromDispatchStreamEqualsOriginal, ()) {
  const Stream stream = generate_stream();
  const auto n = static_cast<int64_t>(stream.requests.size());
  const int64_t crash_at = *rc::gen::inRange<int64_t>(0, n + 1);
  const int64_t flushed_at = *rc::gen::inRange<int64_t>(0, crash_at + 1);
  const int64_t replay_from = *rc::gen::inRange<int64_t>(0, flushed_at + 1);
  // As the store runs them (entries buffered, consume_queue.h) or not; and
  // a power loss, or a process crash that loses only the buffer.
  const bool write_behind = *rc::gen::arbitrary<bool>();
  const bool power_loss = *rc::gen::arbitrary<bool>();

  MemoryEnv env;
  env.memory_files().make_durable_dir("/a");
  env.memory_files().make_durable_dir("/b");
  const MessageStoreConfig original_config = small_config("/a");
  ConsumeQueue original(env, original_config, kTopic, kQueueId);
  RC_ASSERT(original.load().ok());
  RC_ASSERT(original.recover().ok());
  for (const auto& request : stream.requests) RC_ASSERT(original.put(request).ok());

  const MessageStoreConfig rebuilt_config = small_config("/b");
  {
    ConsumeQueue before_crash(env, rebuilt_config, kTopic, kQueueId);
    if (write_behind) before_crash.enable_write_behind();
    RC_ASSERT(before_crash.load().ok());
    RC_ASSERT(before_crash.recover().ok());
    for (int64_t i = 0; i < crash_at; ++i) {
      RC_ASSERT(before_crash.put(stream.requests[static_cast<size_t>(i)]).ok());
      if (i + 1 == flushed_at) {
        Status flushed = Status::Aborted("pending");
        before_crash.flush(0, [&flushed](Status status) { flushed = status; });
        env.run_all();
        RC_ASSERT(flushed.ok());
      }
    }
  }
  if (power_loss) env.power_loss();
  ConsumeQueue rebuilt(env, rebuilt_config, kTopic, kQueueId);
  if (write_behind) rebuilt.enable_write_behind();
  RC_ASSERT(rebuilt.load().ok());
  RC_ASSERT(rebuilt.recover().ok());
  RC_ASSERT(rebuilt.max_offset() >= QueueOffset(flushed_at == 0 ? 0 : stream.first + flushed_at));
  for (int64_t i = replay_from; i < n; ++i) RC_ASSERT(rebuilt.put(stream.requests[static_cast<size_t>(i)]).ok());

  RC_ASSERT(rebuilt.max_offset() == original.max_offset());
  RC_ASSERT(rebuilt.max_physical_end() == original.max_physical_end());
  RC_ASSERT(rebuilt.min_offset() == original.min_offset());
  RC_ASSERT(contents(rebuilt) == contents(original));
}

}  // namespace
}  // namespace mqlab::store::consume_queue_test
