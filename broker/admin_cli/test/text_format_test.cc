// Output helpers: printf into strings with Java's column formats, RocketMQ's
// human timestamps, bodies made safe for a terminal, NameServer lists.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "broker/admin_cli/text_format.h"

namespace mqlab::admin_cli::text_format_test {
namespace {

TEST(TextFormat, StrprintfPadsColumnsAsJavaPrintfDoes) {
  const std::string row = strprintf("%-32s  %-4d  %-20lld", "broker-a", 3, 1234LL);
  EXPECT_EQ(row.size(), 32u + 2 + 4 + 2 + 20);
  EXPECT_EQ(row.substr(0, 10), "broker-a  ");
  EXPECT_EQ(row.substr(34, 6), "3     ");
  EXPECT_EQ(strprintf("%s", std::string(5000, 'x').c_str()).size(), 5000u);  // longer than any stack buffer
  // A value wider than its column pushes the rest right instead of being cut, as in Java.
  EXPECT_EQ(strprintf("%-4s|", "abcdef"), "abcdef|");
}

TEST(TextFormat, HumanTimeHasRocketMqsShape) {
  const std::string text = human_time_ms(1'700'000'000'123);
  EXPECT_TRUE(std::regex_match(text, std::regex(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},123)"))) << text;
  EXPECT_EQ(human_time_ms(-5), "-5");
}

TEST(TextFormat, PrintableBodyKeepsTextAndEscapesTheRest) {
  const std::string utf8 = "caf\xC3\xA9 \xE2\x82\xAC";  // é and €
  EXPECT_EQ(printable_body(std::vector<uint8_t>(utf8.begin(), utf8.end())), utf8);
  const std::vector<uint8_t> binary = {'a', 0x00, '\n', 0xFF, 0xC3, 'b'};  // 0xC3 without its continuation
  EXPECT_EQ(printable_body(binary), "a\\x00\\x0A\\xFF\\xC3b");
  EXPECT_EQ(printable_body({}), "");
}

TEST(TextFormat, NamesrvListSplitsOnSemicolons) {
  EXPECT_EQ(split_namesrv_addresses("a:1;b:2"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(split_namesrv_addresses(" a:1 ; ;b:2;"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_TRUE(split_namesrv_addresses("").empty());
  EXPECT_TRUE(split_namesrv_addresses(";;").empty());
}

}  // namespace
}  // namespace mqlab::admin_cli::text_format_test
