// mqadmin: RocketMQ's admin tool, on the real Env (Boost.Asio TCP).
//
//   mqadmin                         the command list
//   mqadmin help <command>          one command's options
//   mqadmin <command> [-n 'host:port;host:port'] [options]
//
// Everything lives in broker/admin_cli (run_mqadmin); this file only builds
// the real Env, reads NAMESRV_ADDR, and turns SIGINT/SIGTERM into a polite
// stop (perf commands print their summary; a second signal kills). Exit
// status: 0 success, 1 the operation failed, 2 bad usage, 130 interrupted.
#include <unistd.h>

#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "broker/admin_cli/mqadmin.h"
#include "broker/env/posix_env.h"

namespace {

// clientId = clientIP@instanceName must differ between concurrent tools (a
// broker keys channels by it and rebalancing sorts by it).
std::string instance_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string("mqadmin-") + (host[0] != '\0' ? std::string(host) + "-" : "") + std::to_string(getpid());
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mqlab;
  const std::vector<std::string> args(argv + 1, argv + argc);
  env::PosixEnv env;

  bool interrupted = false;
  boost::asio::signal_set signals(env.io_context(), SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& error, int) {
    if (error) return;
    interrupted = true;
    signals.clear();  // the default action again: a second signal ends the process
  });

  admin_cli::CommandIo io{
      .env = env,
      .out = std::cout,
      .err = std::cerr,
      .run_until =
          [&env](const std::function<bool()>& done, Nanos limit) {
            return env.run_until(done, std::chrono::milliseconds(limit / kNanosPerMilli));
          },
      .interrupted = [&interrupted] { return interrupted; },
      .namesrv_addr_env = std::getenv("NAMESRV_ADDR") != nullptr ? std::optional<std::string>(std::getenv("NAMESRV_ADDR"))
                                                                 : std::nullopt,
      .client_ip = "127.0.0.1",
      .instance_name = instance_name(),
  };
  const int exit_code = admin_cli::run_mqadmin(args, io);
  std::cout.flush();
  return exit_code;
}
