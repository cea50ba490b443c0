// Invariants of the CommitLog record codec over random messages: encode ->
// patch -> decode is the identity, and damaged bytes (random, truncated,
// bit-flipped, overwritten) never crash the decoder nor pass as another message.
//
// What a single flipped bit does, field by field (asserted below, exhaustively
// for small records and by sampling for random ones):
//   caught      TOTALSIZE, MAGICCODE, BODYCRC, BODY (CRC-32 catches every
//               single-bit error), the BODY / TOPIC / PROPERTIES lengths and
//               SYSFLAG's host bits 0x10 / 0x20 (size checks, the topic
//               alphabet and, for BODY length and host bits, the CRC too).
//   undetectable  QUEUEID, FLAG, QUEUEOFFSET, PHYSICALOFFSET, the other SYSFLAG
//               bits, BORNTIMESTAMP, BORNHOST, STORETIMESTAMP, STOREHOST,
//               RECONSUMETIMES, PREPARED TX OFFSET and the PROPERTIES bytes:
//               RocketMQ's CRC covers the body only, so the record decodes
//               with exactly that one field changed.
//   TOPIC bytes   caught when the flip leaves [%|a-zA-Z0-9_-] (e.g. 'a' ->
//               '!'), otherwise undetectable ('a' -> 'c').
// With check_crc off, BODY and BODYCRC flips are undetectable too.
// A flipped BODY length or host bit could in principle re-frame the record
// into one whose lengths add up and whose body has the stored CRC; that
// needs a CRC-32 collision on top of a size coincidence, so we assert it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/store/message_codec.h"

namespace mqlab::store::message_codec_prop_test {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr std::string_view kTopicAlphabet = "%|abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
constexpr int32_t kMaxBodyBytes = 4 * 1024 * 1024;

// ---- generators ----------------------------------------------------------------

std::string gen_topic() {
  const auto length = *rc::gen::inRange<size_t>(1, kMaxTopicLength + 1);
  return *rc::gen::container<std::string>(length, rc::gen::elementOf(kTopicAlphabet));
}

// Bytes from a generated seed: drawing 4096 bytes one by one through
// RapidCheck would dominate the run time, and shrinking the length is enough.
Bytes gen_bytes(size_t max_length) {
  const auto length = *rc::gen::inRange<size_t>(0, max_length + 1);
  uint64_t state = *rc::gen::arbitrary<uint64_t>();
  Bytes bytes(length);
  for (uint8_t& b : bytes) {
    state += 0x9E3779B97F4A7C15;  // splitmix64
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
    b = static_cast<uint8_t>(z ^ (z >> 31));
  }
  return bytes;
}

// Names and values free of 0x02, names free of 0x01 too: what the text
// format can carry. Values may hold 0x01 (the decoder splits at the first).
// Kept small (under 1 KiB in all), so a flipped TOPIC length always lands its
// PROPERTIES length on bytes that the size checks reject.
MessageProperties gen_properties() {
  static const std::vector<std::string> kValueTokens = {"a", "Z", "0", " ", "-", "\x01", "\xE4\xBB\x8E",
                                                        "\xF0\x9F\x98\x80", "\xC3\xA9", "null"};
  const auto name = rc::gen::container<std::string>(
      rc::gen::elementOf(std::string_view("ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcxyz0123456789")));
  const auto value = rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(kValueTokens)),
                                  [](const std::vector<std::string>& tokens) {
                                    std::string text;
                                    for (const std::string& token : tokens) text += token;
                                    return text;
                                  });
  MessageProperties properties;
  const auto count = *rc::gen::inRange(0, 8);
  for (int i = 0; i < count; ++i) {
    std::string key = *rc::gen::resize(12, rc::gen::nonEmpty(name));
    properties[key] = *rc::gen::resize(16, value);
  }
  return properties;
}

HostAddress gen_host() {
  HostAddress host;
  host.ipv6 = *rc::gen::arbitrary<bool>();
  const size_t ip_bytes = host.ipv6 ? 16 : 4;
  for (size_t i = 0; i < ip_bytes; ++i) host.ip[i] = *rc::gen::arbitrary<uint8_t>();
  host.port = *rc::gen::arbitrary<int32_t>();
  return host;
}

MessageToStore gen_message(size_t max_body_bytes = 4096) {
  MessageToStore message;
  message.topic = gen_topic();
  message.queue_id = *rc::gen::arbitrary<int32_t>();
  message.flag = *rc::gen::arbitrary<int32_t>();
  message.body = gen_bytes(max_body_bytes);
  message.properties = gen_properties();
  message.sysflag = *rc::gen::arbitrary<int32_t>();
  message.born_timestamp_ms = *rc::gen::arbitrary<int64_t>();
  message.born_host = gen_host();
  message.store_host = gen_host();
  message.reconsume_times = *rc::gen::arbitrary<int32_t>();
  message.prepared_transaction_offset = *rc::gen::arbitrary<int64_t>();
  return message;
}

struct Patch {
  QueueOffset queue_offset;
  PhyOffset physical_offset;
  int64_t store_timestamp_ms = 0;
};

Patch gen_patch() {
  return Patch{QueueOffset(*rc::gen::inRange<int64_t>(0, INT64_MAX)),
               PhyOffset(*rc::gen::inRange<int64_t>(0, INT64_MAX)), *rc::gen::arbitrary<int64_t>()};
}

Bytes encode_and_patch(const MessageToStore& message, const Patch& patch) {
  EncodeOutcome outcome = encode_message(message, kMaxBodyBytes);
  RC_ASSERT(outcome.error == EncodeError::kNone);
  outcome.message.patch(patch.queue_offset, patch.physical_offset, patch.store_timestamp_ms);
  return std::move(outcome.message.bytes);
}

// ---- field-level comparison ------------------------------------------------------

// The names of the fields in which two decoded messages differ.
std::set<std::string> differing_fields(const DecodedMessage& a, const DecodedMessage& b) {
  std::set<std::string> fields;
  auto compare = [&](bool equal, const char* name) {
    if (!equal) fields.insert(name);
  };
  compare(a.total_size == b.total_size, "TOTALSIZE");
  compare(a.body_crc == b.body_crc, "BODYCRC");
  compare(a.queue_id == b.queue_id, "QUEUEID");
  compare(a.flag == b.flag, "FLAG");
  compare(a.queue_offset == b.queue_offset, "QUEUEOFFSET");
  compare(a.physical_offset == b.physical_offset, "PHYSICALOFFSET");
  compare(a.sysflag == b.sysflag, "SYSFLAG");
  compare(a.born_timestamp_ms == b.born_timestamp_ms, "BORNTIMESTAMP");
  compare(a.born_host == b.born_host, "BORNHOST");
  compare(a.store_timestamp_ms == b.store_timestamp_ms, "STORETIMESTAMP");
  compare(a.store_host == b.store_host, "STOREHOST");
  compare(a.reconsume_times == b.reconsume_times, "RECONSUMETIMES");
  compare(a.prepared_transaction_offset == b.prepared_transaction_offset, "PREPARED_TX_OFFSET");
  compare(std::ranges::equal(a.body, b.body), "BODY");
  compare(a.topic == b.topic, "TOPIC");
  compare(a.properties_text == b.properties_text, "PROPERTIES");
  return fields;
}

// Checks a decoded message against what was encoded; "" when they agree.
std::string mismatch_with_input(const DecodedMessage& d, const MessageToStore& m, const Patch& patch) {
  const int32_t host_bits = (m.born_host.ipv6 ? kSysFlagBornHostV6 : 0) | (m.store_host.ipv6 ? kSysFlagStoreHostV6 : 0);
  const int32_t sysflag = (m.sysflag & ~(kSysFlagBornHostV6 | kSysFlagStoreHostV6)) | host_bits;
  if (d.queue_id != m.queue_id || d.flag != m.flag) return "QUEUEID or FLAG";
  if (d.queue_offset != patch.queue_offset || d.physical_offset != patch.physical_offset) return "offsets";
  if (d.store_timestamp_ms != patch.store_timestamp_ms) return "STORETIMESTAMP";
  if (d.sysflag != sysflag) return "SYSFLAG";
  if (d.born_timestamp_ms != m.born_timestamp_ms || d.born_host != m.born_host) return "born";
  if (d.store_host != m.store_host) return "STOREHOST";
  if (d.reconsume_times != m.reconsume_times) return "RECONSUMETIMES";
  if (d.prepared_transaction_offset != m.prepared_transaction_offset) return "PREPARED TX OFFSET";
  if (!std::ranges::equal(d.body, m.body) || d.body_crc != body_crc32(m.body)) return "BODY";
  if (d.topic != m.topic) return "TOPIC";
  if (d.properties() != m.properties) return "PROPERTIES";
  return "";
}

// What a successful decode promises about the bytes it read; "" when kept.
std::string broken_promise(std::span<const uint8_t> bytes, const DecodedRecord& record, bool crc_checked = true) {
  if (record.total_size < 8) return "TOTALSIZE below 8";
  if (record.kind == RecordKind::kBlank) return "";
  const DecodedMessage& m = record.message;
  if (static_cast<size_t>(record.total_size) > bytes.size()) return "TOTALSIZE past the input";
  const auto* begin = bytes.data();
  const auto* end = bytes.data() + record.total_size;
  auto inside = [&](const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    return size == 0 || (p >= begin && p + size <= end);
  };
  if (!inside(m.body.data(), m.body.size()) || !inside(m.topic.data(), m.topic.size()) ||
      !inside(m.properties_text.data(), m.properties_text.size())) {
    return "a span outside the record";
  }
  const size_t v6_hosts = ((m.sysflag & kSysFlagBornHostV6) ? 1 : 0) + ((m.sysflag & kSysFlagStoreHostV6) ? 1 : 0);
  if (static_cast<size_t>(record.total_size) !=
      91 + 12 * v6_hosts + m.body.size() + m.topic.size() + m.properties_text.size()) {
    return "TOTALSIZE not the sum of the fields";
  }
  if (crc_checked && m.body_crc != body_crc32(m.body)) return "a body that fails its CRC";
  if (!validate_topic_name(m.topic).ok()) return "an illegal topic";
  return "";
}

// ---- bit flips -------------------------------------------------------------------

struct FieldSpan {
  std::string name;
  size_t start = 0;
  size_t length = 0;
};

// The record's fields, laid out from the reference table (not from the codec).
std::vector<FieldSpan> record_layout(const DecodedMessage& m) {
  std::vector<FieldSpan> fields;
  size_t at = 0;
  auto add = [&](const char* name, size_t length) {
    fields.push_back({name, at, length});
    at += length;
  };
  add("TOTALSIZE", 4);
  add("MAGICCODE", 4);
  add("BODYCRC", 4);
  add("QUEUEID", 4);
  add("FLAG", 4);
  add("QUEUEOFFSET", 8);
  add("PHYSICALOFFSET", 8);
  add("SYSFLAG", 4);
  add("BORNTIMESTAMP", 8);
  add("BORNHOST", m.born_host.ipv6 ? 20 : 8);
  add("STORETIMESTAMP", 8);
  add("STOREHOST", m.store_host.ipv6 ? 20 : 8);
  add("RECONSUMETIMES", 4);
  add("PREPARED_TX_OFFSET", 8);
  add("BODY_LENGTH", 4);
  add("BODY", m.body.size());
  add("TOPIC_LENGTH", 1);
  add("TOPIC", m.topic.size());
  add("PROPERTIES_LENGTH", 2);
  add("PROPERTIES", m.properties_text.size());
  return fields;
}

enum class FlipOutcome { kCaught, kConfinedToField, kCaughtOrConfined };

FlipOutcome expected_outcome(const FieldSpan& field, size_t bit, bool check_crc) {
  static const std::set<std::string> kCaught = {"TOTALSIZE",   "MAGICCODE", "BODYCRC",          "BODY_LENGTH",
                                                "TOPIC_LENGTH", "BODY",      "PROPERTIES_LENGTH"};
  if (!check_crc && (field.name == "BODY" || field.name == "BODYCRC")) return FlipOutcome::kConfinedToField;
  if (kCaught.contains(field.name)) return FlipOutcome::kCaught;
  if (field.name == "TOPIC") return FlipOutcome::kCaughtOrConfined;
  if (field.name == "SYSFLAG") {
    const size_t byte = bit / 8 - field.start;
    const int mask = 0x80 >> (bit % 8);
    const bool host_bit = byte == 3 && (mask & (kSysFlagBornHostV6 | kSysFlagStoreHostV6)) != 0;
    if (host_bit) return FlipOutcome::kCaught;
  }
  return FlipOutcome::kConfinedToField;
}

// Flips one bit of `flipped` (a copy of the original record), decodes, flips
// it back, and says what went wrong; "" when the outcome is the expected one.
std::string check_flip(Bytes& flipped, const DecodedMessage& original, const FieldSpan& field, size_t bit,
                       DecodeOptions options) {
  const FlipOutcome expected = expected_outcome(field, bit, options.check_crc);
  flipped[bit / 8] ^= static_cast<uint8_t>(0x80 >> (bit % 8));
  const Result<DecodedRecord> decoded = decode_record(flipped, options);
  std::string problem;
  if (decoded.ok()) {
    const std::set<std::string> changed = differing_fields(original, decoded->message);
    if (expected == FlipOutcome::kCaught) {
      problem = "was not caught";
    } else if (changed != std::set<std::string>{field.name}) {
      problem = "changed fields other than its own, or none";
    } else {
      problem = broken_promise(flipped, *decoded, options.check_crc);
    }
  } else if (expected == FlipOutcome::kConfinedToField) {
    problem = "was reported: " + decoded.status().to_string();
  } else if (decoded.status().code() != StatusCode::kCorruption) {
    problem = "was reported with the wrong code: " + decoded.status().to_string();
  }
  flipped[bit / 8] ^= static_cast<uint8_t>(0x80 >> (bit % 8));
  if (problem.empty()) return "";
  return "flip of bit " + std::to_string(bit % 8) + " of byte " + std::to_string(bit / 8) + " in " + field.name + " " +
         problem;
}

// ---- properties ------------------------------------------------------------------

RC_GTEST_PROP(MessageCodecProp, EncodePatchDecodeEqualsInput, ()) {
  const MessageToStore message = gen_message();
  const Patch patch = gen_patch();
  const Bytes bytes = encode_and_patch(message, patch);
  const size_t properties_size = encode_properties(message.properties).size();
  const size_t v6_hosts = (message.born_host.ipv6 ? 1 : 0) + (message.store_host.ipv6 ? 1 : 0);
  RC_ASSERT(bytes.size() == 91 + 12 * v6_hosts + message.body.size() + message.topic.size() + properties_size);

  const Result<DecodedRecord> decoded = decode_record(bytes);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->kind == RecordKind::kMessage);
  RC_ASSERT(decoded->total_size == static_cast<int32_t>(bytes.size()));
  RC_ASSERT(mismatch_with_input(decoded->message, message, patch) == "");
}

RC_GTEST_PROP(MessageCodecProp, TrailingBytesDoNotChangeTheRecord, ()) {
  const MessageToStore message = gen_message(256);
  const Patch patch = gen_patch();
  Bytes bytes = encode_and_patch(message, patch);
  const size_t size = bytes.size();
  const Bytes tail = gen_bytes(512);
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  const Result<DecodedRecord> decoded = decode_record(bytes);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->total_size == static_cast<int32_t>(size));
  RC_ASSERT(mismatch_with_input(decoded->message, message, patch) == "");
}

RC_GTEST_PROP(MessageCodecProp, TruncatedRecordIsCorruption, ()) {
  const Bytes bytes = encode_and_patch(gen_message(512), gen_patch());
  const auto cut = *rc::gen::inRange<size_t>(0, bytes.size());
  const Result<DecodedRecord> decoded = decode_record(std::span(bytes).first(cut));
  RC_ASSERT(!decoded.ok());
  RC_ASSERT(decoded.status().code() == StatusCode::kCorruption);
  const std::string why = cut < 8 ? "fewer than the 8" : "runs past the " + std::to_string(cut) + " bytes";
  RC_ASSERT(decoded.status().message().find(why) != std::string::npos);
}

RC_GTEST_PROP(MessageCodecProp, BitFlipIsCaughtOrConfinedToItsField, ()) {
  const MessageToStore message = gen_message();
  const Bytes original = encode_and_patch(message, gen_patch());
  const Result<DecodedRecord> decoded = decode_record(original);
  RC_ASSERT(decoded.ok());
  std::vector<FieldSpan> fields = record_layout(decoded->message);
  std::erase_if(fields, [](const FieldSpan& f) { return f.length == 0; });
  RC_ASSERT(fields.back().start + fields.back().length == original.size());
  Bytes flipped = original;
  // A field first, then a bit in it: every field gets flips, not just the body.
  for (int i = 0; i < 64; ++i) {
    const FieldSpan& field = *rc::gen::elementOf(fields);
    const auto bit = *rc::gen::inRange<size_t>(field.start * 8, (field.start + field.length) * 8);
    const std::string problem = check_flip(flipped, decoded->message, field, bit, DecodeOptions{});
    RC_ASSERT(problem == "");
  }
  RC_ASSERT(flipped == original);
}

RC_GTEST_PROP(MessageCodecProp, RandomBytesNeverCrashAndKeepPromises, ()) {
  const Bytes bytes = gen_bytes(512);
  const DecodeOptions options{.check_crc = *rc::gen::arbitrary<bool>()};
  const Result<DecodedRecord> decoded = decode_record(bytes, options);
  if (decoded.ok()) RC_ASSERT(broken_promise(bytes, *decoded, options.check_crc) == "");
}

// Overwritten bytes get past the cheap checks far more often than random
// input does, so this exercises the deeper decode paths.
RC_GTEST_PROP(MessageCodecProp, OverwrittenRecordNeverCrashesAndKeepsPromises, ()) {
  Bytes bytes = encode_and_patch(gen_message(256), gen_patch());
  const auto overwrites = *rc::gen::inRange(1, 9);
  for (int i = 0; i < overwrites; ++i) {
    bytes[*rc::gen::inRange<size_t>(0, bytes.size())] = *rc::gen::arbitrary<uint8_t>();
  }
  bytes.resize(*rc::gen::inRange<size_t>(0, bytes.size() + 64), 0);
  const Result<DecodedRecord> decoded = decode_record(bytes);
  if (decoded.ok()) RC_ASSERT(broken_promise(bytes, *decoded) == "");
}

RC_GTEST_PROP(MessageCodecProp, ZeroFilledBufferIsCorruptionAtTotalSize, ()) {
  const Bytes zeros(*rc::gen::inRange<size_t>(8, 8192), 0);
  const Result<DecodedRecord> decoded = decode_record(zeros);
  RC_ASSERT(!decoded.ok());
  RC_ASSERT(decoded.status().code() == StatusCode::kCorruption);
  RC_ASSERT(decoded.status().message().find("TOTALSIZE 0 ") != std::string::npos);
}

RC_GTEST_PROP(MessageCodecProp, BlankRecordDecodesWhateverFollows, ()) {
  Bytes bytes = gen_bytes(64);
  const auto total_size = *rc::gen::inRange<int32_t>(8, INT32_MAX);
  bytes.resize(std::max<size_t>(bytes.size(), 8));
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(total_size >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<uint8_t>(kBlankMagicCode >> (24 - 8 * i));
  const Result<DecodedRecord> decoded = decode_record(bytes);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->kind == RecordKind::kBlank);
  RC_ASSERT(decoded->total_size == total_size);
}

RC_GTEST_PROP(MessageCodecProp, PropertiesRoundTripWithOrWithoutTrailingSeparator, ()) {
  const MessageProperties properties = gen_properties();
  std::string text = encode_properties(properties);
  RC_ASSERT(decode_properties(text) == properties);
  if (!text.empty()) text.pop_back();
  RC_ASSERT(decode_properties(text) == properties);
}

// decode_properties_into scans 16 bytes at a time (and the text's last 16
// for its tail): it must split as the plain rule does (items end at 0x02,
// the first 0x01 splits, nameless or separator-less items are skipped, the
// last of a name wins) on any text and wherever the text lies in a buffer,
// and say whether it assigned a name that was there already.
RC_GTEST_PROP(MessageCodecProp, DecodePropertiesIntoSplitsAsThePlainRule, ()) {
  const std::string text = *rc::gen::container<std::string>(rc::gen::element('\x01', '\x02', '\0', 'K', 'A', 'x'));
  const size_t shift = *rc::gen::inRange<size_t>(0, 16);
  const std::string buffer = std::string(shift, '\x01') + text + std::string(shift, '\x02');
  const std::string_view view = std::string_view(buffer).substr(shift, text.size());
  const MessageProperties before = *rc::gen::element(MessageProperties{}, MessageProperties{{"K", "first"}},
                                                     MessageProperties{{"A", "a"}, {"Kx", "b"}});
  MessageProperties expected = before;
  bool expected_replaced = false;
  for (size_t start = 0; start <= text.size();) {
    const size_t item_end = std::min(text.find('\x02', start), text.size());
    const std::string item = text.substr(start, item_end - start);
    const size_t separator = item.find('\x01');
    if (separator != std::string::npos && separator != 0) {
      expected_replaced |= !expected.insert_or_assign(item.substr(0, separator), item.substr(separator + 1));
    }
    start = item_end + 1;
  }
  MessageProperties decoded = before;
  const bool replaced = decode_properties_into(view, decoded);
  RC_ASSERT(decoded == expected);
  RC_ASSERT(replaced == expected_replaced);
}

// The dispatcher looks properties up in place; it must see what the map
// sees, on any text (repeated names, empty names or values, stray 0x01s).
RC_GTEST_PROP(MessageCodecProp, FindPropertyAgreesWithDecodeProperties, ()) {
  const std::string text = *rc::gen::container<std::string>(rc::gen::element('\x01', '\x02', 'K', 'T', 'A', 'G', 'S'));
  const MessageProperties decoded = decode_properties(text);
  for (const std::string name : {"K", "KK", "TAGS", "T", "S", "GS"}) {
    const std::optional<std::string_view> found = find_property(text, name);
    const auto it = decoded.find(name);
    RC_ASSERT(found.has_value() == (it != decoded.end()));
    if (found) RC_ASSERT(std::string(*found) == it->second);
  }
}

// The same on texts shaped like a send's, long enough that items cross the
// 16-byte blocks find_property scans in, whose names share first bytes
// (SEQ, STATUS; MAX_OFFSET, MIN_OFFSET) and whose values hold the names'
// first bytes, 0x01s and whole names; looked up from anywhere in a buffer.
RC_GTEST_PROP(MessageCodecProp, FindPropertyAgreesWithDecodePropertiesOnLongTexts, ()) {
  const std::vector<std::string> names = {"SEQ", "STATUS", "S", "MAX_OFFSET", "MIN_OFFSET", "UNIQ_KEY", "TAGS"};
  const auto items = *rc::gen::container<std::vector<std::pair<std::string, std::string>>>(
      rc::gen::pair(rc::gen::elementOf(names),
                    rc::gen::container<std::string>(rc::gen::element('\x01', 'S', 'M', 'E', 'Q', '0', '9', 'x'))));
  std::string text = *rc::gen::container<std::string>(rc::gen::element('\x02', 'S', 'q'));  // a stray start
  for (const auto& [name, value] : items) text += name + '\x01' + value + '\x02';
  if (*rc::gen::arbitrary<bool>() && !text.empty()) text.pop_back();  // the last separator is optional
  const size_t shift = *rc::gen::inRange<size_t>(0, 16);
  const std::string buffer = std::string(shift, '\x02') + text;
  const std::string_view view = std::string_view(buffer).substr(shift);
  const MessageProperties decoded = decode_properties(view);
  for (const std::string& name : names) {
    const std::optional<std::string_view> found = find_property(view, name);
    const auto it = decoded.find(name);
    RC_ASSERT(found.has_value() == (it != decoded.end()));
    if (found) RC_ASSERT(std::string(*found) == it->second);
  }
}

RC_GTEST_PROP(MessageCodecProp, OffsetMessageIdRoundTrips, ()) {
  const HostAddress host = gen_host();
  const PhyOffset offset(*rc::gen::inRange<int64_t>(0, INT64_MAX));
  const std::string id = create_offset_message_id(host, offset);
  RC_ASSERT(id.size() == (host.ipv6 ? 56u : 32u));
  RC_ASSERT(std::ranges::all_of(id, [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }));
  const Result<OffsetMessageId> decoded = decode_offset_message_id(id);
  RC_ASSERT(decoded.ok());
  RC_ASSERT(decoded->store_host == host);
  RC_ASSERT(decoded->offset == offset);
}

// The offset-only reader agrees with the full decoder on any text: valid
// ids (negative offsets included, which both refuse), and strings of hex
// digits with the odd other byte at the lengths that matter.
RC_GTEST_PROP(MessageCodecProp, OffsetOfOffsetMessageIdAgreesWithTheDecoder, ()) {
  std::string id;
  if (*rc::gen::arbitrary<bool>()) {
    id = create_offset_message_id(gen_host(), PhyOffset(*rc::gen::arbitrary<int64_t>()));
  } else {
    const size_t size = *rc::gen::element<size_t>(0, 31, 32, 33, 55, 56, 57);
    id = *rc::gen::container<std::string>(size, rc::gen::element('0', '7', '9', 'A', 'F', 'a', 'f', 'G', ' ', '-'));
  }
  const Result<OffsetMessageId> decoded = decode_offset_message_id(id);
  const std::optional<PhyOffset> offset = offset_of_offset_message_id(id);
  RC_ASSERT(offset.has_value() == decoded.ok());
  if (offset) RC_ASSERT(*offset == decoded->offset);
}

// An independent oracle for valid UTF-8: encode code points ourselves and
// hash their UTF-16 units with Java's recurrence.
void check_java_string_hash(const std::vector<uint32_t>& code_points) {
  std::string utf8;
  uint32_t hash = 0;
  for (const uint32_t cp : code_points) {
    if (cp < 0x80) {
      utf8 += static_cast<char>(cp);
    } else if (cp < 0x800) {
      utf8 += {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    } else if (cp < 0x10000) {
      utf8 += {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
               static_cast<char>(0x80 | (cp & 0x3F))};
    } else {
      utf8 += {static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
               static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
    }
    if (cp < 0x10000) {
      hash = 31 * hash + cp;
    } else {
      hash = 31 * hash + (0xD800 | ((cp - 0x10000) >> 10));
      hash = 31 * hash + (0xDC00 | ((cp - 0x10000) & 0x3FF));
    }
  }
  RC_ASSERT(java_string_hash(utf8) == static_cast<int32_t>(hash));
}

RC_GTEST_PROP(MessageCodecProp, JavaStringHashIsTheUtf16Recurrence, ()) {
  check_java_string_hash(*rc::gen::container<std::vector<uint32_t>>(rc::gen::oneOf(
      rc::gen::inRange<uint32_t>(0, 0x80), rc::gen::inRange<uint32_t>(0x80, 0xD800),
      rc::gen::inRange<uint32_t>(0xE000, 0x10000), rc::gen::inRange<uint32_t>(0x10000, 0x110000))));
}

// Keys and tags are mostly ASCII: long ASCII runs (the hash's word-at-a-time
// path) broken by the odd multi-byte character, at every alignment.
RC_GTEST_PROP(MessageCodecProp, JavaStringHashOfMostlyAsciiText, ()) {
  const auto code_points = *rc::gen::container<std::vector<uint32_t>>(rc::gen::weightedOneOf<uint32_t>(
      {{20, rc::gen::inRange<uint32_t>(0, 0x80)}, {1, rc::gen::inRange<uint32_t>(0x80, 0xD800)},
       {1, rc::gen::inRange<uint32_t>(0x10000, 0x110000)}}));
  check_java_string_hash(code_points);
}

RC_GTEST_PROP(MessageCodecProp, JavaStringHashNeverCrashesOnArbitraryBytes, ()) {
  const Bytes bytes = gen_bytes(64);
  const std::string text(bytes.begin(), bytes.end());
  RC_ASSERT(java_string_hash(text) == java_string_hash(text));  // deterministic, no UB under sanitizers
}

// ---- exhaustive flips of small records -------------------------------------------

MessageToStore small_message(bool born_v6, bool store_v6, std::string body) {
  MessageToStore message;
  message.topic = "Ta";
  message.queue_id = 1;
  message.body.assign(body.begin(), body.end());
  message.properties = {{"KEYS", "k"}};
  message.born_host = HostAddress::ipv4(10, 0, 0, 2, 50000);
  message.store_host = HostAddress::ipv4(10, 0, 0, 1, 10911);
  if (born_v6) {
    message.born_host.ipv6 = true;
    message.born_host.ip[15] = 2;
  }
  if (store_v6) {
    message.store_host.ipv6 = true;
    message.store_host.ip[15] = 1;
  }
  return message;
}

TEST(MessageCodecFlips, EveryBitOfSmallRecordsIsCaughtOrConfined) {
  for (const bool born_v6 : {false, true}) {
    for (const bool store_v6 : {false, true}) {
      for (const std::string body : {"", "hi", "0123456789abcdef0123"}) {
        EncodeOutcome outcome = encode_message(small_message(born_v6, store_v6, body), 1024);
        ASSERT_EQ(outcome.error, EncodeError::kNone) << outcome.reason;
        outcome.message.patch(QueueOffset(5), PhyOffset(8192), 1700000000000);
        const Bytes original = outcome.message.bytes;
        const Result<DecodedRecord> decoded = decode_record(original);
        ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
        Bytes flipped = original;
        for (const bool check_crc : {true, false}) {
          for (const FieldSpan& field : record_layout(decoded->message)) {
            for (size_t bit = field.start * 8; bit < (field.start + field.length) * 8; ++bit) {
              EXPECT_EQ(check_flip(flipped, decoded->message, field, bit, DecodeOptions{.check_crc = check_crc}), "")
                  << "hosts v6 " << born_v6 << "/" << store_v6 << ", body \"" << body << "\", check_crc "
                  << check_crc;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace mqlab::store::message_codec_prop_test
