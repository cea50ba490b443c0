// The shared typed reads of one extFields value (ext_field_value.h): the
// name comparisons agree with std::string's on any bytes and lengths
// (RapidCheck), and the reads give RemotingCommand's values and error words.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "broker/remoting/ext_field_value.h"

namespace mqlab::remoting::ext_field_value_test {
namespace {

int sign(int value) { return (value > 0) - (value < 0); }

RC_GTEST_PROP(ExtFieldValue, NameComparisonsAgreeWithStdString, ()) {
  // Few distinct bytes, so equal and nearly equal names are common.
  const auto gen_name = rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab\x01\xff")));
  const std::string a = *rc::gen::resize(24, gen_name);
  const std::string b = *rc::gen::oneOf(rc::gen::just(a), rc::gen::resize(24, gen_name));
  RC_ASSERT(same_ext_name(a, b) == (a == b));
  RC_ASSERT(sign(compare_ext_names(a, b)) == sign(a.compare(b)));
}

TEST(ExtFieldValue, SameNameLooksAtEveryByteOfEveryLength) {
  for (size_t size = 1; size <= 24; ++size) {
    const std::string name(size, 'x');
    for (size_t at = 0; at < size; ++at) {
      std::string other = name;
      other[at] = 'y';
      EXPECT_FALSE(same_ext_name(name, other)) << size << " " << at;
    }
    EXPECT_TRUE(same_ext_name(name, std::string(size, 'x')));
  }
}

TEST(ExtFieldValue, ReadsGiveValuesAndRocketMqsErrors) {
  const std::string number = "-42";
  const std::string word = "abc";
  const std::string yes = "TRUE";
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
