// The JSON header's fast paths agree with its general (nlohmann) paths: the
// writer byte for byte, the reader command for command and error for error,
// on random commands, JSON-ish token soup, headers with one byte damaged,
// headers shaped like ali-ons' (bare numbers, booleans and nulls, escapes,
// non-ASCII) and every frame of the ali-ons capture; and the headers real
// clients send are read by the fast path itself, not handed on.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "broker/remoting/json_header.h"
#include "broker/remoting/test/remoting_test_util.h"

namespace mqlab::remoting::json_header_fast_path_prop_test {
namespace {

using Bytes = std::vector<uint8_t>;

// Text rich in what the fast paths must treat exactly as the general ones
// do: escapes, control bytes, DEL, multi-byte and invalid UTF-8.
std::string gen_text(size_t max_tokens) {
  static const std::vector<std::string> kTokens = {"a",  "Z",    "0",    " ",  "\"",       "\\",           "/",
                                                   "{",  "}",    ":",    ",",  "\x01",     "\x1f",         "\x7f",
                                                   "\t", "\n",   "\b",   "\r", "\xc3\xa9", "\xe4\xb8\xad", "\xff",
                                                   "\xc3", "topic", "queueId", "", "\f"};
  const auto count = *rc::gen::inRange<size_t>(0, max_tokens + 1);
  std::string text;
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    text += token;
  }
  return text;
}

RemotingCommand gen_command() {
  RemotingCommand command;
  command.code = *rc::gen::arbitrary<int32_t>();
  command.language = *rc::gen::element(0, 1) == 0 ? std::string("JAVA") : gen_text(3);
  command.version = *rc::gen::arbitrary<int32_t>();
  command.opaque = *rc::gen::arbitrary<int32_t>();
  command.flag = *rc::gen::arbitrary<int32_t>();
  command.remark = *rc::gen::element(0, 1) == 0 ? std::string() : gen_text(6);
  const auto fields = *rc::gen::inRange(0, 8);
  for (int i = 0; i < fields; ++i) command.ext_fields.insert_or_assign(gen_text(2), gen_text(6));
  return command;
}

Bytes encode(const RemotingCommand& command, bool general) {
  Bytes out;
  if (general) {
    append_json_header_general(command, out);
  } else {
    append_json_header(command, out);
  }
  return out;
}

// Same command, or the same error in the same words.
void assert_same_decoding(const Bytes& header) {
  const Result<RemotingCommand> fast = decode_json_header(header);
  const Result<RemotingCommand> general = decode_json_header_general(header);
  RC_ASSERT(fast.ok() == general.ok());
  if (fast.ok()) {
    RC_ASSERT(*fast == *general);
  } else {
    RC_ASSERT(fast.status().to_string() == general.status().to_string());
  }
}

RC_GTEST_PROP(JsonHeaderFastPath, WriterEqualsGeneralByteForByte, ()) {
  const RemotingCommand command = gen_command();
  RC_ASSERT(encode(command, false) == encode(command, true));
}

// The writer remembers which of the first 64 strings need escapes and
// scans only those again; past 64 it scans every string again. Escaped
// and plain strings on both sides of that line, with and without a remark
// (the last string, written only when present), must still give the
// general path's bytes.
RC_GTEST_PROP(JsonHeaderFastPath, WriterEqualsGeneralWithManyFieldsAndEscapes, ()) {
  RemotingCommand command;
  command.remark = *rc::gen::element(std::string(), std::string("plain"), std::string("tab\there"));
  const auto fields = *rc::gen::inRange(20, 45);  // 40-90 strings with language and remark
  for (int i = 0; i < fields; ++i) {
    const std::string name = "f" + std::to_string(100 + i);
    command.ext_fields.insert_or_assign(name, *rc::gen::element(std::string("v"), std::string("a\x01b\x02"), std::string("q\"s")));
  }
  RC_ASSERT(encode(command, false) == encode(command, true));
}

// ASCII text, long and short, with bytes to escape anywhere in it: the
// writer copies 16 bytes at a time up to each escape while 16 remain, and
// byte runs after that (and every string of a header goes through it).
std::string gen_ascii_text() {
  static const std::vector<std::string> kTokens = {"a", "Z", "0", " ", "\"", "\\", "/", "\x01", "\x02", "\x1f",
                                                   "\x7f", "\t", "\n", "UNIQ_KEY", "0123456789abcdef"};
  const auto count = *rc::gen::inRange<size_t>(0, 60);
  std::string text;
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    text += token;
  }
  return text;
}

RC_GTEST_PROP(JsonHeaderFastPath, WriterEqualsGeneralOnLongAsciiTextWithEscapes, ()) {
  RemotingCommand command;
  command.remark = gen_ascii_text();
  const auto fields = *rc::gen::inRange(0, 6);
  for (int i = 0; i < fields; ++i) command.ext_fields.insert_or_assign(gen_ascii_text(), gen_ascii_text());
  RC_ASSERT(encode(command, false) == encode(command, true));
}

RC_GTEST_PROP(JsonHeaderFastPath, ReaderEqualsGeneralOnWrittenHeaders, ()) {
  const RemotingCommand command = gen_command();
  const Bytes header = encode(command, false);
  assert_same_decoding(header);
}

RC_GTEST_PROP(JsonHeaderFastPath, ReaderEqualsGeneralOnADamagedByte, ()) {
  Bytes header = encode(gen_command(), false);
  const auto at = *rc::gen::inRange<size_t>(0, header.size());
  header[at] = static_cast<uint8_t>(*rc::gen::elementOf(std::string("{}[]:,\"\\ 0123456789-.eEtnx\x01\xc3")));
  assert_same_decoding(header);
}

RC_GTEST_PROP(JsonHeaderFastPath, ReaderEqualsGeneralOnTokenSoup, ()) {
  static const std::vector<std::string> kTokens = {
      "{",      "}",     "[",         "]",          ":",         ",",        "\"code\"", "\"extFields\"",
      "\"opaque\"", "\"flag\"", "\"version\"", "\"language\"", "\"remark\"", "\"a\"",    "\"b\"",    "1",
      "-7",     "0",     "01",        "-0",         "2147483648", "-2147483649", "1.5",  "1e3",
      "true",   "null",  "\"",        "\\",         " ",         "\n",       "\"\\u00e9\"", "\"\xc3\xa9\"",
      "\"x\\ty\"", "\"serializeTypeCurrentRPC\"", "\"a\\u0001b\"", "\"\\u0002\"", "\"\\u00\"",
      "\"\\uD83D\\uDE00\"", "\"\\u007F\"", "\"\\u0080\"", "\"\\q\""};
  // Mostly well-formed skeletons with noise, so both paths get exercised.
  std::string header = *rc::gen::element(0, 1) == 0 ? "{\"code\":1," : "{";
  const auto count = *rc::gen::inRange<size_t>(0, 24);
  for (const std::string& token : *rc::gen::container<std::vector<std::string>>(count, rc::gen::elementOf(kTokens))) {
    header += token;
  }
  if (*rc::gen::element(0, 1) == 0) header += "}";
  assert_same_decoding(Bytes(header.begin(), header.end()));
}

// decode_json_header (fast path or fallback) gives what the general decoder
// gives: the same command, or the same error.
void expect_decodes_as_general(const Bytes& bytes, const std::string& header) {
  const Result<RemotingCommand> decoded = decode_json_header(bytes);
  const Result<RemotingCommand> general = decode_json_header_general(bytes);
  ASSERT_EQ(decoded.ok(), general.ok()) << header;
  if (decoded.ok()) {
    EXPECT_EQ(*decoded, *general) << header;
  } else {
    EXPECT_EQ(decoded.status().to_string(), general.status().to_string()) << header;
  }
}

TEST(JsonHeaderFastPath, CommonShapesDecodeAsTheGeneralPathDoes) {
  const std::vector<std::string> headers = {
      R"({"code":310,"extFields":{"a":"G","b":"T","e":"1"},"flag":0,"language":"JAVA","opaque":17,)"
      R"("serializeTypeCurrentRPC":"JSON","version":407})",
      R"({"code":0,"extFields":{},"flag":1,"language":"JAVA","opaque":-3,"remark":"a \"quoted\"\\ \/ remark\n",)"
      R"("serializeTypeCurrentRPC":"JSON","version":0})",
      R"( { "code" : 1 , "extFields" : { "b" : "2" , "a" : "1" , "b" : "3" } } )",
      R"({"code":1,"extFields":{"a":"1"},"extFields":{"b":"2"}})",
      R"({"code":1,"code":-2147483648,"opaque":2147483647})",
      R"({"code":1}x)",
      R"({"code":1,})",
      R"({})",
      "",
  };
  for (const std::string& header : headers) {
    const Bytes bytes(header.begin(), header.end());
    expect_decodes_as_general(bytes, header);
  }
}

// --- headers as ali-ons writes them ------------------------------------------
//
// ali-ons (JSON.stringify) puts "extFields" last, keys in its own order, and
// sends numbers and booleans bare. The generators below write such headers
// with values the fast path must take (short integers, booleans, nulls,
// ASCII strings with escapes) and, when `hostile`, ones it must hand on with
// the same outcome (\u escapes beyond ASCII and lone surrogates, raw
// non-ASCII bytes, -0, 19 and 20 digits, fractions, exponents, leading
// zeros, a lone minus).

// text without its non-ASCII bytes (which are the general path's to read).
std::string ascii_only(std::string text) {
  std::erase_if(text, [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  return text;
}

// text as a JSON string literal, each byte escaped or not at random in the
// ways JSON allows (a quote, a backslash and a control byte must be).
std::string gen_string_literal(const std::string& text) {
  std::string literal = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool must_escape = byte < 0x20 || c == '"' || c == '\\';
    if (byte >= 0x80 || (!must_escape && *rc::gen::inRange(0, 8) != 0)) {
      literal += c;
    } else if (c == '"' || c == '\\') {
      literal += *rc::gen::element(0, 1) == 0 ? std::string("\\") + c : (c == '"' ? "\\u0022" : "\\u005C");
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), *rc::gen::element(0, 1) == 0 ? "\\u%04x" : "\\u%04X", byte);
      literal += c == '\n' && *rc::gen::element(0, 1) == 0 ? "\\n" : escaped;
    }
  }
  return literal + "\"";
}

// An extFields value as ali-ons sends it, which the fast path must take.
std::string gen_ext_value_json() {
  static const std::vector<std::string> kBare = {"0", "1", "-1", "4", "15000", "1795946416061", "-2147483649",
                                                 "999999999999999999", "-999999999999999999", "true", "false",
                                                 "null"};
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return *rc::gen::elementOf(kBare);
    case 1: return std::to_string(*rc::gen::inRange<int64_t>(-999999999999999999, 999999999999999999));
    case 2: return gen_string_literal(ascii_only(gen_text(6)));
    default: return gen_string_literal(*rc::gen::container<std::string>(rc::gen::inRange<char>(0x20, 0x7f)));
  }
}

// A number near the fast path's edges: 1 to 24 digits, half the time 16
// to 21 (around its 18 and int64's 19), now and then a minus, a leading
// zero, a fraction or an exponent.
std::string gen_number_text() {
  std::string text = *rc::gen::inRange(0, 3) == 0 ? "-" : "";
  const auto digits = *rc::gen::element(0, 1) == 0 ? *rc::gen::inRange(1, 25) : *rc::gen::inRange(16, 22);
  text += static_cast<char>(*rc::gen::inRange(0, 8) == 0 ? '0' : '1' + *rc::gen::inRange(0, 9));
  for (int i = 1; i < digits; ++i) text += static_cast<char>('0' + *rc::gen::inRange(0, 10));
  static const std::vector<std::string> kTails = {"", "", "", "", "", "", ".5", ".0", "e2", "E-1", "e+0"};
  return text + *rc::gen::elementOf(kTails);
}

// One the fast path must hand on, or refuse as the general path does.
std::string gen_hostile_ext_value_json() {
  static const std::vector<std::string> kHostile = {
      "-0", "01", "-01", "1.5", "1.0", "1e3", "1E3", "-", "9999999999999999999", "-9999999999999999999",
      "18446744073709551615", "18446744073709551616", "123456789012345678901234", "tru", "nul", "True",
      "\"\\u00e9\"", "\"\\uD83D\\uDE00\"", "\"\\uDE00\"", "\"\\u0080\"", "\"\xc3\xa9\"", "\"\xff\"",
      "\"a\\qb\"", "[]", "{}", "[1]", "{\"x\":1}", "\"\x01\"", "1 2", "+1", ".5"};
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return gen_string_literal(gen_text(6));  // raw non-ASCII, valid or not
    case 1: return *rc::gen::elementOf(kHostile);
    default: return gen_number_text();
  }
}

// A header with 0..13 extFields; when hostile, one of them (at least one)
// has a value or a name from the hostile side, so every case tests it.
std::string gen_ali_ons_header(bool hostile) {
  static const std::vector<std::string> kNames = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k",
                                                  "topic", "queueId", "consumerGroup", "commitOffset"};
  std::string header = "{\"code\":" + std::to_string(*rc::gen::arbitrary<int32_t>()) +
                       ",\"language\":\"JAVA\",\"opaque\":" + std::to_string(*rc::gen::arbitrary<int32_t>()) +
                       ",\"flag\":0,\"version\":121,\"extFields\":{";
  const auto fields = *rc::gen::inRange(hostile ? 1 : 0, 14);
  const auto hostile_at = hostile ? *rc::gen::inRange(0, fields) : -1;
  for (int i = 0; i < fields; ++i) {
    if (i > 0) header += ',';
    // Names repeat now and then: the last occurrence wins, a null removes.
    std::string name = *rc::gen::inRange(0, 4) == 0 ? ascii_only(gen_text(2)) : *rc::gen::elementOf(kNames);
    std::string value = gen_ext_value_json();
    if (i == hostile_at) {
      if (*rc::gen::inRange(0, 5) == 0) {
        name = gen_text(2);  // raw non-ASCII in the name
      } else {
        value = gen_hostile_ext_value_json();
      }
    }
    header += gen_string_literal(name) + ":" + value;
  }
  return header + "}}";
}

// At RapidCheck's full size throughout: its small sizes skew inRange
// towards the low end, which would mostly pick the first branch of every
// choice above (and the first cases run small).
std::string gen_full_size_ali_ons_header(bool hostile) {
  return *rc::gen::resize(100, rc::gen::exec([hostile] { return gen_ali_ons_header(hostile); }));
}

Bytes to_header_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

RC_GTEST_PROP(JsonHeaderFastPath, ReaderEqualsGeneralOnAliOnsStyleHeaders, ()) {
  assert_same_decoding(to_header_bytes(gen_full_size_ali_ons_header(true)));
}

// Bare integers of up to 18 digits, booleans and nulls are read by the fast
// path itself (they are what ali-ons sends with every request), and read as
// the general path reads them.
RC_GTEST_PROP(JsonHeaderFastPath, AliOnsBareValuesTakeTheFastPath, ()) {
  const Bytes bytes = to_header_bytes(gen_full_size_ali_ons_header(false));
  const std::optional<RemotingCommand> fast = decode_json_header_fast(bytes);
  const Result<RemotingCommand> general = decode_json_header_general(bytes);
  RC_ASSERT(general.ok());
  RC_ASSERT(fast.has_value());
  RC_ASSERT(*fast == *general);
}

TEST(JsonHeaderFastPath, BareExtValuesAreStringifiedAsTheGeneralPathDoes) {
  const std::string header =
      R"({"code":310,"extFields":{"d":4,"e":-1,"g":1795946416061,"k":false,"t":true,"n":null,"x":"1","x":null}})";
  const Bytes bytes = to_header_bytes(header);
  const std::optional<RemotingCommand> fast = decode_json_header_fast(bytes);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->ext_fields, (ExtFields{{"d", "4"}, {"e", "-1"}, {"g", "1795946416061"}, {"k", "false"},
                                         {"t", "true"}}));
  EXPECT_EQ(*fast, *decode_json_header_general(bytes));
  // Texts the general path would not give back as they came, and one that
  // is not JSON at all: handed on, to the general path's outcome.
  const std::map<std::string, std::string> kHandedOn = {
      {"-0", "0"}, {"1.0", "1"}, {"1e3", "1000"}, {"1234567890123456789", "1234567890123456789"},
      {"\"\\u00e9\"", "\xc3\xa9"}, {"01", ""}};
  for (const auto& [value, text] : kHandedOn) {
    const Bytes other = to_header_bytes(R"({"code":1,"extFields":{"a":)" + value + "}}");
    EXPECT_FALSE(decode_json_header_fast(other).has_value()) << value;
    const Result<RemotingCommand> decoded = decode_json_header(other);
    const Result<RemotingCommand> general = decode_json_header_general(other);
    ASSERT_EQ(decoded.ok(), !text.empty()) << value;
    ASSERT_EQ(general.ok(), !text.empty()) << value;
    if (text.empty()) {
      EXPECT_EQ(decoded.status().to_string(), general.status().to_string()) << value;
    } else {
      EXPECT_EQ(decoded->ext_fields.at("a"), text) << value;
      EXPECT_EQ(*decoded, *general) << value;
    }
  }
}

// The string reader decodes a literal in one pass, stepping over each
// escape (its second byte is never a literal's end), into room sized for
// the rest of the header, and the int reader sums the digits itself: the
// cases at those seams read as the general path reads them, and the
// well-formed ones are read by the fast path itself.
TEST(JsonHeaderFastPath, EscapeAndIntegerEdgesDecodeAsTheGeneralPathDoes) {
  const std::string many_escapes = [] {
    std::string text;
    for (int i = 0; i < 40; ++i) text += "KEY" + std::to_string(i) + "\\u0001value\\u0002";
    return text;
  }();
  // {header, whether the fast path reads it itself}
  const std::vector<std::pair<std::string, bool>> headers = {
      {R"({"code":1,"extFields":{"a":"x\"y"}})", true},           // an escaped quote is not the end
      {R"({"code":1,"extFields":{"a":"\\"}})", true},            // an escaped backslash just before the end
      {R"({"code":1,"extFields":{"a":"\u0022\u005C\u005c"}})", true},
      {R"({"code":1,"extFields":{"a\u0001":"\/\b\f\n\r\t"}})", true},
      {R"({"code":1,"remark":"\u0001","language":"J\u0041VA"})", true},
      {"{\"code\":1,\"extFields\":{\"p\":\"" + many_escapes + "\"}}", true},
      {R"({"code":1,"extFields":{"a":"\u0001x","b":"y\n"},"opaque":3})", true},  // more fields after escapes
      {R"({"code":1,"extFields":{"a":"\u0001"}})", true},                      // nothing but an escape
      {"{\"code\":1,\"extFields\":{\"a\":\"\\u0001\x01\"}}", false},  // a raw control byte after an escape
      {"{\"code\":1,\"extFields\":{\"a\":\"\\u0001\xc3\xa9\"}}", false},  // non-ASCII after an escape
      {R"({"code":1,"extFields":{"a":"\u00"}})", false},          // hex digits run into the closing quote
      {R"({"code":1,"extFields":{"a":"\u00"})", false},
      {R"({"code":1,"extFields":{"a":"\)", false},                // a backslash ends the header
      {R"({"code":1,"extFields":{"a":"\"}})", false},             // the close is escaped: unterminated
      {"{\"code\":1,\"extFields\":{\"a\":\"\\\xc3\xa9\"}}", false},  // a backslash before non-ASCII
      {R"({"code":1,"extFields":{"a":"\q"}})", false},
      {R"({"code":2147483647,"opaque":-2147483648,"flag":0,"version":-0})", true},
      {R"({"code":2147483648})", false},
      {R"({"code":-2147483649})", false},
      {R"({"code":9999999999})", false},
      {R"({"code":12345678901})", false},
      {R"({"code":-})", false},
      {R"({"code":007})", false},
      {R"({"code":1.5})", false},
      {"{\"code\" :\t1 ,\r\n\"opaque\": 2 }", true},          // whitespace between every token
  };
  for (const auto& [header, fast_reads_it] : headers) {
    const Bytes bytes = to_header_bytes(header);
    EXPECT_EQ(decode_json_header_fast(bytes).has_value(), fast_reads_it) << header;
    expect_decodes_as_general(bytes, header);
  }
  const Result<RemotingCommand> quoted =
      decode_json_header(to_header_bytes(R"({"code":1,"extFields":{"a":"x\"y\\"}})"));
  ASSERT_TRUE(quoted.ok());
  EXPECT_EQ(quoted->ext_fields.at("a"), "x\"y\\");
}

// Every frame a real ali-ons client sent is read by the fast path, and to
// what the general path reads.
TEST(JsonHeaderFastPath, AliOnsCaptureTakesTheFastPathAndAgrees) {
  const auto frames = test_support::load_ali_ons_frames();
  if (frames.empty()) GTEST_SKIP() << "no capture at " << test_support::kAliOnsFramesPath;
  for (const auto& [code, frame] : frames) {
    SCOPED_TRACE(code);
    ASSERT_GE(frame.size(), kFramePrefixBytes);
    const size_t header_length = get_u32_be(frame.data() + 4) & 0xFFFFFF;
    ASSERT_LE(kFramePrefixBytes + header_length, frame.size());
    const std::span<const uint8_t> header(frame.data() + kFramePrefixBytes, header_length);
    const std::optional<RemotingCommand> fast = decode_json_header_fast(header);
    const Result<RemotingCommand> general = decode_json_header_general(header);
    ASSERT_TRUE(general.ok()) << general.status().to_string();
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(*fast, *general);
    EXPECT_EQ(fast->code, code);
  }
}

}  // namespace
}  // namespace mqlab::remoting::json_header_fast_path_prop_test
