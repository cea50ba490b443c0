// libFuzzer target: request header parsing from arbitrary ext fields
// (broker/remoting/rocketmq_header.h, remoting_command.h's typed reads, the
// send and pull processors' header parsers, the subscription filter, message
// properties) and the JSON request bodies (route_data.h). The input picks a
// request code, a serialize type, ext fields (names mostly from the ones
// processors read, values mostly numbers, booleans and edge cases) and a body.
// Every parser must answer a value or an error Status, never crash, and:
//   - a command encodes to a frame that decodes to the same command in the
//     ROCKETMQ binary header, and to one that decodes in the JSON header;
//   - the raw bytes decode as a ROCKETMQ binary header or give Corruption.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/processor/pull_message_processor.h"
#include "broker/processor/send_message_processor.h"
#include "broker/processor/subscription_filter.h"
#include "broker/remoting/frame_codec.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/rocketmq_header.h"
#include "broker/remoting/route_data.h"
#include "broker/store/message_codec.h"

namespace {

using mqlab::Result;
using mqlab::remoting::RemotingCommand;
using mqlab::remoting::RequestCode;
using mqlab::remoting::SerializeType;

// Every ext field name a processor or the NameServer reads.
constexpr std::array<std::string_view, 79> kFieldNames = {
    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
    "acceptStandardJsonOnly", "beginTimestamp", "bornTimestamp", "brokerAddr", "brokerId", "brokerName",
    "clientID", "clusterName", "commitOffset", "compressed", "consumerGroup", "defaultTopic",
    "defaultTopicQueueNums", "delayLevel", "endTimestamp", "expressionType", "flag", "group",
    "haServerAddr", "indexLastUpdatePhyoffset", "indexLastUpdateTimestamp", "key", "masterAddr",
    "maxMsgNums", "maxNum", "maxOffset", "maxReconsumeTimes", "minOffset", "msgId", "nextBeginOffset",
    "offset", "order", "originMsgId", "perm", "producerGroup", "properties", "queueId", "queueOffset",
    "readQueueNums", "subVersion", "subscription", "suggestWhichBrokerId", "suspendTimeoutMillis",
    "sysFlag", "timestamp", "topic", "topicFilterType", "topicSysFlag", "unitMode", "value",
    "writeQueueNums", "reconsumeTimes", "batch", "namespace", "topicRequestTime", "bname", "tag",
    "unitName", "queueNums", "consumerGroupName", "isUnitMode", "maxOffsetHint", "z", "", " "};

constexpr std::array<std::string_view, 24> kValues = {
    "0", "1", "-1", "true", "false", "TRUE", "2147483647", "2147483648", "-2147483649",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e3", " 1", "0x10", "",
    "*", "||", "a || b", "TopicA", "TAGS\0011\002KEYS\001k\002", "\001\002\001", "TBW102", "%RETRY%g"};

constexpr std::array<int32_t, 20> kCodes = {
    RequestCode::SEND_MESSAGE, RequestCode::SEND_MESSAGE_V2, RequestCode::PULL_MESSAGE,
    RequestCode::QUERY_MESSAGE, RequestCode::QUERY_CONSUMER_OFFSET, RequestCode::UPDATE_CONSUMER_OFFSET,
    RequestCode::UPDATE_AND_CREATE_TOPIC, RequestCode::SEARCH_OFFSET_BY_TIMESTAMP, RequestCode::GET_MAX_OFFSET,
    RequestCode::GET_MIN_OFFSET, RequestCode::VIEW_MESSAGE_BY_ID, RequestCode::HEART_BEAT,
    RequestCode::UNREGISTER_CLIENT, RequestCode::CONSUMER_SEND_MSG_BACK,
    RequestCode::GET_CONSUMER_LIST_BY_GROUP, RequestCode::REGISTER_BROKER, RequestCode::UNREGISTER_BROKER,
    RequestCode::GET_ROUTEINFO_BY_TOPIC, RequestCode::GET_BROKER_CLUSTER_INFO, RequestCode::DELETE_TOPIC_IN_BROKER};

std::string pick_name(FuzzedDataProvider& input) {
  if (input.ConsumeIntegralInRange(0, 9) < 8) return std::string(input.PickValueInArray(kFieldNames));
  return input.ConsumeRandomLengthString(40);
}

std::string pick_value(FuzzedDataProvider& input) {
  const int choice = input.ConsumeIntegralInRange(0, 9);
  if (choice < 5) return std::string(input.PickValueInArray(kValues));
  if (choice < 7) return std::to_string(input.ConsumeIntegral<int64_t>());
  return input.ConsumeRandomLengthString(200);
}

// Every typed read of every field: a value or InvalidArgument.
void read_every_field(const RemotingCommand& command) {
  for (const auto& [name, value] : command.ext_fields) {
    (void)command.ext_string(name);
    (void)command.ext_int(name);
    (void)command.ext_int32(name);
    (void)command.ext_bool(name);
    (void)command.optional_ext_int(name);
    (void)command.optional_ext_int32(name);
    (void)command.optional_ext_bool(name);
    (void)mqlab::broker::build_subscription_filter(value);
    const mqlab::store::MessageProperties properties = mqlab::store::decode_properties(value);
    (void)mqlab::store::encode_properties(properties);
    (void)mqlab::store::decode_offset_message_id(value);
  }
}

void parse_as_each_header(RemotingCommand command) {
  for (int32_t code : {RequestCode::SEND_MESSAGE, RequestCode::SEND_MESSAGE_V2}) {
    command.code = code;
    Result<mqlab::broker::SendMessageRequestHeader> send = mqlab::broker::parse_send_message_header(command);
    if (send.ok()) (void)mqlab::store::decode_properties(send->properties);
  }
  command.code = RequestCode::PULL_MESSAGE;
  Result<mqlab::broker::PullMessageRequestHeader> pull = mqlab::broker::parse_pull_message_header(command);
  if (pull.ok() && pull->subscription) (void)mqlab::broker::build_subscription_filter(*pull->subscription);
}

void parse_body(const std::vector<uint8_t>& body) {
  const std::string_view text(reinterpret_cast<const char*>(body.data()), body.size());
  (void)mqlab::remoting::HeartbeatData::parse(text);
  (void)mqlab::remoting::RegisterBrokerBody::parse(text);
  (void)mqlab::remoting::TopicConfigSerializeWrapper::parse(text);
  (void)mqlab::remoting::TopicRouteData::parse(text);
  (void)mqlab::remoting::DataVersion::parse(text);
  (void)mqlab::remoting::decode_rocketmq_header(body);
}

void check_round_trips(const RemotingCommand& command) {
  RemotingCommand binary = command;
  binary.serialize_type = SerializeType::ROCKETMQ;
  const std::vector<uint8_t> frame = mqlab::remoting::encode_frame(binary);
  Result<RemotingCommand> decoded = mqlab::remoting::decode_frame(frame, frame.size());
  MQ_ASSERT_MSG(decoded.ok(), decoded.status().to_string());
  MQ_ASSERT(*decoded == binary);

  RemotingCommand json = command;
  json.serialize_type = SerializeType::JSON;
  const std::vector<uint8_t> json_frame = mqlab::remoting::encode_frame(json);
  Result<RemotingCommand> json_decoded = mqlab::remoting::decode_frame(json_frame, json_frame.size());
  MQ_ASSERT_MSG(json_decoded.ok(), json_decoded.status().to_string());
  MQ_ASSERT(json_decoded->code == json.code && json_decoded->body == json.body &&
            json_decoded->ext_fields.size() == json.ext_fields.size());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The raw bytes as a binary header first: the decoder's own input space.
  (void)mqlab::remoting::decode_rocketmq_header(std::span<const uint8_t>(data, size));

  FuzzedDataProvider input(data, size);
  RemotingCommand command = RemotingCommand::make_request(input.PickValueInArray(kCodes));
  command.opaque = input.ConsumeIntegral<int32_t>();
  command.version = input.ConsumeIntegralInRange<int32_t>(-32768, 32767);
  const int fields = input.ConsumeIntegralInRange(0, 16);
  for (int i = 0; i < fields; ++i) {
    std::string name = pick_name(input);
    command.ext_fields.insert_or_assign(std::move(name), pick_value(input));
  }
  command.body = input.ConsumeRemainingBytes<uint8_t>();

  read_every_field(command);
  parse_as_each_header(command);
  parse_body(command.body);
  check_round_trips(command);
  return 0;
}
