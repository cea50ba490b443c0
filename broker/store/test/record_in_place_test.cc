// The put path writes each CommitLog record once, in place (plan_record,
// write_record, MappedFile::append_in_place): checked here against the
// reference encoder (encode_message + patch) over random messages, through
// a MappedFile's write buffer (full buffer, record too big to buffer, a
// refused commit), and end to end: what the store keeps is byte for byte
// what the reference encoder gives for the same message and offsets.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "broker/store/mapped_file.h"
#include "broker/store/message_codec.h"
#include "broker/store/test/memory_env.h"
#include "broker/store/test/store_sim_world.h"

namespace mqlab::store::record_in_place_test {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr int32_t kMaxBodyBytes = 64 * 1024;

MessageToStore random_message() {
  static constexpr std::string_view kTopicAlphabet = "%|abcXYZ0189_-";
  MessageToStore message;
  const auto topic_length = *rc::gen::inRange<size_t>(1, kMaxTopicLength + 1);
  message.topic = *rc::gen::container<std::string>(topic_length, rc::gen::elementOf(kTopicAlphabet));
  message.queue_id = *rc::gen::arbitrary<int32_t>();
  message.flag = *rc::gen::arbitrary<int32_t>();
  message.body = *rc::gen::resize(2048, rc::gen::arbitrary<Bytes>());
  const auto count = *rc::gen::inRange(0, 6);
  for (int i = 0; i < count; ++i) {
    // Names free of 0x01 and 0x02, values free of 0x02: what the text carries.
    const auto name_bytes = rc::gen::elementOf(std::string_view("ABKTUWXYZ_"));
    const std::string name = *rc::gen::nonEmpty(rc::gen::container<std::string>(name_bytes));
    const auto value_bytes = rc::gen::elementOf(std::string_view("ab \x01\xC3\xA9"));
    message.properties[name] = *rc::gen::container<std::string>(value_bytes);
  }
  message.sysflag = *rc::gen::arbitrary<int32_t>();
  message.born_timestamp_ms = *rc::gen::arbitrary<int64_t>();
  message.born_host = HostAddress::ipv4(10, 0, 0, *rc::gen::arbitrary<uint8_t>(), *rc::gen::arbitrary<int32_t>());
  message.born_host.ipv6 = *rc::gen::arbitrary<bool>();
  message.store_host = HostAddress::ipv4(192, 168, 1, 2, 10911);
  message.store_host.ipv6 = *rc::gen::arbitrary<bool>();
  message.reconsume_times = *rc::gen::arbitrary<int32_t>();
  message.prepared_transaction_offset = *rc::gen::arbitrary<int64_t>();
  return message;
}

// The reference: a record of its own, its append-time fields patched after.
Bytes reference_record(const MessageToStore& message, const AppendFields& fields) {
  EncodeOutcome outcome = encode_message(message, kMaxBodyBytes);
  MQ_ASSERT(outcome.error == EncodeError::kNone);
  outcome.message.patch(fields.queue_offset, fields.physical_offset, fields.store_timestamp_ms);
  return std::move(outcome.message.bytes);
}

Bytes write_in_place(const MessageToStore& message, const AppendFields& fields) {
  const RecordPlan plan = plan_record(message, kMaxBodyBytes);
  MQ_ASSERT(plan.error == EncodeError::kNone);
  // Poisoned first: a byte write_record forgot would show.
  Bytes out(static_cast<size_t>(plan.total_size), 0xEE);
  write_record(message, plan, fields, out);
  return out;
}

RC_GTEST_PROP(RecordInPlace, WritesWhatTheReferenceEncoderAndPatchGive, ()) {
  const MessageToStore message = random_message();
  const AppendFields fields{QueueOffset(*rc::gen::inRange<int64_t>(0, INT64_MAX)),
                            PhyOffset(*rc::gen::inRange<int64_t>(0, INT64_MAX)), *rc::gen::arbitrary<int64_t>()};
  const RecordPlan plan = plan_record(message, kMaxBodyBytes);
  RC_ASSERT(plan.error == EncodeError::kNone);
  RC_ASSERT(static_cast<size_t>(plan.properties_length) == encode_properties(message.properties).size());
  const Bytes in_place = write_in_place(message, fields);
  RC_ASSERT(in_place == reference_record(message, fields));
  Result<DecodedRecord> decoded = decode_record(in_place);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->message.properties_text == encode_properties(message.properties));
  RC_ASSERT(decoded->message.queue_offset == fields.queue_offset);
  RC_ASSERT(decoded->message.physical_offset == fields.physical_offset);
  RC_ASSERT(decoded->message.store_timestamp_ms == fields.store_timestamp_ms);
}

// A topic the caller vouches for (its last plan's) is not checked again;
// any other is, whatever the caller vouched for.
TEST(RecordInPlace, PlanChecksEveryTopicButTheOneVouchedFor) {
  MessageToStore message = testing::make_message("Topic", 0, "body");
  EXPECT_EQ(plan_record(message, kMaxBodyBytes, "Topic").error, EncodeError::kNone);
  message.topic = "bad topic";
  EXPECT_EQ(plan_record(message, kMaxBodyBytes, "Topic").error, EncodeError::kMessageIllegal);
  EXPECT_EQ(plan_record(message, kMaxBodyBytes, "").error, EncodeError::kMessageIllegal);
  message.topic = "Topic2";
  EXPECT_EQ(plan_record(message, kMaxBodyBytes, "Topic").error, EncodeError::kNone);
}

TEST(RecordInPlace, PlanRefusesWhatEncodeMessageRefusesWithTheSameReason) {
  MessageToStore message = testing::make_message("Topic", 0, "body");
  message.topic = "bad topic";
  RecordPlan plan = plan_record(message, kMaxBodyBytes);
  EXPECT_EQ(plan.error, EncodeError::kMessageIllegal);
  EXPECT_EQ(plan.reason, encode_message(message, kMaxBodyBytes).reason);
  EXPECT_NE(plan.reason.find("bad topic"), std::string::npos) << plan.reason;

  message.topic = "Topic";
  message.body.assign(kMaxBodyBytes + 1, 0);
  plan = plan_record(message, kMaxBodyBytes);
  EXPECT_EQ(plan.error, EncodeError::kMessageIllegal);
  EXPECT_NE(plan.reason.find("maxMessageSize"), std::string::npos) << plan.reason;

  message.body.clear();
  message.properties["P"] = std::string(kMaxPropertiesLength, 'x');  // + "P", 0x01, 0x02
  plan = plan_record(message, kMaxBodyBytes);
  EXPECT_EQ(plan.error, EncodeError::kPropertiesSizeExceeded);
  EXPECT_EQ(plan.reason, encode_message(message, kMaxBodyBytes).reason);
  message.properties["P"] = std::string(kMaxPropertiesLength - 3, 'x');  // exactly the limit
  plan = plan_record(message, kMaxBodyBytes);
  EXPECT_EQ(plan.error, EncodeError::kNone) << plan.reason;
  EXPECT_EQ(plan.properties_length, kMaxPropertiesLength);
}

// --- MappedFile::append_in_place --------------------------------------------

constexpr int64_t kFileSize = 4096;
constexpr size_t kMaxPending = 256;

std::shared_ptr<MappedFile> open_file(testing::MemoryEnv& env, const std::string& path) {
  auto file = env.files().open(path, env::OpenOptions{.create = true, .exclusive = false, .truncate = true});
  EXPECT_TRUE(file.ok());
  EXPECT_TRUE((*file)->allocate(kFileSize).ok());
  return std::make_shared<MappedFile>(*file, 0, kFileSize);
}

Bytes pattern(size_t length, uint8_t seed) {
  Bytes bytes(length);
  for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

Status append_copy(MappedFile& file, const Bytes& bytes) {
  return file.append_in_place(bytes.size(), [&](std::span<uint8_t> out) {
    EXPECT_EQ(out.size(), bytes.size());
    std::copy(bytes.begin(), bytes.end(), out.begin());
  });
}

Bytes read_back(const MappedFile& file, int64_t position, size_t length) {
  Bytes out(length, 0xEE);
  Result<size_t> got = file.read(position, out);
  EXPECT_TRUE(got.ok());
  EXPECT_EQ(*got, length);
  return out;
}

TEST(RecordInPlace, BufferedAppendsReadBackCommitWhenFullAndGoStraightToTheFileWhenTooBig) {
  testing::MemoryEnv env;
  auto file = open_file(env, "/f");
  file->enable_write_behind(kMaxPending, /*keep_last_commit=*/true);
  const Bytes a = pattern(100, 1), b = pattern(100, 2), c = pattern(100, 3), big = pattern(kMaxPending, 4);
  ASSERT_TRUE(append_copy(*file, a).ok());
  ASSERT_TRUE(append_copy(*file, b).ok());
  EXPECT_EQ(file->committed_position(), 0);  // both buffered
  EXPECT_EQ(file->wrote_position(), 200);
  EXPECT_EQ(read_back(*file, 0, 100), a);
  EXPECT_EQ(read_back(*file, 100, 100), b);
  // 300 bytes would not fit beside the 200 buffered: those are committed first.
  ASSERT_TRUE(append_copy(*file, c).ok());
  EXPECT_EQ(file->committed_position(), 200);
  EXPECT_EQ(file->wrote_position(), 300);
  // A record as big as the buffer is never buffered: the buffered one is
  // committed, then it is one pwrite of its own.
  ASSERT_TRUE(append_copy(*file, big).ok());
  EXPECT_EQ(file->committed_position(), 300 + static_cast<int64_t>(kMaxPending));
  EXPECT_FALSE(file->has_pending());
  Bytes on_file(300 + kMaxPending);
  ASSERT_TRUE(file->file()->pread(0, on_file).ok());
  Bytes expected = a;
  for (const Bytes* part : {&b, &c, &big}) expected.insert(expected.end(), part->begin(), part->end());
  EXPECT_EQ(on_file, expected);
}

TEST(RecordInPlace, WithoutWriteBehindEveryAppendIsAPwrite) {
  testing::MemoryEnv env;
  auto file = open_file(env, "/f");
  const Bytes a = pattern(40, 9);
  ASSERT_TRUE(append_copy(*file, a).ok());
  EXPECT_EQ(file->committed_position(), 40);
  Bytes on_file(40);
  ASSERT_TRUE(file->file()->pread(0, on_file).ok());
  EXPECT_EQ(on_file, a);
}

// --- end to end: what the store keeps ----------------------------------------

class RecordInPlaceStore : public ::testing::Test {};

TEST_F(RecordInPlaceStore, StoredRecordsAreTheReferenceEncodingOfWhatWasPut) {
  testing::StoreSimWorld world(testing::small_store_config(FlushDiskType::ASYNC_FLUSH));
  ASSERT_TRUE(world.start().ok());
  for (int i = 0; i < 200; ++i) {  // several segment rolls (BLANK records between)
    MessageToStore message = testing::make_message("Topic" + std::to_string(i % 3), i % 4,
                                                   std::string(static_cast<size_t>(100 + i * 13 % 1500), 'a' + i % 26),
                                                   "key" + std::to_string(i), i % 2 ? "TagA" : "");
    message.properties["UNIQ_KEY"] = "0A000001" + std::to_string(1000000 + i);
    if (i % 5 == 0) message.properties[std::string(kPropertyWaitStoreMsgOk)] = "true";
    if (i % 7 == 0) message.born_host.ipv6 = true;
    MessageToStore expected = message;
    expected.properties.erase(std::string(kPropertyWaitStoreMsgOk));  // the store does not keep WAIT
    expected.store_host = testing::kStoreHost;
    const PutMessageResult put = world.put(std::move(message));
    ASSERT_EQ(put.status, PutMessageStatus::PUT_OK) << put.remark;
    const AppendFields fields{put.append.queue_offset, put.append.wrote_offset, put.append.store_timestamp_ms};
    Result<std::vector<uint8_t>> stored = world.store().look_message_by_offset(put.append.wrote_offset);
    ASSERT_TRUE(stored.ok()) << stored.status().to_string();
    ASSERT_EQ(*stored, reference_record(expected, fields)) << "put " << i;
    EXPECT_EQ(put.append.msg_id(), create_offset_message_id(testing::kStoreHost, put.append.wrote_offset));
  }
  ASSERT_TRUE(world.shutdown().ok());
}

}  // namespace
}  // namespace mqlab::store::record_in_place_test
