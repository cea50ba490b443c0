// What mqbroker and mqnamesrv do alike before and at boot: exit statuses a
// script can rely on, reading the properties file named by -c, reporting the
// parser's errors and warnings one per line under the program's name, and
// the boot line a script waits for. Header-only: every programs/*.cc is a
// program of its own.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

#include "broker/common/log.h"
#include "broker/common/status.h"

namespace mqlab::programs {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitConfig = 2;

struct ConfigText {
  std::string text;  // empty without -c: every key at its default
  std::string file_name = "(defaults)";
};

// The file's bytes, or kExitConfig after saying why it cannot be read.
inline std::variant<ConfigText, int> read_config_text(const char* program, const std::optional<std::string>& path) {
  ConfigText config;
  if (!path) return config;
  std::ifstream in(*path, std::ios::binary);
  std::ostringstream read;
  if (in) read << in.rdbuf();
  if (!in || in.bad()) {
    std::cerr << program << ": cannot read " << *path << ": " << std::strerror(errno) << "\n";
    return kExitConfig;
  }
  config.text = read.str();
  config.file_name = *path;
  return config;
}

// A loader's result (a Loaded*Config with .config and .warnings): the config
// after printing its warnings, or kExitConfig after printing every error.
template <typename Loaded>
auto report_loaded_config(const char* program, Result<Loaded> loaded)
    -> std::variant<decltype(std::declval<Loaded>().config), int> {
  if (!loaded.ok()) {
    std::istringstream errors(loaded.status().message());
    for (std::string error; std::getline(errors, error);) std::cerr << program << ": error: " << error << "\n";
    return kExitConfig;
  }
  for (const std::string& warning : loaded->warnings) std::cerr << program << ": warning: " << warning << "\n";
  return std::move(loaded->config);
}

// The boot line goes to stdout (flushed: scripts wait for it) and to the log.
inline void announce_boot(const char* component, const std::string& line, const std::string& log_suffix = "") {
  MQ_LOG(kInfo, component, line << log_suffix);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace mqlab::programs
