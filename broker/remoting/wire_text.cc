#include "broker/remoting/wire_text.h"

#include <charconv>
#include <limits>

#include "broker/common/decimal_text.h"

namespace mqlab::remoting {
namespace {

std::string field_path(std::string_view where, std::string_view key) {
  std::string path(where);
  path += '.';
  path += key;
  return path;
}

Status wrong_type(std::string_view where, std::string_view key, std::string_view expected,
                  const nlohmann::json& found) {
  return Status::InvalidArgument(field_path(where, key) + ": expected " + std::string(expected) + ", found " +
                                 json_type_phrase(found));
}

// The JSON integer in value when it lies in [min, max]; nullopt for a
// non-integer or an integer outside the range. nlohmann keeps non-negative
// integers as uint64 and negative ones as int64, so both are checked.
std::optional<int64_t> json_integer_in(const nlohmann::json& value, int64_t min, int64_t max) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(max)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) {
    const auto v = value.get<int64_t>();
    if (v < min || v > max) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

template <typename Int>
Status read_integer_field(const nlohmann::json& object, std::string_view key, Int* out, std::string_view where,
                          std::string_view expected) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  const auto value =
      json_integer_in(*it, std::numeric_limits<Int>::min(), std::numeric_limits<Int>::max());
  if (!value) return wrong_type(where, key, expected, *it);
  *out = static_cast<Int>(*value);
  return Status::Ok();
}

// The byte at which text's nesting of [ and { first exceeds max_depth,
// outside string literals; nullopt when it never does.
std::optional<size_t> first_byte_deeper_than(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> parse_int64(std::string_view text) {
  // std::from_chars takes a '-' but not a '+'; Java takes both, once.
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') {
    digits.remove_prefix(1);
    if (!digits.empty() && digits.front() == '-') return std::nullopt;
  }
  if (digits.empty()) return std::nullopt;
  int64_t value = 0;
  if (read_plain_decimal(digits, value)) return value;
  const char* end = digits.data() + digits.size();
  const auto [ptr, error] = std::from_chars(digits.data(), end, value, 10);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<int32_t> parse_int32(std::string_view text) {
  const std::optional<int64_t> value = parse_int64(text);
  if (!value) return std::nullopt;
  if (*value < std::numeric_limits<int32_t>::min() || *value > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(*value);
}

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what) {
  if (const std::optional<size_t> at = first_byte_deeper_than(text, kMaxJsonDepth)) {
    return Status::InvalidArgument(std::string(what) + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                   " levels at byte " + std::to_string(*at));
  }
  // nlohmann reports every error by throwing, which stops here.
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const std::exception& error) {
    return Status::InvalidArgument(std::string(what) + ": invalid JSON: " + error.what());
  }
}

std::optional<int32_t> json_int32(const nlohmann::json& value) {
  const std::optional<int64_t> integer =
      json_integer_in(value, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  if (!integer) return std::nullopt;
  return static_cast<int32_t>(*integer);
}

std::string dump_json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_type_phrase(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "the integer " + value.dump();
    case nlohmann::json::value_t::number_float: return "the number " + value.dump();
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  return "a non-JSON value";
}

Status read_json_field(const nlohmann::json& object, std::string_view key, int32_t* out, std::string_view where) {
  return read_integer_field(object, key, out, where, "an int32");
}

Status read_json_field(const nlohmann::json& object, std::string_view key, int64_t* out, std::string_view where) {
  return read_integer_field(object, key, out, where, "an int64");
}

Status read_json_field(const nlohmann::json& object, std::string_view key, bool* out, std::string_view where) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return wrong_type(where, key, "a boolean", *it);
  *out = it->get<bool>();
  return Status::Ok();
}

Status read_json_field(const nlohmann::json& object, std::string_view key, std::string* out,
                       std::string_view where) {
  MQ_ASSERT(object.is_object());
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return wrong_type(where, key, "a string", *it);
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace mqlab::remoting
