// ReuseShelf: takes search from the item put last and skip what does not
// fit, a take leaves no hole, and a full shelf refuses (the caller keeps
// its item).
#include "broker/common/reuse_shelf.h"

#include <gtest/gtest.h>

#include <memory>

namespace mqlab::reuse_shelf_test {
namespace {

TEST(ReuseShelf, TakesTheLastFittingItemAndRefusesWhenFull) {
  ReuseShelf<std::unique_ptr<int>, 3> shelf;
  const auto at_least = [](int size) { return [size](const std::unique_ptr<int>& kept) { return *kept >= size; }; };
  std::unique_ptr<int> out;
  EXPECT_FALSE(shelf.take(at_least(0), out));
  for (int size : {10, 5, 20}) {
    auto item = std::make_unique<int>(size);
    ASSERT_TRUE(shelf.put(item));
    EXPECT_EQ(item, nullptr);
  }
  auto extra = std::make_unique<int>(1);
  EXPECT_FALSE(shelf.put(extra));
  ASSERT_NE(extra, nullptr);  // still the caller's
  ASSERT_TRUE(shelf.take(at_least(7), out));
  EXPECT_EQ(*out, 20);  // put last
  ASSERT_TRUE(shelf.take(at_least(7), out));
  EXPECT_EQ(*out, 10);  // skipping 5
  EXPECT_FALSE(shelf.take(at_least(7), out));
  EXPECT_EQ(*out, 10);  // untouched
  ASSERT_TRUE(shelf.take(at_least(0), out));
  EXPECT_EQ(*out, 5);
  EXPECT_FALSE(shelf.take(at_least(0), out));
  // Room again after the takes.
  EXPECT_TRUE(shelf.put(extra));
}

}  // namespace
}  // namespace mqlab::reuse_shelf_test
