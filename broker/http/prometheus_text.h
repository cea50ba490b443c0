// PrometheusText: a writer for Prometheus' text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/), the body
// of /metrics.
//
//   # HELP mqlab_put_latency_seconds Put latency ...     (help: \ and newline escaped)
//   # TYPE mqlab_put_latency_seconds histogram
//   mqlab_put_latency_seconds_bucket{le="0.00001"} 3     (label values: \ " newline escaped)
//   ...
//   mqlab_put_latency_seconds_bucket{le="+Inf"} 9
//   mqlab_put_latency_seconds_sum 0.0123
//   mqlab_put_latency_seconds_count 9
//
// Each family is declared once (HELP then TYPE) and its samples follow it
// directly, as the format requires; a histogram's buckets are cumulative
// and end with le="+Inf", which equals _count.
//
// Invariants (asserted: they are ours to get right, not input): metric and
// label names match [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*; a
// family is declared at most once; a sample belongs to the family declared
// last (its name is the family's, or the family's plus _bucket, _sum or
// _count for a histogram). Label values are input (topic and group names
// come from clients): any bytes are escaped, and bytes that are not UTF-8
// become U+FFFD, so one odd name cannot make a scrape fail.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/latency_buckets.h"
#include "broker/common/types.h"

namespace mqlab::http {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

class PrometheusText {
 public:
  void family(std::string_view name, MetricType type, std::string_view help);
  void sample(std::string_view name, const Labels& labels, int64_t value);
  void sample(std::string_view name, const Labels& labels, uint64_t value);
  void sample(std::string_view name, const Labels& labels, double value);
  // The _bucket, _sum and _count samples of one histogram, in seconds.
  // Requires: the current family is a histogram named name.
  void histogram(std::string_view name, const Labels& labels, const LatencyBuckets& buckets);

  const std::string& text() const { return text_; }

 private:
  void begin_sample(std::string_view name, const Labels& labels, std::string_view extra_label = {},
                    std::string_view extra_value = {});

  std::string text_;
  std::set<std::string, std::less<>> families_;
  std::string current_family_;
  MetricType current_type_ = MetricType::kGauge;
};

bool is_valid_metric_name(std::string_view name);
bool is_valid_label_name(std::string_view name);
// A label value between the quotes: \ as \\, " as \", newline as \n;
// invalid UTF-8 as U+FFFD.
std::string escape_label_value(std::string_view value);
// HELP text: \ as \\, newline as \n.
std::string escape_help(std::string_view help);
// Nanoseconds as exact decimal seconds, shortest form: 10000 -> "0.00001",
// 2500000000 -> "2.5", 0 -> "0". Requires: ns >= 0.
std::string format_seconds(Nanos ns);
// A float as the format wants it: shortest round-trip decimal, NaN, +Inf, -Inf.
std::string format_double(double value);

}  // namespace mqlab::http
