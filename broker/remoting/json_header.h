// The JSON header (serialize type 0): RemotingCommand's header fields as one
// UTF-8 JSON object (apache/rocketmq remoting/…/protocol/RemotingSerializable.java
// via fastjson; ali-ons lib/protocol/command/remoting_command.js).
//
//   {"code":310,"extFields":{"a":"G","e":"1"},"flag":0,"language":"JAVA",
//    "opaque":17,"remark":"...","serializeTypeCurrentRPC":"JSON","version":407}
//
// | key                     | written                  | read                              |
// |-------------------------|--------------------------|-----------------------------------|
// | code                    | always                   | required int32                    |
// | extFields               | always, values strings   | object or null; see below         |
// | flag, opaque, version   | always                   | int32 or null; absent = 0         |
// | language                | always                   | string or null; absent = JAVA     |
// | remark                  | only when non-empty      | string or null                    |
// | serializeTypeCurrentRPC | "JSON", as Java writes   | ignored, like every unknown key   |
//
// Keys are written sorted (fastjson's order) and every extFields value as a
// JSON string (what Java brokers send; "extFields" is written even when empty:
// a JS client reading a missing one gets undefined). extFields values are
// read from what clients really send: strings as they are, numbers and
// booleans stringified (ali-ons sends "d":4, "k":false): 4 -> "4", -1 -> "-1",
// false -> "false", an integral double such as 4.0 or 1e3 -> "4", "1000"
// (JavaScript has one number type), other doubles in their shortest form
// ("1.5"); null values are dropped, as ali-ons drops undefined.
//
// Both directions have a fast path (json_header_fast_path.cc) for the
// headers peers really send (ASCII text, integer fields; extFields values as
// strings, or as ali-ons' bare integers, booleans and nulls) and a general
// path through nlohmann's serializer and SAX parser for everything else,
// errors included. The fast paths must agree with the general ones byte for
// byte and field for field (json_header_fast_path_prop_test.cc and
// fuzz/json_header_fuzzer.cc check it); the general ones are exported for
// those checks and remoting_bench only.
//
// Reading is a SAX pass that builds the command directly and skips unknown
// keys without materialising them, so a hostile header costs no memory beyond
// its own bytes (a DOM of 16 MiB of "[" takes over a gigabyte) and no stack.
// Every error is Corruption: "JSON header: invalid JSON: <parser's reason and
// byte position>", "JSON header is an array, expected an object", "JSON
// header has no \"code\"", "JSON header.code: expected an int32, found a
// string", "JSON header: extFields.a: expected a string, number or boolean,
// found an array".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/remoting/json_header_shapes.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// Appends command's header as compact JSON; strings that are not valid UTF-8
// (from a ROCKETMQ peer) are written with U+FFFD rather than refused.
void append_json_header(const RemotingCommand& command, std::vector<uint8_t>& out);

// The header fields of a command (body empty), serialize_type JSON. Fields
// the peer left out hold what Java's RemotingCommand holds: version 0,
// language JAVA.
Result<RemotingCommand> decode_json_header(std::span<const uint8_t> header);
// The same into command, as it was default-constructed (a RemotingCommand
// that has held nothing): the frame decoder decodes each frame in place,
// where returning it moved the command three times on the way. shapes, when
// given, are the connection's known header shapes (json_header_shapes.h):
// tried first, and taught the shape of a header none matched.
Status decode_json_header_into(std::span<const uint8_t> header, RemotingCommand& command,
                               JsonHeaderShapes* shapes = nullptr);

// A JSON string literal of text, quotes included: what append_json_header
// writes for every string of a header (escapes as nlohmann's serializer,
// invalid UTF-8 as U+FFFD). For callers that write a header of their own
// (api::append_send_message_v2_json_header) and must match it byte for byte.
void append_json_string_literal(std::string_view text, std::vector<uint8_t>& out);
// The same through a pointer: writes the literal at p and returns its end,
// or null when text holds a non-ASCII byte (then append_json_string_literal
// decides; what was written is garbage). Requires room at p for
// kMaxEscapedBytesPerByte bytes a byte of text, and its quotes.
inline constexpr size_t kMaxEscapedBytesPerByte = 6;  // "\u00xx"
char* put_json_string_literal_if_ascii(std::string_view text, char* p);

// The general paths alone: what the two functions above must equal.
void append_json_header_general(const RemotingCommand& command, std::vector<uint8_t>& out);
Result<RemotingCommand> decode_json_header_general(std::span<const uint8_t> header);

// What a header decodes to before its fields are read: what Java's
// RemotingCommand holds for a field the peer left out (version 0, language
// JAVA). Both readers start from it.
RemotingCommand json_header_defaults();
// Turns a default-constructed command into json_header_defaults().
void to_json_header_defaults(RemotingCommand& command);

// The fast reader alone: the command, or nullopt when the header strays
// from the common shape and the general path decides (errors included).
// For tests and benchmarks: what real clients send must not stray.
std::optional<RemotingCommand> decode_json_header_fast(std::span<const uint8_t> header);
// The same into command, which must hold json_header_defaults(): false
// (command then half read) when the general path must decide. shapes as
// for decode_json_header_into.
bool decode_json_header_fast_into(std::span<const uint8_t> header, RemotingCommand& command,
                                  JsonHeaderShapes* shapes = nullptr);

}  // namespace mqlab::remoting
