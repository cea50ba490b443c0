// MQ_ASSERT and MQ_ASSERT_MSG: a failure names the expression, the file and
// line and (for MQ_ASSERT_MSG) the detail, then aborts; a holding assertion
// builds no detail (the detail is a closure the failure path calls).
#include "broker/common/assert.h"

#include <gtest/gtest.h>

#include <string>

namespace mqlab::assert_test {
namespace {

int holds(int value) {
  MQ_ASSERT(value > 0);
  return value;
}

int holds_with_detail(int value, int& details_built) {
  MQ_ASSERT_MSG(value > 0, (++details_built, "value " + std::to_string(value) + " is not positive"));
  return value;
}

TEST(Assert, AHoldingAssertionBuildsNoDetail) {
  int details_built = 0;
  EXPECT_EQ(holds(3), 3);
  EXPECT_EQ(holds_with_detail(5, details_built), 5);
  EXPECT_EQ(details_built, 0);
}

TEST(AssertDeathTest, AFailureNamesTheExpressionAndWhere) {
  EXPECT_DEATH((void)holds(0), "MQ_ASSERT failed: value > 0\n  at .*assert_test.cc:14");
}

TEST(AssertDeathTest, AFailureWithDetailPrintsIt) {
  int details_built = 0;
  // The detail can read what the failing scope holds (captured by reference).
  EXPECT_DEATH((void)holds_with_detail(-2, details_built),
               "MQ_ASSERT failed: value > 0\n  at .*assert_test.cc:19\n  detail: value -2 is not positive");
}

}  // namespace
}  // namespace mqlab::assert_test
