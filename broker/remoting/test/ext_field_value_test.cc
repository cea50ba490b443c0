// The shared typed reads of one extFields value (ext_field_value.h): the
// name comparisons agree with std::string's on any bytes and lengths
// (RapidCheck), and the reads give RemotingCommand's values and error words.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "broker/common/name_order.h"
#include "broker/remoting/ext_field_value.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::remoting::ext_field_value_test {
namespace {

int sign(int value) { return (value > 0) - (value < 0); }

RC_GTEST_PROP(ExtFieldValue, NameComparisonsAgreeWithStdString, ()) {
  // Few distinct bytes, so equal and nearly equal names are common.
  const auto gen_name = rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab\x01\xff")));
  // Up to 40 bytes: every branch of same_bytes.h (bytes, 4- and 8-byte words, memcmp).
  const std::string a = *rc::gen::resize(40, gen_name);
  const std::string b = *rc::gen::oneOf(rc::gen::just(a), rc::gen::resize(40, gen_name));
  RC_ASSERT(same_ext_name(a, b) == (a == b));
  RC_ASSERT(sign(compare_names(a, b)) == sign(a.compare(b)));
}

TEST(ExtFieldValue, SameNameLooksAtEveryByteOfEveryLength) {
  for (size_t size = 1; size <= 40; ++size) {
    const std::string name(size, 'x');
    for (size_t at = 0; at < size; ++at) {
      std::string other = name;
      other[at] = 'y';
      EXPECT_FALSE(same_ext_name(name, other)) << size << " " << at;
    }
    EXPECT_TRUE(same_ext_name(name, std::string(size, 'x')));
  }
}

// What parse_int64 gave before its short-number path: Java's Long.parseLong
// on ASCII (one optional sign, '+' included; digits only; in range).
std::optional<int64_t> parse_int64_by_from_chars(std::string_view digits) {
  if (!digits.empty() && digits.front() == '+') {
    digits.remove_prefix(1);
    if (!digits.empty() && digits.front() == '-') return std::nullopt;
  }
  if (digits.empty()) return std::nullopt;
  int64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, error] = std::from_chars(digits.data(), end, value, 10);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

RC_GTEST_PROP(ExtFieldValue, ParseInt64AgreesWithFromChars, ()) {
  // Signs, digits and a stray byte, at every length around 18 and 19 digits.
  const std::string text = *rc::gen::resize(
      24, rc::gen::container<std::string>(rc::gen::weightedOneOf<char>(
              {{20, rc::gen::inRange('0', static_cast<char>('9' + 1))},
               {1, rc::gen::elementOf(std::string("+- a/:"))}})));
  RC_ASSERT(parse_int64(text) == parse_int64_by_from_chars(text));
  const auto value = *rc::gen::arbitrary<int64_t>();
  RC_ASSERT(parse_int64(std::to_string(value)) == std::optional<int64_t>(value));
}

TEST(ExtFieldValue, ParseInt64AtTheEdges) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (const std::string text : {"0", "-0", "+0", "999999999999999999", "-999999999999999999",
                                 "1000000000000000000", "9223372036854775807", "-9223372036854775808",
                                 "9223372036854775808", "-9223372036854775809", "", "-", "+", "+-1", "--1", "1-",
                                 "0000000000000000000001"}) {
    EXPECT_EQ(parse_int64(text), parse_int64_by_from_chars(text)) << text;
  }
  EXPECT_EQ(parse_int64("9223372036854775807"), kMax);
  EXPECT_EQ(parse_int64("-9223372036854775808"), kMin);
  EXPECT_EQ(parse_int64("-999999999999999999"), -999999999999999999);
}

// The same value or the same error words, however the read was taken.
template <typename T>
bool same_read(const Result<T>& a, const Result<T>& b) {
  if (a.ok() != b.ok()) return false;
  return a.ok() ? *a == *b : a.status().message() == b.status().message();
}

RC_GTEST_PROP(ExtFieldValue, InlineIntReadsAgreeWithTheFullReads, ()) {
  // Plain decimals of every length around int32's and the 18-digit bound,
  // signs, stray bytes, and a field left out.
  const std::string text = *rc::gen::resize(
      22, rc::gen::container<std::string>(rc::gen::weightedOneOf<char>(
              {{20, rc::gen::inRange('0', static_cast<char>('9' + 1))},
               {1, rc::gen::elementOf(std::string("+- a/:"))}})));
  const std::string_view view = text;
  const std::string_view* value = *rc::gen::element(0, 1, 2, 3) == 0 ? nullptr : &view;
  RC_ASSERT(same_read(read_ext_int("f", value), read_ext_int_in_full("f", value)));
  RC_ASSERT(same_read(read_ext_int32("f", value), read_ext_int32_in_full("f", value)));
  RC_ASSERT(same_read(read_optional_ext_int("f", value), read_optional_ext_int_in_full("f", value)));
  RC_ASSERT(same_read(read_optional_ext_int32("f", value), read_optional_ext_int32_in_full("f", value)));
  const auto number = *rc::gen::arbitrary<int32_t>();
  const std::string written = std::to_string(number);
  const std::string_view written_view = written;
  RC_ASSERT(*read_ext_int32("f", &written_view) == number);
  RC_ASSERT(**read_optional_ext_int32("f", &written_view) == number);
}

TEST(ExtFieldValue, IntReadsAtTheInt32Edges) {
  for (const std::string text : {"2147483647", "-2147483648", "2147483648", "-2147483649", "+2147483647", "-0",
                                 "000000000000000000000007", "-", ""}) {
    const std::string_view view = text;
    EXPECT_TRUE(same_read(read_ext_int32("f", &view), read_ext_int32_in_full("f", &view))) << text;
    EXPECT_TRUE(same_read(read_ext_int("f", &view), read_ext_int_in_full("f", &view))) << text;
  }
  const std::string_view too_big = "2147483648";
  EXPECT_EQ(read_ext_int32("queueId", &too_big).status().message(),
            "the custom field <queueId> is not a valid int32: \"2147483648\"");
  const std::string_view long_zeros = "000000000000000000000007";
  EXPECT_EQ(*read_ext_int32("f", &long_zeros), 7);
}

TEST(ExtFieldValue, ReadsGiveValuesAndRocketMqsErrors) {
  const std::string_view number = "-42";
  const std::string_view word = "abc";
  const std::string_view yes = "TRUE";
  EXPECT_EQ(*read_ext_int("n", &number), -42);
  EXPECT_EQ(*read_ext_int32("n", &number), -42);
  EXPECT_EQ(*read_ext_string("s", &word), "abc");
  EXPECT_TRUE(*read_ext_bool("b", &yes));
  EXPECT_EQ(read_ext_int("queueOffset", nullptr).status().message(), "the custom field <queueOffset> is null");
  EXPECT_EQ(read_ext_int32("queueId", &word).status().message(),
            "the custom field <queueId> is not a valid int32: \"abc\"");
  EXPECT_FALSE(read_optional_ext_int("o", nullptr)->has_value());
  EXPECT_EQ(read_optional_ext_bool("unitMode", &word).status().message(),
            "the custom field <unitMode> is not a valid boolean (true or false): \"abc\"");
  EXPECT_EQ(**read_optional_ext_int32("q", &number), -42);
}

}  // namespace
}  // namespace mqlab::remoting::ext_field_value_test
