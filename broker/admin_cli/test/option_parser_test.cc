// OptionParser: RocketMQ-style short and long options, values inline or
// next, and every kind of bad usage reported as InvalidArgument naming the
// option; a property checks that any command line parses or is refused,
// never crashes, and that well-formed ones give back exactly their values.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "broker/admin_cli/option_parser.h"

namespace mqlab::admin_cli::option_parser_test {
namespace {

std::vector<OptionSpec> specs() {
  return {
      {'t', "topic", "topic", "topic name", true},
      {'w', "writeQueueNums", "n", "write queues"},
      {'k', "keyEnable", "true|false", "keys"},
      {'\0', "duration", "seconds", "how long"},
      {'\0', "fromFirst", "", "a flag"},
  };
}

Result<ParsedOptions> parse(std::vector<std::string> args) { return parse_options(args, specs()); }

TEST(OptionParser, ShortAndLongFormsAndInlineValues) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-t", "T", "-w", "8"}, {"--topic", "T", "--writeQueueNums=8"}, {"-tT", "-w8"}, {"--topic=T", "-w", " 8 "}}) {
    Result<ParsedOptions> parsed = parse(args);
    ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
    EXPECT_EQ(parsed->value("topic"), "T");
    EXPECT_EQ(*parsed->integer("writeQueueNums", 0, 1, 100), 8);
    EXPECT_FALSE(parsed->has("fromFirst"));
  }
  Result<ParsedOptions> flag = parse({"-t", "T", "--fromFirst", "--duration", "10"});
  ASSERT_TRUE(flag.ok());
  EXPECT_TRUE(flag->has("fromFirst"));
  EXPECT_EQ(*flag->integer("duration", 0, 0, 100), 10);
  EXPECT_EQ(*flag->integer("writeQueueNums", 7, 1, 100), 7);  // absent: the fallback
}

TEST(OptionParser, BadUsageNamesTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-t", "T", "-z", "1"}, "unknown option '-z'"},
      {{"-t", "T", "--nope"}, "unknown option '--nope'"},
      {{"-t"}, "option -t,--topic needs a value <topic>"},
      {{"-t", "-w", "8"}, "option -t,--topic needs a value"},
      {{"-w", "8"}, "missing required option -t,--topic"},
      {{"-t", "A", "-t", "B"}, "option -t,--topic given twice"},
      {{"-t", "T", "stray"}, "unexpected argument 'stray'"},
      {{"-t", "T", "--fromFirst=yes"}, "option --fromFirst takes no value"},
  };
  for (const auto& [args, expected] : cases) {
    Result<ParsedOptions> parsed = parse(args);
    ASSERT_FALSE(parsed.ok()) << expected;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(expected), std::string::npos) << parsed.status().message();
  }
}

TEST(OptionParser, TypedValuesAreCheckedWithRangeAndSpelling) {
  Result<ParsedOptions> parsed = parse({"-t", "T", "-w", "0", "-k", "maybe", "--duration", "12x"});
  ASSERT_TRUE(parsed.ok());
  Result<int64_t> write = parsed->integer("writeQueueNums", 8, 1, 1024);
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.status().message(), "bad value '0' for -w,--writeQueueNums: expected an integer from 1 to 1024");
  EXPECT_FALSE(parsed->integer("duration", 0, 0, 100).ok());
  Result<bool> keys = parsed->boolean("keyEnable", false);
  ASSERT_FALSE(keys.ok());
  EXPECT_EQ(keys.status().message(), "bad value 'maybe' for -k,--keyEnable: expected true or false");
  Result<ParsedOptions> yes = parse({"-t", "T", "-k", "TRUE"});
  ASSERT_TRUE(yes.ok());
  EXPECT_TRUE(*yes->boolean("keyEnable", false));
}

TEST(OptionParser, DescribeListsEveryOptionAligned) {
  const std::string text = describe_options(specs());
  EXPECT_NE(text.find(" -t,--topic <topic>"), std::string::npos);
  EXPECT_NE(text.find("    --fromFirst"), std::string::npos);
  EXPECT_NE(text.find("topic name (required)"), std::string::npos);
  // Descriptions start in one column.
  const size_t first = text.find("topic name");
  const size_t line_start = text.rfind('\n', text.find("write queues")) + 1;
  EXPECT_EQ(text.find("write queues") - line_start, first);
}

RC_GTEST_PROP(OptionParser, AnyCommandLineParsesOrIsRefusedAsInvalidArgument, ()) {
  const std::vector<std::string> vocabulary = {"-t", "-w", "-k", "--topic", "--duration=5", "--fromFirst",
                                               "x",  "8",  "-",  "--",      "-tX",          "--nope", "-z", "true"};
  const auto args = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(vocabulary));
  Result<ParsedOptions> parsed = parse(args);
  if (!parsed.ok()) RC_ASSERT(parsed.status().code() == StatusCode::kInvalidArgument);
  if (parsed.ok()) RC_ASSERT(parsed->has("topic"));  // required
}

RC_GTEST_PROP(OptionParser, WellFormedLinesGiveBackTheirValues, ()) {
  const std::string topic = *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::inRange('a', 'z')));
  const int64_t write = *rc::gen::inRange<int64_t>(1, 1025);
  const bool long_form = *rc::gen::arbitrary<bool>();
  std::vector<std::string> args = long_form ? std::vector<std::string>{"--writeQueueNums=" + std::to_string(write),
                                                                       "--topic", topic}
                                            : std::vector<std::string>{"-w", std::to_string(write), "-t" + topic};
  Result<ParsedOptions> parsed = parse(args);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed->value("topic") == topic);
  RC_ASSERT(*parsed->integer("writeQueueNums", 0, 1, 1024) == write);
}

}  // namespace
}  // namespace mqlab::admin_cli::option_parser_test
