// InlineFunction with arguments and results (task_test.cc covers the
// storage rules through Task, which is InlineFunction<void()>): arguments
// reach the callable as the signature passes them (by value moved in, by
// reference as the same object, move-only ones), results come back, and a
// callable with a capture too large for inline storage behaves the same.
#include "broker/common/inline_function.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mqlab::inline_function_test {
namespace {

TEST(InlineFunction, PassesArgumentsAndReturnsResults) {
  InlineFunction<int(int, int)> add = [](int a, int b) { return a + b; };
  EXPECT_EQ(add(2, 3), 5);
  std::array<int, 40> big{};
  big[39] = 10;
  InlineFunction<int(int, int)> add_big = [big](int a, int b) { return a + b + big[39]; };
  EXPECT_TRUE(add_big.on_heap());
  EXPECT_EQ(add_big(2, 3), 15);
}

TEST(InlineFunction, ATypeMayNameItsOwnRoom) {
  // A put's completion names 112 bytes: a capture that size stays inline
  // there, moves with it, and would have gone to the heap in the default.
  using Roomy = InlineFunction<int(int), 112>;
  static_assert(sizeof(Roomy) == 120);
  static_assert(Roomy::fits_inline<std::array<char, 112>>);
  static_assert(!Roomy::fits_inline<std::array<char, 113>>);
  std::array<int64_t, 14> captured{};  // 112 bytes
  captured[13] = 7;
  const auto add_last = [captured](int a) { return a + static_cast<int>(captured[13]); };
  static_assert(sizeof(add_last) == 112);
  Roomy roomy = add_last;
  EXPECT_FALSE(roomy.on_heap());
  Roomy moved = std::move(roomy);
  EXPECT_TRUE(roomy == nullptr);  // NOLINT(bugprone-use-after-move): empty by contract
  EXPECT_FALSE(moved.on_heap());
  EXPECT_EQ(moved(1), 8);
  InlineFunction<int(int)> usual = add_last;
  EXPECT_TRUE(usual.on_heap());
  EXPECT_EQ(usual(2), 9);
}

TEST(InlineFunction, ByValueArgumentsAreMovedInNotCopied) {
  // A response callback takes a whole command by value: it must arrive
  // without a copy of its body.
  std::vector<int> seen;
  const int* buffer_seen = nullptr;
  InlineFunction<void(std::vector<int>)> take = [&](std::vector<int> values) {
    buffer_seen = values.data();
    seen = std::move(values);
  };
  std::vector<int> values = {1, 2, 3};
  const int* const buffer = values.data();
  take(std::move(values));
  EXPECT_EQ(buffer_seen, buffer);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

TEST(InlineFunction, ReferenceArgumentsAreTheCallersObjects) {
  InlineFunction<void(std::string&)> append = [](std::string& text) { text += "!"; };
  std::string text = "hi";
  append(text);
  EXPECT_EQ(text, "hi!");
  InlineFunction<size_t(const std::string&)> size = [](const std::string& value) { return value.size(); };
  EXPECT_EQ(size(text), 3u);
}

TEST(InlineFunction, TakesMoveOnlyArgumentsAndCaptures) {
  auto owned = std::make_unique<int>(4);
  InlineFunction<int(std::unique_ptr<int>)> sum = [owned = std::move(owned)](std::unique_ptr<int> other) {
    return *owned + *other;
  };
  EXPECT_FALSE(sum.on_heap());
  EXPECT_EQ(sum(std::make_unique<int>(5)), 9);
  InlineFunction<int(std::unique_ptr<int>)> moved = std::move(sum);
  EXPECT_TRUE(sum == nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(moved(std::make_unique<int>(1)), 5);
}

TEST(InlineFunction, ACallbacksOwnFlagCatchesASecondCall) {
  // How a consumed message's report checks it runs once: the flag is a
  // capture, which no copy can split, as a shared flag had to be.
  int reports = 0;
  InlineFunction<void(int)> report = [&reports, called = false](int) mutable {
    MQ_ASSERT_MSG(!called, "reported twice");
    called = true;
    ++reports;
  };
  InlineFunction<void(int)> handed_on = std::move(report);
  handed_on(1);
  EXPECT_EQ(reports, 1);
  EXPECT_DEATH(handed_on(2), "reported twice");
}

TEST(InlineFunction, WrapsStdFunctionsAndFunctionPointers) {
  std::function<int(int)> twice = [](int value) { return 2 * value; };
  InlineFunction<int(int)> wrapped = twice;
  EXPECT_FALSE(wrapped.on_heap());
  EXPECT_EQ(wrapped(21), 42);
  EXPECT_TRUE(InlineFunction<int(int)>(std::function<int(int)>()) == nullptr);
  int (*negate)(int) = [](int value) { return -value; };
  EXPECT_EQ(InlineFunction<int(int)>(negate)(3), -3);
}

TEST(InlineFunctionDeathTest, CallingAnEmptyOneIsABug) {
  const InlineFunction<int(int)> empty{};
  EXPECT_DEATH(empty(1), "empty InlineFunction");
}

}  // namespace
}  // namespace mqlab::inline_function_test
