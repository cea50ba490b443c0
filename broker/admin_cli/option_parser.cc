#include "broker/admin_cli/option_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace mqlab::admin_cli {
namespace {

std::string trim_option_text(std::string_view text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

const OptionSpec* find_short(std::span<const OptionSpec> specs, char name) {
  for (const OptionSpec& spec : specs) {
    if (spec.short_name != '\0' && spec.short_name == name) return &spec;
  }
  return nullptr;
}

const OptionSpec* find_long(std::span<const OptionSpec> specs, std::string_view name) {
  for (const OptionSpec& spec : specs) {
    if (spec.long_name == name) return &spec;
  }
  return nullptr;
}

// Whether word names one of the options: then it is not a value, and the
// option before it is missing its value (commons-cli's rule).
bool names_an_option(std::span<const OptionSpec> specs, std::string_view word) {
  if (word.starts_with("--")) {
    std::string_view name = word.substr(2);
    name = name.substr(0, name.find('='));
    return find_long(specs, name) != nullptr;
  }
  return word.size() >= 2 && word[0] == '-' && find_short(specs, word[1]) != nullptr;
}

struct Word {
  const OptionSpec* spec = nullptr;
  std::optional<std::string> inline_value;  // "--topic=T" or "-tT"
};

Result<Word> classify(std::span<const OptionSpec> specs, const std::string& arg) {
  if (arg.starts_with("--") && arg.size() > 2) {
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const OptionSpec* spec = find_long(specs, name);
    if (spec == nullptr) return Status::InvalidArgument("unknown option '--" + name + "'");
    if (equals == std::string::npos) return Word{spec, std::nullopt};
    if (!spec->takes_value()) return Status::InvalidArgument("option " + spec->display_name() + " takes no value");
    return Word{spec, arg.substr(equals + 1)};
  }
  if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
    const OptionSpec* spec = find_short(specs, arg[1]);
    if (spec == nullptr) return Status::InvalidArgument("unknown option '" + arg.substr(0, 2) + "'");
    if (arg.size() == 2) return Word{spec, std::nullopt};
    if (!spec->takes_value()) return Status::InvalidArgument("option " + spec->display_name() + " takes no value");
    return Word{spec, arg.substr(2)};
  }
  return Status::InvalidArgument("unexpected argument '" + arg + "'");
}

}  // namespace

std::string OptionSpec::display_name() const {
  MQ_ASSERT(!long_name.empty());
  if (short_name == '\0') return "--" + long_name;
  return std::string("-") + short_name + ",--" + long_name;
}

std::optional<std::string> ParsedOptions::value(std::string_view long_name) const {
  const auto found = values_.find(std::string(long_name));
  if (found == values_.end()) return std::nullopt;
  return found->second;
}

void ParsedOptions::set(const OptionSpec& spec, std::string value) {
  MQ_ASSERT(!values_.contains(spec.long_name));  // parse_options refuses repeats
  values_[spec.long_name] = std::move(value);
  display_names_[spec.long_name] = spec.display_name();
}

Result<int64_t> ParsedOptions::integer(std::string_view long_name, int64_t fallback, int64_t min, int64_t max) const {
  MQ_ASSERT(min <= max);
  const std::optional<std::string> text = value(long_name);
  if (!text) return fallback;
  int64_t parsed = 0;
  const char* end = text->data() + text->size();
  const auto [stop, error] = std::from_chars(text->data(), end, parsed);
  if (text->empty() || error != std::errc() || stop != end || parsed < min || parsed > max) {
    return Status::InvalidArgument("bad value '" + *text + "' for " + display_names_.at(std::string(long_name)) +
                                   ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return parsed;
}

Result<bool> ParsedOptions::boolean(std::string_view long_name, bool fallback) const {
  const std::optional<std::string> text = value(long_name);
  if (!text) return fallback;
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true") return true;
  if (lower == "false") return false;
  return Status::InvalidArgument("bad value '" + *text + "' for " + display_names_.at(std::string(long_name)) +
                                 ": expected true or false");
}

Result<ParsedOptions> parse_options(std::span<const std::string> args, std::span<const OptionSpec> specs) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    MQ_ASSIGN_OR_RETURN(Word word, classify(specs, args[i]));
    const OptionSpec& spec = *word.spec;
    if (parsed.has(spec.long_name)) return Status::InvalidArgument("option " + spec.display_name() + " given twice");
    if (!spec.takes_value()) {
      parsed.set(spec, "");
      continue;
    }
    if (!word.inline_value) {
      if (i + 1 == args.size() || names_an_option(specs, args[i + 1])) {
        return Status::InvalidArgument("option " + spec.display_name() + " needs a value <" + spec.value_name + ">");
      }
      word.inline_value = args[++i];
    }
    parsed.set(spec, trim_option_text(*word.inline_value));
  }
  for (const OptionSpec& spec : specs) {
    if (spec.required && !parsed.has(spec.long_name)) {
      return Status::InvalidArgument("missing required option " + spec.display_name());
    }
  }
  return parsed;
}

std::string describe_options(std::span<const OptionSpec> specs) {
  std::vector<std::string> heads;
  size_t width = 0;
  for (const OptionSpec& spec : specs) {
    std::string head = spec.short_name == '\0' ? "    --" + spec.long_name
                                               : std::string(" -") + spec.short_name + ",--" + spec.long_name;
    if (spec.takes_value()) head += " <" + spec.value_name + ">";
    width = std::max(width, head.size());
    heads.push_back(std::move(head));
  }
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    out += heads[i] + std::string(width + 3 - heads[i].size(), ' ') + specs[i].description;
    if (specs[i].required) out += " (required)";
    out += "\n";
  }
  return out;
}

}  // namespace mqlab::admin_cli
