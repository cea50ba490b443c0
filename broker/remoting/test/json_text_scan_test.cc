#include "broker/remoting/json_text_scan.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "broker/remoting/json_header.h"

namespace mqlab::remoting {
namespace {

// What put_short_plain_literal writes, or "" when it must refuse: every
// byte plain and at most 16 of them.
std::string expected_short_literal(const std::string& text) {
  if (text.size() > 16) return "";
  for (const char c : text) {
    if (json_scan::byte_class(c) != json_scan::ByteClass::kPlain) return "";
  }
  return "\"" + text + "\"";
}

std::string put_short(const std::string& text) {
  std::vector<char> room(text.size() * kMaxEscapedBytesPerByte + 2, '#');
  char* const end = json_scan::put_short_plain_literal(text, room.data());
  if (end == nullptr) return "";
  EXPECT_LE(end - room.data(), static_cast<std::ptrdiff_t>(room.size()));
  return std::string(room.data(), end);
}

TEST(PutShortPlainLiteral, EachLengthPlainOrNot) {
  for (size_t size = 0; size <= 18; ++size) {
    std::string text;
    for (size_t i = 0; i < size; ++i) text.push_back(static_cast<char>('a' + i));
    EXPECT_EQ(put_short(text), expected_short_literal(text)) << size;
    // One byte to escape (or not ASCII) at each place: refused.
    for (size_t at = 0; at < size; ++at) {
      for (const char special : {'"', '\\', '\x01', '\x1f', '\x80', '\xff'}) {
        std::string changed = text;
        changed[at] = special;
        EXPECT_EQ(put_short(changed), "") << size << " " << at;
      }
    }
  }
  EXPECT_EQ(put_short(""), "\"\"");
  EXPECT_EQ(put_short("*"), "\"*\"");
  EXPECT_EQ(put_short("TAG"), "\"TAG\"");
  EXPECT_EQ(put_short("\x7f"), "\"\x7f\"");  // DEL is plain, as nlohmann writes it
}

RC_GTEST_PROP(PutShortPlainLiteral, WritesTheLiteralOrRefuses, ()) {
  static const std::string kBytes = std::string("abcXYZ09 _-.:/{}\x7f\"\\\x01\x1f\x80\xc3\xff");
  const auto text = *rc::gen::container<std::string>(rc::gen::elementOf(kBytes));
  RC_ASSERT(put_short(text) == expected_short_literal(text));
}

}  // namespace
}  // namespace mqlab::remoting
