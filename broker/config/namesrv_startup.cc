#include "broker/config/namesrv_startup.h"

#include <charconv>
#include <functional>
#include <map>

#include "broker/config/properties_file.h"

namespace mqlab::config {
namespace {

Status bad_namesrv_value(const std::string& key, const std::string& value, const std::string& allowed) {
  return Status::InvalidArgument(key + "=" + value + ": " + allowed);
}

Status set_integer(int64_t* field, const Property& property, int64_t min, int64_t max) {
  int64_t value = 0;
  const std::string& text = property.value;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || stop != text.data() + text.size() || value < min || value > max) {
    return bad_namesrv_value(property.key, text, "must be an integer in " + std::to_string(min) + ".." + std::to_string(max));
  }
  *field = value;
  return Status::Ok();
}

// One namesrv.conf key: how to set it and how to print it.
struct Key {
  std::function<Status(NamesrvStartupConfig&, const Property&)> set;
  std::function<std::string(const NamesrvStartupConfig&)> get;
};

Key port_key(int32_t NamesrvStartupConfig::*field, int64_t min) {
  return {[field, min](NamesrvStartupConfig& c, const Property& p) {
            int64_t value = 0;
            MQ_RETURN_IF_ERROR(set_integer(&value, p, min, 65535));
            c.*field = static_cast<int32_t>(value);
            return Status::Ok();
          },
          [field](const NamesrvStartupConfig& c) { return std::to_string(c.*field); }};
}

Key interval_key(int64_t namesrv::NamesrvConfig::*field) {
  constexpr int64_t kMaxIntervalMs = 24LL * 3600 * 1000;  // a day; longer is a typo
  return {[field](NamesrvStartupConfig& c, const Property& p) { return set_integer(&(c.namesrv.*field), p, 1, kMaxIntervalMs); },
          [field](const NamesrvStartupConfig& c) { return std::to_string(c.namesrv.*field); }};
}

const std::map<std::string, Key>& namesrv_keys() {
  static const std::map<std::string, Key> table = {
      {"listenPort", port_key(&NamesrvStartupConfig::listenPort, 1)},
      {"httpPort",
       {port_key(&NamesrvStartupConfig::httpPort, 0).set,
        [](const NamesrvStartupConfig& c) { return std::to_string(c.http_port()); }}},  // effective port
      {"scanNotActiveBrokerInterval", interval_key(&namesrv::NamesrvConfig::scanNotActiveBrokerInterval)},
      {"scanNotActiveBrokerFirstDelay", interval_key(&namesrv::NamesrvConfig::scanNotActiveBrokerFirstDelay)},
      {"brokerChannelExpiredTime", interval_key(&namesrv::NamesrvConfig::brokerChannelExpiredTime)},
      {"orderMessageEnable",
       {[](NamesrvStartupConfig& c, const Property& p) {
          if (p.value != "true" && p.value != "false") return bad_namesrv_value(p.key, p.value, "must be true or false");
          c.namesrv.orderMessageEnable = p.value == "true";
          return Status::Ok();
        },
        [](const NamesrvStartupConfig& c) { return std::string(c.namesrv.orderMessageEnable ? "true" : "false"); }}},
  };
  return table;
}

}  // namespace

std::set<std::string> namesrv_config_keys() {
  std::set<std::string> names;
  for (const auto& [name, key] : namesrv_keys()) names.insert(name);
  return names;
}

Result<LoadedNamesrvConfig> load_namesrv_config(std::string_view text, std::string_view file_name) {
  NamesrvStartupConfig config;
  MQ_ASSIGN_OR_RETURN(std::vector<Property> properties, parse_properties(text, file_name, namesrv_config_keys()));
  const ApplyReport report = apply_properties(properties, file_name, [&](const Property& property) {
    auto key = namesrv_keys().find(property.key);
    MQ_ASSERT(key != namesrv_keys().end());  // parse_properties marked it known
    return key->second.set(config, property);
  });
  std::vector<std::string> errors = report.errors;
  if (config.http_port() > 65535) {
    errors.push_back(report.where(file_name, "listenPort") + ": httpPort=0: listenPort + 2 is past 65535; set httpPort");
  } else if (config.http_port() == config.listenPort) {
    errors.push_back(report.where(file_name, "httpPort") + ": httpPort=" + std::to_string(config.httpPort) +
                     ": must differ from listenPort");
  }
  if (!errors.empty()) {
    std::string joined;
    for (const std::string& line : errors) joined += (joined.empty() ? "" : "\n") + line;
    return Status::InvalidArgument(joined);
  }
  config.namesrv.listenAddress = "0.0.0.0:" + std::to_string(config.listenPort);
  MQ_ASSERT(config.listenPort >= 1 && config.listenPort <= 65535);
  return LoadedNamesrvConfig{std::move(config), report.warnings};
}

std::string print_namesrv_config(const NamesrvStartupConfig& config) {
  std::string out;
  for (const auto& [name, key] : namesrv_keys()) out += name + "=" + key.get(config) + "\n";
  return out;
}

}  // namespace mqlab::config
