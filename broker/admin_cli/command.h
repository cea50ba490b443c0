// Command and Invocation: what an mqadmin subcommand is, and one run of it.
//
// A Command is a name, a description, its options and an execute function.
// execute() starts the work on the Env's executor and returns; the work ends
// by calling exactly one of succeed(), fail(status) or usage_error(text) on
// its Invocation (later calls are ignored, so a fan-out whose first answer
// failed may let the others land quietly). mqadmin drives the Env until then.
//
// Exit codes, which scripts rely on:
//   0  success
//   1  the operation failed: stderr says "mqadmin <command>: <what failed>"
//   2  bad usage: stderr says what is wrong, then how to get help
//   130 interrupted (SIGINT) before the command finished
//
// The Invocation owns what a command creates (hold()) and knows how to
// stop it (add_cleanup()): after the command finishes, cleanups run in
// reverse order, then the MQClientInstance shuts down, then held state goes.
// Callbacks wrapped with guard() do nothing once the Invocation is gone, so
// a late answer cannot reach freed memory.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/admin_cli/option_parser.h"
#include "broker/client/mq_client_instance.h"
#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::admin_cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

// What mqadmin runs with: the world (real or simulated) and where text goes.
struct CommandIo {
  env::Env& env;
  std::ostream& out;
  std::ostream& err;
  // Drives env until done() holds or limit passes; returns done(). The real
  // main runs the Asio loop, a test runs virtual time.
  std::function<bool(const std::function<bool()>& done, Nanos limit)> run_until;
  // Whether the user asked to stop (SIGINT); empty = never.
  std::function<bool()> interrupted;
  // The NAMESRV_ADDR environment variable, the default of -n.
  std::optional<std::string> namesrv_addr_env;
  std::string client_ip = "127.0.0.1";
  std::string instance_name = "mqadmin";
};

class Invocation {
 public:
  Invocation(CommandIo& io, std::string command_name, ParsedOptions options, client::ClientConfig config);
  ~Invocation();
  Invocation(const Invocation&) = delete;
  Invocation& operator=(const Invocation&) = delete;

  const ParsedOptions& options() const { return options_; }
  client::MQClientInstance& instance() { return *instance_; }
  env::Env& env() { return io_.env; }
  std::ostream& out() { return io_.out; }
  std::ostream& err() { return io_.err; }
  const std::string& command_name() const { return command_name_; }
  bool interrupted() const { return io_.interrupted && io_.interrupted(); }

  void succeed() { finish(kExitOk); }
  // Prints "mqadmin <command>: <status message>" to stderr; exit 1.
  void fail(const Status& status);
  // Prints the message and a pointer to help to stderr; exit 2.
  void usage_error(const std::string& message);
  void finish(int exit_code);
  bool finished() const { return exit_code_.has_value(); }
  int exit_code() const { return exit_code_.value_or(kExitFailed); }

  // Runs fn (a callback) only while this Invocation exists.
  template <typename F>
  auto guard(F fn) const {
    return lifetime_.guard(std::move(fn));
  }
  // Keeps state alive until after the instance has shut down.
  void hold(std::shared_ptr<void> state) { held_.push_back(std::move(state)); }
  // A step that stops something the command started (a consumer, a timer);
  // it calls done when stopped.
  void add_cleanup(std::function<void(client::DoneCallback done)> step) { cleanups_.push_back(std::move(step)); }

  // Runs the cleanups and shuts the instance down, driving io.run_until.
  void tear_down();

 private:
  CommandIo& io_;
  const std::string command_name_;
  const ParsedOptions options_;
  std::unique_ptr<client::MQClientInstance> instance_;
  std::optional<int> exit_code_;
  std::vector<std::function<void(client::DoneCallback)>> cleanups_;
  std::vector<std::shared_ptr<void>> held_;
  LifetimeToken lifetime_;
};

struct Command {
  std::string name;  // "updateTopic", "perf produce"
  std::string description;
  std::vector<OptionSpec> options;  // besides -n and -h, which every command has
  std::function<void(Invocation&)> execute;
  // How long mqadmin waits for the command once started (perf commands
  // compute theirs from their options: see time_limit).
  std::function<Result<Nanos>(const ParsedOptions&)> time_limit;
  // Perf commands print their summary on SIGINT and then finish themselves.
  bool handles_interrupt = false;
  // Without -n or NAMESRV_ADDR the command is refused (exit 2). Commands that
  // can work from a broker address alone say false.
  bool needs_namesrv = true;
};

// The standard limit: control requests time out in 3 s, and a command makes
// a few rounds of them.
inline Result<Nanos> default_time_limit(const ParsedOptions&) { return seconds(30); }

// Every subcommand, in the order `mqadmin help` lists them.
const std::vector<Command>& all_commands();

// The commands, one factory per file.
Command update_topic_command();
Command topic_list_command();
Command topic_route_command();
Command topic_status_command();
Command cluster_list_command();
Command broker_status_command();
Command consumer_progress_command();
Command query_msg_by_key_command();
Command query_msg_by_id_command();
Command send_message_command();
Command consume_message_command();
Command perf_produce_command();
Command perf_consume_command();

}  // namespace mqlab::admin_cli
