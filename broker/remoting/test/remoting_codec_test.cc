// The remoting codec on known bytes: every request frame a real ali-ons
// client sent (shared/testdata), hand-built JSON and ROCKETMQ frames laid out
// per reference section 7, each way a frame can be refused and the reason
// given, and the typed extFields reads a processor answers errors from.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "broker/common/big_endian.h"
#include "broker/common/byte_buffer_pool.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/test/remoting_test_util.h"

namespace mqlab::remoting::remoting_codec_test {
namespace {

using test_support::Bytes;
using test_support::Drained;
using test_support::drain;
using test_support::frame_with_header;
using test_support::kAliOnsFramesPath;
using test_support::load_ali_ons_frames;
using test_support::to_bytes;

Result<RemotingCommand> decode_json(std::string_view header, std::string_view body = "") {
  return decode_frame(frame_with_header(header, body));
}

std::string message_of(const Result<RemotingCommand>& result) {
  EXPECT_FALSE(result.ok());
  return result.status().to_string();
}

// ---- the ali-ons capture ---------------------------------------------------------

struct ExpectedFrame {
  int32_t opaque;
  ExtFields ext;
  std::string body_prefix;
};

const std::map<int32_t, ExpectedFrame>& expected_ali_ons_frames() {
  static const std::map<int32_t, ExpectedFrame> kExpected = {
      {RequestCode::GET_ROUTEINFO_BY_TOPIC, {1, {{"topic", "GoldenTopic"}}, ""}},
      {RequestCode::SEND_MESSAGE_V2,
       {2,
        {{"a", "PG_GOLDEN"}, {"b", "GoldenTopic"}, {"c", "TBW102"}, {"d", "4"}, {"e", "1"}, {"f", "0"},
         {"g", "1795946416061"}, {"h", "0"}, {"i", "TAGS\x01TagA\x02KEYS\x01order-42\x02"}, {"j", "0"},
         {"k", "false"}},
        "hello golden"}},
      {RequestCode::HEART_BEAT, {9, {}, "{\"clientID\":\"127.0.0.1@24819\""}},
      {RequestCode::GET_CONSUMER_LIST_BY_GROUP, {11, {{"consumerGroup", "CG_GOLDEN"}}, ""}},
      {RequestCode::QUERY_CONSUMER_OFFSET,
       {13, {{"topic", "GoldenTopic"}, {"consumerGroup", "CG_GOLDEN"}, {"queueId", "0"}}, ""}},
      {RequestCode::PULL_MESSAGE,
       {16,
        {{"consumerGroup", "CG_GOLDEN"}, {"topic", "GoldenTopic"}, {"queueId", "0"}, {"queueOffset", "0"},
         {"maxMsgNums", "32"}, {"sysFlag", "6"}, {"commitOffset", "-1"}, {"suspendTimeoutMillis", "15000"},
         {"subscription", "*"}, {"subVersion", "1795946416063"}},
        ""}},
      {RequestCode::UPDATE_CONSUMER_OFFSET,
       {9467,
        {{"topic", "GoldenTopic"}, {"consumerGroup", "CG_GOLDEN"}, {"queueId", "0"}, {"commitOffset", "-1"}},
        ""}},
      {RequestCode::UNREGISTER_CLIENT,
       {26930, {{"clientID", "127.0.0.1@24819"}, {"consumerGroup", "CG_GOLDEN"}}, ""}},
  };
  return kExpected;
}

TEST(AliOnsCapture, EveryFrameDecodesToWhatTheClientSent) {
  const auto frames = load_ali_ons_frames();
  if (frames.empty()) GTEST_SKIP() << "no capture at " << kAliOnsFramesPath;
  std::set<int32_t> seen;
  for (const auto& [code, bytes] : frames) {
    SCOPED_TRACE(describe_request_code(code));
    Result<RemotingCommand> command = decode_frame(bytes);
    ASSERT_TRUE(command.ok()) << command.status().to_string();
    EXPECT_EQ(command->code, code);
    EXPECT_EQ(command->language, "JAVA");
    EXPECT_EQ(command->version, 121);  // V3_4_9: ali-ons' claim
    EXPECT_EQ(command->flag, 0);       // not even UPDATE_CONSUMER_OFFSET sets the oneway bit
    EXPECT_EQ(command->serialize_type, SerializeType::JSON);
    EXPECT_TRUE(command->remark.empty());
    const auto expected = expected_ali_ons_frames().find(code);
    ASSERT_NE(expected, expected_ali_ons_frames().end()) << "a frame the test does not know";
    seen.insert(code);
    EXPECT_EQ(command->opaque, expected->second.opaque);
    EXPECT_EQ(command->ext_fields, expected->second.ext);
    const std::string body(command->body.begin(), command->body.end());
    EXPECT_EQ(body.substr(0, expected->second.body_prefix.size()), expected->second.body_prefix);
    if (expected->second.body_prefix.empty()) {
      EXPECT_TRUE(body.empty());
    }
  }
  EXPECT_EQ(seen.size(), expected_ali_ons_frames().size());
}

TEST(AliOnsCapture, SendMessageV2FieldsReadTyped) {
  const auto frames = load_ali_ons_frames();
  if (frames.empty()) GTEST_SKIP() << "no capture at " << kAliOnsFramesPath;
  for (const auto& [code, bytes] : frames) {
    if (code != RequestCode::SEND_MESSAGE_V2) continue;
    Result<RemotingCommand> send = decode_frame(bytes);
    ASSERT_TRUE(send.ok());
    EXPECT_EQ(send->ext_int32("d").value(), 4);  // sent as the JSON number 4
    EXPECT_EQ(send->ext_int32("e").value(), 1);
    EXPECT_EQ(send->ext_int("g").value(), 1795946416061);
    EXPECT_FALSE(send->ext_bool("k").value());  // sent as the JSON literal false
    EXPECT_EQ(send->ext_string("b").value(), "GoldenTopic");
    EXPECT_EQ(send->optional_ext_bool("m").value(), std::nullopt);  // 4.9.x batch: ali-ons omits it
    EXPECT_EQ(std::string(send->body.begin(), send->body.end()), "hello golden");
  }
}

TEST(AliOnsCapture, WholeCaptureAsOneStreamByteByByte) {
  const auto frames = load_ali_ons_frames();
  if (frames.empty()) GTEST_SKIP() << "no capture at " << kAliOnsFramesPath;
  Bytes stream;
  for (const auto& [code, bytes] : frames) stream.insert(stream.end(), bytes.begin(), bytes.end());
  FrameDecoder decoder;
  std::vector<RemotingCommand> decoded;
  for (uint8_t byte : stream) {
    decoder.feed(std::span<const uint8_t>(&byte, 1));
    Drained step = drain(decoder);
    ASSERT_TRUE(step.status.ok()) << step.status.to_string();
    for (auto& command : step.commands) decoded.push_back(std::move(command));
  }
  ASSERT_EQ(decoded.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(decoded[i], decode_frame(frames[i].second).value());
  EXPECT_EQ(decoder.stream_offset(), stream.size());
  EXPECT_EQ(decoder.buffered_bytes(), 0u);
}

TEST(AliOnsCapture, ResponsesEchoOpaqueAndStayJson) {
  const auto frames = load_ali_ons_frames();
  if (frames.empty()) GTEST_SKIP() << "no capture at " << kAliOnsFramesPath;
  for (const auto& [code, bytes] : frames) {
    const RemotingCommand request = decode_frame(bytes).value();
    RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
    response.set_ext_int("offset", 0);
    const Bytes encoded = encode_frame(response);
    EXPECT_EQ(encoded[4], 0) << "ali-ons reads the header length as a whole int: the type byte must be 0";
    const RemotingCommand decoded = decode_frame(encoded).value();
    EXPECT_TRUE(decoded.is_response());
    EXPECT_EQ(decoded.opaque, request.opaque);
    EXPECT_EQ(decoded.ext_fields.at("offset"), "0");
  }
}

// ---- hand-built golden frames -------------------------------------------------------

// Our JSON encoding of a response, byte for byte: sorted keys, string ext
// values, no remark when empty, serializeTypeCurrentRPC as Java writes it.
TEST(GoldenFrame, JsonResponseBytes) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::QUERY_CONSUMER_OFFSET);
  request.opaque = 7;
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.set_ext_int("offset", 42);
  const std::string header =
      R"({"code":0,"extFields":{"offset":"42"},"flag":1,"language":"JAVA","opaque":7,)"
      R"("serializeTypeCurrentRPC":"JSON","version":407})";
  EXPECT_EQ(encode_frame(response), frame_with_header(header));

  RemotingCommand failure = request.make_response(ResponseCode::TOPIC_NOT_EXIST, "No topic route info");
  failure.body = to_bytes("xyz");
  const std::string failure_header =
      R"({"code":17,"extFields":{},"flag":1,"language":"JAVA","opaque":7,"remark":"No topic route info",)"
      R"("serializeTypeCurrentRPC":"JSON","version":407})";
  EXPECT_EQ(encode_frame(failure), frame_with_header(failure_header, "xyz"));
}

// GET_ROUTEINFO_BY_TOPIC from a CPP client in the ROCKETMQ binary header.
const Bytes kRocketMqRequestFrame = {
    0x00, 0x00, 0x00, 0x2d,  // totalLength 45 = 4 + 39 header + 2 body
    0x01, 0x00, 0x00, 0x27,  // serialize type 1 (ROCKETMQ), header length 39
    0x00, 0x69,              // code 105 GET_ROUTEINFO_BY_TOPIC
    0x01,                    // language 1 = CPP
    0x01, 0x91,              // version 401 (V4_9_4)
    0x12, 0x34, 0x56, 0x78,  // opaque
    0x00, 0x00, 0x00, 0x00,  // flag: request
    0x00, 0x00, 0x00, 0x00,  // remark length 0: none
    0x00, 0x00, 0x00, 0x12,  // extFields length 18
    0x00, 0x05, 't', 'o', 'p', 'i', 'c',                        // key length 5, "topic"
    0x00, 0x00, 0x00, 0x07, 'G', 'o', 'l', 'd', 'e', 'n', 'T',  // value length 7, "GoldenT"
    'x', 'y',                                                   // body
};

TEST(GoldenFrame, RocketMqRequestDecodesFieldByField) {
  Result<RemotingCommand> command = decode_frame(kRocketMqRequestFrame);
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  EXPECT_EQ(command->serialize_type, SerializeType::ROCKETMQ);
  EXPECT_EQ(command->code, RequestCode::GET_ROUTEINFO_BY_TOPIC);
  EXPECT_EQ(command->language, "CPP");
  EXPECT_EQ(command->version, 401);
  EXPECT_EQ(command->opaque, 0x12345678);
  EXPECT_EQ(command->flag, 0);
  EXPECT_EQ(command->remark, "");
  EXPECT_EQ(command->ext_fields, (ExtFields{{"topic", "GoldenT"}}));
  EXPECT_EQ(command->body, to_bytes("xy"));
  // Our encoder writes the same layout back.
  EXPECT_EQ(encode_frame(*command), kRocketMqRequestFrame);
}

TEST(GoldenFrame, RocketMqResponseBytes) {
  const Bytes expected = {
      0x00, 0x00, 0x00, 0x21,  // totalLength 33 = 4 + 29 header
      0x01, 0x00, 0x00, 0x1d,  // ROCKETMQ, header length 29 = 21 fixed + 8 remark
      0x00, 0x11,              // code 17 TOPIC_NOT_EXIST
      0x00,                    // language 0 = JAVA
      0x01, 0x97,              // version 407
      0x12, 0x34, 0x56, 0x78,  // the request's opaque
      0x00, 0x00, 0x00, 0x01,  // flag: response
      0x00, 0x00, 0x00, 0x08, 'n', 'o', ' ', 'r', 'o', 'u', 't', 'e',  // remark
      0x00, 0x00, 0x00, 0x00,  // no extFields
  };
  const RemotingCommand request = decode_frame(kRocketMqRequestFrame).value();
  const RemotingCommand response = request.make_response(ResponseCode::TOPIC_NOT_EXIST, "no route");
  EXPECT_EQ(response.serialize_type, SerializeType::ROCKETMQ) << "a reply goes in the request's type";
  EXPECT_EQ(encode_frame(response), expected);
}

TEST(GoldenFrame, RocketMqSignExtendsShortsAndMapsUnknownLanguageToOther) {
  Bytes frame = kRocketMqRequestFrame;
  frame[8] = 0xff, frame[9] = 0xfe;    // code -2
  frame[10] = 0x2a;                    // language 42: no such LanguageCode
  frame[11] = 0x80, frame[12] = 0x00;  // version -32768
  const RemotingCommand command = decode_frame(frame).value();
  EXPECT_EQ(command.code, -2);
  EXPECT_EQ(command.language, "OTHER");
  EXPECT_EQ(command.version, -32768);
}

// ---- JSON header tolerance -----------------------------------------------------------

TEST(JsonHeader, ExtFieldValuesOfEveryScalarTypeAreStringified) {
  const Result<RemotingCommand> command = decode_json(
      R"({"code":10,"extFields":{"int":4,"neg":-7,"zero":0,"big":18446744073709551615,"long":1795946416061,)"
      R"("fraction":1.5,"integral":4.0,"exp":1e3,"t":true,"f":false,"s":"x","empty":"","n":null}})");
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  const ExtFields expected = {{"int", "4"},     {"neg", "-7"},      {"zero", "0"},     {"big", "18446744073709551615"},
                              {"long", "1795946416061"}, {"fraction", "1.5"}, {"integral", "4"}, {"exp", "1000"},
                              {"t", "true"},    {"f", "false"},     {"s", "x"},        {"empty", ""}};
  EXPECT_EQ(command->ext_fields, expected);  // null dropped, like ali-ons' undefined
}

TEST(JsonHeader, MissingFieldsTakeJavaDefaultsAndUnknownOnesAreIgnored) {
  const Result<RemotingCommand> command =
      decode_json(R"({"code":34,"serializeTypeCurrentRPC":"JSON","somethingNew":{"deep":[1,2,{"x":null}]}})");
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  EXPECT_EQ(command->code, 34);
  EXPECT_EQ(command->language, "JAVA");
  EXPECT_EQ(command->version, 0);
  EXPECT_EQ(command->opaque, 0);
  EXPECT_EQ(command->flag, 0);
  EXPECT_TRUE(command->remark.empty());
  EXPECT_TRUE(command->ext_fields.empty());

  const Result<RemotingCommand> nulls = decode_json(R"({"code":1,"extFields":null,"remark":null,"flag":3})");
  ASSERT_TRUE(nulls.ok()) << nulls.status().to_string();
  EXPECT_TRUE(nulls->is_response());
  EXPECT_TRUE(nulls->is_oneway());
  EXPECT_TRUE(nulls->remark.empty());
}

TEST(JsonHeader, WhitespaceAndKeyOrderDoNotMatter) {
  const Result<RemotingCommand> command =
      decode_json(" {\n \"opaque\" : -5 ,\t\"remark\":\"caf\\u00e9\", \"code\" : 105 } ");
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  EXPECT_EQ(command->opaque, -5);
  EXPECT_EQ(command->remark, "caf\xc3\xa9");
}

// As in a DOM: the last occurrence of a key wins, and null means absent.
TEST(JsonHeader, RepeatedKeysLastWinsAndNullMeansAbsent) {
  const Result<RemotingCommand> command = decode_json(
      R"({"code":1,"remark":"x","remark":null,"opaque":5,"opaque":null,"language":"GO","language":null,)"
      R"("extFields":{"a":"1"},"extFields":{"b":"2"},"code":7})");
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  EXPECT_EQ(command->code, 7);
  EXPECT_EQ(command->remark, "");
  EXPECT_EQ(command->opaque, 0);
  EXPECT_EQ(command->language, "JAVA");
  EXPECT_EQ(command->ext_fields, (ExtFields{{"b", "2"}}));
  EXPECT_FALSE(decode_json(R"({"code":1,"code":null})").ok());
  EXPECT_TRUE(decode_json(R"({"extFields":{"a":"1"},"extFields":null,"code":1})")->ext_fields.empty());
}

TEST(JsonHeader, UnknownValuesAreSkippedWhateverTheyHold) {
  // Keys inside an unknown value are not header keys, however they are named.
  const Result<RemotingCommand> command = decode_json(
      R"({"x":{"code":"no","extFields":[1]},"code":5,"y":[{"opaque":{}}],"extFields":{"a":1,"a":null,"b":2,"b":3}})");
  ASSERT_TRUE(command.ok()) << command.status().to_string();
  EXPECT_EQ(command->code, 5);
  EXPECT_EQ(command->opaque, 0);
  EXPECT_EQ(command->ext_fields, (ExtFields{{"b", "3"}})) << "the last occurrence of a key wins";

  // Deep nesting in an unknown value costs a counter, not memory or stack.
  const size_t depth = 200000;
  const std::string deep = "{\"code\":1,\"x\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
  EXPECT_TRUE(decode_json(deep).ok());
  const Result<RemotingCommand> unterminated = decode_json("{\"code\":1,\"x\":" + std::string(depth, '['));
  ASSERT_FALSE(unterminated.ok());
  EXPECT_NE(unterminated.status().message().find("invalid JSON"), std::string::npos);
}

// ---- refusals and their reasons ------------------------------------------------------

TEST(FrameErrors, EachBadHeaderIsRefusedWithItsReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"code\":", "invalid JSON"},
      {"", "invalid JSON"},
      {"[1,2]", "JSON header is an array, expected an object"},
      {"\"code\"", "JSON header is a string, expected an object"},
      {"{\"opaque\":1}", "JSON header has no \"code\""},
      {"{\"code\":null}", "JSON header has no \"code\""},
      {"{\"code\":\"105\"}", "JSON header.code: expected an int32, found a string"},
      {"{\"code\":1.5}", "JSON header.code: expected an int32, found the number 1.5"},
      {"{\"code\":2147483648}", "JSON header.code: expected an int32, found the integer 2147483648"},
      {"{\"code\":1,\"opaque\":true}", "JSON header.opaque: expected an int32, found a boolean"},
      {"{\"code\":1,\"language\":0}", "JSON header.language: expected a string"},
      {"{\"code\":1,\"extFields\":[]}", "extFields: expected an object, found an array"},
      {"{\"code\":1,\"extFields\":{\"a\":[1]}}", "extFields.a: expected a string, number or boolean, found an array"},
      {"{\"code\":1,\"extFields\":{\"a\":{}}}", "extFields.a: expected a string, number or boolean, found an object"},
      {"{\"code\":1,\"remark\":\"\xff\"}", "invalid JSON"},  // not UTF-8
  };
  for (const auto& [header, reason] : cases) {
    SCOPED_TRACE(header);
    const Result<RemotingCommand> result = decode_json(header);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kCorruption);
    EXPECT_NE(result.status().message().find(reason), std::string::npos) << result.status().to_string();
  }
}

TEST(FrameErrors, LengthsAreCheckedAgainstEachOtherAndTheMaximum) {
  Bytes oversized(8);
  put_u32_be(oversized.data(), 16 * 1024 * 1024);  // + 4 for the length field: one byte too many
  put_u32_be(oversized.data() + 4, 10);
  EXPECT_NE(message_of(decode_frame(oversized)).find("frame of 16777220 bytes (frame length 16777216 + 4) exceeds "
                                                     "the maximum of 16777216 bytes"),
            std::string::npos);

  Bytes negative = {0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 0};
  EXPECT_NE(message_of(decode_frame(negative)).find("frame length -5 is negative"), std::string::npos);

  Bytes tiny = {0, 0, 0, 2, 0, 0};
  EXPECT_NE(message_of(decode_frame(tiny)).find("frame length 2 is below 4"), std::string::npos);

  Bytes long_header = frame_with_header("{\"code\":1}");
  put_u32_be(long_header.data() + 4, 100);
  EXPECT_NE(message_of(decode_frame(long_header))
                .find("header length 100 exceeds the 10 bytes left for header and body in a frame of length 14"),
            std::string::npos);

  Bytes unknown_type = frame_with_header("{\"code\":1}", "", 2);
  EXPECT_NE(message_of(decode_frame(unknown_type)).find("unknown serialize type 2 in header-length field 0x0200000a"),
            std::string::npos);

  Bytes trailing = frame_with_header("{\"code\":1}");
  trailing.push_back(0);
  EXPECT_NE(message_of(decode_frame(trailing)).find("says 14 + 4 bytes, but 19 were given"), std::string::npos);
  Bytes short_frame = frame_with_header("{\"code\":1}");
  short_frame.pop_back();
  EXPECT_NE(message_of(decode_frame(short_frame)).find("but 17 were given"), std::string::npos);
  EXPECT_NE(message_of(decode_frame(Bytes{0, 0})).find("shorter than its 4-byte length field"), std::string::npos);
}

TEST(FrameErrors, AMaximumOfOurOwnIsHonoured) {
  RemotingCommand command = RemotingCommand::make_request(RequestCode::SEND_MESSAGE_V2);
  command.body.assign(1000, 'b');
  const Bytes frame = encode_frame(command);
  EXPECT_TRUE(decode_frame(frame, frame.size()).ok());
  EXPECT_FALSE(decode_frame(frame, frame.size() - 1).ok());
}

TEST(FrameErrors, RocketMqHeaderDamage) {
  const auto with = [](size_t at, std::vector<uint8_t> bytes) {
    Bytes frame = kRocketMqRequestFrame;
    std::copy(bytes.begin(), bytes.end(), frame.begin() + static_cast<std::ptrdiff_t>(at));
    return frame;
  };
  EXPECT_NE(message_of(decode_frame(with(21, {0xff, 0xff, 0xff, 0xff}))).find("remark: length -1 is negative"),
            std::string::npos);
  EXPECT_NE(message_of(decode_frame(with(21, {0, 0, 0, 0x40}))).find("remark: length 64 exceeds the 22 bytes left"),
            std::string::npos);
  EXPECT_NE(message_of(decode_frame(with(25, {0, 0, 0, 0x20})))
                .find("extFields: length 32 exceeds the 18 bytes left"),
            std::string::npos);
  EXPECT_NE(message_of(decode_frame(with(25, {0, 0, 0, 0x11})))
                .find("extFields entry 0 value: length 7 exceeds the 6 bytes left"),
            std::string::npos);
  // code .. extLen all zero (21 bytes), then one byte more.
  const Bytes trailing = frame_with_header(std::string(21, '\0') + "Z", "", 1);
  EXPECT_NE(message_of(decode_frame(trailing)).find("ROCKETMQ header: 1 bytes follow the extFields"),
            std::string::npos);
  EXPECT_NE(message_of(decode_frame(with(29, {0x80, 0x00}))).find("extFields entry 0 key: length -32768 is negative"),
            std::string::npos);
  EXPECT_NE(message_of(decode_frame(with(36, {0, 0, 0, 0x08})))
                .find("extFields entry 0 value: length 8 exceeds the 7 bytes left"),
            std::string::npos);
  const Bytes short_header = frame_with_header(std::string(20, '\0'), "", 1);
  EXPECT_NE(message_of(decode_frame(short_header)).find("ROCKETMQ header of 20 bytes is shorter than its fixed part"),
            std::string::npos);
}

// ---- the stream decoder ----------------------------------------------------------------

TEST(FrameDecoder, RefusesAnOversizedFrameFromItsLengthAlone) {
  FrameDecoder decoder(1024);
  const Bytes length = {0x00, 0x10, 0x00, 0x00};  // 1 MiB claimed, nothing else sent
  decoder.feed(length);
  const auto result = decoder.next();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("exceeds the maximum of 1024 bytes"), std::string::npos);
  EXPECT_EQ(decoder.buffered_bytes(), 0u) << "a failed decoder frees its buffer";
}

TEST(FrameDecoder, ALyingLengthOnlyWaits) {
  FrameDecoder decoder;
  Bytes prefix(8);
  put_u32_be(prefix.data(), 16 * 1024 * 1024 - 4);  // the largest frame allowed
  put_u32_be(prefix.data() + 4, 10);
  decoder.feed(prefix);
  const auto result = decoder.next();
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->has_value());
  EXPECT_EQ(decoder.buffered_bytes(), 8u);
}

TEST(FrameDecoder, RefusesAnInconsistentHeaderLengthBeforeTheBody) {
  FrameDecoder decoder;
  Bytes prefix(8);
  put_u32_be(prefix.data(), 1000);
  put_u32_be(prefix.data() + 4, 2000);
  decoder.feed(prefix);
  const auto result = decoder.next();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("header length 2000 exceeds the 996 bytes left"), std::string::npos);
}

TEST(FrameDecoder, AnErrorIsStickyAndPlacedInTheStream) {
  const Bytes good = encode_frame(RemotingCommand::make_request(RequestCode::HEART_BEAT));
  const Bytes bad = frame_with_header("{\"opaque\":1}");
  FrameDecoder decoder;
  decoder.feed(good);
  decoder.feed(bad);
  decoder.feed(good);
  Drained drained = drain(decoder);
  EXPECT_EQ(drained.commands.size(), 1u);
  ASSERT_FALSE(drained.status.ok());
  EXPECT_EQ(drained.status.code(), StatusCode::kCorruption);
  EXPECT_NE(drained.status.message().find("remoting frame at stream offset " + std::to_string(good.size()) +
                                          ": JSON header has no \"code\""),
            std::string::npos)
      << drained.status.to_string();
  decoder.feed(good);
  EXPECT_TRUE(decoder.failed());
  EXPECT_EQ(decoder.next().status().message(), drained.status.message());
}

// A body comes from the kept byte buffers (rounded up to a power of two)
// only when they could keep it: a bigger one gets its own size, not twice.
TEST(FrameDecoder, ABodyPastTheKeptBuffersGetsItsOwnSize) {
  for (const size_t size : {size_t{300}, kKeptByteBufferBytes + 1, size_t{3} << 20}) {
    RemotingCommand request = RemotingCommand::make_request(RequestCode::SEND_MESSAGE_V2);
    request.body.assign(size, 'b');
    FrameDecoder decoder;
    decoder.feed(encode_frame(request));
    Drained drained = drain(decoder);
    ASSERT_TRUE(drained.status.ok()) << drained.status.to_string();
    ASSERT_EQ(drained.commands.size(), 1u);
    const std::vector<uint8_t>& body = drained.commands[0].body;
    EXPECT_EQ(body, request.body) << size;
    if (size <= kKeptByteBufferBytes) {
      EXPECT_GE(body.capacity(), size) << size;
    } else {
      EXPECT_EQ(body.capacity(), size) << size;
    }
  }
}

// ---- RemotingCommand ---------------------------------------------------------------------

TEST(RemotingCommand, ResponseEchoesTheRequest) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::PULL_MESSAGE, {{"topic", "T"}});
  request.opaque = 99;
  request.version = 121;
  request.serialize_type = SerializeType::ROCKETMQ;
  EXPECT_FALSE(request.is_response());
  const RemotingCommand response = request.make_response(ResponseCode::PULL_NOT_FOUND, "nothing yet");
  EXPECT_TRUE(response.is_response());
  EXPECT_FALSE(response.is_oneway());
  EXPECT_EQ(response.opaque, 99);
  EXPECT_EQ(response.code, ResponseCode::PULL_NOT_FOUND);
  EXPECT_EQ(response.remark, "nothing yet");
  EXPECT_EQ(response.serialize_type, SerializeType::ROCKETMQ);
  EXPECT_EQ(response.version, kDefaultVersion);
  EXPECT_EQ(response.language, "JAVA");
  EXPECT_TRUE(response.ext_fields.empty());
  EXPECT_EQ(response.describe(), "response PULL_NOT_FOUND(19) opaque=99 flag=1 lang=JAVA version=407 ext=0 "
                                 "body=0B remark=\"nothing yet\"");
  EXPECT_EQ(request.describe(), "request PULL_MESSAGE(11) opaque=99 flag=0 lang=JAVA version=121 ext=1 body=0B");
}

TEST(RemotingCommand, TypedReadsNameTheFieldWhenMissingOrMalformed) {
  RemotingCommand command = RemotingCommand::make_request(RequestCode::QUERY_CONSUMER_OFFSET);
  command.ext_fields = {{"queueId", "3"}, {"offset", "-9000000000"}, {"bad", "12a"}, {"plus", "+5"},
                        {"space", " 5"}, {"huge", "9223372036854775808"}, {"flagT", "TRUE"}, {"flag0", "0"},
                        {"flagX", "yes"}, {"empty", ""}};
  EXPECT_EQ(command.ext_int32("queueId").value(), 3);
  EXPECT_EQ(command.ext_int("offset").value(), -9000000000);
  EXPECT_EQ(command.ext_int("plus").value(), 5);
  EXPECT_TRUE(command.ext_bool("flagT").value());
  EXPECT_FALSE(command.ext_bool("flag0").value());
  EXPECT_EQ(command.ext_string("empty").value(), "");

  const auto invalid = [](const Status& status, const std::string& text) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), text);
  };
  invalid(command.ext_int("topic").status(), "the custom field <topic> is null");
  invalid(command.ext_string("topic").status(), "the custom field <topic> is null");
  invalid(command.ext_int("bad").status(), "the custom field <bad> is not a valid int64: \"12a\"");
  invalid(command.ext_int("space").status(), "the custom field <space> is not a valid int64: \" 5\"");
  invalid(command.ext_int("huge").status(), "the custom field <huge> is not a valid int64: \"9223372036854775808\"");
  invalid(command.ext_int("empty").status(), "the custom field <empty> is not a valid int64: \"\"");
  invalid(command.ext_int32("offset").status(), "the custom field <offset> is not a valid int32: \"-9000000000\"");
  invalid(command.ext_bool("flagX").status(),
          "the custom field <flagX> is not a valid boolean (true or false): \"yes\"");

  EXPECT_EQ(command.optional_ext_int("absent").value(), std::nullopt);
  EXPECT_EQ(command.optional_ext_int32("queueId").value(), 3);
  EXPECT_FALSE(command.optional_ext_int("bad").ok()) << "present but malformed is still an error";
  EXPECT_EQ(command.optional_ext_string("absent"), std::nullopt);
  EXPECT_EQ(command.optional_ext_string("queueId"), "3");
}

TEST(RemotingCommand, WritesGoOutAsStrings) {
  RemotingCommand command;
  command.set_ext_int("queueOffset", -12);
  command.set_ext_bool("TRACE_ON", true);
  command.set_ext_string("MSG_REGION", "DefaultRegion");
  command.set_ext_int("queueOffset", 12);  // replaces
  EXPECT_EQ(command.ext_fields,
            (ExtFields{{"queueOffset", "12"}, {"TRACE_ON", "true"}, {"MSG_REGION", "DefaultRegion"}}));
}

TEST(Codes, NamesAreRocketMqsSpellings) {
  EXPECT_EQ(request_code_name(RequestCode::SEND_MESSAGE), "SEND_MESSAGE");
  EXPECT_EQ(request_code_name(310), "SEND_MESSAGE_V2");
  EXPECT_EQ(request_code_name(105), "GET_ROUTEINFO_BY_TOPIC");
  EXPECT_EQ(request_code_name(327), "ADD_WRITE_PERM_OF_BROKER");
  EXPECT_EQ(request_code_name(904), "BROKER_HEARTBEAT");
  EXPECT_EQ(request_code_name(44), "UNKNOWN");
  EXPECT_EQ(request_code_name(-1), "UNKNOWN");
  EXPECT_EQ(describe_request_code(4242), "UNKNOWN(4242)");
  EXPECT_EQ(response_code_name(ResponseCode::SUCCESS), "SUCCESS");
  EXPECT_EQ(response_code_name(17), "TOPIC_NOT_EXIST");
  EXPECT_EQ(response_code_name(202), "TRANSACTION_STATE_UNKNOW");
  EXPECT_EQ(response_code_name(215), "FLOW_CONTROL");
  EXPECT_EQ(response_code_name(9), "UNKNOWN");
  EXPECT_EQ(describe_response_code(21), "PULL_OFFSET_MOVED(21)");
}

// Every code section 7.4 lists, by number: the constants are the contract.
TEST(Codes, SectionSevenFourNumbers) {
  const std::map<std::string_view, int32_t> listed = {
      {"SEND_MESSAGE", 10}, {"PULL_MESSAGE", 11}, {"QUERY_MESSAGE", 12}, {"QUERY_BROKER_OFFSET", 13},
      {"QUERY_CONSUMER_OFFSET", 14}, {"UPDATE_CONSUMER_OFFSET", 15}, {"UPDATE_AND_CREATE_TOPIC", 17},
      {"GET_ALL_TOPIC_CONFIG", 21}, {"GET_TOPIC_CONFIG_LIST", 22}, {"GET_TOPIC_NAME_LIST", 23},
      {"UPDATE_BROKER_CONFIG", 25}, {"GET_BROKER_CONFIG", 26}, {"TRIGGER_DELETE_FILES", 27},
      {"GET_BROKER_RUNTIME_INFO", 28}, {"SEARCH_OFFSET_BY_TIMESTAMP", 29}, {"GET_MAX_OFFSET", 30},
      {"GET_MIN_OFFSET", 31}, {"GET_EARLIEST_MSG_STORETIME", 32}, {"VIEW_MESSAGE_BY_ID", 33}, {"HEART_BEAT", 34},
      {"UNREGISTER_CLIENT", 35}, {"CONSUMER_SEND_MSG_BACK", 36}, {"END_TRANSACTION", 37},
      {"GET_CONSUMER_LIST_BY_GROUP", 38}, {"CHECK_TRANSACTION_STATE", 39}, {"NOTIFY_CONSUMER_IDS_CHANGED", 40},
      {"LOCK_BATCH_MQ", 41}, {"UNLOCK_BATCH_MQ", 42}, {"GET_ALL_CONSUMER_OFFSET", 43}, {"GET_ALL_DELAY_OFFSET", 45},
      {"CHECK_CLIENT_CONFIG", 46}, {"PUT_KV_CONFIG", 100}, {"GET_KV_CONFIG", 101}, {"DELETE_KV_CONFIG", 102},
      {"REGISTER_BROKER", 103}, {"UNREGISTER_BROKER", 104}, {"GET_ROUTEINFO_BY_TOPIC", 105},
      {"GET_BROKER_CLUSTER_INFO", 106}, {"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", 200},
      {"GET_ALL_SUBSCRIPTIONGROUP_CONFIG", 201}, {"GET_TOPIC_STATS_INFO", 202}, {"GET_CONSUMER_CONNECTION_LIST", 203},
      {"GET_PRODUCER_CONNECTION_LIST", 204}, {"WIPE_WRITE_PERM_OF_BROKER", 205},
      {"GET_ALL_TOPIC_LIST_FROM_NAMESERVER", 206}, {"DELETE_SUBSCRIPTIONGROUP", 207}, {"GET_CONSUME_STATS", 208},
      {"DELETE_TOPIC_IN_BROKER", 215}, {"DELETE_TOPIC_IN_NAMESRV", 216}, {"GET_KVLIST_BY_NAMESPACE", 219},
      {"GET_TOPICS_BY_CLUSTER", 224}, {"GET_CONSUMER_RUNNING_INFO", 307}, {"CONSUME_MESSAGE_DIRECTLY", 309},
      {"SEND_MESSAGE_V2", 310}, {"SEND_BATCH_MESSAGE", 320}, {"QUERY_DATA_VERSION", 322},
      {"SEND_REPLY_MESSAGE", 324}, {"SEND_REPLY_MESSAGE_V2", 325}, {"ADD_WRITE_PERM_OF_BROKER", 327},
      {"GET_KV_CONFIG_BY_VALUE", 217}, {"BROKER_HEARTBEAT", 904}};
  for (const auto& [name, code] : listed) EXPECT_EQ(request_code_name(code), name) << code;
  const std::map<std::string_view, int32_t> responses = {
      {"SUCCESS", 0}, {"SYSTEM_ERROR", 1}, {"SYSTEM_BUSY", 2}, {"REQUEST_CODE_NOT_SUPPORTED", 3},
      {"TRANSACTION_FAILED", 4}, {"FLUSH_DISK_TIMEOUT", 10}, {"SLAVE_NOT_AVAILABLE", 11},
      {"FLUSH_SLAVE_TIMEOUT", 12}, {"MESSAGE_ILLEGAL", 13}, {"SERVICE_NOT_AVAILABLE", 14},
      {"VERSION_NOT_SUPPORTED", 15}, {"NO_PERMISSION", 16}, {"TOPIC_NOT_EXIST", 17}, {"TOPIC_EXIST_ALREADY", 18},
      {"PULL_NOT_FOUND", 19}, {"PULL_RETRY_IMMEDIATELY", 20}, {"PULL_OFFSET_MOVED", 21}, {"QUERY_NOT_FOUND", 22},
      {"SUBSCRIPTION_PARSE_FAILED", 23}, {"SUBSCRIPTION_NOT_EXIST", 24}, {"SUBSCRIPTION_NOT_LATEST", 25},
      {"SUBSCRIPTION_GROUP_NOT_EXIST", 26}, {"FILTER_DATA_NOT_EXIST", 27}, {"FILTER_DATA_NOT_LATEST", 28},
      {"TRANSACTION_SHOULD_COMMIT", 200}, {"TRANSACTION_SHOULD_ROLLBACK", 201}, {"TRANSACTION_STATE_UNKNOW", 202},
      {"TRANSACTION_STATE_GROUP_WRONG", 203}, {"NO_BUYER_ID", 204}, {"NOT_IN_CURRENT_UNIT", 205},
      {"CONSUMER_NOT_ONLINE", 206}, {"CONSUME_MSG_TIMEOUT", 207}, {"NO_MESSAGE", 208}, {"FLOW_CONTROL", 215}};
  for (const auto& [name, code] : responses) EXPECT_EQ(response_code_name(code), name) << code;
}

}  // namespace
}  // namespace mqlab::remoting::remoting_codec_test
