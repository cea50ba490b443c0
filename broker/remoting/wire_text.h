// Wire text: how remoting turns untrusted text from a peer (extFields values,
// JSON headers and bodies) into values, and into error messages that are safe
// to log and to send back as a remark.
//
// Nothing here throws and nothing asserts on the input: nlohmann::json throws
// on bad JSON, so the parse is wrapped and the exception becomes a Status
// naming what was parsed and where it broke. Numbers follow Java's
// Long.parseLong / Integer.parseInt (an optional sign, then decimal digits,
// no spaces), because a Java broker is what every client was tested against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "broker/common/printable.h"
#include "broker/common/status.h"

namespace mqlab::remoting {

// A peer's text as it may appear in a log line or remark (common/printable.h).
using mqlab::printable_excerpt;

// Java's Long.parseLong / Integer.parseInt: [+-]?[0-9]+ within range.
std::optional<int64_t> parse_int64(std::string_view text);
std::optional<int32_t> parse_int32(std::string_view text);

// How deep a JSON body may nest. RocketMQ's bodies nest 5 levels at most;
// the limit is checked before parsing, because a DOM of deep nesting costs
// about 75 bytes of memory per input byte ("[[[[...").
inline constexpr size_t kMaxJsonDepth = 64;

// Parses a whole JSON document. InvalidArgument "<what>: invalid JSON: <the
// parser's reason and position>", or "<what>: JSON nested deeper than 64
// levels at byte N", on failure.
Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what);

// Compact text with keys in sorted order (nlohmann's object is a std::map),
// the same order fastjson writes; invalid UTF-8 is replaced, never thrown on.
std::string dump_json_text(const nlohmann::json& value);

// The value as an int32 when it is a JSON integer in range; nullopt otherwise.
std::optional<int32_t> json_int32(const nlohmann::json& value);

// "a string", "an array", "the integer 5", ...: for messages.
std::string json_type_phrase(const nlohmann::json& value);

// Reads object[key] into *out when it is present and not null; leaves *out
// untouched otherwise (fastjson omits nulls, so absent means "default").
// InvalidArgument "<where>.<key>: expected ..., found ..." on a wrong type or
// an integer outside the target's range. Requires: object is an object.
Status read_json_field(const nlohmann::json& object, std::string_view key, int32_t* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, std::string_view key, int64_t* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, std::string_view key, bool* out, std::string_view where);
Status read_json_field(const nlohmann::json& object, std::string_view key, std::string* out, std::string_view where);

}  // namespace mqlab::remoting
