#include "broker/admin_cli/mqadmin.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "broker/admin_cli/text_format.h"
#include "broker/client/client_config.h"

namespace mqlab::admin_cli {
namespace {

// "a, b, c": the keys --clientConfig takes, as ClientConfig lists them.
std::string client_config_keys() {
  std::string keys;
  for (const std::string_view key : client::ClientConfig::settable_keys()) {
    keys += (keys.empty() ? "" : ", ") + std::string(key);
  }
  return keys;
}

// Every command takes these (RocketMQ's ServerUtil.buildCommandlineOptions).
std::vector<OptionSpec> common_options() {
  return {
      {'h', "help", "", "Print help"},
      {'n', "namesrvAddr", "namesrvAddr",
       "Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876' (default: env NAMESRV_ADDR)"},
      // mqlab's, not RocketMQ's mqadmin: how a real run (tools/mqrealrun.py)
      // gives the perf clients a scenario's client: section.
      {'\0', "clientConfig", "key=value;...",
       "ClientConfig keys of this command's client, eg: 'slaveReadOnUnreachableMaster=false;"
       "pollNameServerInterval=10000' (keys: " +
           client_config_keys() + ")"},
  };
}

std::vector<OptionSpec> all_options(const Command& command) {
  std::vector<OptionSpec> specs = command.options;
  for (OptionSpec& common : common_options()) specs.push_back(std::move(common));
  return specs;
}

// The command named by the first one or two words ("perf produce"), and how
// many words its name took; null when there is none.
const Command* find_command(std::span<const std::string> words, size_t* name_words) {
  for (const Command& command : all_commands()) {
    const bool two_words = command.name.find(' ') != std::string::npos;
    if (two_words && words.size() >= 2 && words[0] + " " + words[1] == command.name) {
      *name_words = 2;
      return &command;
    }
    if (!two_words && !words.empty() && words[0] == command.name) {
      *name_words = 1;
      return &command;
    }
  }
  return nullptr;
}

std::string joined(std::span<const std::string> words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

int help(std::span<const std::string> topic, CommandIo& io) {
  if (topic.empty()) {
    io.out << mqadmin_usage();
    return kExitOk;
  }
  size_t name_words = 0;
  const Command* command = find_command(topic, &name_words);
  if (command == nullptr || name_words != topic.size()) {
    io.err << "mqadmin: '" << joined(topic) << "' is not a command. See 'mqadmin help'.\n";
    return kExitUsage;
  }
  io.out << command_usage(*command);
  return kExitOk;
}

// Parses options and builds the client config; the exit code when the
// command cannot start.
struct Prepared {
  ParsedOptions options;
  client::ClientConfig config;
  Nanos time_limit = 0;
};
Result<Prepared> prepare(const Command& command, std::span<const std::string> args, CommandIo& io) {
  const std::vector<OptionSpec> specs = all_options(command);
  Prepared prepared;
  MQ_ASSIGN_OR_RETURN(prepared.options, parse_options(args, specs));
  const std::string namesrv = prepared.options.value("namesrvAddr").value_or(io.namesrv_addr_env.value_or(""));
  prepared.config.namesrvAddr = split_namesrv_addresses(namesrv);
  if (prepared.config.namesrvAddr.empty() && command.needs_namesrv) {
    return Status::InvalidArgument("no NameServer address: give -n 'host:port;host:port' or set NAMESRV_ADDR");
  }
  for (const std::string& address : prepared.config.namesrvAddr) {
    if (Result<env::HostPort> parsed = env::parse_address(address); !parsed.ok()) {
      return parsed.status().with_context("-n");
    }
  }
  prepared.config.clientIP = io.client_ip;
  prepared.config.instanceName = io.instance_name;
  if (const std::optional<std::string> settings = prepared.options.value("clientConfig")) {
    MQ_RETURN_IF_ERROR(prepared.config.set_all(*settings).with_context("--clientConfig"));
  }
  MQ_ASSIGN_OR_RETURN(prepared.time_limit, command.time_limit(prepared.options));
  MQ_ASSERT(prepared.time_limit > 0);
  return prepared;
}

int run_command(const Command& command, Prepared prepared, CommandIo& io) {
  Invocation invocation(io, command.name, std::move(prepared.options), std::move(prepared.config));
  command.execute(invocation);
  io.run_until(
      [&] { return invocation.finished() || (!command.handles_interrupt && invocation.interrupted()); },
      prepared.time_limit);
  if (!invocation.finished()) {
    if (invocation.interrupted()) {
      io.err << "mqadmin " << command.name << ": interrupted\n";
      invocation.finish(kExitInterrupted);
    } else {
      invocation.fail(Status::Timeout("no result within " + std::to_string(prepared.time_limit / kNanosPerSecond) +
                                      " s (is the NameServer or broker reachable?)"));
    }
  }
  invocation.tear_down();
  return invocation.exit_code();
}

}  // namespace

std::string mqadmin_usage() {
  std::string out = "usage: mqadmin <command> [<args>]\nThe most commonly used mqadmin commands are:\n";
  for (const Command& command : all_commands()) {
    out += strprintf("   %-20s %s\n", command.name.c_str(), command.description.c_str());
  }
  out += "\nSee 'mqadmin help <command>' for more information on a specific command.\n";
  return out;
}

std::string command_usage(const Command& command) {
  const std::vector<OptionSpec> specs = all_options(command);
  std::string line = "usage: mqadmin " + command.name;
  for (const OptionSpec& spec : specs) {
    std::string word = spec.short_name != '\0' ? std::string("-") + spec.short_name : "--" + spec.long_name;
    if (spec.takes_value()) word += " <" + spec.value_name + ">";
    line += spec.required ? " " + word : " [" + word + "]";
  }
  return command.description + "\n" + line + "\n" + describe_options(specs);
}

int run_mqadmin(std::span<const std::string> args, CommandIo& io) {
  if (args.empty()) {
    io.out << mqadmin_usage();
    return kExitOk;
  }
  if (args[0] == "help" || args[0] == "-h" || args[0] == "--help") return help(args.subspan(1), io);
  size_t name_words = 0;
  const Command* command = find_command(args, &name_words);
  if (command == nullptr && args[0] == "perf" && args.size() == 1) {
    io.err << "mqadmin: 'perf' needs a subcommand: 'perf produce' or 'perf consume'. See 'mqadmin help'.\n";
    return kExitUsage;
  }
  if (command == nullptr) {
    const std::string name = args[0] == "perf" ? args[0] + " " + args[1] : args[0];
    io.err << "mqadmin: '" << name << "' is not a command. See 'mqadmin help'.\n";
    return kExitUsage;
  }
  // Help wins over everything else on the line, even a missing required option.
  for (const std::string& arg : args.subspan(name_words)) {
    if (arg == "-h" || arg == "--help") {
      io.out << command_usage(*command);
      return kExitOk;
    }
  }
  Result<Prepared> prepared = prepare(*command, args.subspan(name_words), io);
  if (!prepared.ok()) {
    io.err << "mqadmin " << command->name << ": " << prepared.status().message() << "\n"
           << "Run 'mqadmin help " << command->name << "' for its options.\n";
    return kExitUsage;
  }
  return run_command(*command, std::move(prepared).value(), io);
}

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      update_topic_command(),      topic_list_command(),       topic_route_command(),
      topic_status_command(),      cluster_list_command(),     broker_status_command(),
      consumer_progress_command(), query_msg_by_key_command(), query_msg_by_id_command(),
      send_message_command(),      consume_message_command(),  perf_produce_command(),
      perf_consume_command(),
  };
  return commands;
}

}  // namespace mqlab::admin_cli
