// The frame encoders that take a body from outside the command
// (encode_frame_with_body) or leave it to the caller (encode_frame_prefix):
// they must give encode_frame's bytes, in both header types.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "broker/remoting/frame_codec.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/request_code.h"

namespace mqlab::remoting::frame_encode_test {
namespace {

RemotingCommand send_request(SerializeType type) {
  RemotingCommand request = RemotingCommand::make_request(
      RequestCode::SEND_MESSAGE_V2, {{"a", "PG"}, {"b", "Topic"}, {"i", "UNIQ_KEY\x01" "0A0B\x02"}});
  request.opaque = 42;
  request.serialize_type = type;
  return request;
}

TEST(FrameEncode, WithBodyEqualsTheCommandCarryingIt) {
  const std::vector<uint8_t> body = {'h', 'e', 'l', 'l', 'o', 0, 0xff};
  for (SerializeType type : {SerializeType::JSON, SerializeType::ROCKETMQ}) {
    RemotingCommand whole = send_request(type);
    whole.body = body;
    const std::vector<uint8_t> expected = encode_frame(whole);
    EXPECT_EQ(encode_frame_with_body(send_request(type), body), expected) << serialize_type_name(type);
    Result<RemotingCommand> decoded = decode_frame(expected);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->body, body);
  }
}

TEST(FrameEncode, WithAnEmptyBodyEqualsAFrameWithout) {
  for (SerializeType type : {SerializeType::JSON, SerializeType::ROCKETMQ}) {
    EXPECT_EQ(encode_frame_with_body(send_request(type), {}), encode_frame(send_request(type)));
  }
}

TEST(FrameEncode, PrefixCountsTrailingBytesItDoesNotHold) {
  RemotingCommand response = send_request(SerializeType::JSON).make_response(0);
  response.body = {1, 2, 3};
  const std::vector<uint8_t> whole = encode_frame(response);
  const std::vector<uint8_t> prefix = encode_frame_prefix(response, 100);
  ASSERT_EQ(prefix.size(), whole.size());
  EXPECT_EQ(std::vector<uint8_t>(prefix.begin() + 4, prefix.end()), std::vector<uint8_t>(whole.begin() + 4, whole.end()));
  const auto length = [](const std::vector<uint8_t>& frame) {
    return (uint32_t{frame[0]} << 24) | (uint32_t{frame[1]} << 16) | (uint32_t{frame[2]} << 8) | frame[3];
  };
  EXPECT_EQ(length(prefix), length(whole) + 100);
}

}  // namespace
}  // namespace mqlab::remoting::frame_encode_test
