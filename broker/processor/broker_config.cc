#include "broker/processor/broker_config.h"

#include <algorithm>
#include <charconv>
#include <functional>

#include "broker/env/network.h"
#include "broker/processor/host_address.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {
namespace {

constexpr int64_t kMinRegisterPeriodMs = 10'000;
constexpr int64_t kMaxRegisterPeriodMs = 60'000;
constexpr int32_t kBrokerAllPermBits = 1 | 2 | 4 | 8;  // INHERIT | WRITE | READ | PRIORITY

std::string_view trim_broker_conf_text(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

Status bad(std::string_view key, std::string_view value, std::string_view why) {
  return Status::InvalidArgument(std::string(key) + "=" + std::string(value) + ": " + std::string(why));
}

// Names travel in registrations and route tables; RocketMQ's defaults are
// host names, so dots are allowed beside the topic characters.
Status check_name(std::string_view key, std::string_view name) {
  if (name.empty()) return bad(key, name, "must not be empty");
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || c == '%' || c == '|';
    if (!ok) return bad(key, name, "may hold only letters, digits and _ - . % |");
  }
  return Status::Ok();
}

Result<int64_t> parse_int(std::string_view key, std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return bad(key, text, "not an integer");
  return value;
}

Result<bool> parse_bool(std::string_view key, std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return bad(key, text, "expected true or false");
}

}  // namespace

Status BrokerConfig::validate() const {
  MQ_RETURN_IF_ERROR(check_name("brokerClusterName", brokerClusterName));
  MQ_RETURN_IF_ERROR(check_name("brokerName", brokerName));
  if (brokerId < 0) return bad("brokerId", std::to_string(brokerId), "must be >= 0");
  if (!is_ip_literal(brokerIP1)) return bad("brokerIP1", brokerIP1, "must be an IP address (it is the store host)");
  if (!brokerIP2.empty() && !is_ip_literal(brokerIP2)) return bad("brokerIP2", brokerIP2, "must be an IP address");
  if (listenPort < 1 || listenPort > 65535) {
    return bad("listenPort", std::to_string(listenPort), "must be 1..65535 (the store host needs the real port)");
  }
  if (haListenPort < 0 || haListenPort > 65535)
    return bad("haListenPort", std::to_string(haListenPort), "must be 0..65535");
  if (httpPort < 0 || httpPort > 65535) return bad("httpPort", std::to_string(httpPort), "must be 0..65535");
  if (http_port() > 65535) return bad("httpPort", "0", "listenPort + 2 is past 65535: set httpPort");
  if (http_port() == listenPort || http_port() == (haListenPort == 0 ? listenPort + 1 : haListenPort)) {
    return bad("httpPort", std::to_string(http_port()), "must differ from listenPort and haListenPort");
  }
  for (const std::string& addr : namesrv_addrs()) {
    if (Status s = env::parse_address(addr).status(); !s.ok()) return bad("namesrvAddr", namesrvAddr, s.message());
  }
  if (defaultTopicQueueNums < 1 || defaultTopicQueueNums > 1024) {
    return bad("defaultTopicQueueNums", std::to_string(defaultTopicQueueNums), "must be 1..1024");
  }
  if ((brokerPermission & ~kBrokerAllPermBits) != 0) {
    return bad("brokerPermission", std::to_string(brokerPermission),
               "only the bits READ 4, WRITE 2, INHERIT 1, PRIORITY 8");
  }
  if (registerNameServerPeriod <= 0)
    return bad("registerNameServerPeriod", std::to_string(registerNameServerPeriod), "must be > 0 ms");
  if (registerBrokerTimeoutMills <= 0)
    return bad("registerBrokerTimeoutMills", std::to_string(registerBrokerTimeoutMills), "must be > 0 ms");
  if (flushConsumerOffsetInterval <= 0)
    return bad("flushConsumerOffsetInterval", std::to_string(flushConsumerOffsetInterval), "must be > 0 ms");
  if (shortPollingTimeMills <= 0)
    return bad("shortPollingTimeMills", std::to_string(shortPollingTimeMills), "must be > 0 ms");
  if (zeroCopyMinRegionBytes < 0) {
    return bad("zeroCopyMinRegionBytes", std::to_string(zeroCopyMinRegionBytes), "must be >= 0 (0 = always)");
  }
  if (serverChannelMaxIdleTimeSeconds < 0) {
    return bad("serverChannelMaxIdleTimeSeconds", std::to_string(serverChannelMaxIdleTimeSeconds),
               "must be >= 0 (0 = never)");
  }
  // Room for the two length fields and a header; a real frame is far larger.
  if (frameMaxLength < 1024) return bad("frameMaxLength", std::to_string(frameMaxLength), "must be >= 1024");
  if (serverMaxConnections < 1)
    return bad("serverMaxConnections", std::to_string(serverMaxConnections), "must be >= 1");
  if (serverChannelMaxPendingOutputBytes < 1) {
    return bad("serverChannelMaxPendingOutputBytes", std::to_string(serverChannelMaxPendingOutputBytes),
               "must be >= 1");
  }
  if (serverFrameReadTimeoutMillis < 0) {
    return bad("serverFrameReadTimeoutMillis", std::to_string(serverFrameReadTimeoutMillis),
               "must be >= 0 ms (0 = never)");
  }
  return Status::Ok();
}

Result<bool> BrokerConfig::set_property(std::string_view key, std::string_view raw) {
  const std::string_view value = trim_broker_conf_text(raw);
  auto set_string = [&](std::string* field) {
    *field = std::string(value);
    return Status::Ok();
  };
  auto set_int64 = [&](int64_t* field) {
    MQ_ASSIGN_OR_RETURN(*field, parse_int(key, value));
    return Status::Ok();
  };
  auto set_int32 = [&](int32_t* field) {
    MQ_ASSIGN_OR_RETURN(int64_t wide, parse_int(key, value));
    if (wide < INT32_MIN || wide > INT32_MAX) return bad(key, value, "out of int range");
    *field = static_cast<int32_t>(wide);
    return Status::Ok();
  };
  auto set_bool = [&](bool* field) {
    MQ_ASSIGN_OR_RETURN(*field, parse_bool(key, value));
    return Status::Ok();
  };
  const std::map<std::string_view, std::function<Status()>> setters = {
      {"brokerClusterName", [&] { return set_string(&brokerClusterName); }},
      {"brokerName", [&] { return set_string(&brokerName); }},
      {"brokerId", [&] { return set_int64(&brokerId); }},
      {"brokerIP1", [&] { return set_string(&brokerIP1); }},
      {"brokerIP2", [&] { return set_string(&brokerIP2); }},
      {"listenPort", [&] { return set_int32(&listenPort); }},
      {"haListenPort", [&] { return set_int32(&haListenPort); }},
      {"httpPort", [&] { return set_int32(&httpPort); }},
      {"namesrvAddr", [&] { return set_string(&namesrvAddr); }},
      {"autoCreateTopicEnable", [&] { return set_bool(&autoCreateTopicEnable); }},
      {"defaultTopicQueueNums", [&] { return set_int32(&defaultTopicQueueNums); }},
      {"autoCreateSubscriptionGroup", [&] { return set_bool(&autoCreateSubscriptionGroup); }},
      {"brokerPermission", [&] { return set_int32(&brokerPermission); }},
      {"registerNameServerPeriod", [&] { return set_int64(&registerNameServerPeriod); }},
      {"registerBrokerTimeoutMills", [&] { return set_int64(&registerBrokerTimeoutMills); }},
      {"flushConsumerOffsetInterval", [&] { return set_int64(&flushConsumerOffsetInterval); }},
      {"longPollingEnable", [&] { return set_bool(&longPollingEnable); }},
      {"shortPollingTimeMills", [&] { return set_int64(&shortPollingTimeMills); }},
      {"slaveReadEnable", [&] { return set_bool(&slaveReadEnable); }},
      {"offsetCheckInSlave", [&] { return set_bool(&offsetCheckInSlave); }},
      {"transferMsgByHeap", [&] { return set_bool(&transferMsgByHeap); }},
      {"zeroCopyMinRegionBytes", [&] { return set_int32(&zeroCopyMinRegionBytes); }},
      {"serverChannelMaxIdleTimeSeconds", [&] { return set_int32(&serverChannelMaxIdleTimeSeconds); }},
      {"frameMaxLength", [&] { return set_int32(&frameMaxLength); }},
      {"serverMaxConnections", [&] { return set_int32(&serverMaxConnections); }},
      {"serverChannelMaxPendingOutputBytes", [&] { return set_int64(&serverChannelMaxPendingOutputBytes); }},
      {"serverFrameReadTimeoutMillis", [&] { return set_int64(&serverFrameReadTimeoutMillis); }},
  };
  auto it = setters.find(key);
  if (it == setters.end()) return false;
  MQ_RETURN_IF_ERROR(it->second());
  return true;
}

std::map<std::string, std::string> BrokerConfig::to_properties() const {
  auto text = [](bool b) { return std::string(b ? "true" : "false"); };
  return {
      {"brokerClusterName", brokerClusterName},
      {"brokerName", brokerName},
      {"brokerId", std::to_string(brokerId)},
      {"brokerIP1", brokerIP1},
      {"brokerIP2", brokerIP2.empty() ? brokerIP1 : brokerIP2},
      {"listenPort", std::to_string(listenPort)},
      {"haListenPort", std::to_string(haListenPort == 0 ? listenPort + 1 : haListenPort)},
      {"httpPort", std::to_string(http_port())},
      {"namesrvAddr", namesrvAddr},
      {"autoCreateTopicEnable", text(autoCreateTopicEnable)},
      {"defaultTopicQueueNums", std::to_string(defaultTopicQueueNums)},
      {"autoCreateSubscriptionGroup", text(autoCreateSubscriptionGroup)},
      {"brokerPermission", std::to_string(brokerPermission)},
      {"registerNameServerPeriod", std::to_string(registerNameServerPeriod)},
      {"registerBrokerTimeoutMills", std::to_string(registerBrokerTimeoutMills)},
      {"flushConsumerOffsetInterval", std::to_string(flushConsumerOffsetInterval)},
      {"longPollingEnable", text(longPollingEnable)},
      {"shortPollingTimeMills", std::to_string(shortPollingTimeMills)},
      {"slaveReadEnable", text(slaveReadEnable)},
      {"offsetCheckInSlave", text(offsetCheckInSlave)},
      {"transferMsgByHeap", text(transferMsgByHeap)},
      {"zeroCopyMinRegionBytes", std::to_string(zeroCopyMinRegionBytes)},
      {"serverChannelMaxIdleTimeSeconds", std::to_string(serverChannelMaxIdleTimeSeconds)},
      {"frameMaxLength", std::to_string(frameMaxLength)},
      {"serverMaxConnections", std::to_string(serverMaxConnections)},
      {"serverChannelMaxPendingOutputBytes", std::to_string(serverChannelMaxPendingOutputBytes)},
      {"serverFrameReadTimeoutMillis", std::to_string(serverFrameReadTimeoutMillis)},
  };
}

std::string BrokerConfig::broker_addr() const {
  return env::HostPort{brokerIP1, static_cast<uint16_t>(listenPort)}.to_string();
}

std::string BrokerConfig::ha_server_addr() const {
  const int32_t port = haListenPort == 0 ? listenPort + 1 : haListenPort;
  return env::HostPort{brokerIP2.empty() ? brokerIP1 : brokerIP2, static_cast<uint16_t>(port)}.to_string();
}

int32_t BrokerConfig::http_port() const { return httpPort == 0 ? listenPort + 2 : httpPort; }

std::vector<std::string> BrokerConfig::namesrv_addrs() const {
  std::vector<std::string> addrs;
  std::string_view rest = namesrvAddr;
  while (!rest.empty()) {
    const size_t semi = std::min(rest.find(';'), rest.size());
    const std::string_view item = trim_broker_conf_text(rest.substr(0, semi));
    if (!item.empty()) addrs.emplace_back(item);
    rest.remove_prefix(std::min(semi + 1, rest.size()));
  }
  return addrs;
}

remoting::RemotingServerOptions BrokerConfig::remoting_server_options() const {
  MQ_ASSERT(frameMaxLength > 0 && serverMaxConnections > 0);  // validate() passed
  remoting::RemotingServerOptions options;
  options.max_frame_bytes = static_cast<size_t>(frameMaxLength);
  options.max_pending_output_bytes = static_cast<uint64_t>(serverChannelMaxPendingOutputBytes);
  options.max_connections = static_cast<size_t>(serverMaxConnections);
  options.channel_max_idle = seconds(serverChannelMaxIdleTimeSeconds);
  options.frame_read_timeout = millis(serverFrameReadTimeoutMillis);
  return options;
}

Nanos BrokerConfig::register_period() const {
  return millis(std::clamp(registerNameServerPeriod, kMinRegisterPeriodMs, kMaxRegisterPeriodMs));
}

}  // namespace mqlab::broker
