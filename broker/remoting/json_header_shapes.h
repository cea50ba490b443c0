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
// A connection's headers of one shape differ in a few values and are
// mostly the same length (an opaque, a queue offset and a timestamp count
// up; a topic, a group and the header's keys stay): of the 95,450 headers
// of two simulated minutes of the standard scenario, 95,199 had the length
// of the one before them of their shape. So each shape also keeps the last
// header read as it, as it came, and where each value lay in it; a header
// of that length is compared with it 16 bytes at a time, and only the
// values whose text differs are read again (read_against_last). A
// difference outside the values' places, or a value that no longer ends
// where it did, is not this path's: the header is read against the shape's
// literals as before (read_as).
//
// Each run of headers read against the last one makes a lineage
// (ExtFieldsLineage in ext_fields.h): a header read against its shape's
// literals starts one, each header read against the last one continues it
// and tells which extFields values changed (those read again), and any
// mismatch ends it. A processor can then keep what it parsed from a
// connection's last SEND_MESSAGE_V2 or PULL_MESSAGE and parse only the
// values that changed (remoting/lineage_memo.h). Only shapes whose names
// ascend (so the table's places are the values' order) and that have at
// most ExtFieldsLineage::kMaxFields extFields values make lineages.
//
// Escaped strings are decoded in place, over the header's text: a shape
// that fails after doing so hands the header on to the caller, which copies
// it again, instead of letting another shape read the changed text.
//
// Invariants: at most kMaxShapes shapes, most recently matched first, no
// two alike; each shape has at most kMaxValues values. A shape's last
// header, when it has one, has the shape's literals between its values, and
// the value at last_values[i]'s place reads (by json_text_scan.h's rules) to
// what last_values[i] holds, ending where it says.
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
  static constexpr size_t kMaxValues = 32;  // a bit each in Shape::escaped

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
    bool operator==(const Value&) const = default;
  };
  // Where a value lay in a shape's last header, and what it read as.
  struct LastValue {
    uint32_t begin = 0;  // a string's content (between its quotes), a number's text
    uint32_t end = 0;
    // A string's content decoded in place ends here: end, unless it holds
    // escapes (then set each time the header is decoded).
    uint32_t content_end = 0;
    uint32_t name_begin = 0;  // an extFields value's name
    uint32_t name_size = 0;   // Value::name_size, beside the rest for the loop that sets the table
    int32_t number = 0;       // a number's value
  };
  struct Shape {
    std::string text;  // the literals, one after another
    std::vector<Value> values;
    uint32_t tail_begin = 0;  // the literal after the last value, to the end of text
    // Whether the extFields names strictly increase along values (Java's
    // and mqlab's writers sort them): a match then appends each field to
    // the command's ExtFields without comparing it with the one before.
    bool ext_names_ascending = true;
    // The last header read as this shape, as it came (escapes undecoded);
    // empty when there is none to compare with.
    std::string last;
    std::vector<LastValue> last_values;  // one per value
    // For each byte of the last header, the first value that ends after it
    // (values.size() past the last one): where a difference lies, at once.
    std::vector<uint8_t> value_at;
    // A bit per value (by its index; kMaxValues is 32) whose string in the
    // last header holds escapes: decoded again each time.
    uint32_t escaped = 0;
    // The extFields values, which are values[ext_first, ext_first +
    // ext_count): one object, so one run (the file comment); whether this
    // shape makes lineages (the file comment), and the one last continues
    // (id 0: none, until the next read_as match starts one).
    uint32_t ext_first = 0;
    uint32_t ext_count = 0;
    bool makes_lineages = false;
    uint64_t lineage_id = 0;
    uint64_t lineage_index = 0;
  };
  enum class Outcome : uint8_t {
    kRead,                   // command filled
    kMismatch,               // command and text as they came
    kMismatchTextDecoded,    // command as it came; text changed by an in-place decode
  };

  // Requires: text as for read. Reads text as shape, comparing its literals;
  // on a match, text becomes the shape's last header, on a mismatch the
  // shape has none (a header of another shape tried against it costs the
  // next one of its own this full read: rare, as a connection's headers
  // seldom alternate).
  static Outcome read_as(Shape& shape, std::string_view text, RemotingCommand& command);
  // The same outcome as read_as, or kMismatch when text is not shape's last
  // header with some values changed in place (read_as may still match).
  static Outcome read_against_last(Shape& shape, std::string_view text, RemotingCommand& command);
  // Puts a command read half-way back to json_header_defaults().
  static void reset(RemotingCommand& command);

  std::vector<Shape> shapes_;  // most recently matched first
};

}  // namespace mqlab::remoting
