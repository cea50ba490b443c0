// The JSON header's fast paths agree with its general (nlohmann) paths: the
// writer byte for byte, the reader command for command and error for error,
// on random commands, JSON-ish token soup and headers with one byte damaged.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "broker/remoting/json_header.h"

namespace mqlab::remoting {
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
  for (int i = 0; i < fields; ++i) command.ext_fields[gen_text(2)] = gen_text(6);
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
    const Result<RemotingCommand> fast = decode_json_header(bytes);
    const Result<RemotingCommand> general = decode_json_header_general(bytes);
    ASSERT_EQ(fast.ok(), general.ok()) << header;
    if (fast.ok()) {
      EXPECT_EQ(*fast, *general) << header;
    } else {
      EXPECT_EQ(fast.status().to_string(), general.status().to_string()) << header;
    }
  }
}

}  // namespace
}  // namespace mqlab::remoting
