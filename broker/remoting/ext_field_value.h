// Typed reads of one extFields value that has already been found: the rules
// of RemotingCommand's ext_* reads (remoting_command.h), shared with the
// typed header readers of the hot requests and responses (SEND_MESSAGE(_V2),
// PULL_MESSAGE and their responses). Those walk ext_fields once and pick out
// every field they know, instead of searching for each field by name: a
// send or pull header has a dozen fields, and a search per field cost more
// than the walk.
//
// `value` null means the peer left the field out. The errors are
// RemotingCommand's, word for word: missing "the custom field <name> is
// null" (RocketMQ's own words), malformed "the custom field <name> is not
// a valid int64: "abc"".
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "broker/common/decimal_text.h"
#include "broker/common/same_bytes.h"
#include "broker/common/status.h"

namespace mqlab::remoting {

// Equality of two names (same_bytes.h: inline, by words).
inline bool same_ext_name(std::string_view a, std::string_view b) { return same_text(a, b); }

Status missing_ext_field(std::string_view name);
Status malformed_ext_field(std::string_view name, std::string_view expected, std::string_view value);

// "true"/"false" in any case, and "1"/"0" (C and C++ clients print bools as
// digits); nullopt for anything else.
std::optional<bool> parse_ext_bool(std::string_view text);

// The integer reads in full: Java's parse rules ('+', any length) and the
// errors. The inline reads below take the common case first.
Result<int64_t> read_ext_int_in_full(std::string_view name, const std::string_view* value);
Result<int32_t> read_ext_int32_in_full(std::string_view name, const std::string_view* value);
Result<std::optional<int64_t>> read_optional_ext_int_in_full(std::string_view name, const std::string_view* value);
Result<std::optional<int32_t>> read_optional_ext_int32_in_full(std::string_view name, const std::string_view* value);

// read_plain_decimal (common/decimal_text.h) within int32.
inline bool read_plain_int32(std::string_view text, int32_t& out) {
  int64_t wide = 0;
  if (!read_plain_decimal(text, wide)) return false;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) return false;
  out = static_cast<int32_t>(wide);
  return true;
}

// Required reads: missing or malformed is InvalidArgument naming the field.
Result<std::string> read_ext_string(std::string_view name, const std::string_view* value);
Result<bool> read_ext_bool(std::string_view name, const std::string_view* value);
// Inline, plain decimal first: a send or pull header has up to nine
// numbers, and a call through parse_int64 and a Result for each cost about
// 200 instructions (3% of a simulator run in all; inline, the run takes
// 0.9% fewer instructions); everything else goes in full.
inline Result<int64_t> read_ext_int(std::string_view name, const std::string_view* value) {
  int64_t plain = 0;
  if (value != nullptr && read_plain_decimal(*value, plain)) return plain;
  return read_ext_int_in_full(name, value);
}
inline Result<int32_t> read_ext_int32(std::string_view name, const std::string_view* value) {
  int32_t plain = 0;
  if (value != nullptr && read_plain_int32(*value, plain)) return plain;
  return read_ext_int32_in_full(name, value);
}

// Optional reads: absent is nullopt; present but malformed is still an error.
Result<std::optional<bool>> read_optional_ext_bool(std::string_view name, const std::string_view* value);
inline Result<std::optional<int64_t>> read_optional_ext_int(std::string_view name, const std::string_view* value) {
  int64_t plain = 0;
  if (value == nullptr) return std::optional<int64_t>();
  if (read_plain_decimal(*value, plain)) return std::optional<int64_t>(plain);
  return read_optional_ext_int_in_full(name, value);
}
inline Result<std::optional<int32_t>> read_optional_ext_int32(std::string_view name, const std::string_view* value) {
  int32_t plain = 0;
  if (value == nullptr) return std::optional<int32_t>();
  if (read_plain_int32(*value, plain)) return std::optional<int32_t>(plain);
  return read_optional_ext_int32_in_full(name, value);
}

// target = the read's value, or the read's error: a typed header reader's
// one line per field (a case of a switch, where MQ_ASSIGN_OR_RETURN's
// temporary would need a block of its own).
template <typename T, typename U>
Status assign_read(T& target, Result<U> read) {
  if (!read.ok()) return read.status();
  target = std::move(read).value();
  return Status::Ok();
}

}  // namespace mqlab::remoting
