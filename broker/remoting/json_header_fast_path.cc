// The JSON header's fast paths (json_header.h): a hand-written writer and
// reader for the headers peers really send.
//
// Every command mqlab sends passes through both directions of this codec,
// and nlohmann's DOM (writing) and SAX (reading) cost more than the rest of
// a message's trip through the simulator. The fast paths handle the headers
// that are actually sent (ASCII strings, integer fields, extFields values as
// strings, or as the bare integers, booleans and nulls ali-ons sends) and
// must give exactly what the general paths (json_header.cc) give: the writer
// the same bytes, the reader the same command. Anything else (non-ASCII
// text, \u escapes beyond ASCII, nulls outside extFields, fractions,
// exponents, long integers, nested unknown values, any error) goes to the
// general path, which also words the errors. The same counts for the
// writer: a string with a non-ASCII byte goes through nlohmann's serializer.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "broker/common/append_text.h"
#include "broker/remoting/json_header.h"
#include "broker/remoting/json_header_shapes.h"
#include "broker/remoting/json_text_scan.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {
namespace {

using json_scan::byte_class;
using json_scan::ByteClass;
using json_scan::kHighBits;
using json_scan::skip_plain;

using Json = nlohmann::json;

constexpr std::string_view kHeaderKeyCode = "code";
constexpr std::string_view kHeaderKeyExtFields = "extFields";
constexpr std::string_view kTrue = "true";
constexpr std::string_view kFalse = "false";
constexpr std::string_view kNull = "null";

// JSON's escapes of the ASCII bytes that need one, as nlohmann's serializer
// writes them: [c] is c's two-byte short form ("\\n", "\\\"") or, when its
// first byte is 0, \u00xx in lowercase hex, whose last two bytes are hex[c].
struct EscapeTable {
  std::array<std::array<char, 2>, 128> short_form{};
  std::array<std::array<char, 2>, 0x20> hex{};
};

constexpr EscapeTable make_escape_table() {
  EscapeTable table;
  constexpr std::string_view kHex = "0123456789abcdef";
  for (size_t c = 0; c < table.hex.size(); ++c) table.hex[c] = {kHex[c >> 4], kHex[c & 0xF]};
  table.short_form['"'] = {'\\', '"'};
  table.short_form['\\'] = {'\\', '\\'};
  table.short_form['\b'] = {'\\', 'b'};
  table.short_form['\f'] = {'\\', 'f'};
  table.short_form['\n'] = {'\\', 'n'};
  table.short_form['\r'] = {'\\', 'r'};
  table.short_form['\t'] = {'\\', 't'};
  return table;
}

constexpr EscapeTable kEscapes = make_escape_table();

// Writes the escape of c, a byte that needs one, at p; returns the end.
// Two or three stores from kEscapes, inlined in put_literal's loops: a send's
// properties escape two bytes a property (0x01, 0x02), and a call through a
// switch to five byte stores cost about 30 instructions an escape.
[[gnu::always_inline]] inline char* put_escape(unsigned char c, char* p) {
  MQ_ASSERT(c < 0x20 || c == '"' || c == '\\');
  const std::array<char, 2>& short_form = kEscapes.short_form[c];
  if (short_form[0] != 0) {
    std::memcpy(p, short_form.data(), 2);
    return p + 2;
  }
  std::memcpy(p, "\\u00", 4);
  std::memcpy(p + 4, kEscapes.hex[c].data(), 2);
  return p + 6;
}

// JSON's escape for an ASCII byte that needs one, as nlohmann's serializer
// writes it (put_escape's: one set of rules).
void append_escape(unsigned char c, std::vector<uint8_t>& out) {
  char escaped[6];
  const char* const end = put_escape(c, escaped);
  append_text(std::string_view(escaped, static_cast<size_t>(end - escaped)), out);
}

// A JSON string literal of text, byte for byte what dump_json_text writes.
void append_json_string(std::string_view text, std::vector<uint8_t>& out) {
  const size_t start = out.size();
  out.push_back('"');
  const char* run = text.data();
  const char* const end = text.data() + text.size();
  while (true) {
    const char* special = skip_plain(run, end);
    append_text(std::string_view(run, special), out);
    if (special == end) break;
    if (byte_class(*special) == ByteClass::kNonAscii) {
      // UTF-8 validation and U+FFFD replacement are the serializer's: the
      // whole string goes through it instead.
      out.resize(start);
      return append_text(dump_json_text(Json(std::string(text))), out);
    }
    append_escape(static_cast<unsigned char>(*special), out);
    run = special + 1;
  }
  out.push_back('"');
}

void append_int(int32_t value, std::vector<uint8_t>& out) {
  char digits[16];
  const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), value);
  MQ_ASSERT(error == std::errc());
  append_text(std::string_view(digits, end), out);
}

// A recursive-descent reader of the common header shape; nullopt whenever
// the input strays from it (the general path then decides, errors included).
//
// It reads the command's own copy of the header, held by its extFields
// (decode_json_header_fast_into), so each extFields name and value is kept
// as a view of the copy, and a value with escapes is decoded where it lies.
class CommonHeaderParser {
 public:
  // Requires: header is text that command.ext_fields holds (hold_text).
  // recorder, when given, is told where each value lies, so the header's
  // shape can be learned (json_header_shapes.h).
  explicit CommonHeaderParser(std::string_view header, JsonHeaderShapeRecorder* recorder = nullptr)
      : begin_(header.data()), at_(header.data()), end_(header.data() + header.size()), recorder_(recorder) {}

  // Reads the header into command, which must hold json_header_defaults();
  // false (command then half read) when it strays from the common shape.
  bool parse_into(RemotingCommand& command) && {
    bool saw_code = false;
    if (!consume('{')) return false;
    if (consume('}')) return false;  // no "code": the general path words it
    do {
      std::string_view key;
      if (!read_text(key, key_scratch_) || !consume(':')) return false;
      if (!read_header_field(key, command, saw_code)) return false;
    } while (consume(','));
    if (!consume('}')) return false;
    skip_whitespace();
    return at_ == end_ && saw_code;
  }

 private:
  // The key told apart by its length, then compared with memcmp of a
  // constant size (inlined): string_view's == called compare out of line,
  // eleven times a header (1.8% of the simulator's instructions).
  bool read_header_field(std::string_view key, RemotingCommand& command, bool& saw_code) {
    const auto is = [key](std::string_view literal) {
      return key.size() == literal.size() && std::memcmp(key.data(), literal.data(), literal.size()) == 0;
    };
    int32_t* number_slot = nullptr;
    JsonHeaderSlot slot = JsonHeaderSlot::kCode;
    switch (key.size()) {
      case 4:
        if (is(kHeaderKeyCode)) {
          number_slot = &command.code;
          saw_code = true;
        } else if (is("flag")) {
          number_slot = &command.flag;
          slot = JsonHeaderSlot::kFlag;
        }
        break;
      case 6:
        if (is("opaque")) {
          number_slot = &command.opaque;
          slot = JsonHeaderSlot::kOpaque;
        }
        if (is("remark")) return read_text_into(command.remark, JsonHeaderSlot::kRemark);
        break;
      case 7:
        if (is("version")) {
          number_slot = &command.version;
          slot = JsonHeaderSlot::kVersion;
        }
        break;
      case 8:
        if (is("language")) return read_text_into(command.language, JsonHeaderSlot::kLanguage);
        break;
      case 9:
        if (is(kHeaderKeyExtFields)) return read_ext_fields(command.ext_fields);
        break;
      default: break;
    }
    if (number_slot != nullptr) {
      skip_whitespace();
      const char* const begin = at_;
      const std::optional<int32_t> number = read_int32();
      if (!number) return false;
      *number_slot = *number;
      record(slot, begin, at_);
      return true;
    }
    return skip_scalar();  // an unknown key, such as serializeTypeCurrentRPC
  }

  // Tells the recorder, if any, where a value lies: a string's content, a
  // number's text.
  void record(JsonHeaderSlot slot, const char* begin, const char* end, std::string_view name = {}) {
    if (recorder_ == nullptr) return;
    MQ_ASSERT(begin_ <= begin && begin <= end && end <= end_);
    JsonHeaderValueSpan span{slot, offset_of(begin), offset_of(end)};
    if (slot == JsonHeaderSlot::kExtValue) {
      MQ_ASSERT(holds(name));
      span.name_begin = offset_of(name.data());
      span.name_size = static_cast<uint32_t>(name.size());
    }
    recorder_->values.push_back(span);
  }
  // This header is not one to learn a shape from (json_header_shapes.h).
  void refuse_shape() {
    if (recorder_ != nullptr) recorder_->usable = false;
  }
  uint32_t offset_of(const char* p) const { return static_cast<uint32_t>(p - begin_); }

  // A repeated extFields replaces the earlier one, as in the general path
  // (the header's copy, which the new fields view, stays).
  bool read_ext_fields(ExtFields& ext_fields) {
    if (++ext_fields_objects_ > 1) refuse_shape();
    ext_fields.clear_fields();
    if (!consume('{')) return false;
    if (consume('}')) return true;
    do {
      std::string_view name;
      if (!read_text(name, name_scratch_) || !consume(':') || !read_ext_value(name, ext_fields)) return false;
    } while (consume(','));
    return consume('}');
  }

  // One extFields value, stored under name (the last occurrence wins). A
  // string is stored as it is; the bare values ali-ons sends ("d":4,
  // "k":false) as the text the general path stringifies them to, which for
  // these is their own text; null removes the name, as there.
  bool read_ext_value(std::string_view name, ExtFields& ext_fields) {
    skip_whitespace();
    if (at_ == end_) return false;
    std::string_view value;
    if (*at_ == '"') {
      const char* const start = at_ + 1;
      const char* const special = skip_plain(start, end_);
      if (special == end_ || *special != '"') {
        at_ = start;
        if (!read_string_in_place(value, special)) return false;
        record_ext_value(name, start, at_ - 1);  // the content ends at the closing quote
        return insert_ext_value(name, value, ext_fields);
      }
      value = std::string_view(start, static_cast<size_t>(special - start));
      at_ = special + 1;
      record_ext_value(name, start, special);
      return insert_ext_value(name, value, ext_fields);
    }
    refuse_shape();  // a bare value (ali-ons' 4, false, null): shapes hold strings only
    if (consume_literal(kTrue)) {
      value = kTrue;
    } else if (consume_literal(kFalse)) {
      value = kFalse;
    } else if (consume_literal(kNull)) {
      ext_fields.erase(name);
      return true;
    } else if (!read_integer_text(value)) {
      return false;
    }
    return insert_ext_value(name, value, ext_fields);
  }

  // value views the header's copy or a literal; name too, unless it had an
  // escape (then it is in name_scratch_, and is copied in).
  bool insert_ext_value(std::string_view name, std::string_view value, ExtFields& ext_fields) {
    const bool inserted =
        holds(name) ? ext_fields.insert_or_assign_held(name, value) : ext_fields.insert_or_assign(name, value);
    if (!inserted) refuse_shape();  // a repeated name
    return true;
  }

  // An extFields string value; its name must be the header's own text (an
  // escaped name is decoded text a shape's literal could not give back).
  void record_ext_value(std::string_view name, const char* begin, const char* end) {
    if (recorder_ == nullptr) return;
    if (!holds(name)) return refuse_shape();
    record(JsonHeaderSlot::kExtValue, begin, end, name);
  }

  bool holds(std::string_view text) const { return text.data() >= begin_ && text.data() + text.size() <= end_; }

  bool consume_literal(std::string_view literal) {
    if (static_cast<size_t>(end_ - at_) < literal.size() || std::memcmp(at_, literal.data(), literal.size()) != 0) {
      return false;
    }
    at_ += literal.size();  // "truex" is not valid JSON: the delimiter expected next refuses the x
    return true;
  }

  // An integer whose text is what the general path turns its value back
  // into: -?(0|[1-9][0-9]*) with at most 18 digits (int64 holds all of
  // them, and std::to_string writes them as they came), not "-0" (which
  // reads as 0) and not followed by a fraction or exponent (a double).
  bool read_integer_text(std::string_view& out) {
    constexpr size_t kMaxExactDigits = 18;
    const char* const start = at_;
    const char* p = at_;
    if (p != end_ && *p == '-') ++p;
    const char* const digits = p;
    while (p != end_ && *p >= '0' && *p <= '9') ++p;
    const auto count = static_cast<size_t>(p - digits);
    if (count == 0 || count > kMaxExactDigits || (*digits == '0' && (count > 1 || digits != start))) return false;
    if (p != end_ && (*p == '.' || *p == 'e' || *p == 'E')) return false;
    out = std::string_view(start, static_cast<size_t>(p - start));
    at_ = p;
    MQ_ASSERT(!out.empty());
    return true;
  }

  bool skip_scalar() {
    skip_whitespace();
    if (at_ == end_) return false;
    const char* const begin = at_;
    if (*at_ == '"') {
      std::string_view ignored;
      if (!read_text(ignored, value_scratch_)) return false;
      record(JsonHeaderSlot::kIgnoredString, begin + 1, at_ - 1);
      return true;
    }
    if (!read_int32().has_value()) return false;
    record(JsonHeaderSlot::kIgnoredNumber, begin, at_);
    return true;
  }

  // A string as a view: of the input when it has no escape (the common
  // case, no copy), else of scratch holding its decoded text.
  bool read_text(std::string_view& out, std::string& scratch) {
    skip_whitespace();
    if (at_ == end_ || *at_ != '"') return false;
    const char* const start = at_ + 1;
    const char* const special = skip_plain(start, end_);
    if (special != end_ && *special == '"') {
      out = std::string_view(start, static_cast<size_t>(special - start));
      at_ = special + 1;
      return true;
    }
    if (!read_string(scratch)) return false;  // from the opening quote again
    out = scratch;
    return true;
  }

  // out usually holds the text already (language: every peer sends "JAVA",
  // which a command starts with): compared first, since an assignment is a
  // call into the string's replace even for equal text.
  bool read_text_into(std::string& out, JsonHeaderSlot slot) {
    std::string_view text;
    skip_whitespace();
    const char* const quote = at_;  // the opening quote, once read_text has read it
    if (!read_text(text, value_scratch_)) return false;
    if (out != text) out.assign(text);
    record(slot, quote + 1, at_ - 1);  // the content, to the closing quote
    return true;
  }

  // ASCII text with JSON's escapes; an escape of anything beyond ASCII
  // (\u00e9, surrogates), control bytes and non-ASCII bytes are left to
  // the general path.
  bool read_string(std::string& out) {
    if (!consume('"')) return false;
    return read_string_from(out, skip_plain(at_, end_));
  }

  // The rest of read_string, from at_ (inside the literal) with special the
  // first byte at or after it that is not plain. One pass, into storage
  // sized once for the most the rest of the header could decode to
  // (decoded text is never longer than its literal), then cut to what it
  // held. Appending run by run paid a capacity check, and often a
  // reallocation, per escape (a send's properties hold about twenty: \u0001
  // and \u0002 separators); sizing it exactly first took a second scan of
  // the whole literal.
  bool read_string_from(std::string& out, const char* special) {
    out.resize(static_cast<size_t>(end_ - at_));
    const char* const written_end = unescape_to(out.data(), special);
    if (written_end == nullptr) return false;
    out.resize(static_cast<size_t>(written_end - out.data()));
    return true;
  }

  // The same over the literal itself: an extFields value with escapes (a
  // send's properties) decoded where it lies in the header's copy, which
  // the command owns, and kept as a view. The text behind it is left as it
  // was read: nothing reads those bytes again.
  bool read_string_in_place(std::string_view& out, const char* special) {
    MQ_ASSERT(holds(std::string_view(at_, 0)));
    char* const begin = const_cast<char*>(at_);  // the command's own copy (the class comment)
    const char* const written_end = unescape_to(begin, special);
    if (written_end == nullptr) return false;
    out = std::string_view(begin, static_cast<size_t>(written_end - begin));
    return true;
  }

  char* unescape_to(char* out, const char* special) { return json_scan::unescape_to(at_, end_, special, out); }

  // A number of an int32 field (json_scan::parse_int32), after whitespace.
  std::optional<int32_t> read_int32() {
    skip_whitespace();
    return json_scan::parse_int32(at_, end_);
  }

  // The byte wanted is usually right there (headers as sent have no
  // whitespace), and none of the bytes consumed is whitespace: that settles
  // it before skip_whitespace's checks.
  bool consume(char c) {
    MQ_ASSERT(c != ' ' && c != '\t' && c != '\n' && c != '\r');
    if (at_ != end_ && *at_ == c) {
      ++at_;
      return true;
    }
    skip_whitespace();
    if (at_ == end_ || *at_ != c) return false;
    ++at_;
    return true;
  }

  // Runs before every token, and headers as sent have no whitespace: JSON's
  // four whitespace bytes are all at most 0x20, so one comparison settles
  // the usual case before the four that name them.
  void skip_whitespace() {
    if (at_ != end_ && static_cast<unsigned char>(*at_) > ' ') return;
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r')) ++at_;
  }

  const char* const begin_;  // the header's copy, begin_ to end_
  const char* at_;
  const char* const end_;
  JsonHeaderShapeRecorder* const recorder_;
  int ext_fields_objects_ = 0;
  // Decoded text of strings with escapes, reused.
  std::string key_scratch_;
  std::string name_scratch_;
  std::string value_scratch_;
};

// How many bytes text takes as a JSON string literal's content at most, or
// nullopt when it holds a non-ASCII byte (the serializer's business).
std::optional<size_t> ascii_literal_bound(std::string_view text) {
  const char* const end = text.data() + text.size();
  const char* special = skip_plain(text.data(), end);
  if (special == end) return text.size();  // the common case: nothing to escape
  // Escapes ahead (a send's properties: a 0x01 and a 0x02 per property):
  // only a non-ASCII byte (high bit set) sends the text to the general
  // path, and eight bytes show one at once.
  const char* p = special;
  for (; end - p >= 8; p += 8) {
    uint64_t word = 0;
    std::memcpy(&word, p, sizeof(word));
    if ((word & kHighBits) != 0) return std::nullopt;
  }
  for (; p != end; ++p) {
    if (byte_class(*p) == ByteClass::kNonAscii) return std::nullopt;
  }
  return text.size() * kMaxEscapedBytesPerByte;
}

// Writes text's literal content at p (escaped as append_json_string does);
// returns the end. kCheckAscii: text may hold non-ASCII bytes, and the
// first one stops the writing: null is returned (what was written is
// garbage). Else requires: ascii_literal_bound(text) has a value. Either
// way requires room at p for the escaped text (6 bytes a byte at worst).
template <bool kCheckAscii>
char* put_literal(std::string_view text, char* p) {
  const char* run = text.data();
  const char* const end = text.data() + text.size();
#if defined(__SSE2__)
  // While 16 bytes remain they are copied as they are looked at, one load
  // and one store, and the copy stops at the first byte to escape: a scan
  // then a memcpy call per run between escapes (a send's properties escape
  // two bytes a property) cost more. The store cannot pass the room: the 16
  // bytes still to write take at least 16 bytes of output, and whatever of
  // the store is not theirs yet is written over next.
  while (end - run >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(run));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
    const unsigned mask = json_scan::not_plain_mask(bytes);  // a non-ASCII byte included
    if (mask == 0) {
      run += 16;
      p += 16;
      continue;
    }
    const auto plain = static_cast<size_t>(__builtin_ctz(mask));
    run += plain;
    p += plain;
    if constexpr (kCheckAscii) {
      if (byte_class(*run) == ByteClass::kNonAscii) return nullptr;
    }
    MQ_ASSERT(byte_class(*run) == ByteClass::kEscaped);
    p = put_escape(static_cast<unsigned char>(*run), p);
    ++run;
  }
#endif
  // Under 16 bytes left, most often a whole value (a group, a topic, a
  // number's text): when all are plain, a few word moves write them
  // (headers write some 20 such strings a message).
  if (const auto left = static_cast<size_t>(end - run); left < 16) {  // 16 or more only without SSE2
    if (char* const short_end = json_scan::put_short_plain(std::string_view(run, left), p)) return short_end;
  }
  while (true) {
    const char* const special = skip_plain(run, end);
    std::memcpy(p, run, static_cast<size_t>(special - run));
    p += special - run;
    if (special == end) return p;
    if constexpr (kCheckAscii) {
      if (byte_class(*special) == ByteClass::kNonAscii) return nullptr;
    }
    MQ_ASSERT(byte_class(*special) == ByteClass::kEscaped);
    p = put_escape(static_cast<unsigned char>(*special), p);
    run = special + 1;
  }
}

char* put_ascii_literal(std::string_view text, char* p) { return put_literal</*kCheckAscii=*/false>(text, p); }

// The header when every string in it is ASCII (whatever it escapes), the
// case of every header mqlab writes: sized once, then written through a
// pointer. Returns false, writing nothing, otherwise.
bool append_ascii_json_header(const RemotingCommand& command, std::vector<uint8_t>& out) {
  constexpr size_t kIntBytes = 11;  // "-2147483648"
  constexpr std::string_view kOpen = "{\"code\":";
  constexpr std::string_view kExtOpen = ",\"extFields\":{";
  constexpr std::string_view kFlag = "},\"flag\":";
  constexpr std::string_view kLanguage = ",\"language\":\"";
  constexpr std::string_view kOpaque = "\",\"opaque\":";
  constexpr std::string_view kRemark = ",\"remark\":\"";
  constexpr std::string_view kVersion = ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":";
  size_t bound = kOpen.size() + kExtOpen.size() + kFlag.size() + kLanguage.size() + kOpaque.size() +
                 kRemark.size() + 1 + kVersion.size() + 4 * kIntBytes + 1;
  bool all_plain = true;  // nothing to escape anywhere: every string is copied as it is
  // Which of the first 63 strings (in the order they are scanned here and
  // written below) need escapes, bit 63 standing for all the later ones, so
  // the writing pass scans only those: one
  // escaped value (a send's properties, with its \u0001 separators) would
  // otherwise make every string be scanned twice.
  uint64_t escaped_strings = 0;
  size_t scanned_strings = 0;
  const auto add = [&bound, &all_plain, &escaped_strings, &scanned_strings](std::string_view text) {
    const std::optional<size_t> bytes = ascii_literal_bound(text);
    if (bytes) bound += *bytes;
    const bool escaped = bytes && *bytes != text.size();
    if (escaped) all_plain = false;
    if (escaped) escaped_strings |= uint64_t{1} << std::min<size_t>(scanned_strings, 63);  // bit 63: any from 63 on
    ++scanned_strings;
    return bytes.has_value();
  };
  for (const auto& [name, value] : command.ext_fields) {
    if (!add(name) || !add(value)) return false;
    bound += 6;  // "name":"value",
  }
  if (!add(command.language) || !add(command.remark)) return false;
  const size_t start = out.size();
  out.resize(start + bound);
  char* const begin = reinterpret_cast<char*>(out.data() + start);
  char* p = begin;
  const auto put = [&p](std::string_view text) {
    // An empty value (a default string_view's data is null) copies nothing:
    // memcpy from null is undefined even for no bytes (UBSan says so).
    if (text.empty()) return;
    std::memcpy(p, text.data(), text.size());
    p += text.size();
  };
  const auto put_int = [&p](int32_t value) {
    const auto [end, error] = std::to_chars(p, p + kIntBytes, value);
    MQ_ASSERT(error == std::errc());
    p = end;
  };
  size_t written_strings = 0;
  const auto put_literal = [&p, all_plain, escaped_strings, &written_strings, &put](std::string_view text) {
    const size_t index = std::min<size_t>(written_strings++, 63);  // from 63 on: all scanned again if any needs it
    if (all_plain || (escaped_strings & (uint64_t{1} << index)) == 0) return put(text);  // scanned once already
    p = put_ascii_literal(text, p);
  };
  // Keys in sorted order, as the general path's std::map writes them.
  put(kOpen);
  put_int(command.code);
  put(kExtOpen);
  bool first = true;
  for (const auto& [name, value] : command.ext_fields) {
    if (!first) *p++ = ',';
    first = false;
    *p++ = '"';
    put_literal(name);
    put("\":\"");
    put_literal(value);
    *p++ = '"';
  }
  put(kFlag);
  put_int(command.flag);
  put(kLanguage);
  put_literal(command.language);
  put(kOpaque);
  put_int(command.opaque);
  if (!command.remark.empty()) {
    put(kRemark);
    put_literal(command.remark);
    *p++ = '"';
  }
  put(kVersion);
  put_int(command.version);
  *p++ = '}';
  const auto written = static_cast<size_t>(p - begin);
  MQ_ASSERT(written <= bound);
  MQ_ASSERT(written_strings + (command.remark.empty() ? 1 : 0) == scanned_strings);  // both passes in one order
  out.resize(start + written);
  return true;
}

}  // namespace

void append_json_string_literal(std::string_view text, std::vector<uint8_t>& out) { append_json_string(text, out); }

char* put_json_string_literal_if_ascii(std::string_view text, char* p) {
  *p++ = '"';
  p = put_literal</*kCheckAscii=*/true>(text, p);
  if (p == nullptr) return nullptr;
  *p++ = '"';
  return p;
}

void append_json_header(const RemotingCommand& command, std::vector<uint8_t>& out) {
  if (append_ascii_json_header(command, out)) return;
  // Keys in sorted order, as the general path's std::map writes them.
  append_text("{\"code\":", out);
  append_int(command.code, out);
  append_text(",\"extFields\":{", out);
  bool first = true;
  for (const auto& [name, value] : command.ext_fields) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(name, out);
    out.push_back(':');
    append_json_string(value, out);
  }
  append_text("},\"flag\":", out);
  append_int(command.flag, out);
  append_text(",\"language\":", out);
  append_json_string(command.language, out);
  append_text(",\"opaque\":", out);
  append_int(command.opaque, out);
  if (!command.remark.empty()) {
    append_text(",\"remark\":", out);
    append_json_string(command.remark, out);
  }
  append_text(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":", out);
  append_int(command.version, out);
  out.push_back('}');
}

bool decode_json_header_fast_into(std::span<const uint8_t> header, RemotingCommand& command,
                                  JsonHeaderShapes* shapes) {
  // Copied once into the command's extFields, which then view the copy.
  MQ_ASSERT(command.ext_fields.empty());
  char* const copy = command.ext_fields.hold_text(header.size());
  if (!header.empty()) std::memcpy(copy, header.data(), header.size());
  const std::string_view text(copy, header.size());
  if (shapes == nullptr) {
    if (!CommonHeaderParser(text).parse_into(command)) return false;
  } else {
    if (shapes->read(text, command)) return true;
    // No shape matched; one may have decoded escapes in place.
    if (!header.empty()) std::memcpy(copy, header.data(), header.size());
    JsonHeaderShapeRecorder recorder;
    if (!CommonHeaderParser(text, &recorder).parse_into(command)) return false;
    shapes->learn(header, recorder);
  }
  MQ_ASSERT(command.serialize_type == SerializeType::JSON);
  MQ_ASSERT(command.body.empty());  // the header only: the frame codec adds the body
  return true;
}

std::optional<RemotingCommand> decode_json_header_fast(std::span<const uint8_t> header) {
  RemotingCommand command = json_header_defaults();
  if (!decode_json_header_fast_into(header, command)) return std::nullopt;
  return command;
}

}  // namespace mqlab::remoting
