// Random: the seeded PRNG every component of both worlds draws from.
// Checks determinism, split independence and bounds, and pins golden outputs
// so any change to the generator (and so to every replayed seed) is noticed.
#include "broker/env/random.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace mqlab::env::random_test {
namespace {

std::vector<uint64_t> draws(Random& random, int count) {
  std::vector<uint64_t> values;
  for (int i = 0; i < count; ++i) values.push_back(random.next_u64());
  return values;
}

TEST(Random, GoldenValuesForSeedZero) {
  // xoshiro256** seeded by splitmix64(0); the state words are splitmix64's
  // published first outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ...
  Random random(0);
  EXPECT_EQ(random.next_u64(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(random.next_u64(), 0xbf6e1f784956452aull);
  EXPECT_EQ(random.next_u64(), 0x1a5f849d4933e6e0ull);
  Random parent(0);
  EXPECT_EQ(parent.split().next_u64(), 0x08bcd09a2fe697f9ull);
}

TEST(Random, SameSeedGivesSameSequence) {
  Random a(12345);
  Random b(12345);
  EXPECT_EQ(draws(a, 1000), draws(b, 1000));
}

TEST(Random, DifferentSeedsDiffer) {
  Random a(1);
  Random b(2);
  EXPECT_NE(draws(a, 16), draws(b, 16));
}

TEST(Random, ReseedRestartsTheSequence) {
  Random random(99);
  const std::vector<uint64_t> first = draws(random, 8);
  random.reseed(99);
  EXPECT_EQ(draws(random, 8), first);
}

TEST(Random, SplitStreamsAreDeterministicAndIndependent) {
  Random parent_a(7);
  Random parent_b(7);
  Random child_a = parent_a.split();
  Random child_b = parent_b.split();
  EXPECT_EQ(draws(child_a, 64), draws(child_b, 64));  // same parent, same child
  EXPECT_NE(draws(child_a, 64), draws(parent_a, 64));  // child differs from parent
  Random second_child = parent_a.split();
  Random first_again = Random(7).split();
  EXPECT_NE(draws(second_child, 64), draws(first_again, 64));  // successive splits differ
}

TEST(Random, UniformStaysInBoundsAndCoversThem) {
  Random random(3);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t value = random.uniform(10);
    ASSERT_LT(value, 10u);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 10u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(random.uniform(1), 0u);
  const uint64_t huge = (uint64_t{1} << 63) + 1;  // rejection sampling's worst case
  for (int i = 0; i < 100; ++i) EXPECT_LT(random.uniform(huge), huge);
}

TEST(Random, RangeIsInclusive) {
  Random random(4);
  std::set<int64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t value = random.range(-3, 3);
    ASSERT_GE(value, -3);
    ASSERT_LE(value, 3);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(random.range(5, 5), 5);
  const int64_t lo = INT64_MIN / 2 + 1;  // the widest span hi - lo that fits int64_t
  const int64_t hi = INT64_MAX / 2;
  for (int i = 0; i < 100; ++i) {
    const int64_t wide = random.range(lo, hi);
    EXPECT_GE(wide, lo);
    EXPECT_LE(wide, hi);
  }
}

// Disabled: random.h computes `hi - lo` in int64_t, which overflows (undefined
// behaviour, reported by UBSan) whenever hi - lo > INT64_MAX. Enable once
// range() subtracts as uint64_t.
TEST(Random, RangeOverTheFullInt64Range) {
  Random random(4);
  random.range(INT64_MIN, INT64_MAX);
}

TEST(Random, UnitIsInHalfOpenInterval) {
  Random random(5);
  double sum = 0;
  for (int i = 0; i < 10'000; ++i) {
    const double value = random.unit();
    ASSERT_GE(value, 0.0);
    ASSERT_LT(value, 1.0);
    sum += value;
  }
  EXPECT_NEAR(sum / 10'000, 0.5, 0.05);
  EXPECT_FALSE(random.chance(0.0));
  EXPECT_TRUE(random.chance(1.0));
}

}  // namespace
}  // namespace mqlab::env::random_test
