// OptionParser: the command line of one mqadmin subcommand, in the shape of
// RocketMQ's commons-cli options: a short name ("-t TopicA"), a long name
// ("--topic TopicA" or "--topic=TopicA"), a value or none, required or not.
//
// Bad usage is a value, never an exception: an unknown option, a missing
// value, a missing required option, an option given twice or a stray
// positional argument is InvalidArgument naming the option as the user typed
// it, so mqadmin can print it and exit 2. Typed reads (integer, boolean)
// check ranges and spellings the same way. Values are trimmed, as RocketMQ's
// getOptionValue(..).trim() does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::admin_cli {

struct OptionSpec {
  char short_name = '\0';       // 't' for -t; '\0' for a long-only option
  std::string long_name;        // "topic" for --topic; also the key values are read by
  std::string value_name;       // "topic" in the usage line; empty = a flag without a value
  std::string description;
  bool required = false;

  bool takes_value() const { return !value_name.empty(); }
  // "-t,--topic" or "--duration": how messages name the option.
  std::string display_name() const;
};

class ParsedOptions {
 public:
  bool has(std::string_view long_name) const { return values_.contains(std::string(long_name)); }
  // The value of an option given with one; nullopt when absent.
  std::optional<std::string> value(std::string_view long_name) const;
  std::string value_or(std::string_view long_name, std::string fallback) const {
    return value(long_name).value_or(std::move(fallback));
  }
  // The value as an integer in [min, max], or fallback when absent.
  // InvalidArgument names the option, the value and the range.
  Result<int64_t> integer(std::string_view long_name, int64_t fallback, int64_t min, int64_t max) const;
  // "true" or "false" (any case), or fallback when absent.
  Result<bool> boolean(std::string_view long_name, bool fallback) const;

  // Filled by parse_options.
  void set(const OptionSpec& spec, std::string value);

 private:
  std::map<std::string, std::string> values_;            // long name -> value ("" for a flag)
  std::map<std::string, std::string> display_names_;     // long name -> "-t,--topic"
};

// Parses args (the words after the subcommand's name) against specs.
Result<ParsedOptions> parse_options(std::span<const std::string> args, std::span<const OptionSpec> specs);

// One line per option, RocketMQ's help layout:
//  " -t,--topic <topic>         topic name"
std::string describe_options(std::span<const OptionSpec> specs);

}  // namespace mqlab::admin_cli
