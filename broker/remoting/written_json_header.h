// A JSON header written straight from a header struct's fields, byte for
// byte what append_json_header (json_header.h) writes for the command
// carrying those fields in its ExtFields, without the ExtFields strings.
//
// The hot commands (a producer's SEND_MESSAGE_V2, a consumer's PULL_MESSAGE,
// and the broker's answers to both) are written this way: building a
// command's ExtFields cost a string per field (each number first turned into
// one by set_ext_int), and encoding it walked them again. Each such header
// lists its fields once, in name order, in a template over a Fields type;
// ExtFieldWriter writes them here, ExtFieldSetter sets them on a command
// (for a peer that wants the ROCKETMQ header, and for the tests that check
// both give the same bytes).
//
// A Sink has text(literal), number(value), quoted_number(value) and
// string(text); write_json_header drives one in the layout of
// json_header.h's writer (keys sorted, the remark only when not empty).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "broker/common/append_text.h"
#include "broker/common/assert.h"
#include "broker/common/decimal_text.h"
#include "broker/common/types.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/json_text_scan.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::remoting {

// A command's ext fields set from the keys ExtFieldWriter takes
// (",\"b\":" sets b): the field lists are written once for both, so the
// command and the header written straight from the struct cannot disagree
// on a field.
struct ExtFieldSetter {
  RemotingCommand& command;
  static std::string_view name_of(std::string_view key) {
    if (key.starts_with(',')) key.remove_prefix(1);
    MQ_ASSERT(key.size() >= 4 && key.starts_with('"') && key.ends_with("\":"));
    return key.substr(1, key.size() - 3);
  }
  // Each an append in name order; a string value built once, in place.
  void string(std::string_view key, std::string_view value) {
    command.ext_fields.insert_or_assign(name_of(key), value);
  }
  void number(std::string_view key, int64_t value) { command.set_ext_int(name_of(key), value); }
  void boolean(std::string_view key, bool value) { command.set_ext_bool(name_of(key), value); }
};

// Ext fields written into a Sink, each key with its comma and quotes
// ("\"a\":", ",\"b\":"), every value as a string, as Java sends them.
// Always inlined (and PointerSink::text): a key is a literal where the
// field is written, so its copy is a few moves of known size; out of line
// it was a memcpy call per field.
template <typename Sink>
struct ExtFieldWriter {
  Sink& sink;
  [[gnu::always_inline]] void string(std::string_view key, std::string_view value) {
    sink.text(key);
    sink.string(value);
  }
  [[gnu::always_inline]] void number(std::string_view key, int64_t value) {
    sink.text(key);
    sink.quoted_number(value);
  }
  [[gnu::always_inline]] void boolean(std::string_view key, bool value) {
    sink.text(key);
    sink.text(value ? "\"true\"" : "\"false\"");
  }
};

// A header in the layout of json_header.h (keys sorted; our language and
// version, as make_request and make_response give) around the ext fields
// write_ext_fields(ExtFieldWriter&) writes in name order.
template <typename Sink, typename WriteExtFields>
void write_json_header(Sink& sink, int32_t code, int32_t flag, int32_t opaque, std::string_view remark,
                       WriteExtFields&& write_ext_fields) {
  sink.text("{\"code\":");
  sink.number(code);
  sink.text(",\"extFields\":{");
  ExtFieldWriter<Sink> fields{sink};
  write_ext_fields(fields);
  sink.text("},\"flag\":");
  sink.number(flag);
  // Our language is plain text: written with the keys around it, where
  // a string to scan and escape cost a call (a sixth of a response's header).
  static_assert(kDefaultLanguage == "JAVA", "the literal below names it");
  sink.text(",\"language\":\"JAVA\",\"opaque\":");
  sink.number(opaque);
  if (!remark.empty()) {
    sink.text(",\"remark\":");
    sink.string(remark);
  }
  sink.text(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
  sink.number(kDefaultVersion);
  sink.text("}");
}
// The fixed text write_json_header adds to the ext fields' own: keys,
// punctuation, "JAVA" and "JSON", 116 bytes counted (remark's key and
// quotes included), and four numbers.
inline constexpr size_t kJsonHeaderFixedBytes = 128 + 4 * kInt64Bytes;

// Appends to a vector, string by string: for a header with non-ASCII text,
// whose strings append_json_string_literal hands to nlohmann's serializer.
struct VectorSink {
  std::vector<uint8_t>& out;
  void text(std::string_view literal) { append_text(literal, out); }
  void number(int64_t value) {
    char digits[kMaxDecimalBytes];
    append_text(std::string_view(digits, put_decimal(digits, value)), out);
  }
  void quoted_number(int64_t value) {
    out.push_back('"');
    number(value);
    out.push_back('"');
  }
  void string(std::string_view value) { append_json_string_literal(value, out); }
};

// Writes through a pointer into room for the worst case (every byte of
// every string escaped: kMaxEscapedBytesPerByte), checking as it goes that
// each string is ASCII, in the one pass that escapes it (sizing the strings
// first took a second scan of each). After a string with a non-ASCII byte,
// ascii is false and what was written is garbage.
struct PointerSink {
  char* p;
  bool ascii = true;
  [[gnu::always_inline]] void text(std::string_view literal) {
    std::memcpy(p, literal.data(), literal.size());
    p += literal.size();
  }
  [[gnu::always_inline]] void number(int64_t value) {
    static_assert(kMaxDecimalBytes <= kInt64Bytes, "the room sized for a number");
    p = put_decimal(p, value);
  }
  // A header's numbers go out as strings: quotes written as bytes, not as
  // two more literal copies.
  [[gnu::always_inline]] void quoted_number(int64_t value) {
    *p++ = '"';
    number(value);
    *p++ = '"';
  }
  // A short plain string (most of a header's) inline; any other through
  // the call that scans and escapes it.
  [[gnu::always_inline]] void string(std::string_view value) {
    if (!ascii) return;
    if (char* const short_end = json_scan::put_short_plain_literal(value, p)) {
      p = short_end;
      return;
    }
    char* const end = put_json_string_literal_if_ascii(value, p);
    if (end == nullptr) {
      ascii = false;
      return;
    }
    p = end;
  }
};

// Appends what write(sink) writes: through a PointerSink when every string
// is ASCII (appending piece by piece cost a vector insert each), else
// through a VectorSink. strings are every string write passes to
// sink.string; fixed_bytes bounds the rest, numbers counted at kInt64Bytes.
// The room is on the stack when the worst case fits (every header mqlab
// writes, but a send with long properties), else on the heap, left
// uninitialized either way (zeroing it cost more than the copy out).
template <typename Write>
void append_written_json_header(std::span<const std::string_view> strings, size_t fixed_bytes,
                                std::vector<uint8_t>& out, Write&& write) {
  constexpr size_t kStackBytes = 4096;
  size_t worst = fixed_bytes;
  for (const std::string_view text : strings) worst += text.size() * kMaxEscapedBytesPerByte + 2;
  char stack[kStackBytes];
  std::unique_ptr<char[]> heap;
  if (worst > kStackBytes) heap = std::make_unique_for_overwrite<char[]>(worst);
  char* const buffer = heap ? heap.get() : stack;
  PointerSink sink{buffer};
  write(sink);
  if (!sink.ascii) {
    VectorSink general{out};
    return write(general);
  }
  MQ_ASSERT(static_cast<size_t>(sink.p - buffer) <= worst);
  append_text(std::string_view(buffer, sink.p), out);
}

// Sets on command the fields list_fields(fields) lists (a header's field
// list, as pull_message_response_fields). Requires: command has no ext
// fields.
template <typename ListFields>
void set_listed_ext_fields(RemotingCommand& command, ListFields&& list_fields) {
  MQ_ASSERT(command.ext_fields.empty());
  ExtFieldSetter fields{command};
  list_fields(fields);
}

// Appends the JSON header of a response (our language and version, the
// response flag) with code, remark, opaque and the fields list_fields
// lists: byte for byte what append_json_header writes for that response
// built as a command (make_response, then set_listed_ext_fields).
// field_strings are every string value list_fields writes; field_bytes
// bounds the rest of what it writes (names, punctuation, numbers at
// kInt64Bytes plus their quotes).
template <typename ListFields>
void append_written_response_json_header(int32_t code, std::string_view remark, int32_t opaque,
                                         std::span<const std::string_view> field_strings, size_t field_bytes,
                                         std::vector<uint8_t>& out, ListFields&& list_fields) {
  constexpr size_t kMaxFieldStrings = 8;
  MQ_ASSERT(field_strings.size() <= kMaxFieldStrings);
  std::string_view strings[kMaxFieldStrings + 1] = {remark};
  std::copy(field_strings.begin(), field_strings.end(), strings + 1);
  const auto write = [&](auto& sink) { write_json_header(sink, code, kFlagResponse, opaque, remark, list_fields); };
  append_written_json_header(std::span(strings, field_strings.size() + 1), kJsonHeaderFixedBytes + field_bytes, out,
                             write);
}

}  // namespace mqlab::remoting
