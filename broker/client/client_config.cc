#include "broker/client/client_config.h"

#include <optional>

#include "broker/common/assert.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::client {

const std::array<ClientConfig::IntervalKey, 5>& ClientConfig::interval_keys() {
  static const std::array<IntervalKey, 5> keys = {{
      {"pollNameServerInterval", &ClientConfig::pollNameServerInterval},
      {"heartbeatBrokerInterval", &ClientConfig::heartbeatBrokerInterval},
      {"persistConsumerOffsetInterval", &ClientConfig::persistConsumerOffsetInterval},
      {"rebalanceInterval", &ClientConfig::rebalanceInterval},
      {"mqClientApiTimeout", &ClientConfig::mqClientApiTimeout},
  }};
  return keys;
}

std::vector<std::string_view> ClientConfig::settable_keys() {
  std::vector<std::string_view> names;
  for (const IntervalKey& key : interval_keys()) names.push_back(key.name);
  names.push_back("slaveReadOnUnreachableMaster");
  names.push_back("serializeType");
  return names;
}

Status ClientConfig::set(std::string_view key, std::string_view value) {
  const std::string quoted = "'" + std::string(value) + "'";
  for (const IntervalKey& interval : interval_keys()) {
    if (interval.name != key) continue;
    const std::optional<int64_t> ms = remoting::parse_int64(value);
    if (!ms || *ms < 1 || *ms > kMaxIntervalMs) {
      return Status::InvalidArgument(std::string(key) + "=" + quoted + ": expected milliseconds in [1, " +
                                     std::to_string(kMaxIntervalMs) + "]");
    }
    this->*interval.field = *ms;
    return Status::Ok();
  }
  if (key == "slaveReadOnUnreachableMaster") {
    if (value != "true" && value != "false") {
      return Status::InvalidArgument(std::string(key) + "=" + quoted + ": expected true or false");
    }
    slaveReadOnUnreachableMaster = value == "true";
    return Status::Ok();
  }
  if (key == "serializeType") {
    if (value != "JSON" && value != "ROCKETMQ") {
      return Status::InvalidArgument(std::string(key) + "=" + quoted + ": expected JSON or ROCKETMQ");
    }
    serializeType = value == "JSON" ? remoting::SerializeType::JSON : remoting::SerializeType::ROCKETMQ;
    return Status::Ok();
  }
  std::string known;
  for (const std::string_view name : settable_keys()) known += (known.empty() ? "" : ", ") + std::string(name);
  return Status::InvalidArgument("'" + std::string(key) + "' is no ClientConfig key to set; expected one of: " + known);
}

Status ClientConfig::set_all(std::string_view text) {
  ClientConfig changed = *this;  // all or nothing
  while (!text.empty()) {
    const size_t end = text.find(';');
    const std::string_view part = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (part.empty()) continue;
    const size_t equals = part.find('=');
    if (equals == std::string_view::npos) {
      return Status::InvalidArgument("'" + std::string(part) + "' is not key=value");
    }
    MQ_RETURN_IF_ERROR(changed.set(part.substr(0, equals), part.substr(equals + 1)));
  }
  *this = std::move(changed);
  return Status::Ok();
}

bool ClientConfig::settable_keys_at_defaults() const {
  const ClientConfig defaults;
  for (const IntervalKey& key : interval_keys()) {
    if (this->*key.field != defaults.*key.field) return false;
  }
  return slaveReadOnUnreachableMaster == defaults.slaveReadOnUnreachableMaster &&
         serializeType == defaults.serializeType;
}

}  // namespace mqlab::client
