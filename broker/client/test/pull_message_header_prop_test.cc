// A consumer writes PULL_MESSAGE's JSON header straight from its struct
// (api::append_pull_message_json_header, RemotingClient::invoke_written).
// Brokers and mqsim's traces see those bytes, so they must be the generic
// encoder's for build_pull_message's command, whatever the strings hold:
// escapes, control bytes, non-ASCII text and invalid UTF-8 (which the
// generic path writes as U+FFFD), extreme numbers, with the subscription
// flag set or not.
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

namespace mqlab::client::api::pull_message_header_prop_test {
namespace {

using remoting::RemotingCommand;

// Mostly ASCII, sometimes anything: the fast path and the general one.
rc::Gen<std::string> header_text() {
  return rc::gen::oneOf(rc::gen::container<std::string>(rc::gen::inRange<char>(0x20, 0x7F)),
                        rc::gen::container<std::string>(rc::gen::arbitrary<char>()),
                        rc::gen::element<std::string>("", "TAG", "SQL92", "*", "TagA || TagB", "q\"uote\\back",
                                                      "caf\xC3\xA9", "bad\xFF"));
}

std::vector<uint8_t> generic(const PullMessageRequestHeader& header, int32_t opaque) {
  RemotingCommand command = build_pull_message(header);
  command.opaque = opaque;
  std::vector<uint8_t> out;
  remoting::append_json_header(command, out);
  return out;
}

RC_GTEST_PROP(PullMessageHeader, WrittenStraightEqualsTheGenericEncoding, ()) {
  // The header's text fields are views: the text lives here.
  const std::string group = *header_text();
  const std::string topic = *header_text();
  const std::string subscription = *header_text();
  const std::string expression_type = *header_text();
  PullMessageRequestHeader header;
  header.consumerGroup = group;
  header.topic = topic;
  header.queueId = *rc::gen::arbitrary<int32_t>();
  header.queueOffset = *rc::gen::arbitrary<int64_t>();
  header.maxMsgNums = *rc::gen::arbitrary<int32_t>();
  // Any flags, the subscription's most of the time (it decides a field).
  header.sysFlag = *rc::gen::oneOf(rc::gen::arbitrary<int32_t>(),
                                   rc::gen::just(kPullFlagSuspend | kPullFlagSubscription),
                                   rc::gen::just(kPullFlagSuspend | kPullFlagCommitOffset));
  header.commitOffset = *rc::gen::arbitrary<int64_t>();
  header.suspendTimeoutMillis = *rc::gen::arbitrary<int64_t>();
  header.subscription = subscription;
  header.subVersion = *rc::gen::oneOf(rc::gen::arbitrary<int64_t>(), rc::gen::just(int64_t{1'700'000'000'123}));
  header.expressionType = expression_type;
  const int32_t opaque = *rc::gen::arbitrary<int32_t>();

  std::vector<uint8_t> written;
  append_pull_message_json_header(header, opaque, written);
  RC_ASSERT(written == generic(header, opaque));
}

// The sizing pass's worst cases: every byte escaped six-fold, the longest
// numbers, the subscription sent.
TEST(PullMessageHeader, WorstCaseSizesAreWrittenInFull) {
  const std::string group(300, '\x01');
  const std::string topic(127, '"');
  const std::string subscription(4000, '\x1F');
  const std::string expression_type(64, '\\');
  PullMessageRequestHeader header;
  header.consumerGroup = group;
  header.topic = topic;
  header.subscription = subscription;
  header.expressionType = expression_type;
  header.queueId = std::numeric_limits<int32_t>::min();
  header.queueOffset = std::numeric_limits<int64_t>::min();
  header.maxMsgNums = std::numeric_limits<int32_t>::min();
  header.sysFlag = -1;  // every flag, the subscription's included
  header.commitOffset = std::numeric_limits<int64_t>::min();
  header.suspendTimeoutMillis = std::numeric_limits<int64_t>::min();
  header.subVersion = std::numeric_limits<int64_t>::min();
  std::vector<uint8_t> written = {'x'};  // appended after what is there
  append_pull_message_json_header(header, std::numeric_limits<int32_t>::min(), written);
  std::vector<uint8_t> expected = {'x'};
  const std::vector<uint8_t> header_bytes = generic(header, std::numeric_limits<int32_t>::min());
  expected.insert(expected.end(), header_bytes.begin(), header_bytes.end());
  EXPECT_EQ(written, expected);
}

// The frame around a written header decodes to build_pull_message's
// command, as a broker reads it.
TEST(PullMessageHeader, AFinishedWrittenFrameIsTheEncodedFrame) {
  PullMessageRequestHeader header;
  header.consumerGroup = "cg-0";
  header.topic = "BenchTopic";
  header.queueId = 3;
  header.queueOffset = 1'234;
  header.sysFlag = kPullFlagSuspend | kPullFlagCommitOffset | kPullFlagSubscription;
  header.commitOffset = 1'200;
  header.subscription = "*";
  for (const int32_t flags : {header.sysFlag, kPullFlagSuspend}) {
    header.sysFlag = flags;
    std::vector<uint8_t> frame(remoting::kFramePrefixBytes, 0);
    append_pull_message_json_header(header, 42, frame);
    remoting::finish_json_frame(frame, {});
    RemotingCommand command = build_pull_message(header);
    command.opaque = 42;
    EXPECT_EQ(frame, remoting::encode_frame_with_body(command, {}));
    Result<RemotingCommand> decoded = remoting::decode_frame(frame);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->ext_fields, command.ext_fields);
    EXPECT_EQ(decoded->ext_fields.contains("subscription"), (flags & kPullFlagSubscription) != 0);
  }
}

}  // namespace
}  // namespace mqlab::client::api::pull_message_header_prop_test
