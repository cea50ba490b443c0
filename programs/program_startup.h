// What mqbroker and mqnamesrv do alike before and at boot: exit statuses a
// script can rely on, their command line (-c, -p, -h; -n for mqbroker),
// reading the properties file named by -c, reporting the
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

#include <boost/program_options.hpp>

#include "broker/common/log.h"
#include "broker/common/status.h"

namespace mqlab::programs {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitConfig = 2;

// RocketMQ's startup flags: -c configFile, -p printConfigItem, -h, and for
// mqbroker -n namesrvAddr (which overrides the file's).
struct CommandLine {
  std::optional<std::string> config_file;
  std::optional<std::string> namesrv_addr;
  bool print_config = false;
};

struct CommandLineSpec {
  const char* program;           // "mqbroker"
  const char* usage;             // the usage line -h prints
  const char* config_help;       // what -c names
  bool takes_namesrv_addr = false;
};

// The parsed flags, or the exit status when the program should stop here
// (kExitOk after -h, kExitConfig after a bad flag, with the options printed).
inline std::variant<CommandLine, int> parse_command_line(const CommandLineSpec& spec, int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(std::string(spec.program) + " options");
  options.add_options()("help,h", "print this help and exit")("configFile,c", po::value<std::string>(),
                                                               spec.config_help);
  if (spec.takes_namesrv_addr) {
    options.add_options()("namesrvAddr,n", po::value<std::string>(),
                          "NameServer addresses, \"host:port;host:port\" (overrides the file)");
  }
  options.add_options()("printConfigItem,p", "print every configuration key=value and exit");
  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    std::cerr << spec.program << ": " << error.what() << "\n" << options;
    return kExitConfig;
  }
  if (values.count("help")) {
    std::cout << "usage: " << spec.usage << "\n" << options;
    return kExitOk;
  }
  CommandLine line;
  if (values.count("configFile")) line.config_file = values["configFile"].as<std::string>();
  if (values.count("namesrvAddr")) line.namesrv_addr = values["namesrvAddr"].as<std::string>();
  line.print_config = values.count("printConfigItem") != 0;
  return line;
}

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

// A program's main: flags, then the config (or the exit status either
// stopped at), then -p's printout or the run. load, print and run are the
// program's own; the order and the exit statuses are every program's.
template <typename Config, typename Load, typename Print, typename Run>
int startup_main(const CommandLineSpec& spec, int argc, char** argv, Load load, Print print, Run run) {
  std::variant<CommandLine, int> line = parse_command_line(spec, argc, argv);
  if (const int* status = std::get_if<int>(&line)) return *status;
  std::variant<Config, int> config = load(std::get<CommandLine>(line));
  if (const int* status = std::get_if<int>(&config)) return *status;
  if (std::get<CommandLine>(line).print_config) {
    std::fputs(print(std::get<Config>(config)).c_str(), stdout);
    return kExitOk;
  }
  return run(std::get<Config>(config));
}

// The boot line goes to stdout (flushed: scripts wait for it) and to the log.
inline void announce_boot(const char* component, const std::string& line, const std::string& log_suffix = "") {
  MQ_LOG(kInfo, component, line << log_suffix);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace mqlab::programs
