#include "broker/config/properties_file.h"

#include <gtest/gtest.h>

namespace mqlab::config::properties_file_test {
namespace {

const std::set<std::string> kKnown = {"brokerName", "listenPort", "messageDelayLevel"};

TEST(PropertiesFile, ParsesKeyValueLinesWithTheirLineNumbers) {
  const std::string text =
      "# a comment\n"
      "\n"
      "brokerName = broker-a  \n"
      "! Java's other comment mark\n"
      "\tlistenPort=10911\r\n"
      "messageDelayLevel=1s 5s 10s\n"
      "fooBar=1";  // no final newline
  Result<std::vector<Property>> parsed = parse_properties(text, "broker.conf", kKnown);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  ASSERT_EQ(parsed->size(), 4u);
  EXPECT_EQ((*parsed)[0].key, "brokerName");
  EXPECT_EQ((*parsed)[0].value, "broker-a");
  EXPECT_EQ((*parsed)[0].line, 3);
  EXPECT_TRUE((*parsed)[0].known);
  EXPECT_EQ((*parsed)[1].key, "listenPort");
  EXPECT_EQ((*parsed)[1].value, "10911");
  EXPECT_EQ((*parsed)[1].line, 5);
  EXPECT_EQ((*parsed)[2].value, "1s 5s 10s");  // inner spaces kept
  EXPECT_EQ((*parsed)[3].key, "fooBar");
  EXPECT_EQ((*parsed)[3].line, 7);
  EXPECT_FALSE((*parsed)[3].known);
}

TEST(PropertiesFile, AnEmptyValueIsAValue) {
  Result<std::vector<Property>> parsed = parse_properties("brokerName=\n", "f", kKnown);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].value, "");
}

TEST(PropertiesFile, MalformedLinesAreErrorsNamingFileAndLine) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"brokerName=a\nlistenPort 10911\n", "broker.conf:2: expected key=value, got 'listenPort 10911'"},
      {"listenPort:10911\n", "broker.conf:1: expected key=value"},
      {"\n\n=10911\n", "broker.conf:3: no key before '='"},
      {"[broker]\nbrokerName=a\n", "broker.conf:1: a [section] line"},
      {"a#b=c\n", "broker.conf:1: "},  // '#' starts a comment, leaving "a"
  };
  for (const Case& c : cases) {
    Result<std::vector<Property>> parsed = parse_properties(c.text, "broker.conf", kKnown);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find(c.expected), std::string::npos)
        << c.text << " gave: " << parsed.status().message();
  }
}

TEST(PropertiesFile, ApplyWarnsAboutUnknownAndRepeatedKeysAndCollectsErrors) {
  Result<std::vector<Property>> parsed =
      parse_properties("brokerName=a\nfooBar=1\nlistenPort=x\nbrokerName=b\n", "broker.conf", kKnown);
  ASSERT_TRUE(parsed.ok());
  std::vector<std::string> applied;
  const ApplyReport report = apply_properties(*parsed, "broker.conf", [&](const Property& p) {
    applied.push_back(p.key + "=" + p.value);
    if (p.key == "listenPort") return Status::InvalidArgument("listenPort=x: not an integer");
    return Status::Ok();
  });
  EXPECT_EQ(applied, (std::vector<std::string>{"brokerName=a", "listenPort=x", "brokerName=b"}));
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_EQ(report.warnings[0], "broker.conf:2: unknown key 'fooBar' ignored");
  EXPECT_EQ(report.warnings[1], "broker.conf:4: 'brokerName' set again; this line overrides line 1");
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_EQ(report.errors[0], "broker.conf:3: listenPort=x: not an integer");
  EXPECT_EQ(report.where("broker.conf", "brokerName"), "broker.conf:4");
  EXPECT_EQ(report.where("broker.conf", "messageDelayLevel"), "broker.conf");
}

}  // namespace
}  // namespace mqlab::config::properties_file_test
