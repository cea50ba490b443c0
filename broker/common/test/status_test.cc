// Status and Result<T>: codes, messages, context, and the early-return macros
// every module's error paths are built from.
#include "broker/common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace mqlab::status_test {
namespace {

TEST(Status, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.to_string(), "Ok");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status status = Status::NoSpace("commitlog/00000000000000000000: pwrite at 4096: no space left");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kNoSpace);
  EXPECT_EQ(status.to_string(), "NoSpace: commitlog/00000000000000000000: pwrite at 4096: no space left");
}

TEST(Status, EveryFactoryGivesItsCode) {
  EXPECT_EQ(Status::NotFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(Status::AlreadyExists("x").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Status::InvalidArgument("x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Status::Corruption("x").code(), StatusCode::kCorruption);
  EXPECT_EQ(Status::IoError("x").code(), StatusCode::kIoError);
  EXPECT_EQ(Status::Timeout("x").code(), StatusCode::kTimeout);
  EXPECT_EQ(Status::Unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Status::Aborted("x").code(), StatusCode::kAborted);
  EXPECT_EQ(status_code_name(StatusCode::kCorruption), "Corruption");
}

TEST(Status, WithContextPrefixesAndKeepsTheCode) {
  Status status = Status::Corruption("bad magic at 128").with_context("recovering commitlog");
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_EQ(status.message(), "recovering commitlog: bad magic at 128");
  EXPECT_TRUE(Status::Ok().with_context("ignored").ok());
}

TEST(Result, HoldsAValue) {
  Result<int> result = 42;
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result.status().ok());
  EXPECT_EQ(*result, 42);
  EXPECT_EQ(result.value(), 42);
}

TEST(Result, HoldsAnError) {
  Result<int> result = Status::NotFound("topic TopicTest");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(result.status().message(), "topic TopicTest");
}

TEST(Result, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<std::string>> result = std::make_unique<std::string>("body");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->get()->size(), 4u);
  std::unique_ptr<std::string> value = std::move(result).value();
  EXPECT_EQ(*value, "body");
}

// A value comes in by one move from an rvalue and by one copy from an
// lvalue, which it leaves as it was: no by-value parameter in between.
TEST(Result, TakesAValueByOneMoveOrOneCopy) {
  struct Counted {
    int moves = 0;
    int copies = 0;
    Counted() = default;
    Counted(const Counted& other) : moves(other.moves), copies(other.copies + 1) {}
    Counted(Counted&& other) noexcept : moves(other.moves + 1), copies(other.copies) {}
  };
  Counted source;
  Result<Counted> moved = std::move(source);  // as RemotingClient hands on a response
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->moves, 1);
  EXPECT_EQ(moved->copies, 0);
  const Counted kept;
  Result<Counted> copied = kept;
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(copied->moves, 0);
  EXPECT_EQ(copied->copies, 1);
  EXPECT_EQ(kept.copies, 0);
  std::string text = "a response";
  Result<std::string> from_lvalue = text;
  EXPECT_EQ(*from_lvalue, "a response");
  EXPECT_EQ(text, "a response");  // copied, not moved from
}

TEST(ResultDeathTest, ValueOfAnErrorIsABug) {
  Result<int> result = Status::IoError("disk");
  EXPECT_DEATH((void)result.value(), "MQ_ASSERT failed");
}

Status fail_if(bool fail) { return fail ? Status::IoError("failed") : Status::Ok(); }

Status two_steps(bool fail_first, bool fail_second, int& steps) {
  MQ_RETURN_IF_ERROR(fail_if(fail_first));
  ++steps;
  MQ_RETURN_IF_ERROR(fail_if(fail_second));
  ++steps;
  return Status::Ok();
}

TEST(Macros, ReturnIfErrorStopsAtTheFirstError) {
  int steps = 0;
  EXPECT_TRUE(two_steps(false, false, steps).ok());
  EXPECT_EQ(steps, 2);
  steps = 0;
  EXPECT_EQ(two_steps(true, false, steps).code(), StatusCode::kIoError);
  EXPECT_EQ(steps, 0);
  steps = 0;
  EXPECT_FALSE(two_steps(false, true, steps).ok());
  EXPECT_EQ(steps, 1);
}

Result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return Status::InvalidArgument(std::string("not a digit: ") + c);
  return c - '0';
}

Result<int> sum_digits(char a, char b) {
  MQ_ASSIGN_OR_RETURN(const int first, parse_digit(a));
  MQ_ASSIGN_OR_RETURN(const int second, parse_digit(b));  // two on adjacent lines
  return first + second;
}

Status store_digit(char c, int& out) {
  MQ_ASSIGN_OR_RETURN(out, parse_digit(c));  // into an existing variable
  return Status::Ok();
}

TEST(Macros, AssignOrReturnAssignsOrPropagates) {
  Result<int> sum = sum_digits('3', '4');
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 7);
  Result<int> bad = sum_digits('3', 'x');
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "not a digit: x");

  int out = -1;
  EXPECT_TRUE(store_digit('9', out).ok());
  EXPECT_EQ(out, 9);
  EXPECT_FALSE(store_digit('?', out).ok());
  EXPECT_EQ(out, 9);
}

}  // namespace
}  // namespace mqlab::status_test
