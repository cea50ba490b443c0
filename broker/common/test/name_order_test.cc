// compare_names and NameLess: std::string's order, by words and bytes.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "broker/common/name_order.h"

namespace mqlab::name_order_test {
namespace {

int sign(int value) { return (value > 0) - (value < 0); }

// Every length either side of the 8-byte words, a difference at every
// position, and bytes on both sides of 0x80 (a signed char would order
// 0xff before 0x01; std::string orders it after).
TEST(NameOrder, AgreesWithStdStringAtEveryPositionOfEveryLength) {
  for (size_t size = 0; size <= 40; ++size) {
    const std::string name(size, 'x');
    EXPECT_EQ(compare_names(name, name), 0) << size;
    for (size_t at = 0; at < size; ++at) {
      for (const char other_byte : {'y', 'a', '\x01', '\xff'}) {
        std::string other = name;
        other[at] = other_byte;
        EXPECT_EQ(sign(compare_names(name, other)), sign(name.compare(other))) << size << " " << at;
        EXPECT_EQ(sign(compare_names(other, name)), sign(other.compare(name))) << size << " " << at;
      }
      // Two differences pulling opposite ways: the first decides, wherever
      // the two fall in a word.
      if (at + 1 < size) {
        std::string other = name;
        other[at] = 'y';
        other[at + 1] = 'a';
        EXPECT_GT(compare_names(other, name), 0) << size << " " << at;
        EXPECT_LT(compare_names(name, other), 0) << size << " " << at;
      }
    }
    // A prefix sorts first, whether the difference is the length alone.
    for (size_t cut = 0; cut < size; ++cut) {
      EXPECT_LT(compare_names(name.substr(0, cut), name), 0) << size << " " << cut;
      EXPECT_GT(compare_names(name, name.substr(0, cut)), 0) << size << " " << cut;
    }
  }
}

// A map ordered by NameLess iterates as one ordered by std::less: what
// walks the broker's and the client's tables (topic configs, routes,
// offsets) sees the same order it did.
RC_GTEST_PROP(NameOrder, NameLessMapsIterateAsStdLessMaps, ()) {
  const auto gen_name = rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab%\x01\xff")));
  const std::vector<std::string> names = *rc::gen::container<std::vector<std::string>>(rc::gen::resize(24, gen_name));
  std::map<std::string, int, NameLess> ours;
  std::map<std::string, int> theirs;
  for (size_t i = 0; i < names.size(); ++i) {
    ours.emplace(names[i], static_cast<int>(i));
    theirs.emplace(names[i], static_cast<int>(i));
  }
  using Entries = std::vector<std::pair<const std::string, int>>;
  const Entries ours_in_order(ours.begin(), ours.end());
  const Entries theirs_in_order(theirs.begin(), theirs.end());
  RC_ASSERT(ours_in_order == theirs_in_order);
  for (const std::string& name : names) RC_ASSERT(ours.find(std::string_view(name)) != ours.end());
}

}  // namespace
}  // namespace mqlab::name_order_test
