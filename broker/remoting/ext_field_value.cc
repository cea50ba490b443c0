#include "broker/remoting/ext_field_value.h"

#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {
namespace {

constexpr std::string_view kInt64 = "int64";
constexpr std::string_view kInt32 = "int32";
constexpr std::string_view kBoolean = "boolean (true or false)";

bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The optional read shared by every type: absent -> nullopt, present ->
// parse(value) or a malformed-field error naming `expected`.
template <typename T, typename Parse>
Result<std::optional<T>> read_optional(std::string_view name, const std::string_view* value, std::string_view expected,
                                       Parse parse) {
  if (value == nullptr) return std::optional<T>();
  const std::optional<T> parsed = parse(*value);
  if (!parsed) return malformed_ext_field(name, expected, *value);
  return parsed;
}

// The required read: one Result, not an optional one unwrapped into a
// second (a pull or send header makes a dozen of these per message).
template <typename T, typename Parse>
Result<T> read_required(std::string_view name, const std::string_view* value, std::string_view expected, Parse parse) {
  if (value == nullptr) return missing_ext_field(name);
  const std::optional<T> parsed = parse(*value);
  if (!parsed) return malformed_ext_field(name, expected, *value);
  return *parsed;
}

}  // namespace

// RemotingCommand.decodeCommandCustomHeader's message for a missing
// @CFNotNull field, word for word.
Status missing_ext_field(std::string_view name) {
  return Status::InvalidArgument("the custom field <" + std::string(name) + "> is null");
}

Status malformed_ext_field(std::string_view name, std::string_view expected, std::string_view value) {
  return Status::InvalidArgument("the custom field <" + std::string(name) + "> is not a valid " +
                                 std::string(expected) + ": \"" + printable_excerpt(value) + "\"");
}

std::optional<bool> parse_ext_bool(std::string_view text) {
  if (equals_ignoring_ascii_case(text, "true") || text == "1") return true;
  if (equals_ignoring_ascii_case(text, "false") || text == "0") return false;
  return std::nullopt;
}

Result<std::string> read_ext_string(std::string_view name, const std::string_view* value) {
  if (value == nullptr) return missing_ext_field(name);
  return std::string(*value);
}

Result<int64_t> read_ext_int_in_full(std::string_view name, const std::string_view* value) {
  return read_required<int64_t>(name, value, kInt64, parse_int64);
}

Result<int32_t> read_ext_int32_in_full(std::string_view name, const std::string_view* value) {
  return read_required<int32_t>(name, value, kInt32, parse_int32);
}

Result<bool> read_ext_bool(std::string_view name, const std::string_view* value) {
  return read_required<bool>(name, value, kBoolean, parse_ext_bool);
}

Result<std::optional<int64_t>> read_optional_ext_int_in_full(std::string_view name, const std::string_view* value) {
  return read_optional<int64_t>(name, value, kInt64, parse_int64);
}

Result<std::optional<int32_t>> read_optional_ext_int32_in_full(std::string_view name, const std::string_view* value) {
  return read_optional<int32_t>(name, value, kInt32, parse_int32);
}

Result<std::optional<bool>> read_optional_ext_bool(std::string_view name, const std::string_view* value) {
  return read_optional<bool>(name, value, kBoolean, parse_ext_bool);
}

}  // namespace mqlab::remoting
