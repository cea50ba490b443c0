// PrometheusText and the broker's /metrics rendering: golden text for a
// known snapshot (escaping, histogram buckets), a line-by-line parse of the
// whole broker rendering, and properties of label escaping over any bytes.
#include "broker/http/prometheus_text.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "broker/http/broker_metrics.h"

namespace mqlab::http::prometheus_text_test {
namespace {

// std::string::contains is C++23.
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Inverse of escape_label_value for valid UTF-8 input.
std::string unescape_label_value(const std::string& escaped) {
  std::string value;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\') {
      value += escaped[i];
      continue;
    }
    const char next = escaped.at(++i);
    value += next == 'n' ? '\n' : next;
  }
  return value;
}

bool is_valid_utf8(const std::string& text) {
  // Decoded by hand: lead byte, continuation bytes, then the code point's range.
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t more = 0;
    uint32_t code = 0;
    if (byte < 0x80) {
      code = byte;
    } else if ((byte & 0xE0) == 0xC0) {
      more = 1, code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      more = 2, code = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      more = 3, code = byte & 0x07;
    } else {
      return false;
    }
    if (i + more >= text.size() && more > 0) return false;  // truncated sequence
    for (size_t k = 1; k <= more; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr uint32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[more] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += more + 1;
  }
  return true;
}

// One sample line: name, optional {labels}, a space, a value. Label values
// are quoted strings with \\, \" and \n escapes only.
const std::string kLabel = R"([a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^\\"\n])*")";
const std::string kValue = R"((-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|[+-]Inf))";
const std::regex kSampleLine("^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{" + kLabel + "(," + kLabel + ")*\\})? " + kValue + "$");
const std::regex kHelpLine(R"(^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$)");
const std::regex kTypeLine(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");

// Checks every line is a comment, blank or a sample, that each family has
// HELP then TYPE before its samples, and that no family repeats. Returns
// the TYPE of each family.
std::map<std::string, std::string> check_exposition(const std::string& text) {
  std::map<std::string, std::string> types;
  std::string family;
  EXPECT_TRUE(text.empty() || text.back() == '\n');
  for (const std::string& line : lines_of(text)) {
    std::smatch match;
    if (line.empty()) continue;
    if (line.starts_with("# HELP ")) {
      EXPECT_TRUE(std::regex_match(line, kHelpLine)) << line;
      continue;
    }
    if (std::regex_match(line, match, kTypeLine)) {
      family = match[1];
      EXPECT_TRUE(types.emplace(family, match[2]).second) << "family declared twice: " << family;
      continue;
    }
    EXPECT_FALSE(line.starts_with("#")) << "unknown comment: " << line;
    EXPECT_TRUE(std::regex_match(line, kSampleLine)) << "not a sample: " << line;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    const bool own = name == family || (types[family] == "histogram" && (name == family + "_bucket" ||
                                                                         name == family + "_sum" ||
                                                                         name == family + "_count"));
    EXPECT_TRUE(own) << name << " outside its family (current: " << family << ")";
  }
  return types;
}

TEST(PrometheusText, GoldenTextWithEscapingAndHistogram) {
  LatencyBuckets latency;
  latency.record(10'000);         // exactly the first bound: le is inclusive
  latency.record(3'000'000);      // 3 ms -> le 0.005
  latency.record(12'000'000'000);  // 12 s -> only +Inf
  PrometheusText out;
  out.family("mqlab_queue_max_offset", MetricType::kGauge, "A help with a \\ backslash\nand a newline.");
  out.sample("mqlab_queue_max_offset", {{"topic", "a\"b\\c\nd"}, {"queue_id", "0"}}, int64_t{42});
  out.sample("mqlab_queue_max_offset", {{"topic", "caf\xC3\xA9 \xFF"}, {"queue_id", "1"}}, int64_t{-1});
  out.family("mqlab_up", MetricType::kCounter, "Plain.");
  out.sample("mqlab_up", {}, uint64_t{18446744073709551615ULL});
  out.sample("mqlab_up", {{"kind", "ratio"}}, 0.25);
  out.family("mqlab_put_latency_seconds", MetricType::kHistogram, "Put latency.");
  out.histogram("mqlab_put_latency_seconds", {{"broker", "b"}}, latency);
  const std::string expected =
      "# HELP mqlab_queue_max_offset A help with a \\\\ backslash\\nand a newline.\n"
      "# TYPE mqlab_queue_max_offset gauge\n"
      "mqlab_queue_max_offset{topic=\"a\\\"b\\\\c\\nd\",queue_id=\"0\"} 42\n"
      "mqlab_queue_max_offset{topic=\"caf\xC3\xA9 \xEF\xBF\xBD\",queue_id=\"1\"} -1\n"
      "# HELP mqlab_up Plain.\n"
      "# TYPE mqlab_up counter\n"
      "mqlab_up 18446744073709551615\n"
      "mqlab_up{kind=\"ratio\"} 0.25\n"
      "# HELP mqlab_put_latency_seconds Put latency.\n"
      "# TYPE mqlab_put_latency_seconds histogram\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.00001\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.000025\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.00005\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.0001\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.00025\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.0005\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.001\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.0025\"} 1\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.005\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.01\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.025\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.05\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.1\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.25\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"0.5\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"1\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"2.5\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"5\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"10\"} 2\n"
      "mqlab_put_latency_seconds_bucket{broker=\"b\",le=\"+Inf\"} 3\n"
      "mqlab_put_latency_seconds_sum{broker=\"b\"} 12.00301\n"
      "mqlab_put_latency_seconds_count{broker=\"b\"} 3\n";
  EXPECT_EQ(out.text(), expected);
  const std::map<std::string, std::string> types = check_exposition(out.text());
  EXPECT_EQ(types.size(), 3u);
}

TEST(PrometheusText, FormatsSecondsExactly) {
  EXPECT_EQ(format_seconds(0), "0");
  EXPECT_EQ(format_seconds(1), "0.000000001");
  EXPECT_EQ(format_seconds(10'000), "0.00001");
  EXPECT_EQ(format_seconds(2'500'000'000), "2.5");
  EXPECT_EQ(format_seconds(1'000'000'000), "1");
  EXPECT_EQ(format_seconds(61'000'000'007), "61.000000007");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(1e21), "1e+21");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(PrometheusText, NamesFollowTheFormat) {
  EXPECT_TRUE(is_valid_metric_name("mqlab:rate_5m"));
  EXPECT_FALSE(is_valid_metric_name("5xx"));
  EXPECT_FALSE(is_valid_metric_name("a-b"));
  EXPECT_FALSE(is_valid_metric_name(""));
  EXPECT_TRUE(is_valid_label_name("queue_id"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
}

TEST(LatencyBuckets, BoundsAreInclusiveAndCountsCumulate) {
  LatencyBuckets buckets;
  buckets.record(0);
  buckets.record(10'000);
  buckets.record(10'001);
  buckets.record(10'000'000'001);
  EXPECT_EQ(buckets.count(), 4u);
  EXPECT_EQ(buckets.sum_ns(), 10'000'020'002);
  EXPECT_EQ(buckets.bucket_count(0), 2u);  // 0 and 10 us
  EXPECT_EQ(buckets.bucket_count(1), 1u);  // just above 10 us
  EXPECT_EQ(buckets.cumulative_count(1), 3u);
  EXPECT_EQ(buckets.cumulative_count(LatencyBuckets::kBoundCount - 1), 3u);
  EXPECT_EQ(buckets.bucket_count(LatencyBuckets::kBoundCount), 1u);
  EXPECT_EQ(buckets.cumulative_count(LatencyBuckets::kBoundCount), 4u);
}

RC_GTEST_PROP(PrometheusText, EscapedLabelValuesRoundTripForUtf8, (const std::vector<uint32_t>& code_points)) {
  std::string value;
  for (uint32_t raw : code_points) {
    uint32_t code = raw % 0x110000;
    if (code >= 0xD800 && code <= 0xDFFF) code = '"';  // surrogates are not characters; use a hard one
    if (code < 0x80) {
      value += static_cast<char>(code);
    } else if (code < 0x800) {
      value += static_cast<char>(0xC0 | (code >> 6));
      value += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      value += static_cast<char>(0xE0 | (code >> 12));
      value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      value += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      value += static_cast<char>(0xF0 | (code >> 18));
      value += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      value += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      value += static_cast<char>(0x80 | (code & 0x3F));
    }
  }
  RC_PRE(is_valid_utf8(value));
  RC_ASSERT(unescape_label_value(escape_label_value(value)) == value);
}

RC_GTEST_PROP(PrometheusText, AnyBytesGiveAParsableSample, (const std::string& bytes)) {
  PrometheusText out;
  out.family("mqlab_x", MetricType::kGauge, bytes);
  out.sample("mqlab_x", {{"topic", bytes}}, int64_t{1});
  const std::string escaped = escape_label_value(bytes);
  RC_ASSERT(is_valid_utf8(escaped));
  RC_ASSERT(escaped.find('\n') == std::string::npos);
  const std::vector<std::string> lines = lines_of(out.text());
  RC_ASSERT(lines.size() == 3u);  // HELP, TYPE, the sample: no newline leaked
  RC_ASSERT(std::regex_match(lines[2], kSampleLine));
}

// A snapshot with a bit of everything, including names that need escaping.
BrokerSnapshot known_snapshot() {
  BrokerSnapshot s;
  s.cluster_name = "DefaultCluster";
  s.broker_name = "broker-a";
  s.broker_role = "SYNC_MASTER";
  s.flush_disk_type = "SYNC_FLUSH";
  s.broker_addr = "10.0.0.1:10911";
  s.version = "0.1.0";
  s.running = true;
  s.writable = true;
  s.boot_timestamp_ms = 1'700'000'000'500;
  s.counters.msg_put_total = 7;
  s.counters.msg_put_failed = 1;
  s.counters.segments_deleted = 4;
  s.counters.segments_recycled = 3;
  s.put_latency.record(30'000);
  s.flush_latency.record(2'000'000);
  s.commit_log_min_offset = 0;
  s.commit_log_max_offset = 4096;
  s.commit_log_flushed_offset = 1024;
  s.dirty_bytes = 3072;
  s.commit_log_segments = 1;
  s.slaves.push_back({1, "10.0.0.2:40000", true, 1024, 3072});
  s.queues.push_back({"Tq\"uote", 0, 0, 5});
  s.consumer_queues.push_back({"G\\1", "Tq\"uote", 0, 2, 5, 3});
  s.consumer_groups.push_back({"G\\1", 2, 3});
  return s;
}

TEST(BrokerMetrics, KnownSnapshotRendersTheExpectedSamples) {
  const std::string text = render_broker_metrics(known_snapshot());
  const std::vector<std::string> lines = lines_of(text);
  const std::set<std::string> present(lines.begin(), lines.end());
  for (const char* line : {
           "mqlab_broker_info{cluster=\"DefaultCluster\",broker=\"broker-a\",broker_id=\"0\",role=\"SYNC_MASTER\","
           "flush_disk_type=\"SYNC_FLUSH\",version=\"0.1.0\",addr=\"10.0.0.1:10911\"} 1",
           "mqlab_broker_boot_timestamp_seconds 1700000000.5",
           "mqlab_put_messages_total{result=\"stored\"} 7",
           "mqlab_put_messages_total{result=\"failed\"} 1",
           "# TYPE mqlab_put_latency_seconds histogram",
           "mqlab_put_latency_seconds_bucket{le=\"0.000025\"} 0",
           "mqlab_put_latency_seconds_bucket{le=\"0.00005\"} 1",
           "mqlab_put_latency_seconds_bucket{le=\"+Inf\"} 1",
           "mqlab_put_latency_seconds_sum 0.00003",
           "mqlab_put_latency_seconds_count 1",
           "mqlab_commitlog_flush_latency_seconds_bucket{le=\"0.0025\"} 1",
           "mqlab_commitlog_dirty_bytes 3072",
           "mqlab_commitlog_segments_deleted_total 4",
           "mqlab_commitlog_segments_recycled_total 3",
           "mqlab_commitlog_max_offset_bytes 4096",
           "mqlab_commitlog_flushed_offset_bytes 1024",
           "mqlab_ha_slaves 1",
           "mqlab_ha_slave_lag_bytes{slave=\"10.0.0.2:40000\"} 3072",
           "mqlab_ha_slave_ack_offset_bytes{slave=\"10.0.0.2:40000\"} 1024",
           "mqlab_queue_max_offset{topic=\"Tq\\\"uote\",queue_id=\"0\"} 5",
           "mqlab_consumer_lag_messages{group=\"G\\\\1\",topic=\"Tq\\\"uote\",queue_id=\"0\"} 3",
           "mqlab_consumer_offset{group=\"G\\\\1\",topic=\"Tq\\\"uote\",queue_id=\"0\"} 2",
           "mqlab_consumer_group_online_clients{group=\"G\\\\1\"} 2",
       }) {
    EXPECT_TRUE(present.contains(line)) << "missing: " << line << "\nin:\n" << text;
  }
  const std::map<std::string, std::string> types = check_exposition(text);
  EXPECT_EQ(types.at("mqlab_put_messages_total"), "counter");
  EXPECT_EQ(types.at("mqlab_commitlog_segments_recycled_total"), "counter");
  EXPECT_EQ(types.at("mqlab_commitlog_flush_latency_seconds"), "histogram");
  EXPECT_EQ(types.at("mqlab_consumer_lag_messages"), "gauge");
  // A slave's families are declared even on a master, with no samples.
  EXPECT_TRUE(types.contains("mqlab_ha_master_link"));
  EXPECT_FALSE(has(text, "mqlab_ha_master_link{"));
}

TEST(BrokerMetrics, RenderingIsAFunctionOfTheSnapshot) {
  EXPECT_EQ(render_broker_metrics(known_snapshot()), render_broker_metrics(known_snapshot()));
  BrokerSnapshot empty;
  const std::string text = render_broker_metrics(empty);
  check_exposition(text);
  EXPECT_TRUE(has(text, "mqlab_put_latency_seconds_count 0\n"));
}

}  // namespace
}  // namespace mqlab::http::prometheus_text_test
