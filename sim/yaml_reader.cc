#include "sim/yaml_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace mqlab::sim {
namespace {

constexpr std::string_view kDurationExpected =
    "expected a number with a unit ns, us, ms, s, m (minutes) or h, such as 30s, 500ms, 2m, 1h, 250us, "
    "or a plain number of seconds";
constexpr std::string_view kRateExpected =
    "expected a number per unit of time, such as 200/s, 30/min, 2/h, or a plain number per second";
constexpr std::string_view kSizeExpected =
    "expected a number of bytes with a unit B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB "
    "(powers of 1000), such as 256B or 64MiB, or a plain number of bytes";
constexpr std::string_view kBandwidthExpected =
    "expected a size per second such as 600MB/s or 1GiB/s, bits per second such as 1Gbit/s or 100Mbit/s, "
    "or a plain number of bytes per second";

// A decimal number split from its unit: value = digits / 10^scale.
// Exact: "0.1s" is 100'000'000 ns, not whatever a double rounds it to.
struct Quantity {
  bool negative = false;
  unsigned __int128 digits = 0;
  int scale = 0;
  std::string_view unit;
};

std::optional<Quantity> split_quantity(std::string_view text) {
  Quantity q;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) q.negative = text[i++] == '-';
  int digit_count = 0;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    // 19 digits keep digits * (an hour in ns) inside 128 bits.
    if (++digit_count > 19) return std::nullopt;
    q.digits = q.digits * 10 + static_cast<unsigned>(c - '0');
    if (seen_point) ++q.scale;
  }
  if (digit_count == 0) return std::nullopt;
  q.unit = text.substr(i);
  return q;
}

unsigned __int128 power_of_ten(int exponent) {
  unsigned __int128 value = 1;
  for (int i = 0; i < exponent; ++i) value *= 10;
  return value;
}

// digits / 10^scale * multiplier as a whole number, or nullopt when it is not
// whole or does not fit in an int64.
std::optional<int64_t> scaled(const Quantity& q, uint64_t multiplier) {
  const unsigned __int128 product = q.digits * multiplier;
  const unsigned __int128 divisor = power_of_ten(q.scale);
  if (product % divisor != 0) return std::nullopt;
  const unsigned __int128 whole = product / divisor;
  if (whole > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return q.negative ? -static_cast<int64_t>(whole) : static_cast<int64_t>(whole);
}

template <size_t N>
std::optional<uint64_t> unit_multiplier(const std::array<std::pair<std::string_view, uint64_t>, N>& units,
                                        std::string_view unit) {
  for (const auto& [name, multiplier] : units) {
    if (name == unit) return multiplier;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<std::string_view, uint64_t>, 8> kTimeUnits = {{
    {"ns", 1},
    {"us", kNanosPerMicro},
    {"ms", kNanosPerMilli},
    {"s", kNanosPerSecond},
    {"", kNanosPerSecond},  // a plain number is seconds
    {"m", 60 * kNanosPerSecond},
    {"min", 60 * kNanosPerSecond},
    {"h", 3600 * kNanosPerSecond},
}};

constexpr std::array<std::pair<std::string_view, uint64_t>, 10> kSizeUnits = {{
    {"", 1},
    {"B", 1},
    {"KB", 1000},
    {"MB", 1000'000},
    {"GB", 1000'000'000},
    {"TB", 1000'000'000'000},
    {"KiB", 1ull << 10},
    {"MiB", 1ull << 20},
    {"GiB", 1ull << 30},
    {"TiB", 1ull << 40},
}};

// Bits per second, as network links are sold; divided by 8 afterwards.
constexpr std::array<std::pair<std::string_view, uint64_t>, 4> kBitUnits = {{
    {"bit", 1},
    {"Kbit", 1000},
    {"Mbit", 1000'000},
    {"Gbit", 1000'000'000},
}};

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view name, std::span<const std::string_view> known) {
  const std::vector<std::string> close = closest_names(name, known);
  if (close.empty()) return "";
  std::string text;
  for (const std::string& candidate : close) text += (text.empty() ? "" : " or ") + quoted(candidate);
  return " (did you mean " + text + "?)";
}

}  // namespace

Result<Nanos> parse_duration_text(std::string_view text) {
  const std::optional<Quantity> q = split_quantity(text);
  const std::optional<uint64_t> unit = q ? unit_multiplier(kTimeUnits, q->unit) : std::nullopt;
  if (!unit) return Status::InvalidArgument(quoted(text) + " is not a duration; " + std::string(kDurationExpected));
  const std::optional<int64_t> ns = scaled(*q, *unit);
  if (!ns) {
    return Status::InvalidArgument(quoted(text) + " is finer than a nanosecond or too long; " +
                                   std::string(kDurationExpected));
  }
  return *ns;
}

Result<double> parse_rate_text(std::string_view text) {
  const size_t slash = text.find('/');
  const std::string_view number = text.substr(0, slash);
  const std::string_view per = slash == std::string_view::npos ? "s" : text.substr(slash + 1);
  const std::optional<Quantity> q = split_quantity(number);
  double seconds_per_unit = 0;
  if (per == "s" || per == "sec") seconds_per_unit = 1;
  if (per == "m" || per == "min") seconds_per_unit = 60;
  if (per == "h") seconds_per_unit = 3600;
  if (!q || !q->unit.empty() || seconds_per_unit == 0) {
    return Status::InvalidArgument(quoted(text) + " is not a rate; " + std::string(kRateExpected));
  }
  if (q->negative && q->digits != 0) {
    return Status::InvalidArgument(quoted(text) + " is negative; expected a rate >= 0, such as 200/s");
  }
  return static_cast<double>(q->digits) / static_cast<double>(power_of_ten(q->scale)) / seconds_per_unit;
}

Result<uint64_t> parse_size_text(std::string_view text) {
  const std::optional<Quantity> q = split_quantity(text);
  const std::optional<uint64_t> unit = q ? unit_multiplier(kSizeUnits, q->unit) : std::nullopt;
  if (!unit) return Status::InvalidArgument(quoted(text) + " is not a size; " + std::string(kSizeExpected));
  const std::optional<int64_t> bytes = scaled(*q, *unit);
  if (!bytes || *bytes < 0) {
    return Status::InvalidArgument(quoted(text) + " is not a whole, non-negative number of bytes; " +
                                   std::string(kSizeExpected));
  }
  return static_cast<uint64_t>(*bytes);
}

Result<uint64_t> parse_bandwidth_text(std::string_view text) {
  const std::optional<Quantity> q = split_quantity(text);
  std::optional<int64_t> bytes;
  if (q && q->unit.empty()) {
    bytes = scaled(*q, 1);
  } else if (q && q->unit.ends_with("/s")) {
    const std::string_view unit = q->unit.substr(0, q->unit.size() - 2);
    if (const auto multiplier = unit_multiplier(kSizeUnits, unit); multiplier && !unit.empty()) {
      bytes = scaled(*q, *multiplier);
    } else if (const auto bits = unit_multiplier(kBitUnits, unit)) {
      const std::optional<int64_t> bit_count = scaled(*q, *bits);
      if (bit_count) bytes = *bit_count / 8;
    }
  }
  if (!bytes || *bytes <= 0) {
    return Status::InvalidArgument(quoted(text) + " is not a positive bandwidth; " + std::string(kBandwidthExpected));
  }
  return static_cast<uint64_t>(*bytes);
}

std::string duration_text(Nanos ns) {
  if (ns == 0) return "0s";
  const std::string sign = ns < 0 ? "-" : "";
  const uint64_t magnitude = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  constexpr std::array<std::pair<std::string_view, uint64_t>, 6> kUnits = {{
      {"h", 3600 * kNanosPerSecond},
      {"m", 60 * kNanosPerSecond},
      {"s", kNanosPerSecond},
      {"ms", kNanosPerMilli},
      {"us", kNanosPerMicro},
      {"ns", 1},
  }};
  for (const auto& [name, size] : kUnits) {
    if (magnitude % size == 0) return sign + std::to_string(magnitude / size) + std::string(name);
  }
  return sign + std::to_string(magnitude) + "ns";  // unreachable: 1 divides everything
}

std::string size_text(uint64_t bytes) {
  constexpr std::array<std::pair<std::string_view, uint64_t>, 4> kUnits = {
      {{"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}}};
  for (const auto& [name, size] : kUnits) {
    if (bytes != 0 && bytes % size == 0) return std::to_string(bytes / size) + std::string(name);
  }
  return std::to_string(bytes) + "B";
}

std::vector<std::string> closest_names(std::string_view name, std::span<const std::string_view> known) {
  // Up to a third of the name may be wrong (at least two letters): close
  // enough to be a typo, far enough to rule out unrelated keys.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string_view>> scored;
  for (const std::string_view candidate : known) {
    size_t distance = edit_distance(name, candidate);
    // "ssd" for "sata_ssd": a fragment of a longer name counts as a near miss.
    if (name.size() >= 3 && candidate.find(name) != std::string_view::npos) distance = std::min<size_t>(distance, 1);
    if (distance <= limit) scored.emplace_back(distance, candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> best;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) best.emplace_back(scored[i].second);
  return best;
}

std::string join_names(std::span<const std::string_view> names) {
  std::string text;
  for (const std::string_view name : names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

void YamlErrors::report(const YAML::Mark& mark, std::string_view path, std::string_view what,
                        std::string_view expected) {
  if (!first_.ok()) return;
  std::string text = source_;
  if (!mark.is_null()) text += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  text += ": " + (path.empty() ? std::string("(document)") : std::string(path)) + ": " + std::string(what);
  if (!expected.empty()) text += "; expected " + std::string(expected);
  if (!note_.empty()) text += " (" + note_ + ")";
  first_ = Status::InvalidArgument(std::move(text));
}

YamlNode::YamlNode(YamlErrors& errors, YAML::Node node, std::string path, YAML::Mark fallback)
    : errors_(&errors), node_(std::move(node)), path_(std::move(path)), fallback_(fallback) {}

YamlNode YamlNode::root(YamlErrors& errors, const YAML::Node& root) {
  YAML::Mark start;  // line 0, column 0: the file's first character
  return YamlNode(errors, root, "", root.Mark().is_null() ? start : root.Mark());
}

YAML::Mark YamlNode::mark() const {
  if (node_.IsDefined() && !node_.Mark().is_null()) return node_.Mark();
  return fallback_;
}

void YamlNode::fail(std::string_view what, std::string_view expected) const {
  errors_->report(mark(), path_, what, expected);
}

std::string YamlNode::kind_text() const {
  if (!present()) return "missing";
  if (node_.IsMap()) return "a mapping";
  if (node_.IsSequence()) return "a sequence";
  return quoted(node_.Scalar());
}

bool YamlNode::expect_keys(std::span<const std::string_view> known) const {
  if (!present()) return true;
  if (!node_.IsMap()) {
    fail("is " + kind_text(), "a mapping with keys " + join_names(known));
    return false;
  }
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    const std::string key_path = path_.empty() ? key : path_ + "." + key;
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      errors_->report(entry.first.Mark(), key_path, "unknown key " + quoted(key) + did_you_mean(key, known),
                      "one of: " + join_names(known));
      return false;
    }
    if (!seen.insert(key).second) {
      errors_->report(entry.first.Mark(), key_path, "duplicate key " + quoted(key), "each key once");
      return false;
    }
  }
  return true;
}

bool YamlNode::expect_sequence(std::string_view what) const {
  if (!present() || node_.IsSequence()) return true;
  fail("is " + kind_text(), "a sequence of " + std::string(what));
  return false;
}

YamlNode YamlNode::child(std::string_view key) const {
  const std::string child_path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (node_.IsMap()) {
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) {
        return YamlNode(*errors_, entry.second, child_path, entry.first.Mark());
      }
    }
  }
  return YamlNode(*errors_, YAML::Node(), child_path, mark());
}

std::vector<YamlNode> YamlNode::elements() const {
  std::vector<YamlNode> result;
  if (!node_.IsSequence()) return result;
  size_t index = 0;
  for (const auto& element : node_) {
    result.emplace_back(*errors_, element, path_ + "[" + std::to_string(index++) + "]", mark());
  }
  return result;
}

std::vector<std::pair<std::string, YamlNode>> YamlNode::entries() const {
  std::vector<std::pair<std::string, YamlNode>> result;
  if (!node_.IsMap()) return result;
  for (const auto& entry : node_) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    result.emplace_back(key,
                        YamlNode(*errors_, entry.second, path_.empty() ? key : path_ + "." + key, entry.first.Mark()));
  }
  return result;
}

YAML::Mark YamlNode::key_mark(std::string_view key) const {
  if (node_.IsMap()) {
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.first.Mark();
    }
  }
  return mark();
}

std::optional<std::string> YamlNode::scalar(std::string_view expected) const {
  if (!present()) {
    fail("is missing", expected);
    return std::nullopt;
  }
  if (!node_.IsScalar()) {
    fail("is " + kind_text(), expected);
    return std::nullopt;
  }
  return node_.Scalar();
}

std::optional<std::string> YamlNode::text() const { return scalar("a string"); }

std::optional<int64_t> YamlNode::integer(int64_t min, int64_t max) const {
  const std::string expected = max == std::numeric_limits<int64_t>::max()
                                   ? "an integer >= " + std::to_string(min)
                                   : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const std::optional<std::string> text = scalar(expected);
  if (!text) return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) {
    fail(quoted(*text) + " is not an integer", expected);
    return std::nullopt;
  }
  if (value < min || value > max) {
    fail(std::to_string(value) + " is out of range", expected);
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlNode::number(double min, double max) const {
  char range[96];
  std::snprintf(range, sizeof(range), "a number in [%g, %g]", min, max);
  const std::optional<std::string> text = scalar(range);
  if (!text) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || !std::isfinite(value)) {
    fail(quoted(*text) + " is not a number", range);
    return std::nullopt;
  }
  if (value < min || value > max) {
    fail(*text + " is out of range", range);
    return std::nullopt;
  }
  return value;
}

std::optional<bool> YamlNode::boolean() const {
  const std::optional<std::string> text = scalar("true or false");
  if (!text) return std::nullopt;
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true") return true;
  if (lower == "false") return false;
  fail(quoted(*text) + " is not a boolean", "true or false");
  return std::nullopt;
}

std::optional<Nanos> YamlNode::duration(Nanos min) const {
  const std::optional<std::string> text = scalar(kDurationExpected.substr(std::string_view("expected ").size()));
  if (!text) return std::nullopt;
  const Result<Nanos> value = parse_duration_text(*text);
  if (!value.ok()) {
    fail(value.status().message(), "");
    return std::nullopt;
  }
  if (*value < min) {
    fail(quoted(*text) + " is too short", "a duration >= " + duration_text(min));
    return std::nullopt;
  }
  return *value;
}

std::optional<double> YamlNode::rate_per_sec() const {
  const std::optional<std::string> text = scalar(kRateExpected.substr(std::string_view("expected ").size()));
  if (!text) return std::nullopt;
  const Result<double> value = parse_rate_text(*text);
  if (!value.ok()) {
    fail(value.status().message(), "");
    return std::nullopt;
  }
  return *value;
}

std::optional<uint64_t> YamlNode::size_bytes(uint64_t min) const {
  const std::optional<std::string> text = scalar(kSizeExpected.substr(std::string_view("expected ").size()));
  if (!text) return std::nullopt;
  const Result<uint64_t> value = parse_size_text(*text);
  if (!value.ok()) {
    fail(value.status().message(), "");
    return std::nullopt;
  }
  if (*value < min) {
    fail(quoted(*text) + " is too small", "a size >= " + size_text(min));
    return std::nullopt;
  }
  return *value;
}

std::optional<uint64_t> YamlNode::bandwidth_bytes_per_sec() const {
  const std::optional<std::string> text = scalar(kBandwidthExpected.substr(std::string_view("expected ").size()));
  if (!text) return std::nullopt;
  const Result<uint64_t> value = parse_bandwidth_text(*text);
  if (!value.ok()) {
    fail(value.status().message(), "");
    return std::nullopt;
  }
  return *value;
}

std::optional<size_t> YamlNode::choice(std::span<const std::string_view> names) const {
  const std::string expected = "one of: " + join_names(names);
  const std::optional<std::string> text = scalar(expected);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *text) return i;
  }
  fail(quoted(*text) + " is not a known value" + did_you_mean(*text, names), expected);
  return std::nullopt;
}

void YamlNode::read(std::string_view key, int& out, int64_t min, int64_t max) const {
  const YamlNode value = child(key);
  const int64_t int_min = std::max<int64_t>(min, std::numeric_limits<int>::min());
  const int64_t int_max = std::min<int64_t>(max, std::numeric_limits<int>::max());
  if (!value.present()) return;
  if (const std::optional<int64_t> parsed = value.integer(int_min, int_max)) out = static_cast<int>(*parsed);
}

void YamlNode::read(std::string_view key, int64_t& out, int64_t min, int64_t max) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<int64_t> parsed = value.integer(min, max)) out = *parsed;
}

void YamlNode::read(std::string_view key, double& out, double min, double max) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<double> parsed = value.number(min, max)) out = *parsed;
}

void YamlNode::read(std::string_view key, bool& out) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<bool> parsed = value.boolean()) out = *parsed;
}

void YamlNode::read(std::string_view key, std::string& out) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<std::string> parsed = value.text()) out = *parsed;
}

void YamlNode::read_duration(std::string_view key, Nanos& out, Nanos min) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<Nanos> parsed = value.duration(min)) out = *parsed;
}

void YamlNode::read_rate(std::string_view key, double& per_sec) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<double> parsed = value.rate_per_sec()) per_sec = *parsed;
}

void YamlNode::read_size(std::string_view key, uint64_t& bytes, uint64_t min) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<uint64_t> parsed = value.size_bytes(min)) bytes = *parsed;
}

void YamlNode::read_bandwidth(std::string_view key, uint64_t& bytes_per_sec) const {
  const YamlNode value = child(key);
  if (!value.present()) return;
  if (const std::optional<uint64_t> parsed = value.bandwidth_bytes_per_sec()) bytes_per_sec = *parsed;
}

}  // namespace mqlab::sim
