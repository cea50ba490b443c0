// mqnamesrv: one NameServer on the real Env (Boost.Asio TCP), as RocketMQ's
// mqnamesrv:
//
//   mqnamesrv [-c namesrv.conf] [-p]
//
// -p prints the effective configuration (every key=value) and exits. Exit
// status: 0 after a clean shutdown (SIGTERM or SIGINT), 1 when it cannot
// start, 2 for a bad command line or configuration. A NameServer keeps its
// routes in memory only, as RocketMQ's does: brokers re-register within
// registerNameServerPeriod after a restart.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <variant>

#include "broker/common/log.h"
#include "broker/config/console_log.h"
#include "broker/config/namesrv_startup.h"
#include "broker/env/posix_env.h"
#include "broker/http/http_servers.h"
#include "broker/namesrv/namesrv_controller.h"
#include "programs/program_startup.h"

namespace {

using namespace mqlab;

using programs::kExitConfig;
using programs::kExitFailure;
using programs::kExitOk;
constexpr const char* kLog = "NamesrvStartup";

using programs::CommandLine;

constexpr programs::CommandLineSpec kCommandLine{
    .program = "mqnamesrv",
    .usage = "mqnamesrv [-c namesrv.conf] [-p]",
    .config_help = "namesrv.conf (Java properties: key=value, # comments)",
    .takes_namesrv_addr = false};

std::variant<config::NamesrvStartupConfig, int> load_config(const CommandLine& line) {
  std::variant<programs::ConfigText, int> read = programs::read_config_text("mqnamesrv", line.config_file);
  if (const int* status = std::get_if<int>(&read)) return *status;
  const programs::ConfigText& file = std::get<programs::ConfigText>(read);
  return programs::report_loaded_config("mqnamesrv", config::load_namesrv_config(file.text, file.file_name));
}

int run_namesrv(const config::NamesrvStartupConfig& config) {
  env::PosixEnv env;
  set_log_sink(config::console_log_sink(env.clock(), stderr));
  set_log_level(LogLevel::kInfo);
  namesrv::NamesrvController controller(env, config.namesrv);
  boost::asio::io_context& io = env.io_context();
  int exit_status = kExitOk;
  std::unique_ptr<http::AsioHttpServer> console;  // the cluster page; reset before the controller

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& error, int number) {
    if (error) return;
    MQ_LOG(kInfo, kLog, "signal " << number << ": shutting down");
    controller.shutdown();
    MQ_LOG(kInfo, kLog, "The Name Server shutdown complete");
    io.stop();
  });
  controller.start([&](Status status) {
    if (!status.ok()) {
      MQ_LOG(kError, kLog, "the Name Server did not start on " << config.namesrv.listenAddress << ": "
                                                               << status.to_string());
      exit_status = kExitFailure;
      io.stop();
      return;
    }
    // A busy HTTP port costs the cluster page, not the NameServer.
    Result<std::unique_ptr<http::AsioHttpServer>> http_server =
        http::start_namesrv_http(io, "0.0.0.0:" + std::to_string(config.http_port()), controller);
    if (http_server.ok()) {
      console = std::move(*http_server);
    } else {
      MQ_LOG(kError, kLog, "no HTTP console: " << http_server.status().to_string());
    }
    programs::announce_boot(kLog, "The Name Server boot success. serializeType=JSON",
                            " (listening on " + controller.address() + ")");
  });
  io.run();
  signals.cancel();
  console.reset();
  set_log_sink(nullptr);
  return exit_status;
}

}  // namespace

int main(int argc, char** argv) {
  return programs::startup_main<config::NamesrvStartupConfig>(kCommandLine, argc, argv, load_config,
                                                              config::print_namesrv_config, run_namesrv);
}
