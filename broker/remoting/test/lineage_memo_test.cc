// LineageMemo by example: an entry is followed only by the very next table
// of its lineage, a gap or a forget drops it, a table of no lineage has
// none, and the least recently used lineage makes room for a new one.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "broker/remoting/ext_fields.h"
#include "broker/remoting/lineage_memo.h"

namespace mqlab::remoting::lineage_memo_test {
namespace {

ExtFields table_of(uint64_t id, uint64_t index, uint32_t changed = 0) {
  ExtFields fields;
  fields.insert_or_assign("a", "1");
  fields.set_lineage({id, index, changed});
  return fields;
}

TEST(LineageMemo, FollowsOnlyTheNextTableOfALineage) {
  LineageMemo<int, 4> memo;
  EXPECT_EQ(memo.follow(table_of(5, 1)), nullptr);  // nothing kept yet
  int* const started = memo.start(table_of(5, 1));
  ASSERT_NE(started, nullptr);
  *started = 42;
  int* const followed = memo.follow(table_of(5, 2));
  ASSERT_EQ(followed, started);
  EXPECT_EQ(*followed, 42);
  EXPECT_EQ(memo.follow(table_of(5, 2)), nullptr);  // index 2 again: not the next one
  EXPECT_EQ(memo.size(), 0u);                        // and the entry is gone
  ASSERT_NE(memo.start(table_of(5, 7)), nullptr);
  EXPECT_EQ(memo.follow(table_of(5, 9)), nullptr);  // 8 went by unseen
  EXPECT_EQ(memo.size(), 0u);
}

TEST(LineageMemo, ATableOfNoLineageHasNoEntry) {
  LineageMemo<int, 4> memo;
  ExtFields plain;
  plain.insert_or_assign("a", "1");
  EXPECT_EQ(memo.start(plain), nullptr);
  EXPECT_EQ(memo.follow(plain), nullptr);
  EXPECT_EQ(memo.size(), 0u);
}

TEST(LineageMemo, ForgetDropsTheLineagesEntry) {
  LineageMemo<int, 4> memo;
  memo.start(table_of(1, 1));
  memo.start(table_of(2, 1));
  memo.forget(table_of(1, 2));
  EXPECT_EQ(memo.size(), 1u);
  EXPECT_EQ(memo.follow(table_of(1, 2)), nullptr);
  EXPECT_NE(memo.follow(table_of(2, 2)), nullptr);
}

TEST(LineageMemo, TheLeastRecentlyUsedLineageMakesRoom) {
  LineageMemo<int, 2> memo;
  *memo.start(table_of(1, 1)) = 1;
  *memo.start(table_of(2, 1)) = 2;
  ASSERT_NE(memo.follow(table_of(1, 2)), nullptr);  // 1 used after 2
  *memo.start(table_of(3, 1)) = 3;                   // 2 makes room
  EXPECT_EQ(memo.size(), 2u);
  EXPECT_EQ(memo.follow(table_of(2, 2)), nullptr);
  ASSERT_NE(memo.follow(table_of(1, 3)), nullptr);
  EXPECT_EQ(*memo.follow(table_of(3, 2)), 3);
  // Starting a lineage kept already reuses its slot.
  EXPECT_EQ(memo.start(table_of(3, 1)), memo.start(table_of(3, 1)));
  EXPECT_EQ(memo.size(), 2u);
}

TEST(LineageMemo, ChangedPlacesAreVisitedLowestFirst) {
  std::vector<size_t> places;
  for_each_changed_place(0b1000'0000'0000'0000'0000'0000'0010'0101u, [&](size_t place) { places.push_back(place); });
  EXPECT_EQ(places, (std::vector<size_t>{0, 2, 5, 31}));
}

}  // namespace
}  // namespace mqlab::remoting::lineage_memo_test
