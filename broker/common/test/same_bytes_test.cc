#include "broker/common/same_bytes.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace mqlab {
namespace {

// A byte at a time, as first_difference is specified.
size_t expected_difference(const std::string& a, const std::string& b, size_t from) {
  size_t i = from;
  while (i < a.size() && a[i] == b[i]) ++i;
  return i;
}

TEST(SameBytes, EveryLengthAgainstMemcmp) {
  // Each length through the word paths and past them, differing at each place.
  for (size_t size = 0; size <= 70; ++size) {
    const std::string a(size, 'x');
    EXPECT_TRUE(same_bytes(a.data(), std::string(a).data(), size)) << size;
    for (size_t at = 0; at < size; ++at) {
      std::string b = a;
      b[at] = 'y';
      EXPECT_FALSE(same_bytes(a.data(), b.data(), size)) << size << " " << at;
    }
  }
}

TEST(StartsWithText, EveryLengthAgainstStringView) {
  // Prefixes of each length through the word paths, longer than the text,
  // and differing at each place.
  const std::string text = "%RETRY%consumer_group_with_a_long_name_past_32_bytes";
  for (size_t size = 0; size <= text.size() + 2; ++size) {
    const std::string prefix = text.substr(0, size) + std::string(size > text.size() ? size - text.size() : 0, 'x');
    EXPECT_EQ(starts_with_text(text, prefix), std::string_view(text).starts_with(prefix)) << size;
    for (size_t at = 0; at < std::min(size, text.size()); ++at) {
      std::string other = prefix;
      other[at] ^= 1;
      EXPECT_FALSE(starts_with_text(text, other)) << size << " " << at;
    }
  }
  EXPECT_TRUE(starts_with_text("", ""));
  EXPECT_FALSE(starts_with_text("", "%"));
}

TEST(FirstDifference, EachPlaceOfEachLength) {
  // Lengths through the 16-byte steps and the byte tail; one difference at
  // each place, found from each start up to it.
  for (size_t size = 0; size <= 100; ++size) {
    const std::string a(size, 'x');
    EXPECT_EQ(first_difference(a.data(), a.data(), 0, size), size);
    for (size_t at = 0; at < size; ++at) {
      std::string b = a;
      b[at] = 'y';
      for (size_t from = 0; from <= at; ++from) {
        ASSERT_EQ(first_difference(a.data(), b.data(), from, size), at) << size << " " << at << " " << from;
      }
      EXPECT_EQ(first_difference(a.data(), b.data(), at + 1, size), size);
    }
  }
}

TEST(FirstDifference, TwoDifferencesInOneStep) {
  // Two differences in one 16-byte step, another in the next: the first counts.
  std::string a(64, 'a');
  std::string b = a;
  b[20] = 'b';
  b[9] = 'b';
  b[5] = 'b';
  EXPECT_EQ(first_difference(a.data(), b.data(), 0, a.size()), 5u);
  EXPECT_EQ(first_difference(a.data(), b.data(), 6, a.size()), 9u);
  EXPECT_EQ(first_difference(a.data(), b.data(), 10, a.size()), 20u);
  EXPECT_EQ(first_difference(a.data(), b.data(), 21, a.size()), a.size());
}

RC_GTEST_PROP(FirstDifference, MatchesAByteAtATime, (const std::string& text, const std::vector<size_t>& changes)) {
  std::string other = text;
  for (const size_t change : changes) {
    if (!other.empty()) other[change % other.size()] ^= 1;
  }
  const size_t from = text.empty() ? 0 : *rc::gen::inRange<size_t>(0, text.size() + 1);
  RC_ASSERT(first_difference(text.data(), other.data(), from, text.size()) == expected_difference(text, other, from));
  const bool same = std::memcmp(text.data(), other.data(), text.size()) == 0;
  RC_ASSERT(same_bytes(text.data(), other.data(), text.size()) == same);
}

}  // namespace
}  // namespace mqlab
