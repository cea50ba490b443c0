#include "broker/remoting/json_header.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <nlohmann/json.hpp>

#include "broker/remoting/wire_text.h"

namespace mqlab::remoting {
namespace {

using Json = nlohmann::json;

// Integral doubles up to 2^53 are exact: print them as the integers a
// JavaScript client meant.
constexpr double kMaxExactIntegerDouble = 9007199254740992.0;

std::string integral_or_shortest(double value) {
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) <= kMaxExactIntegerDouble) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return Json(value).dump();
}

// An extFields value as the string a Java peer would have sent; nullopt for
// null; an error for a container (passed as its type phrase).
std::optional<std::string> ext_value_text(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: return value.get<std::string>();
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer: return std::to_string(value.get<int64_t>());
    case Json::value_t::number_unsigned: return std::to_string(value.get<uint64_t>());
    case Json::value_t::number_float: return integral_or_shortest(value.get<double>());
    default: break;
  }
  MQ_UNREACHABLE("ext_value_text takes scalars only");
}

bool is_int32_field(std::string_view key) {
  return key == "code" || key == "opaque" || key == "flag" || key == "version";
}
bool is_string_field(std::string_view key) { return key == "language" || key == "remark"; }

// What Java's RemotingCommand holds for a field the peer left out.
RemotingCommand decoded_defaults() {
  RemotingCommand command;
  command.version = 0;
  command.language = std::string(kDefaultLanguage);
  command.serialize_type = SerializeType::JSON;
  return command;
}

// nlohmann's SAX interface, building the command as events arrive.
//
// Depth 1 is the header object, depth 2 the extFields object; an unknown
// key's container is skipped by counting depth until it closes. Any other
// container is a type error, so nothing deeper is ever looked at.
class JsonHeaderReader {
 public:
  JsonHeaderReader() : command_(decoded_defaults()) {}

  bool null() { return on_scalar(Json(nullptr)); }
  bool boolean(bool value) { return on_scalar(Json(value)); }
  bool number_integer(int64_t value) { return on_scalar(Json(value)); }
  bool number_unsigned(uint64_t value) { return on_scalar(Json(value)); }
  bool number_float(double value, const std::string& /*text*/) { return on_scalar(Json(value)); }
  bool string(std::string& value) { return on_scalar(Json(std::move(value))); }
  bool binary(Json::binary_t& /*value*/) { return fail("JSON header: unexpected binary value"); }
  bool start_object(std::size_t /*elements*/) { return on_start(true); }
  bool start_array(std::size_t /*elements*/) { return on_start(false); }
  bool end_object() { return on_end(); }
  bool end_array() { return on_end(); }
  bool key(std::string& name) {
    if (skipping()) return true;
    (depth_ == 1 ? key_ : ext_key_) = std::move(name);
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    return fail(std::string("JSON header: invalid JSON: ") + error.what());
  }

  // Requires: the SAX pass ended; parsed is what it returned.
  Result<RemotingCommand> finish(bool parsed) && {
    if (!error_.ok()) return error_;
    if (!parsed) return Status::Corruption("JSON header: invalid JSON");
    MQ_ASSERT(depth_ == 0);  // a complete document closed every container
    if (!saw_code_) return Status::Corruption("JSON header has no \"code\"");
    return std::move(command_);
  }

 private:
  bool skipping() const { return skip_until_depth_.has_value(); }
  bool in_ext() const { return depth_ == 2; }

  bool fail(std::string message) {
    if (error_.ok()) error_ = Status::Corruption(std::move(message));
    return false;  // stops the parser
  }

  bool wrong_header_field(std::string_view expected, const std::string& found) {
    return fail("JSON header." + printable_excerpt(key_) + ": expected " + std::string(expected) + ", found " +
                found);
  }

  bool wrong_ext_value(const std::string& found) {
    return fail("JSON header: extFields." + printable_excerpt(ext_key_) +
                ": expected a string, number or boolean, found " + found);
  }

  bool on_start(bool is_object) {
    const std::string found = is_object ? "an object" : "an array";
    if (skipping()) {
      ++depth_;
      return true;
    }
    if (depth_ == 0) {
      if (!is_object) return fail("JSON header is an array, expected an object");
    } else if (in_ext()) {
      return wrong_ext_value(found);
    } else if (key_ == "extFields") {
      if (!is_object) return fail("JSON header: extFields: expected an object, found an array");
      command_.ext_fields.clear();  // a repeated "extFields": the last one wins, as in a DOM
    } else if (is_int32_field(key_)) {
      return wrong_header_field("an int32", found);
    } else if (is_string_field(key_)) {
      return wrong_header_field("a string", found);
    } else {
      skip_until_depth_ = depth_;  // an unknown key's value: skip it whole
    }
    ++depth_;
    return true;
  }

  bool on_end() {
    MQ_ASSERT(depth_ > 0);  // the parser pairs every end with a start
    --depth_;
    if (skip_until_depth_ == depth_) skip_until_depth_.reset();
    return true;
  }

  bool on_scalar(Json value) {
    if (skipping()) return true;
    if (depth_ == 0) return fail("JSON header is " + json_type_phrase(value) + ", expected an object");
    if (in_ext()) return on_ext_value(value);
    return on_header_field(value);
  }

  bool on_ext_value(const Json& value) {
    if (value.is_null()) {
      command_.ext_fields.erase(ext_key_);  // the last occurrence of a key wins
      return true;
    }
    std::optional<std::string> text = ext_value_text(value);
    MQ_ASSERT(text.has_value());
    command_.ext_fields.insert_or_assign(ext_key_, std::move(*text));
    return true;
  }

  bool on_header_field(const Json& value) {
    MQ_ASSERT(depth_ == 1);
    if (value.is_null()) return reset_header_field();
    if (is_int32_field(key_)) {
      const std::optional<int32_t> number = json_int32(value);
      if (!number) return wrong_header_field("an int32", json_type_phrase(value));
      int32_field(key_) = *number;
      if (key_ == "code") saw_code_ = true;
    } else if (is_string_field(key_)) {
      if (!value.is_string()) return wrong_header_field("a string", json_type_phrase(value));
      (key_ == "language" ? command_.language : command_.remark) = value.get<std::string>();
    } else if (key_ == "extFields") {
      return fail("JSON header: extFields: expected an object, found " + json_type_phrase(value));
    }
    return true;
  }

  // A null value: the field is as if absent (fastjson omits nulls), even
  // when an earlier occurrence of the key set it.
  bool reset_header_field() {
    if (key_ == "code") saw_code_ = false;
    if (is_int32_field(key_)) int32_field(key_) = 0;  // every int field of Java's RemotingCommand starts at 0
    if (key_ == "language") command_.language = std::string(kDefaultLanguage);
    if (key_ == "remark") command_.remark.clear();
    if (key_ == "extFields") command_.ext_fields.clear();
    return true;
  }

  int32_t& int32_field(std::string_view key) {
    if (key == "code") return command_.code;
    if (key == "opaque") return command_.opaque;
    if (key == "flag") return command_.flag;
    MQ_ASSERT(key == "version");
    return command_.version;
  }

  RemotingCommand command_;
  Status error_;
  size_t depth_ = 0;                        // containers open
  std::optional<size_t> skip_until_depth_;  // skipping an unknown value until depth_ is back here
  std::string key_;                         // the header key whose value comes next
  std::string ext_key_;                     // the extFields key whose value comes next
  bool saw_code_ = false;
};

// --- the fast paths ---------------------------------------------------------
//
// Every command mqlab sends passes through both directions of this codec,
// and nlohmann's DOM (writing) and SAX (reading) cost more than the rest of
// a message's trip through the simulator. The fast paths below handle the
// headers that are actually sent (ASCII strings, integer fields, string
// extFields) and must give exactly what the general paths give: the writer
// the same bytes, the reader the same command. Anything else (non-ASCII
// text, \u escapes, nulls, numbers in extFields, fractions, nested unknown
// values, any error) goes to the general path, which also words the errors.

constexpr std::string_view kHeaderKeyCode = "code";
constexpr std::string_view kHeaderKeyExtFields = "extFields";

// How a byte of a string value goes out, and how it is read back.
enum class ByteClass : uint8_t { kPlain, kEscaped, kNonAscii };

constexpr std::array<ByteClass, 256> make_byte_classes() {
  std::array<ByteClass, 256> classes{};
  for (size_t c = 0; c < 256; ++c) {
    if (c >= 0x80) {
      classes[c] = ByteClass::kNonAscii;
    } else if (c < 0x20 || c == '"' || c == '\\') {
      classes[c] = ByteClass::kEscaped;
    } else {
      classes[c] = ByteClass::kPlain;  // DEL (0x7F) included: nlohmann writes it as it is
    }
  }
  return classes;
}
constexpr std::array<ByteClass, 256> kByteClasses = make_byte_classes();

ByteClass byte_class(char c) { return kByteClasses[static_cast<unsigned char>(c)]; }

// Whether none of 8 bytes needs care: no quote, backslash, control byte or
// non-ASCII byte (the classic "has a byte less than n / equal to c" word
// tricks; each is exact as an any-byte test).
bool word_is_plain(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  const uint64_t quote = word ^ (kOnes * '"');
  const uint64_t backslash = word ^ (kOnes * '\\');
  const uint64_t masked = ((word - kOnes * 0x20) & ~word) | ((quote - kOnes) & ~quote) |
                          ((backslash - kOnes) & ~backslash) | word;
  return (masked & kHighBits) == 0;
}

// The first byte at or after p whose class is not kPlain, or end.
const char* skip_plain(const char* p, const char* end) {
#if defined(__SSE2__)
  // 16 bytes at a time while 16 remain (the header's end, not the string's:
  // strings are short, headers are not). As signed bytes, both control bytes
  // and non-ASCII bytes are below 0x20, so one compare finds them.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                                         _mm_cmplt_epi8(bytes, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    if (!word_is_plain(word)) break;
    p += 8;
  }
  while (p != end && byte_class(*p) == ByteClass::kPlain) ++p;
  return p;
}

void append_bytes(const char* data, size_t size, std::vector<uint8_t>& out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);  // a byte-to-byte copy: one memmove
  out.insert(out.end(), bytes, bytes + size);
}

void append_text(std::string_view text, std::vector<uint8_t>& out) { append_bytes(text.data(), text.size(), out); }

// JSON's escape for an ASCII byte that needs one, as nlohmann's serializer
// writes it: the short forms, else \u00xx in lowercase hex.
void append_escape(unsigned char c, std::vector<uint8_t>& out) {
  switch (c) {
    case '"': return append_text("\\\"", out);
    case '\\': return append_text("\\\\", out);
    case '\b': return append_text("\\b", out);
    case '\f': return append_text("\\f", out);
    case '\n': return append_text("\\n", out);
    case '\r': return append_text("\\r", out);
    case '\t': return append_text("\\t", out);
    default: break;
  }
  MQ_ASSERT(c < 0x20);
  constexpr std::string_view kHex = "0123456789abcdef";
  const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
  append_bytes(escaped, sizeof(escaped), out);
}

// A JSON string literal of text, byte for byte what dump_json_text writes.
void append_json_string(std::string_view text, std::vector<uint8_t>& out) {
  const size_t start = out.size();
  out.push_back('"');
  const char* run = text.data();
  const char* const end = text.data() + text.size();
  while (true) {
    const char* special = skip_plain(run, end);
    append_bytes(run, static_cast<size_t>(special - run), out);
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
  append_bytes(digits, static_cast<size_t>(end - digits), out);
}

// A recursive-descent reader of the common header shape; nullopt whenever
// the input strays from it (the general path then decides, errors included).
class CommonHeaderParser {
 public:
  explicit CommonHeaderParser(std::span<const uint8_t> header)
      : at_(reinterpret_cast<const char*>(header.data())), end_(at_ + header.size()) {}

  std::optional<RemotingCommand> parse() && {
    RemotingCommand command = decoded_defaults();
    bool saw_code = false;
    if (!consume('{')) return std::nullopt;
    if (consume('}')) return std::nullopt;  // no "code": the general path words it
    do {
      std::string_view key;
      if (!read_text(key, key_scratch_) || !consume(':')) return std::nullopt;
      if (!read_header_field(key, command, saw_code)) return std::nullopt;
    } while (consume(','));
    if (!consume('}')) return std::nullopt;
    skip_whitespace();
    if (at_ != end_ || !saw_code) return std::nullopt;
    return command;
  }

 private:
  bool read_header_field(std::string_view key, RemotingCommand& command, bool& saw_code) {
    if (key == kHeaderKeyCode || key == "opaque" || key == "flag" || key == "version") {
      const std::optional<int32_t> number = read_int32();
      if (!number) return false;
      if (key == kHeaderKeyCode) {
        command.code = *number;
        saw_code = true;
      } else {
        (key == "opaque" ? command.opaque : key == "flag" ? command.flag : command.version) = *number;
      }
      return true;
    }
    if (key == "language") return read_text_into(command.language);
    if (key == "remark") return read_text_into(command.remark);
    if (key == kHeaderKeyExtFields) return read_ext_fields(command.ext_fields);
    return skip_scalar();  // an unknown key, such as serializeTypeCurrentRPC
  }

  // A repeated extFields replaces the earlier one, as in the general path.
  bool read_ext_fields(ExtFields& ext_fields) {
    ext_fields.clear();
    if (!consume('{')) return false;
    if (consume('}')) return true;
    do {
      std::string_view name;
      std::string_view value;
      if (!read_text(name, name_scratch_) || !consume(':') || !read_text(value, value_scratch_)) return false;
      ext_fields.insert_or_assign(name, value);  // the last occurrence wins; built in place from the views
    } while (consume(','));
    return consume('}');
  }

  bool skip_scalar() {
    skip_whitespace();
    if (at_ == end_) return false;
    std::string_view ignored;
    if (*at_ == '"') return read_text(ignored, value_scratch_);
    return read_int32().has_value();
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

  bool read_text_into(std::string& out) {
    std::string_view text;
    if (!read_text(text, value_scratch_)) return false;
    out.assign(text);
    return true;
  }

  // ASCII text with JSON's escapes; an escape of anything beyond ASCII
  // (\u00e9, surrogates), control bytes and non-ASCII bytes are left to
  // the general path.
  bool read_string(std::string& out) {
    if (!consume('"')) return false;
    out.clear();
    const char* run = at_;
    while (true) {
      at_ = skip_plain(at_, end_);
      if (at_ == end_) return false;
      const char c = *at_;
      if (byte_class(c) == ByteClass::kNonAscii) return false;
      out.append(run, at_);
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c != '\\') return false;  // a raw control byte: invalid JSON
      ++at_;
      const std::optional<char> unescaped = read_escape();
      if (!unescaped) return false;
      out.push_back(*unescaped);
      run = at_;
    }
  }

  // The character after a backslash (and its four hex digits for \u).
  std::optional<char> read_escape() {
    if (at_ == end_) return std::nullopt;
    switch (*at_++) {
      case '"': return '"';
      case '\\': return '\\';
      case '/': return '/';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'u': break;
      default: return std::nullopt;
    }
    if (end_ - at_ < 4) return std::nullopt;
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = hex_digit(*at_++);
      if (digit < 0) return std::nullopt;
      code = code * 16 + static_cast<unsigned>(digit);
    }
    if (code >= 0x80) return std::nullopt;  // UTF-8 encoding and surrogates are the general path's
    return static_cast<char>(code);
  }

  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // -?(0|[1-9][0-9]*) within int32, not followed by a fraction or exponent.
  std::optional<int32_t> read_int32() {
    skip_whitespace();
    const char* start = at_;
    if (at_ != end_ && *at_ == '-') ++at_;
    const char* digits = at_;
    while (at_ != end_ && *at_ >= '0' && *at_ <= '9') ++at_;
    const size_t count = static_cast<size_t>(at_ - digits);
    if (count == 0 || count > 10 || (count > 1 && *digits == '0')) return std::nullopt;
    if (at_ != end_ && (*at_ == '.' || *at_ == 'e' || *at_ == 'E')) return std::nullopt;
    int64_t value = 0;
    const auto [end, error] = std::from_chars(start, at_, value);
    if (error != std::errc() || end != at_) return std::nullopt;
    if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
      return std::nullopt;
    }
    return static_cast<int32_t>(value);
  }

  bool consume(char c) {
    skip_whitespace();
    if (at_ == end_ || *at_ != c) return false;
    ++at_;
    return true;
  }

  void skip_whitespace() {
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r')) ++at_;
  }

  const char* at_;
  const char* const end_;
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
  for (; special != end; ++special) {
    if (byte_class(*special) == ByteClass::kNonAscii) return std::nullopt;
  }
  return text.size() * 6;  // "\u00xx" at worst
}

// Writes text's literal content at p (escaped as append_json_string does);
// returns the end. Requires: ascii_literal_bound(text) has a value.
char* put_ascii_literal(std::string_view text, char* p) {
  const char* run = text.data();
  const char* const end = text.data() + text.size();
  while (true) {
    const char* const special = skip_plain(run, end);
    std::memcpy(p, run, static_cast<size_t>(special - run));
    p += special - run;
    if (special == end) return p;
    const auto c = static_cast<unsigned char>(*special);
    MQ_ASSERT(byte_class(*special) == ByteClass::kEscaped);
    *p++ = '\\';
    switch (c) {
      case '"': *p++ = '"'; break;
      case '\\': *p++ = '\\'; break;
      case '\b': *p++ = 'b'; break;
      case '\f': *p++ = 'f'; break;
      case '\n': *p++ = 'n'; break;
      case '\r': *p++ = 'r'; break;
      case '\t': *p++ = 't'; break;
      default: {
        constexpr std::string_view kHex = "0123456789abcdef";
        *p++ = 'u';
        *p++ = '0';
        *p++ = '0';
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 0xF];
      }
    }
    run = special + 1;
  }
}

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
  const auto add = [&bound, &all_plain](std::string_view text) {
    const std::optional<size_t> bytes = ascii_literal_bound(text);
    if (bytes) bound += *bytes;
    if (bytes && *bytes != text.size()) all_plain = false;
    return bytes.has_value();
  };
  if (!add(command.language) || !add(command.remark)) return false;
  for (const auto& [name, value] : command.ext_fields) {
    if (!add(name) || !add(value)) return false;
    bound += 6;  // "name":"value",
  }
  const size_t start = out.size();
  out.resize(start + bound);
  char* const begin = reinterpret_cast<char*>(out.data() + start);
  char* p = begin;
  const auto put = [&p](std::string_view text) {
    std::memcpy(p, text.data(), text.size());
    p += text.size();
  };
  const auto put_int = [&p](int32_t value) {
    const auto [end, error] = std::to_chars(p, p + kIntBytes, value);
    MQ_ASSERT(error == std::errc());
    p = end;
  };
  const auto put_literal = [&p, all_plain, &put](std::string_view text) {
    if (all_plain) return put(text);  // scanned once already, above
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
  out.resize(start + written);
  return true;
}

}  // namespace

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

Result<RemotingCommand> decode_json_header(std::span<const uint8_t> header) {
  if (std::optional<RemotingCommand> command = CommonHeaderParser(header).parse()) return std::move(*command);
  return decode_json_header_general(header);
}

void append_json_header_general(const RemotingCommand& command, std::vector<uint8_t>& out) {
  Json ext = Json::object();
  for (const auto& [name, value] : command.ext_fields) ext[name] = value;
  Json header = Json::object();
  header["code"] = command.code;
  header["extFields"] = std::move(ext);
  header["flag"] = command.flag;
  header["language"] = command.language;
  header["opaque"] = command.opaque;
  if (!command.remark.empty()) header["remark"] = command.remark;
  header["serializeTypeCurrentRPC"] = "JSON";
  header["version"] = command.version;
  const std::string text = dump_json_text(header);
  out.insert(out.end(), text.begin(), text.end());
}

Result<RemotingCommand> decode_json_header_general(std::span<const uint8_t> header) {
  JsonHeaderReader reader;
  bool parsed = false;
  try {
    // Errors arrive through parse_error(); the catch is a backstop (bad_alloc).
    parsed = Json::sax_parse(header.begin(), header.end(), &reader);
  } catch (const std::exception& error) {
    return Status::Corruption(std::string("JSON header: ") + error.what());
  }
  return std::move(reader).finish(parsed);
}

}  // namespace mqlab::remoting
