// A broker writes the JSON headers of its answers to PULL_MESSAGE and
// SEND_MESSAGE_V2 straight from their structs
// (append_pull_message_response_json_header,
// append_send_message_response_json_header, ResponseChannel::reply_written).
// Clients and mqsim's traces see those bytes, so they must be the generic
// encoder's for the same answer built as a command (make_response, the
// fields set on it), whatever the remark and the message id hold: escapes,
// control bytes, non-ASCII text and invalid UTF-8 (which the generic path
// writes as U+FFFD), extreme numbers, a stored message or not.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "broker/processor/pull_message_response_header.h"
#include "broker/processor/send_message_response_header.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/response_code.h"

namespace mqlab::broker::response_header_prop_test {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

// Mostly ASCII, sometimes anything: the fast path and the general one.
rc::Gen<std::string> header_text() {
  return rc::gen::oneOf(rc::gen::container<std::string>(rc::gen::inRange<char>(0x20, 0x7F)),
                        rc::gen::container<std::string>(rc::gen::arbitrary<char>()),
                        rc::gen::element<std::string>("", "FOUND", "NO_MESSAGE_IN_QUEUE", "q\"uote\\back",
                                                      "caf\xC3\xA9", "bad\xFF", "AC11000100002A9F0000000000001F40"));
}

// The answer to the request with opaque, as a command, encoded generically.
template <typename SetFields>
std::vector<uint8_t> generic(int32_t code, const std::string& remark, int32_t opaque, SetFields&& set_fields) {
  RemotingCommand request = RemotingCommand::make_request(0);
  request.opaque = opaque;
  RemotingCommand response = request.make_response(code, remark);
  set_fields(response);
  std::vector<uint8_t> out;
  remoting::append_json_header(response, out);
  return out;
}

RC_GTEST_PROP(ResponseHeader, PullWrittenStraightEqualsTheGenericEncoding, ()) {
  PullMessageResponseHeader header;
  header.maxOffset = *rc::gen::arbitrary<int64_t>();
  header.minOffset = *rc::gen::arbitrary<int64_t>();
  header.nextBeginOffset = *rc::gen::arbitrary<int64_t>();
  header.suggestWhichBrokerId = *rc::gen::arbitrary<int64_t>();
  const int32_t code = *rc::gen::arbitrary<int32_t>();
  const std::string remark = *header_text();
  const int32_t opaque = *rc::gen::arbitrary<int32_t>();

  std::vector<uint8_t> written = {'x'};  // appended after what is there
  append_pull_message_response_json_header(code, remark, header, opaque, written);
  std::vector<uint8_t> expected = {'x'};
  const std::vector<uint8_t> generic_bytes = generic(
      code, remark, opaque, [&](RemotingCommand& response) { set_pull_message_response_fields(header, response); });
  expected.insert(expected.end(), generic_bytes.begin(), generic_bytes.end());
  RC_ASSERT(written == expected);
}

RC_GTEST_PROP(ResponseHeader, SendWrittenStraightEqualsTheGenericEncoding, ()) {
  const std::string msg_id = *header_text();  // empty: a refusal's or a failed put's answer
  SendMessageResponseHeader header;
  header.msgId = msg_id;
  header.queueId = *rc::gen::arbitrary<int32_t>();
  header.queueOffset = *rc::gen::arbitrary<int64_t>();
  const int32_t code = *rc::gen::arbitrary<int32_t>();
  const std::string remark = *header_text();
  const int32_t opaque = *rc::gen::arbitrary<int32_t>();

  std::vector<uint8_t> written;
  append_send_message_response_json_header(code, remark, header, opaque, written);
  RC_ASSERT(written == generic(code, remark, opaque, [&](RemotingCommand& response) {
              set_send_message_response_fields(header, response);
            }));
}

// The sizing pass's worst cases: every byte escaped six-fold, the longest
// numbers.
TEST(ResponseHeader, WorstCaseSizesAreWrittenInFull) {
  const std::string remark(3000, '\x01');
  const int32_t opaque = std::numeric_limits<int32_t>::min();
  const PullMessageResponseHeader pull{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()};
  std::vector<uint8_t> written;
  append_pull_message_response_json_header(opaque, remark, pull, opaque, written);
  EXPECT_EQ(written, generic(opaque, remark, opaque, [&](RemotingCommand& response) {
              set_pull_message_response_fields(pull, response);
            }));
  const std::string msg_id(500, '"');
  const SendMessageResponseHeader send{msg_id, std::numeric_limits<int32_t>::min(),
                                       std::numeric_limits<int64_t>::min()};
  written.clear();
  append_send_message_response_json_header(opaque, remark, send, opaque, written);
  EXPECT_EQ(written, generic(opaque, remark, opaque, [&](RemotingCommand& response) {
              set_send_message_response_fields(send, response);
            }));
}

// What a client reads back from a written answer: the fields, as strings,
// and nothing of the stored message's when none was stored.
TEST(ResponseHeader, AWrittenAnswerDecodesToItsFields) {
  std::vector<uint8_t> frame(remoting::kFramePrefixBytes, 0);
  append_send_message_response_json_header(ResponseCode::SUCCESS, "",
                                           SendMessageResponseHeader{"AC11000100002A9F0000000000001F40", 3, 1'234},
                                           42, frame);
  remoting::finish_json_frame(frame, {});
  Result<RemotingCommand> decoded = remoting::decode_frame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_TRUE(decoded->is_response());
  EXPECT_EQ(decoded->opaque, 42);
  EXPECT_EQ(decoded->remark, "");
  EXPECT_EQ(decoded->ext_fields, remoting::ExtFields({{"MSG_REGION", "DefaultRegion"},
                                                      {"TRACE_ON", "true"},
                                                      {"msgId", "AC11000100002A9F0000000000001F40"},
                                                      {"queueId", "3"},
                                                      {"queueOffset", "1234"}}));

  frame.assign(remoting::kFramePrefixBytes, 0);
  append_send_message_response_json_header(ResponseCode::SERVICE_NOT_AVAILABLE, "disk full", {}, 7, frame);
  remoting::finish_json_frame(frame, {});
  decoded = remoting::decode_frame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->code, ResponseCode::SERVICE_NOT_AVAILABLE);
  EXPECT_EQ(decoded->remark, "disk full");
  EXPECT_EQ(decoded->ext_fields, remoting::ExtFields({{"MSG_REGION", "DefaultRegion"}, {"TRACE_ON", "true"}}));

  frame.assign(remoting::kFramePrefixBytes, 0);
  append_pull_message_response_json_header(ResponseCode::PULL_NOT_FOUND, "NO_NEW_MSG",
                                           PullMessageResponseHeader{100, 0, 100, 0}, 9, frame);
  remoting::finish_json_frame(frame, {});
  decoded = remoting::decode_frame(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->ext_fields, remoting::ExtFields({{"maxOffset", "100"},
                                                      {"minOffset", "0"},
                                                      {"nextBeginOffset", "100"},
                                                      {"suggestWhichBrokerId", "0"}}));
}

}  // namespace
}  // namespace mqlab::broker::response_header_prop_test
