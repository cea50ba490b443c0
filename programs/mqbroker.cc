// mqbroker: one broker on the real Env (POSIX files with fdatasync on a
// flush thread, Boost.Asio TCP with sendfile), as RocketMQ's mqbroker:
//
//   mqbroker -c broker.conf [-n "host:port;host:port"] [-p]
//
// -p prints the effective configuration (every key=value) and exits; -n
// overrides namesrvAddr. Exit status: 0 after a clean shutdown, 1 when the
// broker cannot start or its shutdown failed, 2 for a bad command line or
// configuration (every problem is printed, naming key, value, what is allowed
// and the line).
//
// Signals: SIGTERM or SIGINT shut down cleanly (unregister from the
// NameServers, flush, checkpoint, persist metadata, remove the abort file);
// a second one exits at once, leaving the abort file, as kill -9 would, and
// the next start recovers. The store locks its directory ({storePathRootDir}/
// lock, flock, as RocketMQ's) so two brokers never share one store: the second
// exits 1 naming the directory and the first one's pid. With
// powerLossInjection=true, SIGUSR2 is a power cut (see arm_power_cut).
#include <pwd.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <variant>

#include "broker/common/log.h"
#include "broker/config/broker_startup.h"
#include "broker/config/console_log.h"
#include "broker/env/mapped_write_fault.h"
#include "broker/env/posix_env.h"
#include "broker/http/http_servers.h"
#include "broker/processor/broker_controller.h"
#include "programs/program_startup.h"

namespace {

using namespace mqlab;

using programs::kExitConfig;
using programs::kExitFailure;
using programs::kExitOk;
constexpr const char* kLog = "BrokerStartup";

using programs::CommandLine;

constexpr programs::CommandLineSpec kCommandLine{
    .program = "mqbroker",
    .usage = "mqbroker -c broker.conf [-n \"host:port;host:port\"] [-p]",
    .config_help = "broker.conf (Java properties: key=value, # comments)",
    .takes_namesrv_addr = true};

std::string home_dir() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (const passwd* user = getpwuid(getuid()); user != nullptr && user->pw_dir != nullptr) return user->pw_dir;
  return "/";
}

std::variant<config::BrokerStartupConfig, int> load_config(const CommandLine& line) {
  std::variant<programs::ConfigText, int> read = programs::read_config_text("mqbroker", line.config_file);
  if (const int* status = std::get_if<int>(&read)) return *status;
  const programs::ConfigText& file = std::get<programs::ConfigText>(read);
  const char* namesrv_env = std::getenv("NAMESRV_ADDR");
  const config::BrokerStartupEnvironment environment{home_dir(), std::filesystem::current_path().string(),
                                                     namesrv_env ? namesrv_env : ""};
  return programs::report_loaded_config(
      "mqbroker", config::load_broker_config(file.text, file.file_name, environment, line.namesrv_addr));
}

// powerLossInjection=true: files go through a PowerLossFileSystem, and
// SIGUSR2 cuts the power: every file goes back to what its last completed
// fdatasync made durable (files never made durable by a directory sync
// vanish), then the process exits at once, flushing nothing, with
// kExitPowerCut. A test then restarts the broker and checks what survived.
constexpr int kExitPowerCut = 99;

void arm_power_cut(boost::asio::signal_set& signals, env::PowerLossFileSystem& files) {
  signals.async_wait([&files](const boost::system::error_code& error, int number) {
    if (error) return;
    Result<env::PowerLossStats> cut = files.cut_power();
    if (cut.ok()) {
      std::fprintf(stderr, "mqbroker: signal %d: power cut: reverted %lld files (%lld unsynced writes, %lld bytes), "
                   "removed %lld files never made durable\n", number, static_cast<long long>(cut->files_reverted),
                   static_cast<long long>(cut->undo_entries_applied), static_cast<long long>(cut->bytes_restored),
                   static_cast<long long>(cut->files_removed));
    } else {
      std::fprintf(stderr, "mqbroker: signal %d: power cut: %s\n", number, cut.status().to_string().c_str());
    }
    std::_Exit(kExitPowerCut);  // no destructors, no stdio flush, no clean shutdown: the power is off
  });
}

// The recovery report, in one line naming the path taken. The store's
// truncated_bytes counts segment space past the recovered end, which after a
// clean end is only the pre-allocated zero fill: say which it is.
void log_recovery(const store::MessageStoreConfig& config, const store::RecoveryReport& report) {
  std::ostringstream what;
  what << "verified " << report.records_verified << " records of " << config.commit_log_dir() << " from offset "
       << report.scan_from.to_string() << "; ";
  if (report.stop_reason.empty()) {
    what << "the log ends cleanly at " << report.recovered_end.to_string() << ", truncated 0 bytes";
  } else {
    what << "the log ends at " << report.recovered_end.to_string() << " (" << report.stop_reason
         << "), truncated everything past it (" << report.truncated_bytes << " bytes of segment space)";
  }
  what << "; re-dispatched " << report.records_dispatched << " records";
  if (!report.abnormal) {
    MQ_LOG(kInfo, kLog, "store " << config.storePathRootDir << ": last exit was clean; normal recovery " << what.str());
    return;
  }
  MQ_LOG(kWarn, kLog, "store " << config.storePathRootDir << ": abort file " << config.abort_file_path()
                               << " found, the last exit was not clean; abnormal recovery " << what.str());
}

std::string boot_line(const broker::BrokerConfig& config) {
  std::string line = "The broker[" + config.brokerName + ", " + config.broker_addr() + "] boot success. serializeType=JSON";
  if (!config.namesrvAddr.empty()) line += " and name server is " + config.namesrvAddr;
  return line;
}

// Runs the broker until a signal has shut it down; returns the exit status.
int run_broker(const config::BrokerStartupConfig& config) {
  // The CommitLog's active segment is written through a mapping: a fault
  // there gets a line on stderr, not a bare "Bus error".
  env::install_mapped_write_fault_report("mqbroker");
  env::PosixEnv env;
  set_log_sink(config::console_log_sink(env.clock(), stderr));
  set_log_level(LogLevel::kInfo);
  boost::asio::signal_set power_cut_signal(env.io_context());
  if (config.power_loss_injection) {
    // Before the controller opens anything: every file must go through it.
    env::PowerLossFileSystem& files = env.enable_power_loss_injection();
    power_cut_signal.add(SIGUSR2);
    arm_power_cut(power_cut_signal, files);
    MQ_LOG(kWarn, kLog, "powerLossInjection=true: SIGUSR2 cuts the power (test mode)");
  }

  auto controller = std::make_unique<broker::BrokerController>(env, config.broker, config.store);
  std::unique_ptr<http::AsioHttpServer> console;  // HTTP console and /metrics; reset before the controller
  boost::asio::io_context& io = env.io_context();
  int exit_status = kExitOk;
  bool started = false;
  bool stop_requested = false;
  bool stopping = false;

  auto shut_down = [&] {
    stopping = true;
    if (!controller->running()) {
      io.stop();
      return;
    }
    controller->shutdown([&](Status status) {
      if (!status.ok()) exit_status = kExitFailure;
      MQ_LOG(kInfo, kLog, "The broker[" << config.broker.brokerName << ", " << config.broker.broker_addr()
                                        << "] shutdown " << (status.ok() ? "complete" : "failed: " + status.to_string()));
      io.stop();
    });
  };

  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& error,
                                                                              int number) {
    if (error) return;
    if (stopping || stop_requested) {
      MQ_LOG(kWarn, kLog, "signal " << number << " again: exiting now; the next start recovers");
      std::_Exit(kExitFailure);
    }
    MQ_LOG(kInfo, kLog, "signal " << number << ": shutting down");
    if (started) {
      shut_down();
    } else {
      stop_requested = true;  // start() is still recovering; shut down once it is done
    }
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  controller->start([&](Status status) {
    if (!status.ok()) {
      MQ_LOG(kError, kLog, "the broker did not start: " << status.to_string());
      exit_status = kExitFailure;
      io.stop();
      return;
    }
    started = true;
    log_recovery(config.store, controller->message_store().recovery_report());
    // Up before the boot line, so a script that waits for it can scrape. A
    // busy HTTP port costs the console, not the broker.
    const std::string console_address = config.broker.brokerIP1 + ":" + std::to_string(config.broker.http_port());
    Result<std::unique_ptr<http::AsioHttpServer>> http_server =
        http::start_broker_http(io, console_address, *controller);
    if (http_server.ok()) {
      console = std::move(*http_server);
    } else {
      MQ_LOG(kError, kLog, "no HTTP console: " << http_server.status().to_string());
    }
    programs::announce_boot(kLog, boot_line(config.broker));
    if (stop_requested) shut_down();
  });
  io.run();
  signals.cancel();
  power_cut_signal.cancel();
  console.reset();
  controller.reset();  // no I/O: after a clean shutdown there is nothing left to do
  set_log_sink(nullptr);
  return exit_status;
}

}  // namespace

int main(int argc, char** argv) {
  return programs::startup_main<config::BrokerStartupConfig>(kCommandLine, argc, argv, load_config,
                                                             config::print_broker_config, run_broker);
}
