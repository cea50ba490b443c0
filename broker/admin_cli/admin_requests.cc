#include "broker/admin_cli/admin_requests.h"

#include <algorithm>
#include <memory>

#include "broker/client/countdown.h"
#include "broker/client/mix_all.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::admin_cli {

using nlohmann::json;
using remoting::RequestCode;
using remoting::ResponseCode;

namespace {

Result<json> parse_admin_body(const RemotingCommand& response, std::string_view what) {
  const std::string_view text(reinterpret_cast<const char*>(response.body.data()), response.body.size());
  return remoting::parse_json_text(text, what);
}

// The array at root[key]; InvalidArgument when root is not an object or the
// field is not an array (absent counts as empty, as fastjson omits it).
Result<json> array_field(const json& root, std::string_view key, std::string_view what) {
  if (!root.is_object()) return Status::InvalidArgument(std::string(what) + ": expected a JSON object");
  const auto found = root.find(key);
  if (found == root.end() || found->is_null()) return json::array();
  if (!found->is_array()) {
    return Status::InvalidArgument(std::string(what) + "." + std::string(key) + ": expected an array, found " +
                                   remoting::json_type_phrase(*found));
  }
  return *found;
}

Result<TopicOffset> read_topic_offset(const json& entry, const std::string& where) {
  if (!entry.is_object()) return Status::InvalidArgument(where + ": expected an object");
  TopicOffset offset;
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "brokerName", &offset.brokerName, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "queueId", &offset.queueId, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "minOffset", &offset.minOffset, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "maxOffset", &offset.maxOffset, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "lastUpdateTimestamp", &offset.lastUpdateTimestamp, where));
  return offset;
}

Result<OffsetWrapper> read_offset_wrapper(const json& entry, const std::string& where) {
  if (!entry.is_object()) return Status::InvalidArgument(where + ": expected an object");
  OffsetWrapper offset;
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "topic", &offset.topic, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "brokerName", &offset.brokerName, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "queueId", &offset.queueId, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "brokerOffset", &offset.brokerOffset, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "consumerOffset", &offset.consumerOffset, where));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(entry, "lastTimestamp", &offset.lastTimestamp, where));
  return offset;
}

}  // namespace

RemotingCommand build_get_all_topic_list() {
  return RemotingCommand::make_request(RequestCode::GET_ALL_TOPIC_LIST_FROM_NAMESERVER);
}

Result<std::vector<std::string>> parse_topic_list(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "GET_ALL_TOPIC_LIST_FROM_NAMESERVER";
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json topics, array_field(root, "topicList", kWhat));
  std::vector<std::string> out;
  for (const json& topic : topics) {
    if (!topic.is_string()) return Status::InvalidArgument(std::string(kWhat) + ".topicList: expected strings");
    out.push_back(topic.get<std::string>());
  }
  return out;
}

RemotingCommand build_query_topic_consume_by_who(const std::string& topic) {
  return RemotingCommand::make_request(RequestCode::QUERY_TOPIC_CONSUME_BY_WHO, {{"topic", topic}});
}

Result<std::vector<std::string>> parse_group_list(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "QUERY_TOPIC_CONSUME_BY_WHO";
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json groups, array_field(root, "groupList", kWhat));
  std::vector<std::string> out;
  for (const json& group : groups) {
    if (!group.is_string()) return Status::InvalidArgument(std::string(kWhat) + ".groupList: expected strings");
    out.push_back(group.get<std::string>());
  }
  return out;
}

RemotingCommand build_get_consumer_connection_list(const std::string& group) {
  return RemotingCommand::make_request(RequestCode::GET_CONSUMER_CONNECTION_LIST, {{"consumerGroup", group}});
}

Result<ConsumerConnection> parse_consumer_connection(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "GET_CONSUMER_CONNECTION_LIST";
  if (response.code == ResponseCode::CONSUMER_NOT_ONLINE) {
    return Status::NotFound(response.remark.empty() ? std::string("consumer group not online") : response.remark);
  }
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json connections, array_field(root, "connectionSet", kWhat));
  ConsumerConnection out;
  out.connections = connections.size();
  for (size_t i = 0; i < connections.size(); ++i) {
    const std::string where = std::string(kWhat) + ".connectionSet[" + std::to_string(i) + "]";
    if (!connections[i].is_object()) return Status::InvalidArgument(where + ": expected an object");
    int32_t version = 0;
    MQ_RETURN_IF_ERROR(remoting::read_json_field(connections[i], "version", &version, where));
    out.min_version = i == 0 ? version : std::min(out.min_version, version);
  }
  MQ_RETURN_IF_ERROR(remoting::read_json_field(root, "consumeType", &out.consumeType, std::string(kWhat)));
  MQ_RETURN_IF_ERROR(remoting::read_json_field(root, "messageModel", &out.messageModel, std::string(kWhat)));
  return out;
}

RemotingCommand build_get_broker_runtime_info() {
  return RemotingCommand::make_request(RequestCode::GET_BROKER_RUNTIME_INFO);
}

Result<std::map<std::string, std::string>> parse_kv_table(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "GET_BROKER_RUNTIME_INFO";
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  const auto table = root.is_object() ? root.find("table") : root.end();
  if (!root.is_object() || table == root.end() || !table->is_object()) {
    return Status::InvalidArgument(std::string(kWhat) + ": expected {\"table\":{...}}");
  }
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : table->items()) {
    // Java's KVTable holds strings; print anything else as its JSON text.
    out[key] = value.is_string() ? value.get<std::string>() : remoting::dump_json_text(value);
  }
  return out;
}

RemotingCommand build_get_topic_stats_info(const std::string& topic) {
  return RemotingCommand::make_request(RequestCode::GET_TOPIC_STATS_INFO, {{"topic", topic}});
}

Result<std::vector<TopicOffset>> parse_topic_stats(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "GET_TOPIC_STATS_INFO";
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json entries, array_field(root, "offsetTable", kWhat));
  std::vector<TopicOffset> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    MQ_ASSIGN_OR_RETURN(TopicOffset offset,
                        read_topic_offset(entries[i], std::string(kWhat) + ".offsetTable[" + std::to_string(i) + "]"));
    out.push_back(std::move(offset));
  }
  return out;
}

RemotingCommand build_get_consume_stats(const std::string& group, const std::string& topic) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::GET_CONSUME_STATS);
  request.set_ext_string("consumerGroup", group);
  if (!topic.empty()) request.set_ext_string("topic", topic);
  return request;
}

Result<std::vector<OffsetWrapper>> parse_consume_stats(const RemotingCommand& response) {
  constexpr std::string_view kWhat = "GET_CONSUME_STATS";
  MQ_RETURN_IF_ERROR(client::api::response_status(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json root, parse_admin_body(response, kWhat));
  MQ_ASSIGN_OR_RETURN(const json entries, array_field(root, "offsetTable", kWhat));
  std::vector<OffsetWrapper> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    MQ_ASSIGN_OR_RETURN(OffsetWrapper offset, read_offset_wrapper(entries[i], std::string(kWhat) + ".offsetTable[" +
                                                                                  std::to_string(i) + "]"));
    out.push_back(std::move(offset));
  }
  return out;
}

RemotingCommand build_query_message(const std::string& topic, const std::string& key, int32_t max_num,
                                    int64_t begin_ms, int64_t end_ms, bool unique_key) {
  MQ_ASSERT(max_num > 0);
  MQ_ASSERT(begin_ms <= end_ms);
  RemotingCommand request = RemotingCommand::make_request(RequestCode::QUERY_MESSAGE);
  request.set_ext_string("topic", topic);
  request.set_ext_string("key", key);
  request.set_ext_int("maxNum", max_num);
  request.set_ext_int("beginTimestamp", begin_ms);
  request.set_ext_int("endTimestamp", end_ms);
  if (unique_key) request.set_ext_bool("_UNIQUE_KEY_QUERY", true);
  return request;
}

Result<std::vector<client::MessageExt>> parse_query_message(const RemotingCommand& response) {
  if (response.code == ResponseCode::QUERY_NOT_FOUND) return std::vector<client::MessageExt>{};
  MQ_RETURN_IF_ERROR(client::api::response_status(response, "QUERY_MESSAGE"));
  client::PulledMessages decoded = client::decode_pulled_messages(response.body);
  if (!decoded.error.ok()) return decoded.error.with_context("QUERY_MESSAGE body");
  return std::move(decoded.messages);
}

RemotingCommand build_view_message_by_id(int64_t commit_log_offset) {
  MQ_ASSERT(commit_log_offset >= 0);
  RemotingCommand request = RemotingCommand::make_request(RequestCode::VIEW_MESSAGE_BY_ID);
  request.set_ext_int("offset", commit_log_offset);
  return request;
}

Result<client::MessageExt> parse_view_message(const RemotingCommand& response) {
  MQ_RETURN_IF_ERROR(client::api::response_status(response, "VIEW_MESSAGE_BY_ID"));
  client::PulledMessages decoded = client::decode_pulled_messages(response.body);
  if (!decoded.error.ok()) return decoded.error.with_context("VIEW_MESSAGE_BY_ID body");
  if (decoded.messages.size() != 1) {
    return Status::InvalidArgument("VIEW_MESSAGE_BY_ID: expected one record, found " +
                                   std::to_string(decoded.messages.size()));
  }
  return std::move(decoded.messages.front());
}

std::string select_broker_addr(const remoting::BrokerData& broker) {
  if (const auto master = broker.brokerAddrs.find(client::kMasterId); master != broker.brokerAddrs.end()) {
    return master->second;
  }
  return broker.brokerAddrs.empty() ? std::string() : broker.brokerAddrs.begin()->second;
}

void fetch_cluster_info(client::MQClientInstance& instance,
                        std::function<void(Result<client::api::ClusterInfo>)> done) {
  instance.invoke_namesrv(client::api::build_get_broker_cluster_info(), instance.api_timeout(),
                          [done = std::move(done)](Result<RemotingCommand> response) {
                            if (!response.ok()) return done(response.status().with_context("GET_BROKER_CLUSTER_INFO"));
                            done(client::api::parse_broker_cluster_info(*response));
                          });
}

void fetch_topic_route(client::MQClientInstance& instance, const std::string& topic,
                       std::function<void(Result<remoting::TopicRouteData>)> done) {
  instance.invoke_namesrv(client::api::build_get_route_info(topic), instance.api_timeout(),
                          [topic, done = std::move(done)](Result<RemotingCommand> response) {
                            if (!response.ok()) return done(response.status().with_context("GET_ROUTEINFO_BY_TOPIC"));
                            done(client::api::parse_route_info(*response, topic));
                          });
}

void fan_out(client::MQClientInstance& instance, std::vector<std::pair<std::string, RemotingCommand>> requests,
             std::function<void(Answers)> done) {
  MQ_ASSERT(done != nullptr);
  if (requests.empty()) {
    instance.env().executor().post([done = std::move(done)] { done({}); });
    return;
  }
  auto answers = std::make_shared<Answers>(requests.size(), Result<RemotingCommand>(Status::Aborted("not answered")));
  auto arrive = client::make_countdown(requests.size(), [answers, done = std::move(done)] { done(std::move(*answers)); });
  for (size_t i = 0; i < requests.size(); ++i) {
    auto& [address, request] = requests[i];
    instance.remoting().invoke(address, std::move(request), instance.api_timeout(),
                               [answers, arrive, i](Result<RemotingCommand> response) {
                                 (*answers)[i] = std::move(response);
                                 arrive();
                               });
  }
}

}  // namespace mqlab::admin_cli
