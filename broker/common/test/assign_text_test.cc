// assign_text: the string ends up holding exactly the text, in the room it
// had when the text fits, and a text taken from inside the string itself
// (which clear() would overwrite first) comes out right too.
#include "broker/common/assign_text.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace mqlab::assign_text_test {
namespace {

TEST(AssignText, AShorterTextReusesTheRoom) {
  std::string to(100, 'x');
  const char* const room = to.data();
  assign_text(to, "BenchTopic");
  EXPECT_EQ(to, "BenchTopic");
  EXPECT_EQ(to.data(), room) << "a text that fits is copied into the room the string has";
  EXPECT_GE(to.capacity(), 100u);
}

TEST(AssignText, ALongerTextGrowsTheString) {
  std::string to = "ab";
  const std::string text(300, 'q');
  assign_text(to, text);
  EXPECT_EQ(to, text);
}

TEST(AssignText, AnEmptyTextEmptiesTheString) {
  std::string to = "not empty";
  assign_text(to, std::string_view());
  EXPECT_TRUE(to.empty());
  assign_text(to, "");
  EXPECT_TRUE(to.empty());
}

TEST(AssignText, ATextFromInsideTheStringItself) {
  std::string to = "0123456789abcdefghij";  // past the short-string buffer
  assign_text(to, std::string_view(to).substr(4, 6));
  EXPECT_EQ(to, "456789");
  std::string same = "whole text, from its first byte";
  assign_text(same, same);
  EXPECT_EQ(same, "whole text, from its first byte");
  std::string tail = "head and tail";
  assign_text(tail, std::string_view(tail).substr(tail.size()));  // the empty view at its end
  EXPECT_TRUE(tail.empty());
}

TEST(AssignText, ATextFromAnotherStringLeavesThatOneAlone) {
  const std::string from = "message id 7F0000010000";
  std::string to = "something else entirely, and longer than from";
  assign_text(to, from);
  EXPECT_EQ(to, from);
  EXPECT_EQ(from, "message id 7F0000010000");
}

}  // namespace
}  // namespace mqlab::assign_text_test
