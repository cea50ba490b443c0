// BrokerStartup: how mqbroker turns broker.conf and its command line into the
// BrokerConfig and MessageStoreConfig it runs with (RocketMQ's
// BrokerStartup.createBrokerController), and how -p prints them.
//
// Precedence, lowest first: the built-in defaults (RocketMQ 4.9.x's);
// NAMESRV_ADDR from the process environment (namesrvAddr's default, as in
// RocketMQ); the file; -n. Each known key of the file is applied by
// BrokerConfig::set_property, else MessageStoreConfig::set_property: the
// config structs own their key tables. A key neither knows is a warning
// naming key and line and is ignored (RocketMQ ignores it silently); a value
// that does not parse or fails validation is an error naming key, value,
// what is allowed and, when the file set it, the line. Every error is
// reported, not only the first.
//
// Roles: a master's brokerId is forced to 0 with a warning (RocketMQ forces
// it silently); a SLAVE with brokerId 0 is an error.
//
// Paths: storePathRootDir defaults to {home}/store (RocketMQ's ~/store). A
// leading "~" in storePathRootDir or storePathCommitLog expands to home, and
// a relative path is taken against the working directory, so the effective
// paths are absolute and -p shows them. storePathCommitLog defaults to
// {storePathRootDir}/commitlog. storePathConsumeQueue, storePathIndex,
// storeCheckpoint and abortFile are accepted because configs copied from
// RocketMQ blogs carry them, but in RocketMQ 4.x (and here) those paths are
// always {storePathRootDir}/consumequeue, /index, /checkpoint and /abort: a
// value other than that is an error, since it would silently not be used.
//
// Everything here is a pure function of its inputs: main() reads the file,
// $HOME, $NAMESRV_ADDR and the working directory and passes them in.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/processor/broker_config.h"
#include "broker/store/message_store_config.h"

namespace mqlab::config {

// What mqbroker read from its process before parsing.
struct BrokerStartupEnvironment {
  std::string home_dir;      // $HOME: "~" and the default ~/store. Requires: absolute.
  std::string working_dir;   // relative store paths are taken against it. Requires: absolute.
  std::string namesrv_addr;  // $NAMESRV_ADDR, "" when unset
};

struct BrokerStartupConfig {
  broker::BrokerConfig broker;
  store::MessageStoreConfig store;
  // powerLossInjection=true (mqlab only, for tests): the store runs over a
  // PowerLossFileSystem and SIGUSR2 power-cuts the process (mqbroker.cc).
  // -p prints the key only when it is on.
  bool power_loss_injection = false;
};

inline constexpr std::string_view kPowerLossInjectionKey = "powerLossInjection";

struct LoadedBrokerConfig {
  BrokerStartupConfig config;
  std::vector<std::string> warnings;  // "broker.conf:12: unknown key 'fooBar' ignored"
};

// Every key broker.conf may hold: BrokerConfig's, MessageStoreConfig's and
// the four derived-path keys.
std::set<std::string> broker_config_keys();

// text: the file's contents ("" when mqbroker runs without -c); file_name
// names it in messages. namesrv_addr_option: -n, when given. On error, the
// Status message holds one line per problem.
Result<LoadedBrokerConfig> load_broker_config(std::string_view text, std::string_view file_name,
                                              const BrokerStartupEnvironment& environment,
                                              const std::optional<std::string>& namesrv_addr_option);

// -p: every key=value, BrokerConfig's keys then MessageStoreConfig's (with
// the derived paths), each group sorted by key. The output parses back with
// load_broker_config into a config that prints the same.
std::string print_broker_config(const BrokerStartupConfig& config);

}  // namespace mqlab::config
