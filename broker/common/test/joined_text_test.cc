// with_joined_text: the same joined text on the stack and past it.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "broker/common/joined_text.h"

namespace mqlab::joined_text_test {
namespace {

std::string joined(std::string_view a, char separator, std::string_view b) {
  return with_joined_text(a, separator, b, [](std::string_view text) { return std::string(text); });
}

TEST(JoinedText, JoinsShortTextOnTheStack) {
  EXPECT_EQ(joined("BenchTopic", '@', "cg-bench"), "BenchTopic@cg-bench");
  EXPECT_EQ(joined("", '#', ""), "#");
  EXPECT_EQ(joined("T", '#', ""), "T#");
}

// Either side of the stack buffer's 256 bytes, both sides of the separator.
TEST(JoinedText, JoinsTextOfAnyLength) {
  for (const size_t total : {254u, 255u, 256u, 257u, 258u, 5000u}) {
    const std::string a(total / 3, 'a');
    const std::string b(total - a.size() - 1, 'b');
    EXPECT_EQ(joined(a, '#', b), a + "#" + b) << total;
  }
}

TEST(JoinedText, ReturnsWhatTheCallbackReturns) {
  const size_t size = with_joined_text("ab", '@', "cd", [](std::string_view text) { return text.size(); });
  EXPECT_EQ(size, 5u);
}

}  // namespace
}  // namespace mqlab::joined_text_test
