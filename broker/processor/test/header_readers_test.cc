// The processors' header readers (PullMessageHeaderReader,
// SendMessageHeaderReader) give what the full reads give: the same header,
// or the same error in the same words, for every request of a run. The runs
// are what a broker sees: requests of a few connections, interleaved, each
// connection's headers decoded through its own JSON header shapes, so most
// follow the one before them in a lineage and have a few values changed in
// place (the reader reads only those); now and then a value changes length
// (a new lineage), goes missing or turns malformed (the reader must not
// keep a half-read header), or a connection switches between SEND_MESSAGE
// and SEND_MESSAGE_V2.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/processor/pull_message_processor.h"
#include "broker/processor/send_message_processor.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/json_header_shapes.h"
#include "broker/remoting/request_code.h"

namespace mqlab::broker::header_readers_test {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;

// A value of a numeric field: mostly width digits (so a header keeps its
// length), sometimes another width, a sign, or not a number at all.
std::string gen_number(size_t width) {
  switch (*rc::gen::inRange(0, 20)) {
    case 0: return *rc::gen::element<std::string>("", "x", "1x", "-", "+7", "99999999999999999999", "-3");
    case 1: width = *rc::gen::inRange<size_t>(1, 6); break;
    default: break;
  }
  std::string digits = *rc::gen::container<std::string>(width, rc::gen::inRange('0', ':'));
  return digits;
}

std::string gen_text(size_t width) {
  if (*rc::gen::inRange(0, 15) == 0) return *rc::gen::element<std::string>("", "caf\xC3\xA9", "q\"uote", "SQL92");
  return *rc::gen::container<std::string>(width, rc::gen::element('a', 'b', 'T', '_', '%'));
}

// One connection: its request's fields (name -> numeric or not, and a
// width), and the shapes its decoder keeps.
struct Connection {
  std::vector<std::pair<std::string, bool>> fields;  // name, numeric
  int32_t code = 0;
  remoting::JsonHeaderShapes shapes;
  RemotingCommand last;
};

// The next request of connection: the last one with a field or two changed
// (or, rarely, one left out or one added that no reader knows).
RemotingCommand next_request(Connection& connection) {
  RemotingCommand request = RemotingCommand::make_request(connection.code);
  request.opaque = connection.last.opaque + 1;
  const auto changes = *rc::gen::inRange(0, 3);
  std::vector<size_t> changed;
  for (int i = 0; i < changes; ++i) changed.push_back(*rc::gen::inRange<size_t>(0, connection.fields.size()));
  const bool drop_one = *rc::gen::inRange(0, 25) == 0;
  const size_t dropped = *rc::gen::inRange<size_t>(0, connection.fields.size());
  for (size_t i = 0; i < connection.fields.size(); ++i) {
    const auto& [name, numeric] = connection.fields[i];
    if (drop_one && i == dropped) continue;
    const std::string_view* before = connection.last.ext_fields.find_value(name);
    std::string value = before != nullptr ? std::string(*before) : std::string();
    if (before == nullptr || std::find(changed.begin(), changed.end(), i) != changed.end()) {
      value = numeric ? gen_number(before != nullptr && !before->empty() ? before->size() : 3) : gen_text(4);
    }
    request.ext_fields.insert_or_assign(name, value);
  }
  if (*rc::gen::inRange(0, 40) == 0) request.ext_fields.insert_or_assign("zUnknown", "1");
  connection.last = request;
  return request;
}

// request as the broker's decoder hands it on: through the connection's
// shapes (so with a lineage when one applies).
Result<RemotingCommand> as_decoded(Connection& connection, const RemotingCommand& request) {
  std::vector<uint8_t> header;
  remoting::append_json_header(request, header);
  RemotingCommand decoded;
  MQ_RETURN_IF_ERROR(remoting::decode_json_header_into(header, decoded, &connection.shapes));
  return decoded;
}

RC_GTEST_PROP(HeaderReaders, PullReaderReadsAsTheFullRead, ()) {
  const std::vector<std::pair<std::string, bool>> kFields = {
      {"commitOffset", true},  {"consumerGroup", false}, {"expressionType", false}, {"maxMsgNums", true},
      {"queueId", true},       {"queueOffset", true},    {"subVersion", true},      {"subscription", false},
      {"suspendTimeoutMillis", true}, {"sysFlag", true}, {"topic", false}};
  std::vector<Connection> connections(*rc::gen::inRange<size_t>(1, 4));
  for (Connection& connection : connections) {
    connection.code = RequestCode::PULL_MESSAGE;
    connection.fields = kFields;
  }
  PullMessageHeaderReader reader;
  const auto count = *rc::gen::inRange(1, 60);
  for (int i = 0; i < count; ++i) {
    Connection& connection = connections[*rc::gen::inRange<size_t>(0, connections.size())];
    const Result<RemotingCommand> decoded = as_decoded(connection, next_request(connection));
    RC_ASSERT(decoded.ok());
    PullMessageRequestHeader full;
    const Status full_status = read_pull_message_header(*decoded, full);
    // Either way of reading: into a header, or in place (the memo's
    // header, or the storage given when the memo had none to follow).
    if (*rc::gen::arbitrary<bool>()) {
      PullMessageRequestHeader read;
      const Status read_status = reader.read(*decoded, read);
      RC_ASSERT(read_status.to_string() == full_status.to_string());
      if (full_status.ok()) RC_ASSERT(read == full);
    } else {
      PullMessageRequestHeader storage;
      const Result<const PullMessageRequestHeader*> read = reader.read_in_place(*decoded, storage);
      RC_ASSERT(read.ok() == full_status.ok());
      if (full_status.ok()) {
        RC_ASSERT(**read == full);
      } else {
        RC_ASSERT(read.status().to_string() == full_status.to_string());
      }
    }
  }
}

RC_GTEST_PROP(HeaderReaders, SendReaderReadsAsTheFullRead, ()) {
  const std::vector<std::pair<std::string, bool>> kV2Fields = {
      {"a", false}, {"b", false}, {"c", false}, {"d", true}, {"e", true}, {"f", true}, {"g", true},
      {"h", true},  {"i", false}, {"j", true},  {"k", false}, {"l", true}, {"m", false}, {"n", false}};
  const std::vector<std::pair<std::string, bool>> kV1Fields = {
      {"producerGroup", false}, {"topic", false},   {"defaultTopic", false}, {"defaultTopicQueueNums", true},
      {"queueId", true},        {"sysFlag", true},  {"bornTimestamp", true}, {"flag", true},
      {"properties", false},    {"reconsumeTimes", true}, {"maxReconsumeTimes", true}};
  std::vector<Connection> connections(*rc::gen::inRange<size_t>(1, 4));
  for (Connection& connection : connections) {
    const bool v2 = *rc::gen::inRange(0, 4) != 0;
    connection.code = v2 ? RequestCode::SEND_MESSAGE_V2 : RequestCode::SEND_MESSAGE;
    connection.fields = v2 ? kV2Fields : kV1Fields;
  }
  SendMessageHeaderReader reader;
  const auto count = *rc::gen::inRange(1, 60);
  for (int i = 0; i < count; ++i) {
    Connection& connection = connections[*rc::gen::inRange<size_t>(0, connections.size())];
    if (*rc::gen::inRange(0, 30) == 0) {
      // The same names under the other code: read by other names.
      connection.code = connection.code == RequestCode::SEND_MESSAGE_V2 ? RequestCode::SEND_MESSAGE
                                                                        : RequestCode::SEND_MESSAGE_V2;
    }
    const Result<RemotingCommand> decoded = as_decoded(connection, next_request(connection));
    RC_ASSERT(decoded.ok());
    const Result<SendMessageRequestHeader> full = parse_send_message_header(*decoded);
    const Result<SendMessageRequestHeader> read = reader.read(*decoded);
    RC_ASSERT(read.ok() == full.ok());
    if (full.ok()) {
      RC_ASSERT(*read == *full);
      // Views into this request, not into one read before.
      RC_ASSERT(read->producerGroup.data() == full->producerGroup.data());
      RC_ASSERT(read->topic.data() == full->topic.data());
      RC_ASSERT(read->defaultTopic.data() == full->defaultTopic.data());
      RC_ASSERT(read->properties.data() == full->properties.data());
    } else {
      RC_ASSERT(read.status().to_string() == full.status().to_string());
    }
  }
}

// The readers keep what they read: a run of one connection's requests that
// change only a value or two is read against the last one. Checked through
// what the reader could not have known without its memo: a request whose
// table is then damaged behind the lineage's back is read as its lineage
// says (here: as the previous request was), so a lineage is only ever set
// by a decoder that knows what changed.
TEST(HeaderReaders, APullThatFollowsItsLineageIsReadFromTheMemo) {
  Connection connection;
  connection.code = RequestCode::PULL_MESSAGE;
  const auto pull = [&](std::string_view queue_offset) {
    RemotingCommand request = RemotingCommand::make_request(RequestCode::PULL_MESSAGE);
    request.ext_fields = {{"commitOffset", "0"}, {"consumerGroup", "cg"}, {"maxMsgNums", "32"},
                          {"queueId", "1"},      {"queueOffset", std::string(queue_offset)},
                          {"subVersion", "0"},   {"suspendTimeoutMillis", "15000"},
                          {"sysFlag", "2"},      {"topic", "T"}};
    return as_decoded(connection, request);
  };
  PullMessageHeaderReader reader;
  PullMessageRequestHeader header;
  for (const std::string_view offset : {"100", "101", "102"}) {
    const Result<RemotingCommand> decoded = pull(offset);
    ASSERT_TRUE(decoded.ok());
    ASSERT_TRUE(reader.read(*decoded, header).ok());
    EXPECT_EQ(header.queueOffset, std::stoll(std::string(offset)));
  }
  EXPECT_EQ(header.consumerGroup, "cg");
  // The next one says only queueOffset changed; its topic, edited after
  // decoding and the lineage put back, is taken from the memo.
  Result<RemotingCommand> decoded = pull("103");
  ASSERT_TRUE(decoded.ok());
  const remoting::ExtFieldsLineage lineage = decoded->ext_fields.lineage();
  ASSERT_NE(lineage.id, 0u);
  decoded->ext_fields.insert_or_assign("topic", "U");
  decoded->ext_fields.set_lineage(lineage);
  ASSERT_TRUE(reader.read(*decoded, header).ok());
  EXPECT_EQ(header.queueOffset, 103);
  EXPECT_EQ(header.topic, "T");
  // In place, the one that follows its lineage is the memo's header, not
  // the storage; the storage is left as it was.
  Result<RemotingCommand> next = pull("104");
  ASSERT_TRUE(next.ok());
  PullMessageRequestHeader storage;
  const Result<const PullMessageRequestHeader*> in_place = reader.read_in_place(*next, storage);
  ASSERT_TRUE(in_place.ok());
  EXPECT_NE(*in_place, &storage);
  EXPECT_EQ((*in_place)->queueOffset, 104);
  EXPECT_EQ(storage, PullMessageRequestHeader{});
}

}  // namespace
}  // namespace mqlab::broker::header_readers_test
