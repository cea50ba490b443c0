// PropertiesFile: the text of a RocketMQ configuration file (broker.conf,
// namesrv.conf), a Java-properties file as RocketMQ ships them, split into
// numbered key=value lines by Boost.Program_options' config-file parser.
//
// Accepted, line by line:
//   key=value     whitespace around key and value is trimmed; the value may
//                 be empty and may hold spaces ("1s 5s 10s")
//   # comment     also '!' (Java's other comment mark); blank lines
// Refused (a Status naming file and line): a line without '=' (Java's
// "key value" and "key:value" forms, which RocketMQ's own files never use),
// an empty key, a "[section]" line (INI, not properties).
// Differences from java.util.Properties, all absent from RocketMQ's files:
// a '#' inside a value starts a comment (Program_options' rule), and there
// are no '\' escapes or continuation lines.
//
// The text is the caller's to read (the programs read the file; broker/
// touches files only through the Env). Which keys are known is the caller's: they are registered with the parser
// and unknown ones come back marked (allow_unregistered), so the caller can
// warn naming key and line. A key given twice comes back twice, in order.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::config {

struct Property {
  std::string key;
  std::string value;
  int line = 0;        // 1-based
  bool known = false;  // key is one of known_keys
};

// Requires: every known key is non-empty. file_name only names the file in
// errors ("broker.conf:12: ...").
Result<std::vector<Property>> parse_properties(std::string_view text, std::string_view file_name,
                                               const std::set<std::string>& known_keys);

// What applying a file's properties to config objects found. Messages are
// "file:line: ..." so an editor can jump there.
struct ApplyReport {
  std::vector<std::string> warnings;  // unknown keys (ignored, as RocketMQ ignores them), repeated keys
  std::vector<std::string> errors;    // values set() refused: "file:line: key=value: what is allowed"
  std::map<std::string, int> lines;   // key -> the line whose value took effect

  // "file:line" of key when the file set it, else "file".
  std::string where(std::string_view file_name, const std::string& key) const;
};

// Calls set(property) for every known property, in file order (a repeated key:
// the last wins, as in java.util.Properties, with a warning). set returns the
// error for a value it refuses, which should read "key=value: what is allowed".
ApplyReport apply_properties(const std::vector<Property>& properties, std::string_view file_name,
                             const std::function<Status(const Property&)>& set);

}  // namespace mqlab::config
