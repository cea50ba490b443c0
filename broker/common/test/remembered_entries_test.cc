// RememberedEntries: a lookup finds what the map holds, remembered or not;
// the most recent N are looked at first, and forget() lets an entry go.
#include "broker/common/remembered_entries.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "broker/common/name_order.h"

namespace mqlab::remembered_entries_test {
namespace {

using Table = std::map<std::string, int, NameLess>;

TEST(RememberedEntries, FindsWhatTheMapHolds) {
  Table table{{"a", 1}, {"b", 2}, {"c", 3}};
  RememberedEntries<Table> one;
  EXPECT_EQ(one.find(table, "missing"), nullptr);
  ASSERT_NE(one.find(table, "b"), nullptr);
  EXPECT_EQ(one.find(table, "b")->second, 2);  // the remembered one
  EXPECT_EQ(one.find(table, "a")->second, 1);
  table["a"] = 10;  // changed in place: seen through the memo
  EXPECT_EQ(one.find(table, "a")->second, 10);
  one.forget();
  table.erase("a");
  EXPECT_EQ(one.find(table, "a"), nullptr);
}

TEST(RememberedEntries, KeepsTheMostRecentN) {
  Table table{{"a", 1}, {"b", 2}, {"c", 3}};
  RememberedEntries<Table, 2> two;
  const Table::value_type* a = two.find(table, "a");
  const Table::value_type* b = two.find(table, "b");
  EXPECT_EQ(two.find(table, "a"), a);  // both remembered: a now the most recent
  EXPECT_EQ(two.find(table, "c")->second, 3);  // b, the older, goes
  EXPECT_EQ(two.find(table, "b"), b);  // found again in the map
  EXPECT_EQ(two.find(table, "c")->second, 3);
}

// The mutable find changes the map's own entry; a copied holder (map and
// memo together) finds in its own map, not through the original's memo.
TEST(RememberedEntries, ChangesEntriesAndCopiesStartEmpty) {
  struct Holder {
    Table table{{"a", 1}, {"b", 2}};
    RememberedEntries<Table> found;
  };
  Holder original;
  ASSERT_NE(original.found.find(original.table, "a"), nullptr);
  original.found.find(original.table, "a")->second = 10;
  EXPECT_EQ(original.table.at("a"), 10);
  Holder copy = original;
  copy.found.find(copy.table, "a")->second = 20;
  EXPECT_EQ(copy.table.at("a"), 20);
  EXPECT_EQ(original.table.at("a"), 10);
  copy = original;
  EXPECT_EQ(copy.found.find(copy.table, "a"), &*copy.table.find("a"));
}

}  // namespace
}  // namespace mqlab::remembered_entries_test
