#include "broker/client/mq_client_api.h"

#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/client/mix_all.h"
#include "broker/common/assert.h"
#include "broker/remoting/ext_field_value.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"
#include "broker/remoting/written_json_header.h"

namespace mqlab::client::api {
namespace {

using Json = nlohmann::json;
using remoting::RequestCode;
using remoting::ResponseCode;
using remoting::append_written_json_header;
using remoting::ExtFieldSetter;
using remoting::ExtFieldWriter;

std::string response_body_text(const RemotingCommand& command) { return std::string(command.body.begin(), command.body.end()); }

// Parses a JSON body, quoting fastjson's bare integer keys first.
Result<Json> parse_body(const RemotingCommand& response, std::string_view what) {
  try {
    return remoting::parse_json_text(remoting::quote_unquoted_integer_keys(response_body_text(response)), what);
  } catch (const std::exception& error) {  // backstop: parse_json_text itself does not throw
    return Status::InvalidArgument(std::string(what) + ": " + error.what());
  }
}

Status read_broker_addrs(const Json& addrs, const std::string& where, std::map<int64_t, std::string>* out) {
  if (addrs.is_null()) return Status::Ok();
  if (!addrs.is_object()) return Status::InvalidArgument(where + ": expected an object");
  for (const auto& [key, value] : addrs.items()) {
    const std::optional<int64_t> id = remoting::parse_int64(key);
    if (!id || !value.is_string()) {
      return Status::InvalidArgument(where + ": entry \"" + remoting::printable_excerpt(key) +
                                     "\" is not brokerId -> address");
    }
    (*out)[*id] = value.get<std::string>();
  }
  return Status::Ok();
}

Status read_cluster_info(const Json& root, ClusterInfo* out) {
  if (!root.is_object()) return Status::InvalidArgument("ClusterInfo: expected an object");
  if (const auto table = root.find("brokerAddrTable"); table != root.end() && table->is_object()) {
    for (const auto& [name, value] : table->items()) {
      const std::string where = "ClusterInfo.brokerAddrTable." + remoting::printable_excerpt(name);
      if (!value.is_object()) return Status::InvalidArgument(where + ": expected an object");
      remoting::BrokerData& broker = out->brokerAddrTable[name];
      MQ_RETURN_IF_ERROR(remoting::read_json_field(value, "cluster", &broker.cluster, where));
      MQ_RETURN_IF_ERROR(remoting::read_json_field(value, "brokerName", &broker.brokerName, where));
      if (broker.brokerName.empty()) broker.brokerName = name;
      const auto addrs = value.find("brokerAddrs");
      if (addrs != value.end()) MQ_RETURN_IF_ERROR(read_broker_addrs(*addrs, where + ".brokerAddrs", &broker.brokerAddrs));
    }
  }
  if (const auto table = root.find("clusterAddrTable"); table != root.end() && table->is_object()) {
    for (const auto& [cluster, names] : table->items()) {
      const std::string where = "ClusterInfo.clusterAddrTable." + remoting::printable_excerpt(cluster);
      if (!names.is_array()) return Status::InvalidArgument(where + ": expected an array");
      std::set<std::string>& set = out->clusterAddrTable[cluster];
      for (const Json& name : names) {
        if (!name.is_string()) return Status::InvalidArgument(where + ": expected strings");
        set.insert(name.get<std::string>());
      }
    }
  }
  return Status::Ok();
}

// A request's JSON header (written_json_header.h): flag 0, no remark.
template <typename Sink, typename WriteExtFields>
void write_request_json_header(Sink& sink, int32_t code, int32_t opaque, WriteExtFields&& write_ext_fields) {
  remoting::write_json_header(sink, code, 0, opaque, {}, std::forward<WriteExtFields>(write_ext_fields));
}

// SEND_MESSAGE_V2's ext fields, "a".."n", in name order, to fields (an
// ExtFieldWriter or an ExtFieldSetter).
template <typename Fields>
void send_message_v2_fields(const SendMessageRequestHeader& header, Fields& fields) {
  fields.string("\"a\":", header.producerGroup);
  fields.string(",\"b\":", header.topic);
  fields.string(",\"c\":", header.defaultTopic);
  fields.number(",\"d\":", header.defaultTopicQueueNums);
  fields.number(",\"e\":", header.queueId);
  fields.number(",\"f\":", header.sysFlag);
  fields.number(",\"g\":", header.bornTimestamp);
  fields.number(",\"h\":", header.flag);
  fields.string(",\"i\":", header.properties);
  fields.number(",\"j\":", header.reconsumeTimes);
  fields.boolean(",\"k\":", header.unitMode);
  if (header.maxReconsumeTimes) fields.number(",\"l\":", *header.maxReconsumeTimes);
  fields.boolean(",\"m\":", header.batch);
  if (!header.brokerName.empty()) fields.string(",\"n\":", header.brokerName);
}

// PULL_MESSAGE's, in name order; the subscription only with its flag.
template <typename Fields>
void pull_message_fields(const PullMessageRequestHeader& header, Fields& fields) {
  fields.number("\"commitOffset\":", header.commitOffset);
  fields.string(",\"consumerGroup\":", header.consumerGroup);
  fields.string(",\"expressionType\":", header.expressionType);
  fields.number(",\"maxMsgNums\":", header.maxMsgNums);
  fields.number(",\"queueId\":", header.queueId);
  fields.number(",\"queueOffset\":", header.queueOffset);
  fields.number(",\"subVersion\":", header.subVersion);
  if ((header.sysFlag & kPullFlagSubscription) != 0) fields.string(",\"subscription\":", header.subscription);
  fields.number(",\"suspendTimeoutMillis\":", header.suspendTimeoutMillis);
  fields.number(",\"sysFlag\":", header.sysFlag);
  fields.string(",\"topic\":", header.topic);
}

template <typename Sink>
void write_send_message_v2_json_header(const SendMessageRequestHeader& header, int32_t opaque, Sink& sink) {
  write_request_json_header(sink, RequestCode::SEND_MESSAGE_V2, opaque,
                            [&header](ExtFieldWriter<Sink>& fields) { send_message_v2_fields(header, fields); });
}

template <typename Sink>
void write_pull_message_json_header(const PullMessageRequestHeader& header, int32_t opaque, Sink& sink) {
  write_request_json_header(sink, RequestCode::PULL_MESSAGE, opaque,
                            [&header](ExtFieldWriter<Sink>& fields) { pull_message_fields(header, fields); });
}

}  // namespace

Status response_status(const RemotingCommand& response, std::string_view what) {
  if (response.code == ResponseCode::SUCCESS) return Status::Ok();
  std::string text = std::string(what) + ": " + remoting::describe_response_code(response.code);
  if (!response.remark.empty()) text += ": " + remoting::printable_excerpt(response.remark, 256);
  const bool not_found = response.code == ResponseCode::TOPIC_NOT_EXIST || response.code == ResponseCode::QUERY_NOT_FOUND;
  return not_found ? Status::NotFound(std::move(text)) : Status::Unavailable(std::move(text));
}

// --- NameServer ---------------------------------------------------------------------

RemotingCommand build_get_route_info(const std::string& topic) {
  return RemotingCommand::make_request(RequestCode::GET_ROUTEINFO_BY_TOPIC, {{"topic", topic}});
}

Result<remoting::TopicRouteData> parse_route_info(const RemotingCommand& response, const std::string& topic) {
  MQ_RETURN_IF_ERROR(response_status(response, "GET_ROUTEINFO_BY_TOPIC " + topic));
  Result<remoting::TopicRouteData> route = remoting::TopicRouteData::parse(response_body_text(response));
  if (!route.ok()) return route.status().with_context("route of topic " + topic);
  return route;
}

std::string ClusterInfo::to_json() const {
  Json root = Json::object();
  Json& brokers = root["brokerAddrTable"] = Json::object();
  for (const auto& [name, broker] : brokerAddrTable) {
    Json addrs = Json::object();
    for (const auto& [id, address] : broker.brokerAddrs) addrs[std::to_string(id)] = address;
    brokers[name] = Json{{"brokerAddrs", addrs}, {"brokerName", broker.brokerName}, {"cluster", broker.cluster}};
  }
  Json& clusters = root["clusterAddrTable"] = Json::object();
  for (const auto& [cluster, names] : clusterAddrTable) clusters[cluster] = Json(names);
  return remoting::dump_json_text(root);
}

Result<ClusterInfo> ClusterInfo::parse(std::string_view text) {
  try {
    MQ_ASSIGN_OR_RETURN(Json root, remoting::parse_json_text(remoting::quote_unquoted_integer_keys(text), "ClusterInfo"));
    ClusterInfo info;
    MQ_RETURN_IF_ERROR(read_cluster_info(root, &info));
    return info;
  } catch (const std::exception& error) {
    return Status::InvalidArgument(std::string("ClusterInfo: ") + error.what());
  }
}

RemotingCommand build_get_broker_cluster_info() {
  return RemotingCommand::make_request(RequestCode::GET_BROKER_CLUSTER_INFO);
}

Result<ClusterInfo> parse_broker_cluster_info(const RemotingCommand& response) {
  MQ_RETURN_IF_ERROR(response_status(response, "GET_BROKER_CLUSTER_INFO"));
  return ClusterInfo::parse(response_body_text(response));
}

// --- producing ----------------------------------------------------------------------

RemotingCommand build_send_message_v2(const SendMessageRequestHeader& header, std::vector<uint8_t> body) {
  RemotingCommand request = build_send_message_v2_header(header);
  request.body = std::move(body);
  return request;
}

RemotingCommand build_send_message_v2_header(const SendMessageRequestHeader& header) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::SEND_MESSAGE_V2);
  ExtFieldSetter fields{request};
  send_message_v2_fields(header, fields);
  return request;
}

void append_send_message_v2_json_header(const SendMessageRequestHeader& header, int32_t opaque,
                                        std::vector<uint8_t>& out) {
  // 4.8K instructions a header appended piece by piece, against 5.9K for
  // building the command and encoding it; 3.1K written through a pointer.
  const std::string_view strings[] = {header.producerGroup, header.topic, header.defaultTopic, header.properties,
                                      header.brokerName};
  // The rest: 10 numbers (code, d-h, j, l, opaque, version) with their
  // quotes, and the fixed text (keys, punctuation, "false" twice, "JAVA",
  // "JSON"), 188 bytes counted.
  constexpr size_t kFixedBytes = 256 + 10 * (kInt64Bytes + 2);
  append_written_json_header(strings, kFixedBytes, out,
                             [&](auto& sink) { write_send_message_v2_json_header(header, opaque, sink); });
}

SendMessageResponseHeader read_send_message_response(const RemotingCommand& response) {
  // One walk over the fields rather than a search per field: a producer
  // reads one of these per message.
  const std::string_view* msg_id = nullptr;
  const std::string_view* queue_id = nullptr;
  const std::string_view* queue_offset = nullptr;
  for (const auto& [name, value] : response.ext_fields) {
    if (remoting::same_ext_name(name, "msgId")) msg_id = &value;
    if (remoting::same_ext_name(name, "queueId")) queue_id = &value;
    if (remoting::same_ext_name(name, "queueOffset")) queue_offset = &value;
  }
  SendMessageResponseHeader header;
  if (msg_id != nullptr) header.msgId = *msg_id;
  if (Result<std::optional<int32_t>> id = remoting::read_optional_ext_int32("queueId", queue_id);
      id.ok() && id->has_value()) {
    header.queueId = **id;
  }
  if (Result<std::optional<int64_t>> offset = remoting::read_optional_ext_int("queueOffset", queue_offset);
      offset.ok() && offset->has_value()) {
    header.queueOffset = **offset;
  }
  return header;
}

// --- consuming ----------------------------------------------------------------------

RemotingCommand build_pull_message(const PullMessageRequestHeader& header) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::PULL_MESSAGE);
  ExtFieldSetter fields{request};
  pull_message_fields(header, fields);
  return request;
}

void append_pull_message_json_header(const PullMessageRequestHeader& header, int32_t opaque,
                                     std::vector<uint8_t>& out) {
  const std::string_view strings[] = {header.consumerGroup, header.expressionType, header.subscription, header.topic};
  // The rest: 10 numbers (code, 7 fields, opaque, version) with their
  // quotes, and the fixed text (keys, punctuation, "JAVA", "JSON"), 269
  // bytes counted.
  constexpr size_t kFixedBytes = 320 + 10 * (kInt64Bytes + 2);
  append_written_json_header(strings, kFixedBytes, out,
                             [&](auto& sink) { write_pull_message_json_header(header, opaque, sink); });
}

std::string_view pull_status_name(PullStatus status) {
  switch (status) {
    case PullStatus::FOUND: return "FOUND";
    case PullStatus::NO_NEW_MSG: return "NO_NEW_MSG";
    case PullStatus::NO_MATCHED_MSG: return "NO_MATCHED_MSG";
    case PullStatus::OFFSET_ILLEGAL: return "OFFSET_ILLEGAL";
  }
  MQ_UNREACHABLE("PullStatus " + std::to_string(static_cast<int>(status)));
}

Result<PullResponse> parse_pull_message(RemotingCommand&& response) {
  PullResponse out;
  switch (response.code) {
    case ResponseCode::SUCCESS: out.status = PullStatus::FOUND; break;
    case ResponseCode::PULL_NOT_FOUND: out.status = PullStatus::NO_NEW_MSG; break;
    case ResponseCode::PULL_RETRY_IMMEDIATELY: out.status = PullStatus::NO_MATCHED_MSG; break;
    case ResponseCode::PULL_OFFSET_MOVED: out.status = PullStatus::OFFSET_ILLEGAL; break;
    default: return response_status(response, "PULL_MESSAGE");
  }
  // One walk over the fields rather than a search per field: a consumer
  // reads one of these per pull.
  const std::string_view* next_begin_offset = nullptr;
  const std::string_view* min_offset = nullptr;
  const std::string_view* max_offset = nullptr;
  const std::string_view* suggest_which_broker_id = nullptr;
  for (const auto& [name, value] : response.ext_fields) {
    if (remoting::same_ext_name(name, "nextBeginOffset")) next_begin_offset = &value;
    if (remoting::same_ext_name(name, "minOffset")) min_offset = &value;
    if (remoting::same_ext_name(name, "maxOffset")) max_offset = &value;
    if (remoting::same_ext_name(name, "suggestWhichBrokerId")) suggest_which_broker_id = &value;
  }
  MQ_ASSIGN_OR_RETURN(out.nextBeginOffset, remoting::read_ext_int("nextBeginOffset", next_begin_offset));
  MQ_ASSIGN_OR_RETURN(out.minOffset, remoting::read_ext_int("minOffset", min_offset));
  MQ_ASSIGN_OR_RETURN(out.maxOffset, remoting::read_ext_int("maxOffset", max_offset));
  MQ_ASSIGN_OR_RETURN(out.suggestWhichBrokerId,
                      remoting::read_ext_int("suggestWhichBrokerId", suggest_which_broker_id));
  out.body = std::move(response.body);
  return out;
}

namespace {
RemotingCommand queue_request(int32_t code, const std::string& topic, int32_t queue_id) {
  RemotingCommand request = RemotingCommand::make_request(code);
  request.set_ext_string("topic", topic);
  request.set_ext_int("queueId", queue_id);
  return request;
}
}  // namespace

RemotingCommand build_query_consumer_offset(const std::string& group, const std::string& topic, int32_t queue_id) {
  RemotingCommand request = queue_request(RequestCode::QUERY_CONSUMER_OFFSET, topic, queue_id);
  request.set_ext_string("consumerGroup", group);
  return request;
}

RemotingCommand build_update_consumer_offset(const std::string& group, const std::string& topic, int32_t queue_id,
                                             int64_t commit_offset) {
  RemotingCommand request = queue_request(RequestCode::UPDATE_CONSUMER_OFFSET, topic, queue_id);
  request.set_ext_string("consumerGroup", group);
  request.set_ext_int("commitOffset", commit_offset);
  return request;
}

RemotingCommand build_get_max_offset(const std::string& topic, int32_t queue_id) {
  return queue_request(RequestCode::GET_MAX_OFFSET, topic, queue_id);
}

RemotingCommand build_get_min_offset(const std::string& topic, int32_t queue_id) {
  return queue_request(RequestCode::GET_MIN_OFFSET, topic, queue_id);
}

RemotingCommand build_search_offset_by_timestamp(const std::string& topic, int32_t queue_id, int64_t timestamp_ms) {
  RemotingCommand request = queue_request(RequestCode::SEARCH_OFFSET_BY_TIMESTAMP, topic, queue_id);
  request.set_ext_int("timestamp", timestamp_ms);
  return request;
}

Result<int64_t> parse_offset(const RemotingCommand& response, std::string_view what) {
  MQ_RETURN_IF_ERROR(response_status(response, what));
  Result<int64_t> offset = response.ext_int("offset");
  if (!offset.ok()) return offset.status().with_context(what);
  return offset;
}

RemotingCommand build_get_consumer_list_by_group(const std::string& group) {
  return RemotingCommand::make_request(RequestCode::GET_CONSUMER_LIST_BY_GROUP, {{"consumerGroup", group}});
}

Result<std::vector<std::string>> parse_consumer_list(const RemotingCommand& response) {
  MQ_RETURN_IF_ERROR(response_status(response, "GET_CONSUMER_LIST_BY_GROUP"));
  MQ_ASSIGN_OR_RETURN(Json root, parse_body(response, "GetConsumerListByGroupResponseBody"));
  const auto list = root.is_object() ? root.find("consumerIdList") : root.end();
  if (!root.is_object() || list == root.end() || !list->is_array()) {
    return Status::InvalidArgument("GetConsumerListByGroupResponseBody: no consumerIdList array");
  }
  std::vector<std::string> ids;
  for (const Json& id : *list) {
    if (!id.is_string()) return Status::InvalidArgument("GetConsumerListByGroupResponseBody: a non-string id");
    ids.push_back(id.get<std::string>());
  }
  return ids;
}

std::string consumer_list_body(const std::vector<std::string>& consumer_ids) {
  return remoting::dump_json_text(Json{{"consumerIdList", consumer_ids}});
}

RemotingCommand build_consumer_send_msg_back(const ConsumerSendMsgBackRequestHeader& header) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::CONSUMER_SEND_MSG_BACK);
  request.set_ext_int("offset", header.offset);
  request.set_ext_string("group", header.group);
  request.set_ext_int("delayLevel", header.delayLevel);
  request.set_ext_string("originMsgId", header.originMsgId);
  request.set_ext_string("originTopic", header.originTopic);
  request.set_ext_bool("unitMode", header.unitMode);
  request.set_ext_int("maxReconsumeTimes", header.maxReconsumeTimes);
  return request;
}

// --- membership ---------------------------------------------------------------------

RemotingCommand build_heartbeat(const remoting::HeartbeatData& heartbeat) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::HEART_BEAT);
  const std::string json = heartbeat.to_json();
  request.body.assign(json.begin(), json.end());
  return request;
}

RemotingCommand build_unregister_client(const std::string& client_id, const std::string& producer_group,
                                        const std::string& consumer_group) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::UNREGISTER_CLIENT, {{"clientID", client_id}});
  if (!producer_group.empty()) request.set_ext_string("producerGroup", producer_group);
  if (!consumer_group.empty()) request.set_ext_string("consumerGroup", consumer_group);
  return request;
}

// --- administration -----------------------------------------------------------------

RemotingCommand build_update_and_create_topic(const remoting::TopicConfig& config) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::UPDATE_AND_CREATE_TOPIC);
  request.set_ext_string("topic", config.topicName);
  request.set_ext_string("defaultTopic", std::string(kAutoCreateTopicKey));
  request.set_ext_int("readQueueNums", config.readQueueNums);
  request.set_ext_int("writeQueueNums", config.writeQueueNums);
  request.set_ext_int("perm", config.perm);
  request.set_ext_string("topicFilterType", config.topicFilterType);
  request.set_ext_int("topicSysFlag", config.topicSysFlag);
  request.set_ext_bool("order", config.order);
  return request;
}

}  // namespace mqlab::client::api
