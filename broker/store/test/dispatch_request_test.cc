// The two ways to a DispatchRequest agree: what the put path describes
// (dispatch_request_of_put) equals what decoding the written record gives
// (dispatch_request_of_record), over random messages, for every message
// whose properties read back as written; and properties_round_trip says
// exactly which do. Plus the ring the put path hands requests over in.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "broker/store/commit_log.h"
#include "broker/store/dispatch_request.h"
#include "broker/store/handed_over_dispatch_requests.h"
#include "broker/store/message_codec.h"

namespace mqlab::store::dispatch_request_test {
namespace {

constexpr std::string_view kTopicAlphabet = "%|abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";

// Property names the dispatcher looks for, other names, and bytes the text
// format cannot carry everywhere (0x01 in a name, 0x02 anywhere).
MessageProperties gen_properties() {
  static const std::vector<std::string> kNames = {"TAGS", "KEYS", "UNIQ_KEY", "DELAY", "a", "TAGS\x01", "x\x02KEYS",
                                                  "", "KEYS\x01x"};
  static const std::vector<std::string> kValueTokens = {"a", "Z", " ", "k1 k2", "\x01", "\x02", "\x02KEYS\x01z",
                                                        "\xE4\xBB\x8E", "3", "TagA"};
  MessageProperties properties;
  const auto count = *rc::gen::inRange(0, 5);
  for (int i = 0; i < count; ++i) {
    std::string value;
    for (const std::string& token : *rc::gen::resize(6, rc::gen::container<std::vector<std::string>>(
                                                            rc::gen::elementOf(kValueTokens)))) {
      value += token;
    }
    properties[*rc::gen::elementOf(kNames)] = value;
  }
  return properties;
}

HostAddress gen_host() {
  HostAddress host;
  host.ipv6 = *rc::gen::arbitrary<bool>();
  for (size_t i = 0; i < (host.ipv6 ? 16u : 4u); ++i) host.ip[i] = *rc::gen::arbitrary<uint8_t>();
  host.port = *rc::gen::arbitrary<int32_t>();
  return host;
}

MessageToStore gen_message() {
  MessageToStore message;
  const auto topic_length = *rc::gen::inRange<size_t>(1, 40);
  message.topic = *rc::gen::container<std::string>(topic_length, rc::gen::elementOf(kTopicAlphabet));
  message.queue_id = *rc::gen::arbitrary<int32_t>();
  message.flag = *rc::gen::arbitrary<int32_t>();
  message.body.assign(*rc::gen::inRange<size_t>(0, 300), static_cast<uint8_t>(*rc::gen::arbitrary<uint8_t>()));
  message.properties = gen_properties();
  message.sysflag = *rc::gen::arbitrary<int32_t>();
  message.born_timestamp_ms = *rc::gen::arbitrary<int64_t>();
  message.born_host = gen_host();
  message.store_host = gen_host();
  message.reconsume_times = *rc::gen::arbitrary<int32_t>();
  message.prepared_transaction_offset = *rc::gen::arbitrary<int64_t>();
  return message;
}

// The record write_record gives for message at the append's place, and the
// append's result as the CommitLog reports it.
struct Written {
  std::vector<uint8_t> bytes;
  AppendMessageResult appended;
};
Written write(const MessageToStore& message, QueueOffset queue_offset, PhyOffset offset, int64_t store_ms) {
  const RecordPlan plan = plan_record(message, 1 << 20);
  RC_ASSERT(plan.error == EncodeError::kNone);
  Written written;
  written.bytes.resize(static_cast<size_t>(plan.total_size));
  write_record(message, plan, AppendFields{queue_offset, offset, store_ms}, written.bytes);
  written.appended.wrote_offset = offset;
  written.appended.wrote_bytes = plan.total_size;
  written.appended.queue_offset = queue_offset;
  written.appended.store_timestamp_ms = store_ms;
  written.appended.store_host = message.store_host;
  return written;
}

DispatchRequest of_record(const std::vector<uint8_t>& bytes, PhyOffset offset) {
  Result<DecodedRecord> decoded = decode_record(bytes, DecodeOptions{.check_crc = true});
  RC_ASSERT(decoded.ok());
  DispatchRequest request;
  dispatch_request_of_record(decoded->message, offset, request);
  return request;
}

RC_GTEST_PROP(DispatchRequest, PutPathRequestEqualsTheDecodedRecordsWhenPropertiesRoundTrip, ()) {
  const MessageToStore message = gen_message();
  RC_PRE(properties_round_trip(message.properties));
  const QueueOffset queue_offset(*rc::gen::inRange<int64_t>(0, INT64_MAX));
  const PhyOffset offset(*rc::gen::inRange<int64_t>(0, INT64_MAX / 2));
  const Written written = write(message, queue_offset, offset, *rc::gen::arbitrary<int64_t>());
  DispatchRequest from_put;
  dispatch_request_of_put(message, written.appended, from_put);
  RC_ASSERT(from_put == of_record(written.bytes, offset));
}

RC_GTEST_PROP(DispatchRequest, PropertiesRoundTripSaysWhetherDecodeGivesThemBack, ()) {
  const MessageProperties properties = gen_properties();
  RC_ASSERT(properties_round_trip(properties) == (decode_properties(encode_properties(properties)) == properties));
}

// The rule itself, on names and values of every short length with the
// separators (and the bytes beside them) anywhere: properties_round_trip
// scans words, overlapping at the end, and bytes below 8.
RC_GTEST_PROP(DispatchRequest, PropertiesRoundTripIsTheSeparatorRule, ()) {
  const auto gen_bytes = [] {
    return *rc::gen::resize(40, rc::gen::container<std::string>(rc::gen::element('\0', '\x01', '\x02', '\x03', 'a',
                                                                                    '\xff')));
  };
  const std::string name = gen_bytes();
  const std::string value = gen_bytes();
  const bool expected = !name.empty() && name.find_first_of("\x01\x02") == std::string::npos &&
                        value.find('\x02') == std::string::npos;
  RC_ASSERT(properties_round_trip({{name, value}}) == expected);
}

// A reused request: the second fill leaves nothing of the first.
TEST(DispatchRequest, RefillingARequestReplacesEveryField) {
  MessageToStore first;
  first.topic = "TopicWithALongNameBeyondTheSmallStringBuffer";
  first.queue_id = 3;
  first.body = {1, 2, 3};
  first.properties = {{"TAGS", "TagA"}, {"KEYS", "k1 k2"}, {"UNIQ_KEY", "0123456789ABCDEF0123456789ABCDEF"}};
  first.born_host = HostAddress::ipv4(1, 2, 3, 4, 5);
  MessageToStore second = first;
  second.topic = "T";
  second.properties.clear();
  second.born_host.ipv6 = true;
  for (const MessageToStore* message : {&first, &second}) {
    SCOPED_TRACE(message->topic);
    const Written written = write(*message, QueueOffset(7), PhyOffset(4096), 1'700'000'000'000);
    DispatchRequest reused;
    dispatch_request_of_put(first, write(first, QueueOffset(1), PhyOffset(0), 1).appended, reused);
    dispatch_request_of_put(*message, written.appended, reused);
    Result<DecodedRecord> decoded = decode_record(written.bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    DispatchRequest from_record;
    dispatch_request_of_record(decoded->message, PhyOffset(4096), from_record);
    EXPECT_EQ(reused, from_record);
    EXPECT_EQ(reused.msg_size, static_cast<int32_t>(written.bytes.size()));
  }
}

TEST(DispatchRequest, PropertiesThatDoNotRoundTrip) {
  EXPECT_TRUE(properties_round_trip({}));
  EXPECT_TRUE(properties_round_trip({{"KEYS", "a\x01" "b"}})) << "a value may hold 0x01";
  EXPECT_FALSE(properties_round_trip({{"TAGS", "a\x02KEYS\x01z"}})) << "0x02 in a value starts another property";
  EXPECT_FALSE(properties_round_trip({{"x\x02KEYS", "v"}}));
  EXPECT_FALSE(properties_round_trip({{"KEYS\x01x", "v"}}));
  EXPECT_FALSE(properties_round_trip({{"", "v"}}));
  // A NUL is only a byte: the fast scan's bound (0x00-0x02) is not the rule.
  using namespace std::string_literals;
  EXPECT_TRUE(properties_round_trip({{"K\0"s, "a\0b"s}}));
  EXPECT_TRUE(properties_round_trip({{"K\x03", "\x03"}, {"a", "0123456789\x03\x7f\xff"}}));
  // Past a 16-byte block, and after a name that passes.
  EXPECT_FALSE(properties_round_trip({{"A", "v"}, {"KEYS", "0123456789abcdef0123\x02"}}));
  EXPECT_FALSE(properties_round_trip({{"A", "v"}, {"0123456789abcdef0123\x01", "v"}}));
}

// ---- HandedOverDispatchRequests ----------------------------------------------

DispatchRequest request_at(int64_t offset, int32_t size, std::string topic = "T") {
  DispatchRequest request;
  request.topic = std::move(topic);
  request.commit_log_offset = PhyOffset(offset);
  request.msg_size = size;
  return request;
}

void push(HandedOverDispatchRequests& queue, const DispatchRequest& request) {
  queue.next_slot() = request;
  queue.push();
}

TEST(HandedOverDispatchRequests, KeepsOffsetOrderAcrossGrowthAndWrapAround) {
  HandedOverDispatchRequests queue(20);
  int64_t next_push = 0;
  int64_t next_pop = 0;
  // Pushes outrun pops, so the ring grows while its head is mid-ring.
  for (int round = 0; round < 30; ++round) {
    for (int i = 0; i < 3 && !queue.full(); ++i, next_push += 100) push(queue, request_at(next_push, 100));
    for (int i = 0; i < 2 && !queue.empty(); ++i, next_pop += 100) {
      ASSERT_EQ(queue.front()->commit_log_offset, PhyOffset(next_pop));
      queue.pop_front();
    }
  }
  // The last round popped two: fill it up again, across the wrap.
  for (; !queue.full(); next_push += 100) push(queue, request_at(next_push, 100));
  EXPECT_EQ(queue.size(), 20u);
  for (; !queue.empty(); next_pop += 100) {
    ASSERT_EQ(queue.front()->commit_log_offset, PhyOffset(next_pop));
    queue.pop_front();
  }
  EXPECT_EQ(next_pop, next_push);
}

TEST(HandedOverDispatchRequests, DropsBeforeAndFromAnOffset) {
  HandedOverDispatchRequests queue(8);
  for (int64_t offset = 0; offset < 800; offset += 100) push(queue, request_at(offset, 100));
  queue.drop_before(PhyOffset(250));
  ASSERT_EQ(queue.front()->commit_log_offset, PhyOffset(300));
  queue.drop_from(PhyOffset(600));
  EXPECT_EQ(queue.size(), 3u);  // 300, 400, 500
  // A dropped record's offset goes to the next one appended.
  push(queue, request_at(600, 50, "Other"));
  queue.drop_before(PhyOffset(600));
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.front()->topic, "Other");
  queue.drop_from(PhyOffset(0));
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.front(), nullptr);
}

TEST(HandedOverDispatchRequestsDeathTest, ARequestAtAnOffsetAlreadyHandedOverIsABug) {
  HandedOverDispatchRequests queue(8);
  push(queue, request_at(0, 100));
  EXPECT_DEATH(push(queue, request_at(0, 100, "Other")), "");
}

}  // namespace
}  // namespace mqlab::store::dispatch_request_test
