#include "broker/config/properties_file.h"

#include <boost/program_options.hpp>
#include <algorithm>
#include <sstream>

namespace mqlab::config {
namespace {

namespace po = boost::program_options;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

Status bad_line(std::string_view file_name, int line, std::string_view why) {
  return Status::InvalidArgument(std::string(file_name) + ":" + std::to_string(line) + ": " + std::string(why));
}

// One line through Program_options' config-file parser. Lines are parsed one
// at a time because the parser does not report line numbers, and a warning
// or error that names no line sends the user hunting.
Result<std::vector<po::option>> parse_line(std::string_view line, const po::options_description& description) {
  std::istringstream in{std::string(line)};
  try {
    return po::parse_config_file(in, description, /*allow_unregistered=*/true).options;
  } catch (const po::error& error) {
    return Status::InvalidArgument(error.what());
  }
}

}  // namespace

Result<std::vector<Property>> parse_properties(std::string_view text, std::string_view file_name,
                                               const std::set<std::string>& known_keys) {
  po::options_description description;
  for (const std::string& key : known_keys) {
    MQ_ASSERT(!key.empty());
    description.add_options()(key.c_str(), po::value<std::string>());
  }
  std::vector<Property> properties;
  int number = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = trim(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
    ++number;
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    if (line.front() == '[') return bad_line(file_name, number, "a [section] line: properties files have no sections");
    if (line.find('=') == std::string_view::npos) {
      return bad_line(file_name, number, "expected key=value, got '" + std::string(line) + "'");
    }
    Result<std::vector<po::option>> parsed = parse_line(line, description);
    if (!parsed.ok()) return bad_line(file_name, number, parsed.status().message());
    std::vector<po::option>& options = *parsed;
    MQ_ASSERT(options.size() <= 1);  // one line holds one option
    if (options.empty()) continue;   // the whole line was a comment after all
    po::option& option = options.front();
    if (option.string_key.empty()) return bad_line(file_name, number, "no key before '='");
    MQ_ASSERT(option.value.size() == 1);
    const bool known = known_keys.count(option.string_key) != 0;
    MQ_ASSERT(known == !option.unregistered);  // the parser and we agree on what is known
    properties.push_back(Property{option.string_key, option.value.front(), number, known});
  }
  return properties;
}

std::string ApplyReport::where(std::string_view file_name, const std::string& key) const {
  auto it = lines.find(key);
  if (it == lines.end()) return std::string(file_name);
  return std::string(file_name) + ":" + std::to_string(it->second);
}

ApplyReport apply_properties(const std::vector<Property>& properties, std::string_view file_name,
                             const std::function<Status(const Property&)>& set) {
  ApplyReport report;
  const std::string file(file_name);
  for (const Property& property : properties) {
    MQ_ASSERT(property.line > 0);
    const std::string where = file + ":" + std::to_string(property.line) + ": ";
    if (!property.known) {
      report.warnings.push_back(where + "unknown key '" + property.key + "' ignored");
      continue;
    }
    if (auto earlier = report.lines.find(property.key); earlier != report.lines.end()) {
      report.warnings.push_back(where + "'" + property.key + "' set again; this line overrides line " +
                                std::to_string(earlier->second));
    }
    report.lines[property.key] = property.line;
    if (Status status = set(property); !status.ok()) report.errors.push_back(where + status.message());
  }
  return report;
}

}  // namespace mqlab::config
