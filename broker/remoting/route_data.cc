#include "broker/remoting/route_data.h"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {
namespace {

using Json = nlohmann::json;

bool is_route_digit(char c) { return c >= '0' && c <= '9'; }
bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The end of an optionally signed digit run starting at `at`, or `at` when
// there is none.
size_t integer_token_end(std::string_view text, size_t at) {
  size_t end = at;
  if (end < text.size() && text[end] == '-') ++end;
  const size_t digits = end;
  while (end < text.size() && is_route_digit(text[end])) ++end;
  return end == digits ? at : end;
}

// Where an unquoted key ends, when text[at..] is an integer followed by `:`.
std::optional<size_t> bare_integer_key_end(std::string_view text, size_t at) {
  const size_t end = integer_token_end(text, at);
  if (end == at) return std::nullopt;
  size_t after = end;
  while (after < text.size() && is_json_space(text[after])) ++after;
  if (after == text.size() || text[after] != ':') return std::nullopt;
  return end;
}

std::string member_path(std::string_view where, std::string_view key) {
  std::string path(where);
  path += '.';
  path += key;
  return path;
}

std::string element_path(std::string_view where, std::string_view key, size_t index) {
  return member_path(where, key) + "[" + std::to_string(index) + "]";
}

Status expect(bool ok, const std::string& where, std::string_view expected, const Json& found) {
  if (ok) return Status::Ok();
  return Status::InvalidArgument(where + ": expected " + std::string(expected) + ", found " +
                                 json_type_phrase(found));
}

// Calls read(element, path) for each element of object[key]; absent or null
// is an empty array.
template <typename Read>
Status for_each_element(const Json& object, std::string_view key, std::string_view where, Read read) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  MQ_RETURN_IF_ERROR(expect(it->is_array(), member_path(where, key), "an array", *it));
  for (size_t i = 0; i < it->size(); ++i) MQ_RETURN_IF_ERROR(read((*it)[i], element_path(where, key, i)));
  return Status::Ok();
}

// Calls read(member_key, value, path) for each member of object[key]; absent
// or null is an empty object.
template <typename Read>
Status for_each_member(const Json& object, std::string_view key, std::string_view where, Read read) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  const std::string path = member_path(where, key);
  MQ_RETURN_IF_ERROR(expect(it->is_object(), path, "an object", *it));
  for (const auto& [name, value] : it->items()) {
    MQ_RETURN_IF_ERROR(read(name, value, path + "[\"" + printable_excerpt(name) + "\"]"));
  }
  return Status::Ok();
}

Status read_string_value(const Json& value, const std::string& where, std::string* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_string(), where, "a string", value));
  *out = value.get<std::string>();
  return Status::Ok();
}

// Parses a document and hands its root object to read. The guard is a
// backstop: the readers only call nlohmann on values whose type they checked.
template <typename T, typename Read>
Result<T> parse_document(std::string_view text, std::string_view what, Read read) {
  try {
    MQ_ASSIGN_OR_RETURN(Json root, parse_json_text(quote_unquoted_integer_keys(text), what));
    MQ_RETURN_IF_ERROR(expect(root.is_object(), std::string(what), "an object", root));
    T value;
    MQ_RETURN_IF_ERROR(read(root, std::string(what), &value));
    return value;
  } catch (const std::exception& error) {
    return Status::InvalidArgument(std::string(what) + ": " + error.what());
  }
}

// --- TopicRouteData ----------------------------------------------------------------

Status read_queue_data(const Json& value, const std::string& where, QueueData* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "brokerName", &out->brokerName, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "readQueueNums", &out->readQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "writeQueueNums", &out->writeQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "perm", &out->perm, where));
  const auto sys_flag = value.find("topicSysFlag");
  const bool has_sys_flag = sys_flag != value.end() && !sys_flag->is_null();
  return read_json_field(value, has_sys_flag ? "topicSysFlag" : "topicSynFlag", &out->topicSysFlag, where);
}

Status read_broker_data(const Json& value, const std::string& where, BrokerData* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "cluster", &out->cluster, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "brokerName", &out->brokerName, where));
  return for_each_member(value, "brokerAddrs", where,
                         [&](const std::string& key, const Json& addr, const std::string& path) -> Status {
                           const std::optional<int64_t> broker_id = parse_int64(key);
                           if (!broker_id) {
                             return Status::InvalidArgument(path + ": the key is not a brokerId (an integer)");
                           }
                           return read_string_value(addr, path, &out->brokerAddrs[*broker_id]);
                         });
}

Status read_topic_route_data(const Json& root, const std::string& where, TopicRouteData* out) {
  MQ_RETURN_IF_ERROR(read_json_field(root, "orderTopicConf", &out->orderTopicConf, where));
  MQ_RETURN_IF_ERROR(for_each_element(root, "queueDatas", where, [&](const Json& value, const std::string& path) {
    return read_queue_data(value, path, &out->queueDatas.emplace_back());
  }));
  MQ_RETURN_IF_ERROR(for_each_element(root, "brokerDatas", where, [&](const Json& value, const std::string& path) {
    return read_broker_data(value, path, &out->brokerDatas.emplace_back());
  }));
  return for_each_member(root, "filterServerTable", where,
                         [&](const std::string& addr, const Json& servers, const std::string& path) -> Status {
                           std::vector<std::string>& list = out->filterServerTable[addr];
                           MQ_RETURN_IF_ERROR(expect(servers.is_array(), path, "an array", servers));
                           for (size_t i = 0; i < servers.size(); ++i) {
                             const std::string item = path + "[" + std::to_string(i) + "]";
                             MQ_RETURN_IF_ERROR(read_string_value(servers[i], item, &list.emplace_back()));
                           }
                           return Status::Ok();
                         });
}

Json queue_data_json(const QueueData& queue) {
  return Json{{"brokerName", queue.brokerName},       {"perm", queue.perm},
              {"readQueueNums", queue.readQueueNums}, {"topicSysFlag", queue.topicSysFlag},
              {"writeQueueNums", queue.writeQueueNums}};
}

// Written by hand rather than through nlohmann: the fastjson form is not
// JSON, and both forms must differ in nothing but those quotes.
std::string broker_data_text(const BrokerData& broker, RouteDataJsonForm form) {
  std::string text = "{\"brokerAddrs\":{";
  bool first = true;
  for (const auto& [broker_id, addr] : broker.brokerAddrs) {
    if (!first) text += ',';
    first = false;
    const std::string key = std::to_string(broker_id);
    text += form == RouteDataJsonForm::kStandardJson ? "\"" + key + "\"" : key;
    text += ':';
    text += dump_json_text(Json(addr));
  }
  text += "},\"brokerName\":" + dump_json_text(Json(broker.brokerName));
  text += ",\"cluster\":" + dump_json_text(Json(broker.cluster)) + "}";
  return text;
}

// --- HeartbeatData -------------------------------------------------------------------

Status read_subscription_data(const Json& value, const std::string& where, SubscriptionData* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topic", &out->topic, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "subString", &out->subString, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "classFilterMode", &out->classFilterMode, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "subVersion", &out->subVersion, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "expressionType", &out->expressionType, where));
  MQ_RETURN_IF_ERROR(for_each_element(value, "tagsSet", where, [&](const Json& tag, const std::string& path) {
    std::string text;
    MQ_RETURN_IF_ERROR(read_string_value(tag, path, &text));
    out->tagsSet.insert(std::move(text));
    return Status::Ok();
  }));
  return for_each_element(value, "codeSet", where, [&](const Json& code, const std::string& path) {
    if (code.is_null()) return Status::Ok();  // a null in a Java HashSet<Integer>: nothing to keep
    const std::optional<int32_t> number = json_int32(code);
    MQ_RETURN_IF_ERROR(expect(number.has_value(), path, "an int32", code));
    out->codeSet.insert(*number);
    return Status::Ok();
  });
}

Status read_consumer_data(const Json& value, const std::string& where, ConsumerData* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "groupName", &out->groupName, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "consumeType", &out->consumeType, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "messageModel", &out->messageModel, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "consumeFromWhere", &out->consumeFromWhere, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "unitMode", &out->unitMode, where));
  return for_each_element(value, "subscriptionDataSet", where, [&](const Json& item, const std::string& path) {
    return read_subscription_data(item, path, &out->subscriptionDataSet.emplace_back());
  });
}

Status read_heartbeat_data(const Json& root, const std::string& where, HeartbeatData* out) {
  MQ_RETURN_IF_ERROR(read_json_field(root, "clientID", &out->clientID, where));
  MQ_RETURN_IF_ERROR(for_each_element(root, "producerDataSet", where, [&](const Json& item, const std::string& path) {
    MQ_RETURN_IF_ERROR(expect(item.is_object(), path, "an object", item));
    return read_json_field(item, "groupName", &out->producerDataSet.emplace_back().groupName, path);
  }));
  return for_each_element(root, "consumerDataSet", where, [&](const Json& item, const std::string& path) {
    return read_consumer_data(item, path, &out->consumerDataSet.emplace_back());
  });
}

Json subscription_data_json(const SubscriptionData& subscription) {
  return Json{{"classFilterMode", subscription.classFilterMode},
              {"codeSet", subscription.codeSet},
              {"expressionType", subscription.expressionType},
              {"subString", subscription.subString},
              {"subVersion", subscription.subVersion},
              {"tagsSet", subscription.tagsSet},
              {"topic", subscription.topic}};
}

Json consumer_data_json(const ConsumerData& consumer) {
  Json subscriptions = Json::array();
  for (const SubscriptionData& subscription : consumer.subscriptionDataSet) {
    subscriptions.push_back(subscription_data_json(subscription));
  }
  return Json{{"consumeFromWhere", consumer.consumeFromWhere},
              {"consumeType", consumer.consumeType},
              {"groupName", consumer.groupName},
              {"messageModel", consumer.messageModel},
              {"subscriptionDataSet", std::move(subscriptions)},
              {"unitMode", consumer.unitMode}};
}

// --- RegisterBrokerBody --------------------------------------------------------------

Status read_data_version(const Json& value, const std::string& where, DataVersion* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "timestamp", &out->timestamp, where));
  return read_json_field(value, "counter", &out->counter, where);
}

Status read_topic_config(const Json& value, const std::string& where, TopicConfig* out) {
  MQ_RETURN_IF_ERROR(expect(value.is_object(), where, "an object", value));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicName", &out->topicName, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "readQueueNums", &out->readQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "writeQueueNums", &out->writeQueueNums, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "perm", &out->perm, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicFilterType", &out->topicFilterType, where));
  MQ_RETURN_IF_ERROR(read_json_field(value, "topicSysFlag", &out->topicSysFlag, where));
  return read_json_field(value, "order", &out->order, where);
}

Status read_wrapper(const Json& root, const std::string& where, TopicConfigSerializeWrapper* out) {
  if (const auto it = root.find("dataVersion"); it != root.end() && !it->is_null()) {
    MQ_RETURN_IF_ERROR(read_data_version(*it, member_path(where, "dataVersion"), &out->dataVersion));
  }
  return for_each_member(root, "topicConfigTable", where,
                         [&](const std::string& topic, const Json& value, const std::string& path) -> Status {
                           TopicConfig config;
                           MQ_RETURN_IF_ERROR(read_topic_config(value, path, &config));
                           if (config.topicName.empty()) config.topicName = topic;
                           out->topicConfigTable.insert_or_assign(topic, std::move(config));
                           return Status::Ok();
                         });
}

Status read_register_broker_body(const Json& root, const std::string& where, RegisterBrokerBody* out) {
  if (const auto it = root.find("topicConfigSerializeWrapper"); it != root.end() && !it->is_null()) {
    const std::string path = member_path(where, "topicConfigSerializeWrapper");
    MQ_RETURN_IF_ERROR(expect(it->is_object(), path, "an object", *it));
    MQ_RETURN_IF_ERROR(read_wrapper(*it, path, &out->topicConfigSerializeWrapper));
  }
  return for_each_element(root, "filterServerList", where, [&](const Json& item, const std::string& path) {
    return read_string_value(item, path, &out->filterServerList.emplace_back());
  });
}

Json data_version_json(const DataVersion& version) {
  return Json{{"counter", version.counter}, {"timestamp", version.timestamp}};
}

Json topic_config_json(const TopicConfig& config) {
  return Json{{"order", config.order},
              {"perm", config.perm},
              {"readQueueNums", config.readQueueNums},
              {"topicFilterType", config.topicFilterType},
              {"topicName", config.topicName},
              {"topicSysFlag", config.topicSysFlag},
              {"writeQueueNums", config.writeQueueNums}};
}

Json wrapper_json(const TopicConfigSerializeWrapper& wrapper) {
  Json table = Json::object();
  for (const auto& [topic, config] : wrapper.topicConfigTable) table[topic] = topic_config_json(config);
  return Json{{"dataVersion", data_version_json(wrapper.dataVersion)}, {"topicConfigTable", std::move(table)}};
}

}  // namespace

std::string quote_unquoted_integer_keys(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  bool escaped = false;
  char last_outside = '\0';  // the last non-space character outside string literals
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      out += c;
      ++i;
      continue;
    }
    if (last_outside == '{' || last_outside == ',') {
      if (const std::optional<size_t> end = bare_integer_key_end(text, i)) {
        out += '"';
        out.append(text.substr(i, *end - i));
        out += '"';
        last_outside = '"';
        i = *end;
        continue;
      }
    }
    if (c == '"') in_string = true;
    if (!is_json_space(c)) last_outside = c;
    out += c;
    ++i;
  }
  return out;
}

RouteDataJsonForm route_data_json_form_for(int32_t request_version, bool accept_standard_json_only) {
  constexpr int32_t kVersionV4_9_4 = 401;  // MQVersion.Version.V4_9_4.ordinal()
  if (request_version >= kVersionV4_9_4 || accept_standard_json_only) return RouteDataJsonForm::kStandardJson;
  return RouteDataJsonForm::kFastjsonIntegerKeys;
}

std::string TopicRouteData::to_json(RouteDataJsonForm form) const {
  std::string text = "{\"brokerDatas\":[";
  for (size_t i = 0; i < brokerDatas.size(); ++i) {
    if (i > 0) text += ',';
    text += broker_data_text(brokerDatas[i], form);
  }
  Json filter_servers = Json::object();
  for (const auto& [addr, servers] : filterServerTable) filter_servers[addr] = servers;
  text += "],\"filterServerTable\":" + dump_json_text(filter_servers);
  if (!orderTopicConf.empty()) text += ",\"orderTopicConf\":" + dump_json_text(Json(orderTopicConf));
  text += ",\"queueDatas\":[";
  for (size_t i = 0; i < queueDatas.size(); ++i) {
    if (i > 0) text += ',';
    text += dump_json_text(queue_data_json(queueDatas[i]));
  }
  text += "]}";
  return text;
}

Result<TopicRouteData> TopicRouteData::parse(std::string_view text) {
  return parse_document<TopicRouteData>(text, "TopicRouteData", read_topic_route_data);
}

std::string HeartbeatData::to_json() const {
  Json producers = Json::array();
  for (const ProducerData& producer : producerDataSet) producers.push_back(Json{{"groupName", producer.groupName}});
  Json consumers = Json::array();
  for (const ConsumerData& consumer : consumerDataSet) consumers.push_back(consumer_data_json(consumer));
  return dump_json_text(Json{{"clientID", clientID},
                             {"consumerDataSet", std::move(consumers)},
                             {"producerDataSet", std::move(producers)}});
}

Result<HeartbeatData> HeartbeatData::parse(std::string_view text) {
  return parse_document<HeartbeatData>(text, "HeartbeatData", read_heartbeat_data);
}

std::string DataVersion::to_json() const { return dump_json_text(data_version_json(*this)); }

Result<DataVersion> DataVersion::parse(std::string_view text) {
  return parse_document<DataVersion>(text, "DataVersion", read_data_version);
}

std::string TopicConfigSerializeWrapper::to_json() const { return dump_json_text(wrapper_json(*this)); }

Result<TopicConfigSerializeWrapper> TopicConfigSerializeWrapper::parse(std::string_view text) {
  return parse_document<TopicConfigSerializeWrapper>(text, "TopicConfigSerializeWrapper", read_wrapper);
}

std::string RegisterBrokerBody::to_json() const {
  return dump_json_text(Json{{"filterServerList", filterServerList},
                             {"topicConfigSerializeWrapper", wrapper_json(topicConfigSerializeWrapper)}});
}

Result<RegisterBrokerBody> RegisterBrokerBody::parse(std::string_view text) {
  return parse_document<RegisterBrokerBody>(text, "RegisterBrokerBody", read_register_broker_body);
}

}  // namespace mqlab::remoting
