// JsonHeaderShapes: the shapes of the JSON headers one connection has read
// lately, so that a header of a known shape is read by comparing its text
// with the shape's and parsing only its values.
//
// A peer sends the same few headers over and over: a producer's
// SEND_MESSAGE_V2 always has the keys "code", "extFields" with "a".."n",
// "flag", "language", ... in one order, and only the values change. A shape
// is such a header with its values cut out: the literal text between them
// (punctuation, keys, the quotes around string values) and, for each value,
// where it goes (code, opaque, language, an extFields value under the name
// the literal before it holds, or nowhere for a key we ignore). Reading
// against a shape costs a comparison of a few bytes per key instead of
// scanning and dispatching each key, the larger half of the fast reader's
// work (json_header_fast_path.cc), which every arriving frame pays.
//
// Why a match reads as the fast reader would: a header that matches has the
// learned header's text outside its values, and each value is read by the
// same rules (json_text_scan.h) as a value of the same kind; so the fast
// reader would take the same keys in the same order to the same places.
// Shapes are learned only from headers the fast reader read in full that
// have no escaped key, no extFields value other than a string (ali-ons'
// bare numbers and booleans), no repeated extFields object and no repeated
// extFields name, so replaying the values in order is the whole effect.
// json_header_shapes_test.cc checks matches against the fast reader.
//
// Invariants: at most kMaxShapes shapes, most recently matched first; each
// shape has at most kMaxValues values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// Where a header's value goes.
enum class JsonHeaderSlot : uint8_t {
  kCode,
  kFlag,
  kOpaque,
  kVersion,
  kLanguage,
  kRemark,
  kExtValue,        // a string, stored under the extFields name before it
  kIgnoredString,   // the value of a key the reader ignores (serializeTypeCurrentRPC)
  kIgnoredNumber,
};

// What the fast reader saw of one value, as byte offsets into the header:
// a string's content (between its quotes), a number's text; for an
// extFields value, its name's content too.
struct JsonHeaderValueSpan {
  JsonHeaderSlot slot;
  uint32_t begin;
  uint32_t end;
  uint32_t name_begin = 0;
  uint32_t name_size = 0;
};

// Filled by the fast reader as it reads a header, in order; usable false
// when the header is not one to learn a shape from (the file comment).
struct JsonHeaderShapeRecorder {
  std::vector<JsonHeaderValueSpan> values;
  bool usable = true;
};

class JsonHeaderShapes {
 public:
  static constexpr size_t kMaxShapes = 4;
  static constexpr size_t kMaxValues = 32;

  // Reads text, a header the command's extFields hold (hold_text), into
  // command (json_header_defaults()) when it has a known shape: true. False
  // when none matches: command is untouched, but text may have been
  // changed (escaped strings decoded in place) and must be copied again.
  bool read(std::string_view text, RemotingCommand& command);

  // Learns the shape of header, which the fast reader read in full while
  // recording into recorder; ignored when the recorder says it is unusable.
  // The least recently matched shape makes room.
  void learn(std::span<const uint8_t> header, const JsonHeaderShapeRecorder& recorder);

  size_t size() const { return shapes_.size(); }

 private:
  struct Value {
    JsonHeaderSlot slot;
    uint32_t literal_begin;  // the literal before the value, in Shape::text
    uint32_t literal_size;
    uint32_t name_offset;  // kExtValue: the name's place in that literal
    uint32_t name_size;
  };
  struct Shape {
    std::string text;  // the literals, one after another
    std::vector<Value> values;
    uint32_t tail_begin = 0;  // the literal after the last value, to the end of text
    // Whether the extFields names strictly increase along values (Java's
    // and mqlab's writers sort them): a match then appends each field to
    // the command's ExtFields without comparing it with the one before.
    bool ext_names_ascending = true;
  };

  // Requires: text as for read. True when text matches shape; command is
  // then filled, else as it came.
  static bool read_as(const Shape& shape, std::string_view text, RemotingCommand& command);
  // Puts a command read_as half filled back to json_header_defaults();
  // returns false, read_as's answer.
  static bool mismatch(RemotingCommand& command);

  std::vector<Shape> shapes_;  // most recently matched first
};

}  // namespace mqlab::remoting
