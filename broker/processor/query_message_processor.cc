#include "broker/processor/query_message_processor.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "broker/processor/broker_controller.h"
#include "broker/remoting/response_code.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

constexpr int32_t kDefaultQueryMaxNum = 32;  // MessageStoreConfig.defaultQueryMaxNum
constexpr int32_t kMaxMsgsNumBatch = 64;     // MessageStoreConfig.maxMsgsNumBatch

struct QueryMessageRequestHeader {
  std::string topic;
  std::string key;
  int32_t maxNum = 0;
  int64_t beginTimestamp = 0;
  int64_t endTimestamp = 0;
};

Result<QueryMessageRequestHeader> parse_query_message_header(const RemotingCommand& request) {
  QueryMessageRequestHeader header;
  MQ_ASSIGN_OR_RETURN(header.topic, request.ext_string("topic"));
  MQ_ASSIGN_OR_RETURN(header.key, request.ext_string("key"));
  MQ_ASSIGN_OR_RETURN(header.maxNum, request.ext_int32("maxNum"));
  MQ_ASSIGN_OR_RETURN(header.beginTimestamp, request.ext_int("beginTimestamp"));
  MQ_ASSIGN_OR_RETURN(header.endTimestamp, request.ext_int("endTimestamp"));
  MQ_ASSIGN_OR_RETURN(std::optional<bool> unique, request.optional_ext_bool("_UNIQUE_KEY_QUERY"));
  if (unique.value_or(false)) header.maxNum = kDefaultQueryMaxNum;
  return header;
}

}  // namespace

void QueryMessageProcessor::query_message(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<QueryMessageRequestHeader> parsed = parse_query_message_header(request);
  if (!parsed.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, parsed.status().message());
  const QueryMessageRequestHeader& header = *parsed;
  const int32_t max_num = std::clamp(header.maxNum, 1, kMaxMsgsNumBatch);
  store::MessageStore& store = controller_.message_store();
  Result<std::vector<std::vector<uint8_t>>> records =
      store.query_message(header.topic, header.key, max_num, header.beginTimestamp, header.endTimestamp);
  if (!records.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, records.status().message());
  int64_t newest_ms = 0;
  std::vector<uint8_t> body;
  for (const std::vector<uint8_t>& record : *records) {
    Result<store::DecodedRecord> decoded = store::decode_record(record, store::DecodeOptions{.check_crc = false});
    if (decoded.ok()) newest_ms = std::max(newest_ms, decoded->message.store_timestamp_ms);
    body.insert(body.end(), record.begin(), record.end());
  }
  RemotingCommand response =
      request.make_response(body.empty() ? ResponseCode::QUERY_NOT_FOUND : ResponseCode::SUCCESS,
                            body.empty() ? "can not find message, maybe time range not correct" : "");
  response.set_ext_int("indexLastUpdateTimestamp", newest_ms);
  response.set_ext_int("indexLastUpdatePhyoffset", store.dispatched_phy_offset().value());
  response.body = std::move(body);
  channel.reply(std::move(response));
}

void QueryMessageProcessor::view_message_by_id(const RemotingCommand& request, remoting::ResponseChannel channel) {
  Result<int64_t> offset = request.ext_int("offset");
  if (!offset.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, offset.status().message());
  Result<std::vector<uint8_t>> record = controller_.message_store().look_message_by_offset(PhyOffset(*offset));
  const bool is_message = record.ok() && [&] {
    Result<store::DecodedRecord> decoded = store::decode_record(*record);
    return decoded.ok() && decoded->kind == store::RecordKind::kMessage;
  }();
  if (!is_message) {
    return channel.reply(ResponseCode::SYSTEM_ERROR, "can not find message by the offset, " + std::to_string(*offset));
  }
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  response.body = std::move(record).value();
  MQ_ASSERT(!response.body.empty());
  channel.reply(std::move(response));
}

}  // namespace mqlab::broker
