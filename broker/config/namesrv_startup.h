// NamesrvStartup: how mqnamesrv turns namesrv.conf into the NamesrvConfig it
// runs with (RocketMQ's NamesrvStartup.createNamesrvController), and how -p
// prints it. The file is a Java-properties file like broker.conf, with the
// same rules: unknown keys are warnings naming key and line, bad values
// errors naming key, value, what is allowed and line.
//
// Keys:
//   listenPort                      NettyServerConfig's, default 9876; the
//                                   NameServer binds 0.0.0.0:listenPort, as RocketMQ
//   httpPort                        mqlab's HTTP console; 0 = listenPort + 2
//   scanNotActiveBrokerInterval, scanNotActiveBrokerFirstDelay,
//   brokerChannelExpiredTime        ms, > 0 (NamesrvConfig; constants in 4.x)
//   orderMessageEnable              true / false
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/namesrv/namesrv_config.h"

namespace mqlab::config {

struct NamesrvStartupConfig {
  int32_t listenPort = 9876;
  int32_t httpPort = 0;
  namesrv::NamesrvConfig namesrv;  // listenAddress is 0.0.0.0:listenPort after loading

  int32_t http_port() const { return httpPort == 0 ? listenPort + 2 : httpPort; }
};

struct LoadedNamesrvConfig {
  NamesrvStartupConfig config;
  std::vector<std::string> warnings;
};

std::set<std::string> namesrv_config_keys();

// text: the file's contents ("" without -c). On error, the Status message
// holds one line per problem.
Result<LoadedNamesrvConfig> load_namesrv_config(std::string_view text, std::string_view file_name);

// -p: every key=value, sorted by key; parses back to the same config.
std::string print_namesrv_config(const NamesrvStartupConfig& config);

}  // namespace mqlab::config
