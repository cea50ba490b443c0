// Examples and edge cases for the CommitLog record codec: a golden record
// built byte by byte from the reference table (not by the encoder), known
// CRC and Java hash values, the put-time limits, and every decode error path.
#include "broker/store/message_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mqlab::store::message_codec_test {
namespace {

using Bytes = std::vector<uint8_t>;
using namespace std::string_view_literals;

// Big-endian appends written here rather than taken from big_endian.h, so the
// golden record does not share code with the encoder it checks.
void push_be(Bytes& out, uint64_t value, int width) {
  for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}
void push_text(Bytes& out, std::string_view text) { out.insert(out.end(), text.begin(), text.end()); }

Bytes to_bytes(std::string_view text) { return Bytes(text.begin(), text.end()); }

constexpr std::string_view kGoldenProperties = "KEYS\x01order-1\x02TAGS\x01TagA\x02";
constexpr uint32_t kCrcOfHello = 0x77D18982;  // java.util.zip.CRC32("Hello") & 0x7FFFFFFF

// Store host 10.0.0.1:10911 at physical offset 4096: the record the reference
// fed to ali-ons' decoder (section 1.7).
Bytes golden_record() {
  Bytes out;
  push_be(out, 91 + 5 + 9 + kGoldenProperties.size(), 4);  // TOTALSIZE = 128
  push_be(out, 0xDAA320A7, 4);                              // MAGICCODE
  push_be(out, kCrcOfHello, 4);                             // BODYCRC
  push_be(out, 3, 4);                                       // QUEUEID
  push_be(out, 0x0102, 4);                                  // FLAG
  push_be(out, 7, 8);                                       // QUEUEOFFSET
  push_be(out, 4096, 8);                                    // PHYSICALOFFSET
  push_be(out, 0, 4);                                       // SYSFLAG
  push_be(out, 1700000000000, 8);                           // BORNTIMESTAMP
  push_text(out, "\xC0\xA8\x01\x14"sv);                     // BORNHOST 192.168.1.20
  push_be(out, 54321, 4);                                   //   port
  push_be(out, 1700000000123, 8);                           // STORETIMESTAMP
  push_text(out, "\x0A\x00\x00\x01"sv);                     // STOREHOSTADDRESS 10.0.0.1
  push_be(out, 10911, 4);                                   //   port
  push_be(out, 2, 4);                                       // RECONSUMETIMES
  push_be(out, 0, 8);                                       // PREPARED TX OFFSET
  push_be(out, 5, 4);                                       // BODY length
  push_text(out, "Hello");
  push_be(out, 9, 1);  // TOPIC length
  push_text(out, "TopicTest");
  push_be(out, kGoldenProperties.size(), 2);  // PROPERTIES length
  push_text(out, kGoldenProperties);
  return out;
}

MessageToStore golden_message() {
  MessageToStore message;
  message.topic = "TopicTest";
  message.queue_id = 3;
  message.flag = 0x0102;
  message.body = to_bytes("Hello");
  message.properties = {{"KEYS", "order-1"}, {"TAGS", "TagA"}};
  message.born_timestamp_ms = 1700000000000;
  message.born_host = HostAddress::ipv4(192, 168, 1, 20, 54321);
  message.store_host = HostAddress::ipv4(10, 0, 0, 1, 10911);
  message.reconsume_times = 2;
  return message;
}

EncodedMessage encode_ok(const MessageToStore& message, int32_t max_body_bytes = 4 * 1024 * 1024) {
  EncodeOutcome outcome = encode_message(message, max_body_bytes);
  EXPECT_EQ(outcome.error, EncodeError::kNone) << outcome.reason;
  return std::move(outcome.message);
}

HostAddress ipv6_loopback(int32_t port) {
  HostAddress host;
  host.ipv6 = true;
  host.ip[15] = 1;
  host.port = port;
  return host;
}

void expect_corruption(const Bytes& bytes, std::string_view needle, DecodeOptions options = {}) {
  const Result<DecodedRecord> decoded = decode_record(bytes, options);
  ASSERT_FALSE(decoded.ok()) << "expected Corruption mentioning " << needle;
  EXPECT_EQ(decoded.status().code(), StatusCode::kCorruption);
  EXPECT_NE(decoded.status().message().find(needle), std::string::npos) << decoded.status().to_string();
}

TEST(MessageCodec, GoldenRecordDecodesFieldForField) {
  const Bytes bytes = golden_record();
  ASSERT_EQ(bytes.size(), 128u);
  // Spot-check the table's offsets on the hand-built bytes themselves.
  EXPECT_EQ(bytes[64], 0x0A);  // STOREHOSTADDRESS at 64
  EXPECT_EQ(bytes[87], 5);     // BODY length at 84
  EXPECT_EQ(bytes[93], 9);     // TOPIC length right after the 5-byte body

  const Result<DecodedRecord> decoded = decode_record(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  ASSERT_EQ(decoded->kind, RecordKind::kMessage);
  EXPECT_EQ(decoded->total_size, 128);
  const DecodedMessage& m = decoded->message;
  EXPECT_EQ(m.total_size, 128);
  EXPECT_EQ(m.body_crc, kCrcOfHello);
  EXPECT_EQ(m.queue_id, 3);
  EXPECT_EQ(m.flag, 0x0102);
  EXPECT_EQ(m.queue_offset, QueueOffset(7));
  EXPECT_EQ(m.physical_offset, PhyOffset(4096));
  EXPECT_EQ(m.sysflag, 0);
  EXPECT_EQ(m.born_timestamp_ms, 1700000000000);
  EXPECT_EQ(m.born_host, HostAddress::ipv4(192, 168, 1, 20, 54321));
  EXPECT_EQ(m.store_timestamp_ms, 1700000000123);
  EXPECT_EQ(m.store_host, HostAddress::ipv4(10, 0, 0, 1, 10911));
  EXPECT_EQ(m.reconsume_times, 2);
  EXPECT_EQ(m.prepared_transaction_offset, 0);
  EXPECT_EQ(Bytes(m.body.begin(), m.body.end()), to_bytes("Hello"));
  EXPECT_EQ(m.topic, "TopicTest");
  EXPECT_EQ(m.properties_text, kGoldenProperties);
  EXPECT_EQ(m.properties(), (MessageProperties{{"KEYS", "order-1"}, {"TAGS", "TagA"}}));
  EXPECT_EQ(create_offset_message_id(m.store_host, m.physical_offset), "0A00000100002A9F0000000000001000");
}

TEST(MessageCodec, EncoderReproducesGoldenRecord) {
  EncodedMessage encoded = encode_ok(golden_message());
  EXPECT_EQ(encoded.store_timestamp_position, 56u);
  encoded.patch(QueueOffset(7), PhyOffset(4096), 1700000000123);
  EXPECT_EQ(encoded.bytes, golden_record());
}

TEST(MessageCodec, SizeFormulaAddsTwelvePerIpv6Host) {
  MessageToStore message = golden_message();
  message.body.assign(1000, 0xAB);
  const size_t props = encode_properties(message.properties).size();
  const int32_t ipv4_size = static_cast<int32_t>(91 + 1000 + message.topic.size() + props);
  EXPECT_EQ(encode_ok(message).size(), ipv4_size);
  message.born_host = ipv6_loopback(40000);
  EXPECT_EQ(encode_ok(message).size(), ipv4_size + 12);
  message.store_host = ipv6_loopback(10911);
  EXPECT_EQ(encode_ok(message).size(), ipv4_size + 24);
  message.born_host = HostAddress::ipv4(127, 0, 0, 1, 40000);
  EXPECT_EQ(encode_ok(message).size(), ipv4_size + 12);
}

TEST(MessageCodec, SysflagHostBitsFollowTheHosts) {
  MessageToStore message = golden_message();
  message.sysflag = kSysFlagMultiTags | kSysFlagBornHostV6 | kSysFlagStoreHostV6;  // stale v6 bits
  Result<DecodedRecord> decoded = decode_record(encode_ok(message).bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->message.sysflag, kSysFlagMultiTags);

  message.born_host = ipv6_loopback(40000);
  EncodedMessage encoded = encode_ok(message);
  EXPECT_EQ(encoded.store_timestamp_position, 68u);
  encoded.patch(QueueOffset(1), PhyOffset(2), 3);
  decoded = decode_record(encoded.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->message.sysflag, kSysFlagMultiTags | kSysFlagBornHostV6);
  EXPECT_EQ(decoded->message.born_host, ipv6_loopback(40000));
  EXPECT_EQ(decoded->message.store_timestamp_ms, 3);
}

TEST(MessageCodec, PatchSetsQueueOffsetPhysicalOffsetAndStoreTimestamp) {
  EncodedMessage encoded = encode_ok(golden_message());
  const Bytes before = encoded.bytes;
  encoded.patch(QueueOffset(0x0102030405060708), PhyOffset(0x1112131415161718), 0x2122232425262728);
  Bytes expected = before;
  for (int i = 0; i < 8; ++i) {
    expected[20 + i] = static_cast<uint8_t>(0x01 + i);
    expected[28 + i] = static_cast<uint8_t>(0x11 + i);
    expected[56 + i] = static_cast<uint8_t>(0x21 + i);
  }
  EXPECT_EQ(encoded.bytes, expected);  // and nothing else changed
}

TEST(MessageCodec, BodyCrc32IsZlibCrcWithSignBitCleared) {
  EXPECT_EQ(body_crc32(to_bytes("123456789")), 0x4BF43926u);  // CRC-32 check value 0xCBF43926
  EXPECT_EQ(body_crc32(to_bytes("Hello")), kCrcOfHello);
  EXPECT_EQ(body_crc32({}), 0u);
}

// Expected values printed by OpenJDK 17: new String(bytes, UTF_8).hashCode().
TEST(MessageCodec, JavaStringHashMatchesJava) {
  EXPECT_EQ(java_string_hash("TagA"), 2598919);  // 84*31^3 + 97*31^2 + 103*31 + 65
  EXPECT_EQ(java_string_hash("null"), 3392903);
  EXPECT_EQ(java_string_hash(""), 0);
  EXPECT_EQ(java_string_hash("Hello World"), -862545276);  // wraps past 2^31
  EXPECT_EQ(java_string_hash("The quick brown fox jumps over the lazy dog"), -609428141);
  EXPECT_EQ(java_string_hash("\xF0\x9F\x98\x80"), 1772899);  // U+1F600 = D83D DE00: 0xD83D*31 + 0xDE00
  EXPECT_EQ(java_string_hash("a\xF0\x9F\x98\x80" "b"), 57849694);
  // "EMS-从-重庆乾岷光学2", a device name from the sample telemetry.
  EXPECT_EQ(java_string_hash("EMS-\xE4\xBB\x8E-\xE9\x87\x8D\xE5\xBA\x86\xE4\xB9\xBE"
                             "\xE5\xB2\xB7\xE5\x85\x89\xE5\xAD\xA6" "2"),
            -907916638);
}

TEST(MessageCodec, JavaStringHashReplacesMalformedUtf8LikeJava) {
  EXPECT_EQ(java_string_hash("\xFF"), 65533);                   // U+FFFD
  EXPECT_EQ(java_string_hash("a\xC3"), 68540);                  // truncated 2-byte sequence
  EXPECT_EQ(java_string_hash("\xE0\x80\x80"), 65074269);        // overlong: three U+FFFD
  EXPECT_EQ(java_string_hash("\xED\xA0\x80"), 65533);           // encoded surrogate: one U+FFFD
  EXPECT_EQ(java_string_hash("\xF0\x9F\x98"), 65533);           // truncated 4-byte sequence
  EXPECT_EQ(java_string_hash("\xE2\x82" "A"), 2031588);         // U+FFFD 'A'
  EXPECT_EQ(java_string_hash("\xF4\x90\x80\x80"), 2017367872);  // past U+10FFFF: four U+FFFD
  EXPECT_EQ(java_string_hash("\xC0\xAF"), 2097056);             // C0 never starts a sequence
  EXPECT_EQ(java_string_hash("\xF0\x9F\x98" "A"), 2031588);
  EXPECT_EQ(java_string_hash("\xF8\x88\x80\x80\x80"), -1886039875);
}

TEST(MessageCodec, TagsCodeIsZeroWithoutTags) {
  EXPECT_EQ(tags_code(""), 0);
  EXPECT_EQ(tags_code("TagA"), 2598919);
  EXPECT_EQ(tags_code("null"), 3392903);
  EXPECT_EQ(tags_code("Hello World"), -862545276);  // widened with its sign, as Java's long
}

TEST(MessageCodec, PropertiesEncodeInNameOrderWithTrailingSeparator) {
  EXPECT_EQ(encode_properties({{"TAGS", "TagA"}, {"KEYS", "k1 k2"}}), "KEYS\x01k1 k2\x02TAGS\x01TagA\x02");
  EXPECT_EQ(encode_properties({}), "");
}

TEST(MessageCodec, PropertiesDecodeLikeJava) {
  // ali-ons' tag-less message: the literal string "null" is the tag.
  const MessageProperties ali_ons = decode_properties("TAGS\x01null\x02");
  EXPECT_EQ(ali_ons, (MessageProperties{{"TAGS", "null"}}));
  MessageToStore message;
  message.properties = ali_ons;
  EXPECT_EQ(tags_code(message.tags()), 3392903);

  EXPECT_EQ(decode_properties("KEYS\x01k1\x02TAGS\x01TagA"), (MessageProperties{{"KEYS", "k1"}, {"TAGS", "TagA"}}));
  EXPECT_EQ(decode_properties("\x02\x02" "A\x01" "1\x02\x02"), (MessageProperties{{"A", "1"}}));  // empty items
  EXPECT_EQ(decode_properties("A\x01x\x01y\x02"), (MessageProperties{{"A", "x\x01y"}}));  // first 0x01 splits
  EXPECT_EQ(decode_properties("A\x01" "1\x02" "A\x01" "2\x02"), (MessageProperties{{"A", "2"}}));  // last wins
  EXPECT_EQ(decode_properties("noseparator\x02\x01novalue\x02"), MessageProperties{});  // no name: skipped
  EXPECT_EQ(decode_properties("EMPTY\x01\x02"), (MessageProperties{{"EMPTY", ""}}));  // kept, unlike Java 4.9
  EXPECT_EQ(decode_properties(""), MessageProperties{});
}

TEST(MessageCodec, PropertiesRoundTrip) {
  const MessageProperties properties = {
      {"KEYS", "a b c"}, {"TAGS", "null"}, {"UNIQ_KEY", "0A0B"}, {"WAIT", "true"}, {"X", "\xE4\xBB\x8E"}, {"E", ""}};
  EXPECT_EQ(decode_properties(encode_properties(properties)), properties);
}

TEST(MessageCodec, TagsAndKeysComeFromProperties) {
  MessageToStore message;
  EXPECT_EQ(message.tags(), "");
  EXPECT_TRUE(message.keys().empty());
  message.properties = {{"TAGS", "TagA"}, {"KEYS", " k1  k2 "}};
  EXPECT_EQ(message.tags(), "TagA");
  EXPECT_EQ(message.keys(), (std::vector<std::string>{"k1", "k2"}));
}

TEST(MessageCodec, ValidateTopicNameFollowsRocketMqRule) {
  EXPECT_TRUE(validate_topic_name("TopicTest").ok());
  EXPECT_TRUE(validate_topic_name("%RETRY%GID_orders|x-1_2").ok());
  EXPECT_TRUE(validate_topic_name(std::string(127, 'a')).ok());

  const Status empty = validate_topic_name("");
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("empty"), std::string::npos);
  const Status long_topic = validate_topic_name(std::string(128, 'a'));
  EXPECT_EQ(long_topic.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(long_topic.message().find("128 bytes"), std::string::npos) << long_topic.message();
  const Status space = validate_topic_name("my topic");
  EXPECT_EQ(space.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(space.message().find("0x20 at index 2"), std::string::npos) << space.message();
  const Status dot = validate_topic_name("a.b");
  EXPECT_NE(dot.message().find("0x2E at index 1"), std::string::npos) << dot.message();
  EXPECT_FALSE(validate_topic_name("\xE4\xBB\x8E").ok());  // non-ASCII
  EXPECT_FALSE(validate_topic_name(std::string_view("a\0b", 3)).ok());
  // Every byte value, against RocketMQ's VALID_PATTERN_STR "^[%|a-zA-Z0-9_-]+$".
  const std::string allowed = "%|_-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (int byte = 0; byte < 256; ++byte) {
    const char c = static_cast<char>(byte);
    const bool legal = allowed.find(c) != std::string::npos;
    EXPECT_EQ(validate_topic_name(std::string("t") + c + "t").ok(), legal) << "byte " << byte;
  }
}

TEST(MessageCodec, EncodeRejectsIllegalTopicsAndOversizeBodies) {
  MessageToStore message = golden_message();
  message.topic = std::string(128, 't');
  EXPECT_EQ(encode_message(message, 1024).error, EncodeError::kMessageIllegal);
  message.topic = "bad topic";
  EncodeOutcome outcome = encode_message(message, 1024);
  EXPECT_EQ(outcome.error, EncodeError::kMessageIllegal);
  EXPECT_NE(outcome.reason.find("0x20"), std::string::npos) << outcome.reason;
  message.topic = std::string(127, 't');
  EXPECT_EQ(encode_message(message, 1024).error, EncodeError::kNone);

  message.body.assign(1024, 'x');
  EXPECT_EQ(encode_message(message, 1024).error, EncodeError::kNone);
  message.body.push_back('x');
  outcome = encode_message(message, 1024);
  EXPECT_EQ(outcome.error, EncodeError::kMessageIllegal);
  EXPECT_NE(outcome.reason.find("1025"), std::string::npos) << outcome.reason;
  message.body.clear();
  EXPECT_EQ(encode_message(message, 0).error, EncodeError::kNone);
}

TEST(MessageCodec, EncodeRejectsPropertiesOver32767Bytes) {
  MessageToStore message = golden_message();
  // "V\x01" + value + "\x02" = 32767 bytes exactly.
  message.properties = {{"V", std::string(32767 - 3, 'v')}};
  const EncodeOutcome at_limit = encode_message(message, 1024);
  ASSERT_EQ(at_limit.error, EncodeError::kNone) << at_limit.reason;
  const Result<DecodedRecord> decoded = decode_record(at_limit.message.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->message.properties_text.size(), 32767u);

  message.properties["V"].push_back('v');
  const EncodeOutcome over = encode_message(message, 1024);
  EXPECT_EQ(over.error, EncodeError::kPropertiesSizeExceeded);
  EXPECT_NE(over.reason.find("32768"), std::string::npos) << over.reason;
}

TEST(MessageCodec, DecodeReportsShortAndZeroInput) {
  expect_corruption(Bytes{}, "only 0 bytes");
  expect_corruption(Bytes(7, 0xFF), "only 7 bytes");
  expect_corruption(Bytes(4096, 0), "TOTALSIZE 0 ");
  expect_corruption(Bytes(8, 0), "TOTALSIZE 0 ");
  Bytes negative = golden_record();
  negative[0] = 0x80;
  expect_corruption(negative, "TOTALSIZE -2147483520 is below the minimum 8");
}

TEST(MessageCodec, DecodeReportsBadMagicAndTotalSize) {
  Bytes bytes = golden_record();
  bytes[7] ^= 0x01;
  expect_corruption(bytes,
                    "MAGICCODE 0xDAA320A6 is neither the message magic 0xDAA320A7 nor the blank magic 0xCBD43194");

  bytes = golden_record();
  bytes[3] = 90;
  expect_corruption(bytes, "TOTALSIZE 90 is below the minimum 91");
  bytes[3] = 129;
  expect_corruption(bytes, "TOTALSIZE 129 runs past the 128 bytes available");
  bytes.push_back(0);  // one byte of padding inside TOTALSIZE
  expect_corruption(bytes, "TOTALSIZE 129 differs from 128 computed from the field lengths");

  MessageToStore smallest = golden_message();
  smallest.topic = "T";
  smallest.body.clear();
  smallest.properties.clear();
  bytes = encode_ok(smallest).bytes;
  ASSERT_EQ(bytes.size(), 92u);
  bytes[39] |= kSysFlagBornHostV6 | kSysFlagStoreHostV6;
  expect_corruption(bytes, "TOTALSIZE 92 is below the minimum 115 for SYSFLAG 0x00000030");
}

TEST(MessageCodec, DecodeReportsBadLengthFields) {
  Bytes bytes = golden_record();
  bytes[84] = 0xFF;  // BODY length negative
  expect_corruption(bytes, "BODY length -16777211 at byte 84 is outside 0..");
  bytes = golden_record();
  bytes[87] = 40;  // runs past TOTALSIZE
  expect_corruption(bytes, "BODY length 40 at byte 84 is outside 0..37");
  bytes = golden_record();
  bytes[93] = 0;
  expect_corruption(bytes, "TOPIC length 0 is outside 1..");
  bytes = golden_record();
  bytes[93] = 200;
  expect_corruption(bytes, "TOPIC length 200 is outside 1..");
  bytes = golden_record();
  bytes[94] = ' ';
  expect_corruption(bytes, "TOPIC \" opicTest\" has byte 0x20 at index 0");
  bytes = golden_record();
  bytes[103] = 0x80;  // PROPERTIES length negative
  expect_corruption(bytes, "PROPERTIES length -32745 is outside 0..23");
}

TEST(MessageCodec, DecodeChecksCrcUnlessTold) {
  Bytes bytes = golden_record();
  bytes[88] ^= 0x20;  // "Hello" -> "hello"
  expect_corruption(bytes, "BODYCRC 0x77D18982 differs from");
  const Result<DecodedRecord> unchecked = decode_record(bytes, DecodeOptions{.check_crc = false});
  ASSERT_TRUE(unchecked.ok()) << unchecked.status().to_string();
  EXPECT_EQ(unchecked->message.body[0], 'h');
}

TEST(MessageCodec, DecodeIgnoresBytesAfterTheRecord) {
  Bytes bytes = golden_record();
  bytes.resize(bytes.size() + 100, 0xEE);
  const Result<DecodedRecord> decoded = decode_record(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->total_size, 128);
}

TEST(MessageCodec, BlankRecordNeedsOnlySizeAndMagic) {
  Bytes blank;
  push_be(blank, 1000, 4);  // bytes left in the segment; more than we hand over
  push_be(blank, 0xCBD43194, 4);
  Result<DecodedRecord> decoded = decode_record(blank);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->kind, RecordKind::kBlank);
  EXPECT_EQ(decoded->total_size, 1000);

  blank = {0, 0, 0, 8, 0xCB, 0xD4, 0x31, 0x94};  // the smallest blank: just the marker
  blank.resize(64, 0xAA);
  decoded = decode_record(blank);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->total_size, 8);

  blank[3] = 7;
  expect_corruption(blank, "TOTALSIZE 7 is below the minimum 8");
}

TEST(MessageCodec, OffsetMessageIdRoundTripsIpv4AndIpv6) {
  const HostAddress v4 = HostAddress::ipv4(10, 0, 0, 1, 10911);
  Result<OffsetMessageId> id = decode_offset_message_id("0A00000100002A9F0000000000001000");
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(id->store_host, v4);
  EXPECT_EQ(id->offset, PhyOffset(4096));
  id = decode_offset_message_id("0a00000100002a9f0000000000001000");  // Java upper-cases first
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->offset, PhyOffset(4096));

  const std::string v6_id = create_offset_message_id(ipv6_loopback(10911), PhyOffset(0x123456789A));
  EXPECT_EQ(v6_id, "0000000000000000000000000000000100002A9F000000123456789A");
  id = decode_offset_message_id(v6_id);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(id->store_host, ipv6_loopback(10911));
  EXPECT_EQ(id->offset, PhyOffset(0x123456789A));
}

TEST(MessageCodec, OffsetMessageIdRejectsBadInput) {
  for (const std::string_view bad : {"", "0A00000100002A9F000000000000100", "0A00000100002A9F00000000000010000",
                                     "0A00000100002A9G0000000000001000", "0A00000100002A9F000000000000 000",
                                     "0A00000100002A9F8000000000001000"}) {
    const Result<OffsetMessageId> id = decode_offset_message_id(bad);
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(decode_offset_message_id("0A00000100002A9G0000000000001000").status().message().find("\"G\" at index 15"),
            std::string::npos);
}

TEST(MessageCodec, HostAddressToString) {
  EXPECT_EQ(HostAddress::ipv4(10, 0, 0, 1, 10911).to_string(), "10.0.0.1:10911");
  EXPECT_EQ(ipv6_loopback(10911).to_string(), "[::1]:10911");
  HostAddress host;
  host.ipv6 = true;
  EXPECT_EQ(host.to_string(), "[::]:0");
  host.ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  host.port = 80;
  EXPECT_EQ(host.to_string(), "[2001:db8::1:0:0:1]:80");  // the first longest zero run
  host.ip = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd};
  EXPECT_EQ(host.to_string(), "[fe80::abcd]:80");
}

TEST(MessageCodec, TelemetryPayloadRoundTripsWithDeviceIdAsKey) {
  std::ifstream file(MQLAB_SOURCE_DIR "/../shared/docs/sample-telemetry.json", std::ios::binary);
  if (!file) GTEST_SKIP() << "sample-telemetry.json not found next to the source tree";
  const Bytes body((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const nlohmann::json json = nlohmann::json::parse(body.begin(), body.end());
  const std::string device_id = json.at("deviceId").is_string() ? json.at("deviceId").get<std::string>()
                                                                 : json.at("deviceId").dump();

  MessageToStore message = golden_message();
  message.topic = "device-telemetry";
  message.body = body;
  message.properties = {{std::string(kPropertyKeys), device_id}, {std::string(kPropertyTags), "telemetry"}};
  ASSERT_EQ(message.keys(), std::vector<std::string>{device_id});
  EncodedMessage encoded = encode_ok(message);
  EXPECT_EQ(static_cast<size_t>(encoded.size()),
            91 + body.size() + message.topic.size() + encode_properties(message.properties).size());
  encoded.patch(QueueOffset(0), PhyOffset(1 << 20), 1755073890247);

  const Result<DecodedRecord> decoded = decode_record(encoded.bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  const DecodedMessage& m = decoded->message;
  EXPECT_EQ(Bytes(m.body.begin(), m.body.end()), body);
  EXPECT_EQ(m.body_crc, body_crc32(body));
  EXPECT_EQ(m.topic, "device-telemetry");
  EXPECT_EQ(m.properties().at("KEYS"), device_id);
  EXPECT_EQ(nlohmann::json::parse(m.body.begin(), m.body.end()).at("deviceId"), json.at("deviceId"));
}

}  // namespace
}  // namespace mqlab::store::message_codec_test
