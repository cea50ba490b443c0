// The CommitLog record codec: turns a MessageToStore into RocketMQ 4.x's
// record bytes (layout table in message_codec.h) and decodes records back.
// Encoding trusts its caller and asserts; decoding trusts nothing, because
// the bytes come from disk or a peer, and reports every defect as Corruption.
#include "broker/store/message_codec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "broker/common/assert.h"
#include "broker/common/big_endian.h"
#include "broker/common/hex_digits.h"
#include "broker/common/crc32.h"
#include "broker/common/decimal_text.h"
#include "broker/common/move_bytes.h"
#include "broker/common/printable.h"
#include "broker/common/same_bytes.h"

namespace mqlab::store {
namespace {

constexpr char kNameValueSeparator = '\x01';  // MessageDecoder.NAME_VALUE_SEPARATOR
constexpr char kPropertySeparator = '\x02';   // MessageDecoder.PROPERTY_SEPARATOR
constexpr size_t kIpv6ExtraBytes = 12;        // a 16-byte address where IPv4 has 4
constexpr size_t kStoreTimestampPositionIpv4 = 56;
constexpr uint32_t kCrcMask = 0x7FFFFFFF;     // UtilAll.crc32 clears the sign bit

// TOTALSIZE..PREPARED TX OFFSET, then the three length prefixes.
static_assert(kMessageFixedSizeIpv4 == 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2);
static_assert(kPhysicalOffsetPosition == kQueueOffsetPosition + 8);
static_assert(kBornHostPosition == kPhysicalOffsetPosition + 8 + 4 + 8);
static_assert(kStoreTimestampPositionIpv4 == kBornHostPosition + 8);
static_assert(kMaxPropertiesLength == std::numeric_limits<int16_t>::max());

std::string hex32(uint32_t value) {
  char text[11];
  std::snprintf(text, sizeof(text), "0x%08X", value);
  return text;
}

std::string hex8(uint8_t value) {
  char text[5];
  std::snprintf(text, sizeof(text), "0x%02X", value);
  return text;
}

// Quotes a name for an error message (common/printable.h: bytes that would
// garble a log line escaped, long names cut).
std::string quoted(std::string_view text) { return "\"" + printable_excerpt(text, 64) + "\""; }

constexpr bool is_topic_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '%' ||
         c == '|' || c == '_' || c == '-';
}

// Every put checks its topic and every dispatched record checks it again:
// one table load per byte instead of up to seven compares.
constexpr std::array<bool, 256> kTopicChars = [] {
  std::array<bool, 256> table{};
  for (size_t c = 0; c < table.size(); ++c) table[c] = is_topic_char(static_cast<unsigned char>(c));
  return table;
}();
static_assert(kTopicChars['a'] && kTopicChars['Z'] && kTopicChars['9'] && kTopicChars['%'] && kTopicChars['|']);
static_assert(!kTopicChars[' '] && !kTopicChars['.'] && !kTopicChars[0] && !kTopicChars[0xFF]);

std::optional<size_t> find_illegal_topic_byte(std::string_view topic) {
  for (size_t i = 0; i < topic.size(); ++i) {
    if (!kTopicChars[static_cast<unsigned char>(topic[i])]) return i;
  }
  return std::nullopt;
}

size_t host_ip_bytes(bool ipv6) { return ipv6 ? 16 : 4; }

size_t record_size(bool born_v6, bool store_v6, size_t body, size_t topic, size_t properties) {
  return kMessageFixedSizeIpv4 + (born_v6 ? kIpv6ExtraBytes : 0) + (store_v6 ? kIpv6ExtraBytes : 0) + body +
         topic + properties;
}

// RFC 5952 text: lowercase hex groups, the first longest run (two or more)
// of zero groups shortened to "::".
std::string format_ipv6(const std::array<uint8_t, 16>& ip) {
  std::array<uint16_t, 8> groups{};
  for (size_t i = 0; i < groups.size(); ++i) groups[i] = get_u16_be(&ip[2 * i]);
  size_t best_start = groups.size(), best_length = 1, run_start = 0;
  for (size_t i = 0; i <= groups.size(); ++i) {
    if (i < groups.size() && groups[i] == 0) continue;
    if (i - run_start > best_length) {
      best_start = run_start;
      best_length = i - run_start;
    }
    run_start = i + 1;
  }
  std::string out;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i == best_start) {
      out += "::";
      i += best_length - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    char group[5];
    std::snprintf(group, sizeof(group), "%x", groups[i]);
    out += group;
  }
  return out;
}

// Writes big-endian fields into a span sized beforehand: the record is
// written where it will stay (the CommitLog's write buffer), so there is no
// vector to grow and no finished record to copy.
class RecordWriter {
 public:
  explicit RecordWriter(std::span<uint8_t> out) : at_(out.data()), end_(out.data() + out.size()) {}
  void u16(uint16_t v) { put_u16_be(take(2), v); }
  void u32(uint32_t v) { put_u32_be(take(4), v); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { put_u64_be(take(8), static_cast<uint64_t>(v)); }
  void u8(uint8_t v) { *take(1) = v; }
  // Inline for the short texts (a host's address, each property's name
  // and value): a memcpy call each was a dozen calls a record.
  void bytes(const void* data, size_t n) { move_bytes(take(n), data, n); }
  void text(std::string_view s) { bytes(s.data(), s.size()); }
  size_t left() const { return static_cast<size_t>(end_ - at_); }

 private:
  uint8_t* take(size_t n) {
    MQ_ASSERT(n <= left());  // the plan sized the span: a miss is our bug
    uint8_t* at = at_;
    at_ += n;
    return at;
  }
  uint8_t* at_;
  uint8_t* end_;
};

void write_host(RecordWriter& writer, const HostAddress& host) {
  writer.bytes(host.ip.data(), host_ip_bytes(host.ipv6));
  writer.i32(host.port);
}

// The PROPERTIES text encode_properties() would return, its length first
// (the plan needs it before any byte is written), then written in place.
size_t properties_length(const MessageProperties& properties) {
  size_t length = 0;
  for (const auto& [name, value] : properties) length += name.size() + value.size() + 2;
  return length;
}

void write_properties(RecordWriter& writer, const MessageProperties& properties) {
  for (const auto& [name, value] : properties) {
    writer.text(name);
    writer.u8(static_cast<uint8_t>(kNameValueSeparator));
    writer.text(value);
    writer.u8(static_cast<uint8_t>(kPropertySeparator));
  }
}

// ---- Java's UTF-8 decoder, for String.hashCode() parity -----------------
//
// The broker hashes the Java String it decoded from the producer's bytes, so
// malformed input must become the same U+FFFD units Java produces. This
// mirrors new String(bytes, UTF_8) (checked against OpenJDK 17 on 200,000
// random byte strings): the usual "maximal subpart" replacement, except that
// a well-formed-looking 3-byte encoding of a surrogate (ED A0..BF xx) becomes
// one U+FFFD, and a valid prefix cut off by the end of input becomes one.

constexpr char16_t kReplacementChar = 0xFFFD;

struct Utf16Step {
  std::array<char16_t, 2> units{};
  size_t unit_count = 1;
  size_t consumed = 1;  // input bytes
};

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

Utf16Step replacement(size_t consumed) { return Utf16Step{{kReplacementChar, 0}, 1, consumed}; }

Utf16Step decode_two_bytes(const uint8_t* in, size_t left) {
  if (left < 2 || !is_continuation(in[1])) return replacement(1);
  const auto unit = static_cast<char16_t>(((in[0] & 0x1F) << 6) | (in[1] & 0x3F));
  return Utf16Step{{unit, 0}, 1, 2};
}

Utf16Step decode_three_bytes(const uint8_t* in, size_t left) {
  const bool overlong_or_bad_second =
      left >= 2 && ((in[0] == 0xE0 && (in[1] & 0xE0) == 0x80) || !is_continuation(in[1]));
  if (overlong_or_bad_second) return replacement(1);
  if (left < 3) return replacement(left);
  if (!is_continuation(in[2])) return replacement(2);
  const auto unit = static_cast<char16_t>(((in[0] & 0x0F) << 12) | ((in[1] & 0x3F) << 6) | (in[2] & 0x3F));
  if (unit >= 0xD800 && unit <= 0xDFFF) return replacement(3);
  return Utf16Step{{unit, 0}, 1, 3};
}

Utf16Step decode_four_bytes(const uint8_t* in, size_t left) {
  const bool bad_second = left >= 2 && ((in[0] == 0xF0 && (in[1] < 0x90 || in[1] > 0xBF)) ||
                                        (in[0] == 0xF4 && (in[1] & 0xF0) != 0x80) || !is_continuation(in[1]));
  if (bad_second) return replacement(1);
  if (left < 3) return replacement(left);
  if (!is_continuation(in[2])) return replacement(2);
  if (left < 4) return replacement(left);
  if (!is_continuation(in[3])) return replacement(3);
  const uint32_t code_point =
      ((in[0] & 0x07u) << 18) | ((in[1] & 0x3Fu) << 12) | ((in[2] & 0x3Fu) << 6) | (in[3] & 0x3Fu);
  MQ_ASSERT(code_point >= 0x10000 && code_point <= 0x10FFFF);  // the second-byte ranges above ensure it
  const uint32_t offset = code_point - 0x10000;
  return Utf16Step{{static_cast<char16_t>(0xD800 | (offset >> 10)), static_cast<char16_t>(0xDC00 | (offset & 0x3FF))},
                   2, 4};
}

Utf16Step decode_utf16_step(const uint8_t* in, size_t left) {
  MQ_ASSERT(left > 0);
  const uint8_t lead = in[0];
  if (lead < 0x80) return Utf16Step{{lead, 0}, 1, 1};
  if (lead >= 0xC2 && lead <= 0xDF) return decode_two_bytes(in, left);
  if (lead >= 0xE0 && lead <= 0xEF) return decode_three_bytes(in, left);
  if (lead >= 0xF0 && lead <= 0xF4) return decode_four_bytes(in, left);
  return replacement(1);  // a stray continuation, C0/C1 or F5..FF starts nothing
}

// ---- decoding --------------------------------------------------------------

HostAddress read_host(ByteReader& reader, bool ipv6) {
  HostAddress host;
  host.ipv6 = ipv6;
  const std::span<const uint8_t> ip = reader.bytes(host_ip_bytes(ipv6));
  MQ_ASSERT(ip.size() <= host.ip.size());
  move_bytes(host.ip.data(), ip.data(), ip.size());  // 4 or 16 bytes: inline, not a memmove call
  host.port = reader.i32();
  return host;
}

std::string host_kinds(int32_t sysflag) {
  return std::string("born host ") + ((sysflag & kSysFlagBornHostV6) ? "IPv6" : "IPv4") + ", store host " +
         ((sysflag & kSysFlagStoreHostV6) ? "IPv6" : "IPv4");
}

// BODY, TOPIC and PROPERTIES: each length is checked against what is left of
// TOTALSIZE (keeping room for the prefixes still to come) before it is used.
Status read_variable_fields(ByteReader& reader, DecodedMessage& message) {
  const size_t body_position = reader.position();
  const int32_t body_length = reader.i32();
  if (body_length < 0 || static_cast<size_t>(body_length) > reader.remaining() - 3) {
    return Status::Corruption("BODY length " + std::to_string(body_length) + " at byte " +
                              std::to_string(body_position) + " is outside 0.." +
                              std::to_string(reader.remaining() - 3) + ", what TOTALSIZE " +
                              std::to_string(message.total_size) + " leaves");
  }
  message.body = reader.bytes(static_cast<size_t>(body_length));
  const uint8_t topic_length = reader.u8();
  if (topic_length == 0 || topic_length > kMaxTopicLength || topic_length > reader.remaining() - 2) {
    return Status::Corruption("TOPIC length " + std::to_string(topic_length) + " is outside 1.." +
                              std::to_string(std::min<size_t>(kMaxTopicLength, reader.remaining() - 2)));
  }
  const std::span<const uint8_t> topic = reader.bytes(topic_length);
  message.topic = std::string_view(reinterpret_cast<const char*>(topic.data()), topic.size());
  if (const auto bad = find_illegal_topic_byte(message.topic)) {
    return Status::Corruption("TOPIC " + quoted(message.topic) + " has byte " +
                              hex8(static_cast<uint8_t>(message.topic[*bad])) +
                              " at index " + std::to_string(*bad) + ", outside [%|a-zA-Z0-9_-]");
  }
  const auto properties_length = static_cast<int16_t>(reader.u16());
  if (properties_length < 0 || static_cast<size_t>(properties_length) > reader.remaining()) {
    return Status::Corruption("PROPERTIES length " + std::to_string(properties_length) + " is outside 0.." +
                              std::to_string(reader.remaining()));
  }
  const std::span<const uint8_t> properties = reader.bytes(static_cast<size_t>(properties_length));
  message.properties_text = std::string_view(reinterpret_cast<const char*>(properties.data()), properties.size());
  return Status::Ok();
}

// Requires: record is exactly TOTALSIZE bytes, at least the IPv4 minimum, and
// starts with the message magic.
Result<DecodedRecord> decode_message(std::span<const uint8_t> record, DecodeOptions options) {
  MQ_ASSERT(record.size() >= static_cast<size_t>(kMessageFixedSizeIpv4));
  ByteReader reader(record);
  DecodedMessage message;
  message.total_size = reader.i32();
  MQ_ASSERT(static_cast<size_t>(message.total_size) == record.size());
  const uint32_t magic = reader.u32();
  MQ_ASSERT(magic == kMessageMagicCode);
  message.body_crc = reader.u32();
  message.queue_id = reader.i32();
  message.flag = reader.i32();
  message.queue_offset = QueueOffset(reader.i64());
  message.physical_offset = PhyOffset(reader.i64());
  message.sysflag = reader.i32();
  const bool born_v6 = (message.sysflag & kSysFlagBornHostV6) != 0;
  const bool store_v6 = (message.sysflag & kSysFlagStoreHostV6) != 0;
  const size_t minimum = record_size(born_v6, store_v6, 0, 0, 0);
  if (record.size() < minimum) {
    return Status::Corruption("TOTALSIZE " + std::to_string(record.size()) + " is below the minimum " +
                              std::to_string(minimum) + " for SYSFLAG " + hex32(message.sysflag) + " (" +
                              host_kinds(message.sysflag) + ")");
  }
  message.born_timestamp_ms = reader.i64();
  message.born_host = read_host(reader, born_v6);
  message.store_timestamp_ms = reader.i64();
  message.store_host = read_host(reader, store_v6);
  message.reconsume_times = reader.i32();
  message.prepared_transaction_offset = reader.i64();
  MQ_RETURN_IF_ERROR(read_variable_fields(reader, message));
  MQ_ASSERT(!reader.failed());  // every read above was bounds-checked first
  const size_t computed = record_size(born_v6, store_v6, message.body.size(), message.topic.size(),
                                      message.properties_text.size());
  MQ_ASSERT(computed == reader.position());
  if (computed != record.size()) {
    return Status::Corruption("TOTALSIZE " + std::to_string(record.size()) + " differs from " +
                              std::to_string(computed) + " computed from the field lengths (body " +
                              std::to_string(message.body.size()) + ", topic " + std::to_string(message.topic.size()) +
                              ", properties " + std::to_string(message.properties_text.size()) + ", " +
                              host_kinds(message.sysflag) + ")");
  }
  if (options.check_crc) {
    const uint32_t computed_crc = body_crc32(message.body);
    if (computed_crc != message.body_crc) {
      return Status::Corruption("BODYCRC " + hex32(message.body_crc) + " differs from " + hex32(computed_crc) +
                                " computed over the " + std::to_string(message.body.size()) + "-byte body");
    }
  }
  return DecodedRecord{RecordKind::kMessage, message.total_size, message};
}


// The two upper-case hex digits of each byte value.
constexpr std::array<std::array<char, 2>, 256> make_hex_pairs() {
  constexpr char kDigits[] = "0123456789ABCDEF";
  std::array<std::array<char, 2>, 256> pairs{};
  for (size_t b = 0; b < 256; ++b) pairs[b] = {kDigits[b >> 4], kDigits[b & 0xF]};
  return pairs;
}
constexpr std::array<std::array<char, 2>, 256> kHexPairs = make_hex_pairs();

}  // namespace

// ---- HostAddress -------------------------------------------------------------

HostAddress HostAddress::ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int32_t port) {
  HostAddress host;
  host.ip = {a, b, c, d};  // the other 12 bytes stay zero, so equal hosts compare equal
  host.port = port;
  return host;
}

std::string HostAddress::to_string() const {
  if (ipv6) return "[" + format_ipv6(ip) + "]:" + std::to_string(port);
  // Formatted without temporaries: every pulled message names two hosts.
  std::string text;
  text.reserve(sizeof("255.255.255.255:65535"));
  char digits[16];
  for (size_t i = 0; i < 4; ++i) {
    if (i > 0) text += '.';
    const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), static_cast<unsigned>(ip[i]));
    MQ_ASSERT(error == std::errc());
    text.append(digits, end);
  }
  text += ':';
  const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), port);
  MQ_ASSERT(error == std::errc());
  text.append(digits, end);
  return text;
}

// ---- properties --------------------------------------------------------------

std::string encode_properties(const MessageProperties& properties) {
  // A name holding 0x01 or 0x02, or a value holding 0x02, does not survive a
  // round trip; RocketMQ does not check either, and neither do we.
  size_t size = 0;
  for (const auto& [name, value] : properties) size += property_bytes(name, value);
  std::string text(size, '\0');
  char* p = text.data();
  for (const auto& [name, value] : properties) p = put_property(p, name, value);
  MQ_ASSERT(p == text.data() + text.size());
  return text;
}

char* put_property(char* out, std::string_view name, std::string_view value) {
  // Short texts, two a property: inline rather than two memcpy calls.
  move_bytes(out, name.data(), name.size());
  out += name.size();
  *out++ = kNameValueSeparator;
  move_bytes(out, value.data(), value.size());
  out += value.size();
  *out++ = kPropertySeparator;
  return out;
}

char* put_number_property(char* out, std::string_view name, int64_t value) {
  move_bytes(out, name.data(), name.size());
  out += name.size();
  *out++ = kNameValueSeparator;
  out = put_decimal(out, value);
  *out++ = kPropertySeparator;
  return out;
}

MessageProperties decode_properties(std::string_view text) {
  MessageProperties properties;
  decode_properties_into(text, properties);
  return properties;
}

namespace {

// The first byte of [p, end) that is 0x01 or (when kEither) 0x02, or end;
// text_begin..end is the whole text, which p lies in. 16 bytes at a time;
// under 16 left, the text's last 16 (when it has them) with the bytes
// before p masked off. A send's properties are a dozen short names and
// values: two memchr calls an item cost about twice this.
template <bool kEither>
[[gnu::always_inline]] inline const char* find_property_separator(const char* p, const char* text_begin,
                                                                  const char* end) {
  static_assert(kNameValueSeparator == '\x01' && kPropertySeparator == '\x02');
  const char wanted = kEither ? kNameValueSeparator : kPropertySeparator;
#if defined(__SSE2__)
  const auto mask_of = [](const char* block) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    __m128i hits = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(kPropertySeparator));
    if constexpr (kEither) hits = _mm_or_si128(hits, _mm_cmpeq_epi8(bytes, _mm_set1_epi8(kNameValueSeparator)));
    return static_cast<uint32_t>(_mm_movemask_epi8(hits));
  };
  for (; end - p >= 16; p += 16) {
    if (const uint32_t mask = mask_of(p); mask != 0) return p + __builtin_ctz(mask);
  }
  if (p == end) return end;
  if (end - text_begin >= 16) {
    const char* const block = end - 16;
    const uint32_t mask = mask_of(block) & (~uint32_t{0} << (p - block));
    return mask != 0 ? block + __builtin_ctz(mask) : end;
  }
#endif
  (void)text_begin;
  while (p != end && *p != kPropertySeparator && *p != wanted) ++p;
  return p;
}

}  // namespace

bool decode_properties_into(std::string_view text, MessageProperties& properties) {
  bool replaced = false;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin;
  while (p != end) {
    // Like Java's decoder, skip items with no separator or no name, and split
    // at the first 0x01 so a value may contain 0x01. Unlike Java 4.9 an empty
    // value is kept, so encode -> decode is the identity. An item ends at its
    // 0x02: the first 0x01 or 0x02 from its start tells which it has.
    const char* const separator = find_property_separator</*kEither=*/true>(p, begin, end);
    if (separator == end || *separator == kPropertySeparator) {  // no 0x01: skipped
      p = separator == end ? end : separator + 1;
      continue;
    }
    const char* const value = separator + 1;
    const char* const value_end = find_property_separator</*kEither=*/false>(value, begin, end);
    if (separator != p) {
      // Java's HashMap.put: a repeated name keeps its last value. Views: the
      // map builds its strings in place, from no temporaries.
      replaced |= !properties.insert_or_assign(std::string_view(p, static_cast<size_t>(separator - p)),
                                               std::string_view(value, static_cast<size_t>(value_end - value)));
    }
    p = value_end == end ? end : value_end + 1;
  }
  return replaced;
}

namespace {

// Whether text holds a byte of 0x00-0x02 (either separator among them),
// 8 bytes at a time (the "has a byte less than n" word test, exact as an
// any-byte test), the last 8 overlapping the ones before. The store asks
// for every put, of five or six short names and values: three finds a
// property (a memchr call each) cost about 350 instructions a message.
[[gnu::always_inline]] inline bool holds_low_byte(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighBits = kOnes * 0x80;
  const auto low_in = [](uint64_t word) { return ((word - kOnes * 3) & ~word & kHighBits) != 0; };
  const char* const p = text.data();
  const size_t size = text.size();
  if (size >= 8) {
    uint64_t word;
    for (size_t i = 0; i + 8 < size; i += 8) {
      std::memcpy(&word, p + i, sizeof(word));
      if (low_in(word)) return true;
    }
    std::memcpy(&word, p + size - 8, sizeof(word));
    return low_in(word);
  }
  if (size >= 4) {
    uint32_t head;
    uint32_t tail;
    std::memcpy(&head, p, sizeof(head));
    std::memcpy(&tail, p + size - 4, sizeof(tail));
    return low_in((uint64_t{head} << 32) | tail);
  }
  // 0-3 bytes: the first, middle and last cover them; the rest of the word
  // holds bytes that are not low.
  if (size == 0) return false;
  const auto byte = [p](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
  return low_in(~uint64_t{0xFFFFFF} | byte(0) | byte(size / 2) << 8 | byte(size - 1) << 16);
}

}  // namespace

bool properties_round_trip(const MessageProperties& properties) {
  static_assert(kNameValueSeparator < kPropertySeparator, "holds_low_byte finds both");
  for (const auto& [name, value] : properties) {
    if (name.empty()) return false;
    // Rare (a NUL, or a value's 0x01): the exact rule then.
    if (holds_low_byte(name) &&
        (name.find(kNameValueSeparator) != std::string::npos || name.find(kPropertySeparator) != std::string::npos)) {
      return false;
    }
    if (holds_low_byte(value) && value.find(kPropertySeparator) != std::string::npos) return false;
  }
  return true;
}

std::optional<std::string_view> find_property(std::string_view text, std::string_view name) {
  // Nor may name hold 0x01 or 0x02 (message_codec.h); unchecked: two more
  // scans of a constant name each call cost 0.3% of the simulator's work.
  MQ_ASSERT(!name.empty());
  // The items decode_properties keeps: a name, then the first 0x01. Such an
  // item starts the text or follows a 0x02 (a value holds none), so the
  // candidates are the item starts that hold name's first byte: 16 bytes
  // at a time, the starts (each 0x02's next byte) and the first-byte
  // matches are two compares and a shift. A memchr call per occurrence of
  // the first byte (every 'S' of a send's text for "SEQ", and of OFFSET in
  // the two a pull adds) cost as many instructions, about 185 a lookup,
  // and more time: 22.7 against 16.5 ns, a consumer's text measured.
  // The last item of a repeated name wins, so the text is read from its
  // end and the first match found is the answer: a pulled message's
  // UNIQ_KEY is the last stored property (only the two offsets a pull adds
  // follow it), and reading from the front went through the whole text.
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const size_t size = name.size();
  const auto try_item = [&](const char* item) -> std::optional<std::string_view> {
    // A match needs the name and its 0x01 before the end.
    if (static_cast<size_t>(end - item) <= size || item[size] != kNameValueSeparator ||
        !same_bytes(item, name.data(), size)) {
      return std::nullopt;
    }
    const char* const value = item + size + 1;
    const char* const value_end = find_property_separator</*kEither=*/false>(value, begin, end);
    return std::string_view(value, static_cast<size_t>(value_end - value));
  };
#if defined(__SSE2__)
  if (text.size() >= 16) {
    const __m128i separators = _mm_set1_epi8(kPropertySeparator);
    const __m128i firsts = _mm_set1_epi8(name.front());
    // Bit i: the byte at block + i starts an item and is name's first (the
    // block's first byte starts one when it is the text's or follows a 0x02).
    const auto candidates_at = [&](const char* block) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
      const auto separator_mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, separators)));
      const auto first_mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, firsts)));
      const uint32_t starts_first = block == begin || block[-1] == kPropertySeparator ? 1 : 0;
      return ((separator_mask << 1) | starts_first) & first_mask & 0xFFFF;
    };
    // The highest candidate first: the last item in the block.
    const auto try_candidates = [&](const char* block, uint32_t candidates) -> std::optional<std::string_view> {
      for (; candidates != 0; candidates &= ~(uint32_t{1} << (31 - __builtin_clz(candidates)))) {
        if (auto found = try_item(block + (31 - __builtin_clz(candidates)))) return found;
      }
      return std::nullopt;
    };
    const char* p = end;
    for (; p - begin >= 16; p -= 16) {
      if (auto found = try_candidates(p - 16, candidates_at(p - 16))) return found;
    }
    if (p != begin) {
      // The first 16 bytes, of which the last ones were looked at above:
      // only the bytes before p are still to try.
      const auto unseen = static_cast<uint32_t>(p - begin);
      MQ_ASSERT(unseen >= 1 && unseen < 16);
      return try_candidates(begin, candidates_at(begin) & ((uint32_t{1} << unseen) - 1));
    }
    return std::nullopt;
  }
#endif
  for (const char* p = end; p != begin;) {
    --p;
    if (*p == name.front() && (p == begin || p[-1] == kPropertySeparator)) {
      if (auto found = try_item(p)) return found;
    }
  }
  return std::nullopt;
}

std::string MessageToStore::tags() const {
  const auto it = properties.find(std::string(kPropertyTags));
  return it == properties.end() ? std::string() : it->second;
}

std::vector<std::string> MessageToStore::keys() const {
  std::vector<std::string> keys;
  const auto it = properties.find(std::string(kPropertyKeys));
  if (it == properties.end()) return keys;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');  // MessageConst.KEY_SEPARATOR
    const std::string_view key = rest.substr(0, space);
    if (!key.empty()) keys.emplace_back(key);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  return keys;
}

// ---- encoding ----------------------------------------------------------------

void EncodedMessage::patch(QueueOffset queue_offset, PhyOffset physical_offset, int64_t store_timestamp_ms) {
  MQ_ASSERT(store_timestamp_position == kStoreTimestampPositionIpv4 ||
            store_timestamp_position == kStoreTimestampPositionIpv4 + kIpv6ExtraBytes);
  MQ_ASSERT(bytes.size() >= store_timestamp_position + 8);
  MQ_ASSERT(get_u32_be(&bytes[4]) == kMessageMagicCode);
  MQ_ASSERT(queue_offset.value() >= 0);
  MQ_ASSERT(physical_offset.value() >= 0);
  put_u64_be(&bytes[kQueueOffsetPosition], static_cast<uint64_t>(queue_offset.value()));
  put_u64_be(&bytes[kPhysicalOffsetPosition], static_cast<uint64_t>(physical_offset.value()));
  put_u64_be(&bytes[store_timestamp_position], static_cast<uint64_t>(store_timestamp_ms));
}

Status validate_topic_name(std::string_view topic) {
  if (topic.empty()) return Status::InvalidArgument("topic is empty");
  if (topic.size() > static_cast<size_t>(kMaxTopicLength)) {
    return Status::InvalidArgument("topic " + quoted(topic) + " is " + std::to_string(topic.size()) +
                                   " bytes, longer than the " + std::to_string(kMaxTopicLength) + " allowed");
  }
  if (const auto bad = find_illegal_topic_byte(topic)) {
    return Status::InvalidArgument("topic " + quoted(topic) + " has byte " +
                                   hex8(static_cast<uint8_t>(topic[*bad])) + " at index " +
                                   std::to_string(*bad) + ", outside [%|a-zA-Z0-9_-]");
  }
  return Status::Ok();
}

RecordPlan plan_record(const MessageToStore& message, int32_t max_body_bytes, std::string_view valid_topic) {
  MQ_ASSERT(max_body_bytes >= 0);
  RecordPlan plan;
  auto refuse = [&plan](EncodeError error, std::string reason) {
    MQ_ASSERT(error != EncodeError::kNone);
    plan.error = error;
    plan.reason = std::move(reason);
    return std::move(plan);
  };
  if (valid_topic.empty() || !same_text(message.topic, valid_topic)) {
    if (Status status = validate_topic_name(message.topic); !status.ok()) {
      return refuse(EncodeError::kMessageIllegal, status.message());
    }
  }
  if (message.body.size() > static_cast<size_t>(max_body_bytes)) {
    return refuse(EncodeError::kMessageIllegal, "body is " + std::to_string(message.body.size()) +
                                                    " bytes, more than maxMessageSize " +
                                                    std::to_string(max_body_bytes));
  }
  const size_t properties = properties_length(message.properties);
  if (properties > static_cast<size_t>(kMaxPropertiesLength)) {
    return refuse(EncodeError::kPropertiesSizeExceeded, "properties are " + std::to_string(properties) +
                                                            " bytes, more than " +
                                                            std::to_string(kMaxPropertiesLength));
  }
  const size_t total_size = record_size(message.born_host.ipv6, message.store_host.ipv6, message.body.size(),
                                        message.topic.size(), properties);
  // Only reachable with a maxMessageSize near 2 GiB: TOTALSIZE is an int.
  if (total_size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return refuse(EncodeError::kMessageIllegal,
                  "record would be " + std::to_string(total_size) + " bytes, past TOTALSIZE's int range");
  }
  plan.total_size = static_cast<int32_t>(total_size);
  plan.properties_length = static_cast<int32_t>(properties);
  MQ_ASSERT(plan.total_size >= kMessageFixedSizeIpv4);
  return plan;
}

int32_t stored_sysflag(const MessageToStore& message) {
  int32_t sysflag = message.sysflag & ~(kSysFlagBornHostV6 | kSysFlagStoreHostV6);
  if (message.born_host.ipv6) sysflag |= kSysFlagBornHostV6;
  if (message.store_host.ipv6) sysflag |= kSysFlagStoreHostV6;
  return sysflag;
}

void write_record(const MessageToStore& message, const RecordPlan& plan, const AppendFields& fields,
                  std::span<uint8_t> out) {
  MQ_ASSERT(plan.error == EncodeError::kNone);
  MQ_ASSERT(out.size() == static_cast<size_t>(plan.total_size));
  MQ_ASSERT(fields.queue_offset.value() >= 0);
  MQ_ASSERT(fields.physical_offset.value() >= 0);
  const int32_t sysflag = stored_sysflag(message);
  RecordWriter writer(out);
  writer.i32(plan.total_size);
  writer.u32(kMessageMagicCode);
  // The CRC is checked again where it matters, on the way back from disk;
  // recomputing it here would double the put path's biggest cost.
  writer.u32(body_crc32(message.body));
  writer.i32(message.queue_id);
  writer.i32(message.flag);
  writer.i64(fields.queue_offset.value());
  writer.i64(fields.physical_offset.value());
  writer.i32(sysflag);
  writer.i64(message.born_timestamp_ms);
  write_host(writer, message.born_host);
  writer.i64(fields.store_timestamp_ms);
  write_host(writer, message.store_host);
  writer.i32(message.reconsume_times);
  writer.i64(message.prepared_transaction_offset);
  writer.i32(static_cast<int32_t>(message.body.size()));
  writer.bytes(message.body.data(), message.body.size());
  writer.u8(static_cast<uint8_t>(message.topic.size()));
  writer.text(message.topic);
  writer.u16(static_cast<uint16_t>(plan.properties_length));
  const size_t properties_at = out.size() - writer.left();
  write_properties(writer, message.properties);
  // Every byte written, none past the end: the plan and the writer agree.
  MQ_ASSERT(writer.left() == 0);
  MQ_ASSERT(out.size() - properties_at == static_cast<size_t>(plan.properties_length));
}

EncodeOutcome encode_message(const MessageToStore& message, int32_t max_body_bytes) {
  RecordPlan plan = plan_record(message, max_body_bytes);
  EncodeOutcome outcome;
  if (plan.error != EncodeError::kNone) {
    outcome.error = plan.error;
    outcome.reason = std::move(plan.reason);
    return outcome;
  }
  // The append-time fields stay zero for the caller to patch.
  outcome.message.bytes.resize(static_cast<size_t>(plan.total_size));
  write_record(message, plan, AppendFields{}, outcome.message.bytes);
  outcome.message.store_timestamp_position =
      kStoreTimestampPositionIpv4 + (message.born_host.ipv6 ? kIpv6ExtraBytes : 0);
  MQ_ASSERT((get_u32_be(&outcome.message.bytes[8]) & ~kCrcMask) == 0);
  return outcome;
}

// ---- checksums and hashes ----------------------------------------------------

uint32_t body_crc32(std::span<const uint8_t> body) {
  return crc32_ieee(0, body) & kCrcMask;
}

int32_t java_string_hash(std::string_view utf8) {
  // Java's int arithmetic wraps; unsigned arithmetic gives the same bits without UB.
  constexpr uint32_t k31[9] = {1u,
                               31u,
                               31u * 31u,
                               31u * 31u * 31u,
                               31u * 31u * 31u * 31u,
                               31u * 31u * 31u * 31u * 31u,
                               31u * 31u * 31u * 31u * 31u * 31u,
                               31u * 31u * 31u * 31u * 31u * 31u * 31u,
                               31u * 31u * 31u * 31u * 31u * 31u * 31u * 31u};  // 31^i, wrapped
  uint32_t hash = 0;
  const auto* in = reinterpret_cast<const uint8_t*>(utf8.data());
  for (size_t position = 0; position < utf8.size();) {
    // An ASCII byte is one UTF-16 unit of the same value: topics, tags and
    // keys nearly always are (the IndexFile hashes two or three 40-byte
    // keys per put, and the decoder's step cost 3x this per byte). Eight
    // (or four) ASCII bytes at a time: h*31^8 + b0*31^7 + ... + b7, whose
    // products do not wait on each other, instead of eight dependent steps.
    if (utf8.size() - position >= 8) {
      uint64_t word = 0;
      std::memcpy(&word, in + position, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        const uint8_t* const b = in + position;
        hash = hash * k31[8] + b[0] * k31[7] + b[1] * k31[6] + b[2] * k31[5] + b[3] * k31[4] +
               b[4] * k31[3] + b[5] * k31[2] + b[6] * k31[1] + b[7];
        position += 8;
        continue;
      }
    }
    if (utf8.size() - position >= 4) {
      uint32_t word = 0;
      std::memcpy(&word, in + position, 4);
      if ((word & 0x80808080u) == 0) {
        const uint8_t* const b = in + position;
        hash = hash * k31[4] + b[0] * k31[3] + b[1] * k31[2] + b[2] * k31[1] + b[3];
        position += 4;
        continue;
      }
    }
    if (in[position] < 0x80) {
      hash = 31 * hash + in[position];
      ++position;
      continue;
    }
    const Utf16Step step = decode_utf16_step(in + position, utf8.size() - position);
    MQ_ASSERT(step.consumed >= 1 && step.consumed <= utf8.size() - position);
    for (size_t i = 0; i < step.unit_count; ++i) hash = 31 * hash + step.units[i];
    position += step.consumed;
  }
  return static_cast<int32_t>(hash);
}

int64_t tags_code(std::string_view tags) {
  // MessageExtBrokerInner.tagsString2tagsCode: no tag means 0.
  if (tags.empty()) return 0;
  return java_string_hash(tags);
}

// ---- decoding ----------------------------------------------------------------

Result<DecodedRecord> decode_record(std::span<const uint8_t> bytes, DecodeOptions options) {
  if (bytes.size() < static_cast<size_t>(kEndFileMinBlankLength)) {
    return Status::Corruption("only " + std::to_string(bytes.size()) +
                              " bytes, fewer than the 8 of TOTALSIZE and MAGICCODE");
  }
  const int32_t total_size = get_i32_be(bytes.data());
  const uint32_t magic = get_u32_be(bytes.data() + 4);
  // TOTALSIZE first, so a zero-filled tail reads as "TOTALSIZE 0": the end of the log.
  if (total_size < kEndFileMinBlankLength) {
    return Status::Corruption("TOTALSIZE " + std::to_string(total_size) + " is below the minimum " +
                              std::to_string(kEndFileMinBlankLength));
  }
  if (magic == kBlankMagicCode) {
    // The blank's TOTALSIZE counts the rest of the segment, which the caller
    // may not have handed us; nothing after the magic is meaningful.
    return DecodedRecord{RecordKind::kBlank, total_size, DecodedMessage{}};
  }
  if (magic != kMessageMagicCode) {
    return Status::Corruption("MAGICCODE " + hex32(magic) + " is neither the message magic " +
                              hex32(kMessageMagicCode) + " nor the blank magic " + hex32(kBlankMagicCode));
  }
  if (total_size < kMessageFixedSizeIpv4) {
    return Status::Corruption("TOTALSIZE " + std::to_string(total_size) + " is below the minimum " +
                              std::to_string(kMessageFixedSizeIpv4) + " of a message record");
  }
  if (static_cast<size_t>(total_size) > bytes.size()) {
    return Status::Corruption("TOTALSIZE " + std::to_string(total_size) + " runs past the " +
                              std::to_string(bytes.size()) + " bytes available");
  }
  return decode_message(bytes.first(static_cast<size_t>(total_size)), options);
}

std::string create_offset_message_id(const HostAddress& store_host, PhyOffset offset) {
  return std::string(offset_message_id_text(store_host, offset).view());
}

OffsetMessageIdText offset_message_id_text(const HostAddress& store_host, PhyOffset offset) {
  // No assertion on the offset: it may come from a damaged record a peer sent
  // (a client builds the id of every pulled message); a negative one is
  // written as its two's complement, as Java's ByteBuffer.putLong does.
  // Host, port and offset as the record stores them (write_host, then the
  // offset big-endian), in hex; no buffer on the heap for the raw bytes.
  std::array<uint8_t, 16 + 4 + 8> raw{};
  const size_t ip_bytes = host_ip_bytes(store_host.ipv6);
  std::copy_n(store_host.ip.begin(), ip_bytes, raw.begin());
  put_u32_be(raw.data() + ip_bytes, static_cast<uint32_t>(store_host.port));
  put_u64_be(raw.data() + ip_bytes + 4, static_cast<uint64_t>(offset.value()));
  OffsetMessageIdText id;
  id.size = 2 * (ip_bytes + 12);
  MQ_ASSERT(id.size == (store_host.ipv6 ? 56u : 32u) && id.size <= id.chars.size());
  char* out = id.chars.data();
  for (size_t i = 0; i < ip_bytes + 12; ++i, out += 2) std::memcpy(out, kHexPairs[raw[i]].data(), 2);
  return id;
}

Result<OffsetMessageId> decode_offset_message_id(std::string_view message_id) {
  if (message_id.size() != 32 && message_id.size() != 56) {
    return Status::InvalidArgument("message id " + quoted(message_id) + " has " +
                                   std::to_string(message_id.size()) +
                                   " characters; expected 32 (IPv4 store host) or 56 (IPv6)");
  }
  std::array<uint8_t, 28> raw{};  // 56 hex digits at most: no heap for the bytes
  for (size_t i = 0; i < message_id.size(); ++i) {
    const int digit = hex_digit_value(message_id[i]);
    if (digit < 0) {
      return Status::InvalidArgument("message id " + quoted(message_id) + " has non-hex character " +
                                     quoted(message_id.substr(i, 1)) + " at index " + std::to_string(i));
    }
    raw[i / 2] = static_cast<uint8_t>((raw[i / 2] << 4) | digit);
  }
  ByteReader reader(std::span<const uint8_t>(raw.data(), message_id.size() / 2));
  OffsetMessageId decoded;
  decoded.store_host = read_host(reader, message_id.size() == 56);
  decoded.offset = PhyOffset(reader.i64());
  MQ_ASSERT(!reader.failed() && reader.remaining() == 0);
  if (decoded.offset.value() < 0) {
    return Status::InvalidArgument("message id " + quoted(message_id) + " has negative commitlog offset " +
                                   decoded.offset.to_string());
  }
  return decoded;
}

std::optional<PhyOffset> offset_of_offset_message_id(std::string_view message_id) {
  if (message_id.size() != 32 && message_id.size() != 56) return std::nullopt;
  // The host's digits are checked, not decoded; the last 16 are the offset.
  const char* const digits = message_id.data();
  if (message_id.size() == 32) {
    if (!read_16_hex_digits(digits)) return std::nullopt;
  } else {
    for (size_t i = 0; i < 40; ++i) {  // an IPv6 host: rare
      if (hex_digit_value(digits[i]) < 0) return std::nullopt;
    }
  }
  const std::optional<uint64_t> offset = read_16_hex_digits(digits + message_id.size() - 16);
  if (!offset) return std::nullopt;
  if (*offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;  // negative as stored
  return PhyOffset(static_cast<int64_t>(*offset));
}

}  // namespace mqlab::store
