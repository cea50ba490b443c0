// mqadmin: RocketMQ's admin tool over the mqlab client library. run_mqadmin
// takes the words after the program name, finds the subcommand (RocketMQ's
// names: updateTopic, topicList, ..., plus "perf produce" / "perf consume"),
// parses its options, runs it on the given Env and returns the exit code
// (command.h lists them). programs/mqadmin.cc hands it the real Env; tests
// hand it a simulated one and string streams.
//
//   mqadmin                       usage (the command list), exit 0
//   mqadmin help [<command>]      usage, or one command's options, exit 0
//   mqadmin <command> -h          the command's options, exit 0
//   mqadmin <command> [options]   runs it; -n "host:port;host:port" names the
//                                 NameServers (default: env NAMESRV_ADDR)
#pragma once

#include <span>
#include <string>

#include "broker/admin_cli/command.h"

namespace mqlab::admin_cli {

int run_mqadmin(std::span<const std::string> args, CommandIo& io);

// The command list, RocketMQ's layout.
std::string mqadmin_usage();
// "usage: mqadmin <name> [options]" and one line per option.
std::string command_usage(const Command& command);

}  // namespace mqlab::admin_cli
