#include "broker/http/prometheus_text.h"

#include <charconv>
#include <cmath>

#include "broker/common/assert.h"

namespace mqlab::http {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

bool is_name_start(char c, bool colon_ok) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
}
bool is_metric_name_char(char c, bool colon_ok) { return is_name_start(c, colon_ok) || (c >= '0' && c <= '9'); }

bool is_valid_name(std::string_view name, bool colon_ok) {
  if (name.empty() || !is_name_start(name[0], colon_ok)) return false;
  for (char c : name) {
    if (!is_metric_name_char(c, colon_ok)) return false;
  }
  return true;
}

// The length of the well-formed UTF-8 sequence at the start of bytes, or 0
// (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
size_t prometheus_utf8_sequence_length(std::string_view bytes) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (bytes.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  MQ_UNREACHABLE("metric type");
}

}  // namespace

bool is_valid_metric_name(std::string_view name) { return is_valid_name(name, true); }
bool is_valid_label_name(std::string_view name) { return is_valid_name(name, false); }

std::string escape_label_value(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  size_t at = 0;
  while (at < value.size()) {
    const char c = value[at];
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (const size_t length = prometheus_utf8_sequence_length(value.substr(at)); length == 0) {
      escaped += kReplacementCharacter;
    } else {
      escaped += value.substr(at, length);
      at += length;
      continue;
    }
    ++at;
  }
  return escaped;
}

std::string escape_help(std::string_view help) {
  std::string escaped;
  for (char c : help) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string format_seconds(Nanos ns) {
  MQ_ASSERT(ns >= 0);
  std::string text = std::to_string(ns / kNanosPerSecond);
  std::string fraction = std::to_string(ns % kNanosPerSecond);
  fraction.insert(0, 9 - fraction.size(), '0');
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (!fraction.empty()) text += "." + fraction;
  return text;
}

std::string format_double(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  MQ_ASSERT(error == std::errc());  // 64 bytes hold any double's shortest form
  return std::string(buffer, end);
}

void PrometheusText::family(std::string_view name, MetricType type, std::string_view help) {
  MQ_ASSERT(is_valid_metric_name(name));
  const bool first = families_.emplace(name).second;
  MQ_ASSERT(first);  // a family is declared once
  current_family_ = std::string(name);
  current_type_ = type;
  text_ += "# HELP " + current_family_ + " " + escape_help(help) + "\n";
  text_ += "# TYPE " + current_family_ + " " + std::string(type_name(type)) + "\n";
}

void PrometheusText::begin_sample(std::string_view name, const Labels& labels, std::string_view extra_label,
                                  std::string_view extra_value) {
  MQ_ASSERT(!current_family_.empty());  // samples follow their family's HELP and TYPE
  MQ_ASSERT(name.starts_with(current_family_));
  text_ += name;
  if (labels.empty() && extra_label.empty()) {
    text_ += ' ';
    return;
  }
  text_ += '{';
  bool first = true;
  auto add = [&](std::string_view label, std::string_view value) {
    MQ_ASSERT(is_valid_label_name(label));
    MQ_ASSERT(label != "le" || current_type_ == MetricType::kHistogram);  // le is the histogram's own
    if (!first) text_ += ',';
    first = false;
    text_ += label;
    text_ += "=\"";
    text_ += escape_label_value(value);
    text_ += '"';
  };
  for (const auto& [label, value] : labels) add(label, value);
  if (!extra_label.empty()) add(extra_label, extra_value);
  text_ += "} ";
}

void PrometheusText::sample(std::string_view name, const Labels& labels, int64_t value) {
  MQ_ASSERT(name == current_family_);
  MQ_ASSERT(current_type_ != MetricType::kHistogram);
  begin_sample(name, labels);
  text_ += std::to_string(value) + "\n";
}

void PrometheusText::sample(std::string_view name, const Labels& labels, uint64_t value) {
  MQ_ASSERT(name == current_family_);
  MQ_ASSERT(current_type_ != MetricType::kHistogram);
  begin_sample(name, labels);
  text_ += std::to_string(value) + "\n";
}

void PrometheusText::sample(std::string_view name, const Labels& labels, double value) {
  MQ_ASSERT(name == current_family_);
  MQ_ASSERT(current_type_ != MetricType::kHistogram);
  begin_sample(name, labels);
  text_ += format_double(value) + "\n";
}

void PrometheusText::histogram(std::string_view name, const Labels& labels, const LatencyBuckets& buckets) {
  MQ_ASSERT(name == current_family_);
  MQ_ASSERT(current_type_ == MetricType::kHistogram);
  const std::string base(name);
  for (size_t i = 0; i < LatencyBuckets::kBoundCount; ++i) {
    begin_sample(base + "_bucket", labels, "le", format_seconds(LatencyBuckets::kBoundsNs[i]));
    text_ += std::to_string(buckets.cumulative_count(i)) + "\n";
  }
  begin_sample(base + "_bucket", labels, "le", "+Inf");
  const uint64_t all = buckets.cumulative_count(LatencyBuckets::kBoundCount);
  MQ_ASSERT(all == buckets.count());  // +Inf equals _count, as the format requires
  text_ += std::to_string(all) + "\n";
  begin_sample(base + "_sum", labels);
  text_ += format_seconds(buckets.sum_ns()) + "\n";
  begin_sample(base + "_count", labels);
  text_ += std::to_string(buckets.count()) + "\n";
}

}  // namespace mqlab::http
