#include "broker/config/broker_startup.h"

#include <array>
#include <filesystem>
#include <map>
#include <utility>

#include "broker/config/properties_file.h"
#include "broker/env/path.h"

namespace mqlab::config {
namespace {

using store::BrokerRole;
using store::MessageStoreConfig;

// Keys RocketMQ users carry from blog configs; the paths are derived (see the header).
using DerivedPath = std::string (MessageStoreConfig::*)() const;
constexpr std::array<std::pair<std::string_view, DerivedPath>, 4> kDerivedPathKeys = {{
    {"storePathConsumeQueue", &MessageStoreConfig::consume_queue_dir},
    {"storePathIndex", &MessageStoreConfig::index_dir},
    {"storeCheckpoint", &MessageStoreConfig::checkpoint_path},
    {"abortFile", &MessageStoreConfig::abort_file_path},
}};

std::optional<DerivedPath> derived_path_of(std::string_view key) {
  for (const auto& [name, path] : kDerivedPathKeys) {
    if (name == key) return path;
  }
  return std::nullopt;
}

// Lexical only: the directories need not exist yet (the store makes them).
std::string normalize(const std::string& path) {
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

std::string resolve_path(const std::string& path, const BrokerStartupEnvironment& environment) {
  MQ_ASSERT(!path.empty());
  std::string resolved = path;
  if (resolved == "~" || resolved.starts_with("~/")) resolved = environment.home_dir + resolved.substr(1);
  if (!resolved.starts_with('/')) resolved = env::join_path(environment.working_dir, resolved);
  return normalize(resolved);
}

// The key a validation message starts with ("listenPort=0: ..." or "storePathRootDir: ...").
std::string key_of(const std::string& message) {
  return message.substr(0, std::min(message.find('='), message.find(':')));
}

void append_lines(std::string& out, const std::map<std::string, std::string>& properties) {
  for (const auto& [key, value] : properties) out += key + "=" + value + "\n";
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) joined += (joined.empty() ? "" : "\n") + line;
  return joined;
}

// Checks that need the whole config: roles and ids, the derived paths, and
// each struct's validate(). Messages are "where: key=value: what is allowed".
class Checker {
 public:
  Checker(BrokerStartupConfig& config, const ApplyReport& report, std::string_view file_name, bool namesrv_from_option)
      : config_(config), report_(report), file_name_(file_name), namesrv_from_option_(namesrv_from_option) {}

  std::vector<std::string> errors;
  std::vector<std::string> warnings;

  void check_role() {
    const BrokerRole role = config_.store.brokerRole;
    if (role != BrokerRole::SLAVE && config_.broker.brokerId != 0) {
      warnings.push_back(where("brokerId") + ": brokerId=" + std::to_string(config_.broker.brokerId) +
                         " ignored: a " + store::broker_role_name(role) + " is always brokerId 0");
      config_.broker.brokerId = 0;  // RocketMQ's BrokerStartup does the same
    }
    // RocketMQ ignores it silently; say so, and run without it.
    if (const std::string ignored = config_.store.transient_store_pool_warning(); !ignored.empty()) {
      warnings.push_back(where("transientStorePoolEnable") + ": " + ignored);
    }
    if (role == BrokerRole::SLAVE && config_.broker.brokerId <= 0) {
      errors.push_back(where("brokerId") + ": brokerId=" + std::to_string(config_.broker.brokerId) +
                       ": a SLAVE (brokerRole=SLAVE) needs brokerId > 0");
    }
  }

  void check_derived_path(const std::string& key, const std::string& value, const BrokerStartupEnvironment& env) {
    const std::optional<DerivedPath> derived = derived_path_of(key);
    MQ_ASSERT(derived.has_value());
    if (value.empty()) return;  // "abortFile=": nothing asked for
    const std::string expected = (config_.store.*(*derived))();
    if (config_.store.storePathRootDir.empty() || resolve_path(value, env) == expected) return;
    errors.push_back(where(key) + ": " + key + "=" + value + ": must be " + expected +
                     " (derived from storePathRootDir, as RocketMQ 4.x derives it; set storePathRootDir instead)");
  }

  void check_valid(const Status& status) {
    if (status.ok()) return;
    errors.push_back(where(key_of(status.message())) + ": " + status.message());
  }

 private:
  std::string where(const std::string& key) const {
    if (key == "namesrvAddr" && namesrv_from_option_) return "-n";
    return report_.where(file_name_, key);
  }

  BrokerStartupConfig& config_;
  const ApplyReport& report_;
  std::string_view file_name_;
  bool namesrv_from_option_;
};

}  // namespace

std::set<std::string> broker_config_keys() {
  std::set<std::string> keys;
  for (const auto& [key, value] : broker::BrokerConfig{}.to_properties()) keys.insert(key);
  const size_t broker_keys = keys.size();
  for (const auto& [key, value] : MessageStoreConfig{}.to_properties()) keys.insert(key);
  MQ_ASSERT(keys.size() == broker_keys + MessageStoreConfig{}.to_properties().size());  // no key in both
  for (const auto& [key, path] : kDerivedPathKeys) keys.insert(std::string(key));
  keys.insert(std::string(kPowerLossInjectionKey));
  return keys;
}

Result<LoadedBrokerConfig> load_broker_config(std::string_view text, std::string_view file_name,
                                              const BrokerStartupEnvironment& environment,
                                              const std::optional<std::string>& namesrv_addr_option) {
  MQ_ASSERT(environment.home_dir.starts_with('/'));
  MQ_ASSERT(environment.working_dir.starts_with('/'));
  BrokerStartupConfig config;
  config.store.storePathRootDir = env::join_path(environment.home_dir, "store");
  config.broker.namesrvAddr = environment.namesrv_addr;

  MQ_ASSIGN_OR_RETURN(std::vector<Property> properties, parse_properties(text, file_name, broker_config_keys()));
  std::map<std::string, std::string> derived_path_values;
  const ApplyReport report = apply_properties(properties, file_name, [&](const Property& property) -> Status {
    if (derived_path_of(property.key)) {
      derived_path_values[property.key] = property.value;  // checked once storePathRootDir is final
      return Status::Ok();
    }
    if (property.key == kPowerLossInjectionKey) {
      if (property.value != "true" && property.value != "false") {
        return Status::InvalidArgument(property.key + "=" + property.value + ": must be true or false");
      }
      config.power_loss_injection = property.value == "true";
      return Status::Ok();
    }
    Result<bool> applied = config.broker.set_property(property.key, property.value);
    if (applied.ok() && !*applied) applied = config.store.set_property(property.key, property.value);
    MQ_RETURN_IF_ERROR(applied.status());
    MQ_ASSERT(*applied);  // a known key belongs to one of the two tables
    return Status::Ok();
  });
  if (namesrv_addr_option) config.broker.namesrvAddr = *namesrv_addr_option;
  if (!config.store.storePathRootDir.empty()) {
    config.store.storePathRootDir = resolve_path(config.store.storePathRootDir, environment);
  }
  if (!config.store.storePathCommitLog.empty()) {
    config.store.storePathCommitLog = resolve_path(config.store.storePathCommitLog, environment);
  }

  Checker checker(config, report, file_name, namesrv_addr_option.has_value());
  checker.errors = report.errors;
  checker.check_role();
  for (const auto& [key, value] : derived_path_values) checker.check_derived_path(key, value, environment);
  // Values that did not parse kept their defaults; validating those would
  // only repeat the same complaint in a vaguer way.
  if (report.errors.empty()) {
    checker.check_valid(config.broker.validate());
    checker.check_valid(config.store.validate());
  }
  if (!checker.errors.empty()) return Status::InvalidArgument(join_lines(checker.errors));

  LoadedBrokerConfig loaded{std::move(config), report.warnings};
  loaded.warnings.insert(loaded.warnings.end(), checker.warnings.begin(), checker.warnings.end());
  MQ_ASSERT(loaded.config.store.storePathRootDir.starts_with('/'));
  return loaded;
}

std::string print_broker_config(const BrokerStartupConfig& config) {
  std::map<std::string, std::string> store = config.store.to_properties();
  for (const auto& [key, path] : kDerivedPathKeys) store[std::string(key)] = (config.store.*path)();
  std::string out;
  append_lines(out, config.broker.to_properties());
  append_lines(out, store);
  // Printed like every key, so -p shows when a broker runs in this test mode.
  out += std::string(kPowerLossInjectionKey) + (config.power_loss_injection ? "=true\n" : "=false\n");
  return out;
}

}  // namespace mqlab::config
