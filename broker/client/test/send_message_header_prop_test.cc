// The producer writes SEND_MESSAGE_V2's JSON header straight from its struct
// (api::append_send_message_v2_json_header, RemotingClient::invoke_written).
// Brokers and mqsim's traces see those bytes, so they must be the generic
// encoder's for the same request, whatever the strings hold: escapes, control
// bytes, non-ASCII text and invalid UTF-8 (which the generic path writes as
// U+FFFD), negative and extreme numbers, each optional field present or not.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "broker/client/mq_client_api.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/json_header.h"

namespace mqlab::client::api::send_message_header_prop_test {
namespace {

using remoting::RemotingCommand;

// Mostly ASCII, sometimes anything: the fast path and the general one. And
// sometimes long text with bytes to escape, whose worst case (six bytes a
// byte) is past the writer's stack room, so the header is written on the
// heap (not shrunk: shrinking 2,000 bytes a character at a time takes
// minutes).
rc::Gen<std::string> header_text() {
  return rc::gen::oneOf(rc::gen::container<std::string>(rc::gen::inRange<char>(0x20, 0x7F)),
                        rc::gen::container<std::string>(rc::gen::arbitrary<char>()),
                        rc::gen::noShrink(rc::gen::resize(
                            2000, rc::gen::container<std::string>(rc::gen::inRange<char>(0x01, 0x7F)))),
                        rc::gen::element<std::string>("", "TBW102", "UNIQ_KEY\001AC11\002WAIT\001true\002",
                                                      "q\"uote\\back", "caf\xC3\xA9", "bad\xFF"));
}

std::vector<uint8_t> generic(const SendMessageRequestHeader& header, int32_t opaque) {
  RemotingCommand command = build_send_message_v2_header(header);
  command.opaque = opaque;
  std::vector<uint8_t> out;
  remoting::append_json_header(command, out);
  return out;
}

RC_GTEST_PROP(SendMessageHeader, WrittenStraightEqualsTheGenericEncoding, ()) {
  // The names are views: their text lives here.
  const std::string group = *header_text();
  const std::string topic = *header_text();
  const std::string default_topic = *header_text();
  const std::string broker_name = *header_text();
  SendMessageRequestHeader header;
  header.producerGroup = group;
  header.topic = topic;
  header.defaultTopic = default_topic;
  header.defaultTopicQueueNums = *rc::gen::arbitrary<int32_t>();
  header.queueId = *rc::gen::arbitrary<int32_t>();
  header.sysFlag = *rc::gen::arbitrary<int32_t>();
  header.bornTimestamp = *rc::gen::oneOf(rc::gen::arbitrary<int64_t>(),
                                         rc::gen::just(std::numeric_limits<int64_t>::min()),
                                         rc::gen::just(int64_t{1'700'000'000'123}));
  header.flag = *rc::gen::arbitrary<int32_t>();
  header.properties = *header_text();
  header.reconsumeTimes = *rc::gen::arbitrary<int32_t>();
  header.unitMode = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) header.maxReconsumeTimes = *rc::gen::arbitrary<int32_t>();
  header.batch = *rc::gen::arbitrary<bool>();
  header.brokerName = broker_name;
  const int32_t opaque = *rc::gen::arbitrary<int32_t>();

  std::vector<uint8_t> written;
  append_send_message_v2_json_header(header, opaque, written);
  RC_ASSERT(written == generic(header, opaque));
}

// The sizing pass's worst cases: every byte escaped six-fold, the longest
// numbers, both optional fields.
TEST(SendMessageHeader, WorstCaseSizesAreWrittenInFull) {
  const std::string group(300, '\x01');
  const std::string topic(127, '"');
  const std::string default_topic(64, '\\');
  const std::string broker_name(100, '\n');
  SendMessageRequestHeader header;
  header.producerGroup = group;
  header.topic = topic;
  header.defaultTopic = default_topic;
  header.properties = std::string(4000, '\x1F');
  header.brokerName = broker_name;
  header.defaultTopicQueueNums = std::numeric_limits<int32_t>::min();
  header.queueId = std::numeric_limits<int32_t>::min();
  header.sysFlag = std::numeric_limits<int32_t>::min();
  header.bornTimestamp = std::numeric_limits<int64_t>::min();
  header.flag = std::numeric_limits<int32_t>::min();
  header.reconsumeTimes = std::numeric_limits<int32_t>::min();
  header.maxReconsumeTimes = std::numeric_limits<int32_t>::min();
  header.unitMode = false;
  header.batch = false;
  std::vector<uint8_t> written = {'x'};  // appended after what is there
  append_send_message_v2_json_header(header, std::numeric_limits<int32_t>::min(), written);
  std::vector<uint8_t> expected = {'x'};
  const std::vector<uint8_t> header_bytes = generic(header, std::numeric_limits<int32_t>::min());
  expected.insert(expected.end(), header_bytes.begin(), header_bytes.end());
  EXPECT_EQ(written, expected);
}

// The frame around a written header: what encode_frame_with_body makes of
// the command, length fields and body included.
TEST(SendMessageHeader, AFinishedWrittenFrameIsTheEncodedFrame) {
  SendMessageRequestHeader header;
  header.producerGroup = "PG";
  header.topic = "TopicTest";
  header.defaultTopic = "TBW102";
  header.queueId = 5;
  header.bornTimestamp = 1'700'000'000'123;
  header.properties = "UNIQ_KEY\001AC110001\002WAIT\001true\002";
  header.brokerName = "broker-a";
  const std::vector<uint8_t> body = {'h', 'e', 'l', 'l', 'o'};
  for (const std::vector<uint8_t>& this_body : {body, std::vector<uint8_t>{}}) {
    std::vector<uint8_t> frame(remoting::kFramePrefixBytes, 0);
    append_send_message_v2_json_header(header, 42, frame);
    remoting::finish_json_frame(frame, this_body);
    RemotingCommand command = build_send_message_v2_header(header);
    command.opaque = 42;
    EXPECT_EQ(frame, remoting::encode_frame_with_body(command, this_body));
    Result<RemotingCommand> decoded = remoting::decode_frame(frame);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->ext_fields, command.ext_fields);
    EXPECT_EQ(decoded->body, this_body);
  }
}

}  // namespace
}  // namespace mqlab::client::api::send_message_header_prop_test
