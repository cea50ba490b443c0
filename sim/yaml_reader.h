// YamlNode: typed, located reading of a YAML document, for scenario files.
//
// A user who mistypes a scenario should learn where and what: every error
// reads "file:line:column: key.path: what is wrong; expected ...". A YamlNode
// carries its key path ("workload.consumer_groups[1].mode") and shares one
// YamlErrors sink with every other node of the document. The first error
// wins and later reads change nothing, so a parser reads a section straight
// through and checks YamlErrors::ok() between phases instead of after every
// line. Reads of absent keys leave the target untouched: defaults live in the
// structs being filled, not here.
//
// Scalars are converted from their source text (Scalar()), never through
// yaml-cpp's as<T>(), so "04" stays "04", "30 sec" is an error we word
// ourselves, and nothing throws. The quantity parsers are exact decimal
// arithmetic (no floating point for times or sizes), so one file gives one
// value on every platform.
//
// Lifetime: a YamlNode refers to its YamlErrors, which outlives it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::sim {

// Quantities as scenario files write them. Each returns InvalidArgument with
// what was expected; the caller adds the location.
//   duration:  "250us", "500ms", "30s", "1.5s", "2m", "1h", "10ns"; a plain number is seconds
//   rate:      "200/s", "30/min" (also "/m"), "2/h"; a plain number is per second
//   size:      "256B", "4KiB", "64MiB", "1GiB", "1TiB", "4KB" (10^3), "1MB", "1GB"; a plain number is bytes
//   bandwidth: a size per second ("600MB/s", "1GiB/s") or bits ("1Gbit/s", "100Mbit/s"); a plain number is bytes/s
Result<Nanos> parse_duration_text(std::string_view text);  // may be negative: "-2s"
Result<double> parse_rate_text(std::string_view text);     // per second, >= 0
Result<uint64_t> parse_size_text(std::string_view text);
Result<uint64_t> parse_bandwidth_text(std::string_view text);  // bytes per second
// "1.500s", "250us", "2m" style text for describe(): the largest unit that
// keeps the value exact, so the text parses back to the same value.
std::string duration_text(Nanos ns);
std::string size_text(uint64_t bytes);

// Known names closest to `name` (edit distance), best first: "did you mean".
std::vector<std::string> closest_names(std::string_view name, std::span<const std::string_view> known);
std::string join_names(std::span<const std::string_view> names);

class YamlErrors {
 public:
  explicit YamlErrors(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }
  bool ok() const { return first_.ok(); }
  const Status& status() const { return first_; }
  // Keeps only the first report. mark is yaml-cpp's (0-based line/column).
  void report(const YAML::Mark& mark, std::string_view path, std::string_view what, std::string_view expected);
  // Appended to reports in parentheses while set: the context one YAML node
  // is read in ("with topology sync_replication" for a matrix fault list).
  void set_note(std::string note) { note_ = std::move(note); }

 private:
  std::string source_;
  std::string note_;
  Status first_;
};

class YamlNode {
 public:
  // fallback: where to point when node is absent (its parent's mark).
  YamlNode(YamlErrors& errors, YAML::Node node, std::string path, YAML::Mark fallback);

  // The document's root. Requires: root is the loaded document.
  static YamlNode root(YamlErrors& errors, const YAML::Node& root);

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  const std::string& path() const { return path_; }
  YAML::Mark mark() const;
  YamlErrors& errors() const { return *errors_; }

  // Records "what; expected" at this node.
  void fail(std::string_view what, std::string_view expected) const;

  // Requires a mapping (absent is fine: no keys) whose keys are all in
  // known, each once. Reports the first offender with the known keys and
  // the closest ones. Returns whether the node is a usable mapping.
  bool expect_keys(std::span<const std::string_view> known) const;
  bool expect_keys(std::initializer_list<std::string_view> known) const {
    return expect_keys(std::span<const std::string_view>(known.begin(), known.size()));
  }
  // Requires a sequence (absent is fine: empty); what describes an element.
  bool expect_sequence(std::string_view what) const;

  // The value under key (absent if missing or this is not a mapping).
  YamlNode child(std::string_view key) const;
  // The elements of a sequence, paths "path[i]".
  std::vector<YamlNode> elements() const;
  // The entries of a mapping in file order, with the key node's mark kept
  // for errors about the key itself.
  std::vector<std::pair<std::string, YamlNode>> entries() const;
  YAML::Mark key_mark(std::string_view key) const;

  // Scalar conversions: nullopt (and an error) when absent or malformed.
  std::optional<std::string> text() const;
  std::optional<int64_t> integer(int64_t min, int64_t max) const;
  std::optional<double> number(double min, double max) const;
  std::optional<bool> boolean() const;
  std::optional<Nanos> duration(Nanos min) const;
  std::optional<double> rate_per_sec() const;
  std::optional<uint64_t> size_bytes(uint64_t min) const;
  std::optional<uint64_t> bandwidth_bytes_per_sec() const;
  // Index of the scalar in names.
  std::optional<size_t> choice(std::span<const std::string_view> names) const;

  // Assign-if-present readers of a mapping's child: out keeps its default
  // when the key is absent, and on error.
  void read(std::string_view key, int& out, int64_t min, int64_t max) const;
  void read(std::string_view key, int64_t& out, int64_t min, int64_t max) const;
  void read(std::string_view key, double& out, double min, double max) const;
  void read(std::string_view key, bool& out) const;
  void read(std::string_view key, std::string& out) const;
  void read_duration(std::string_view key, Nanos& out, Nanos min) const;
  void read_rate(std::string_view key, double& per_sec) const;
  void read_size(std::string_view key, uint64_t& bytes, uint64_t min) const;
  void read_bandwidth(std::string_view key, uint64_t& bytes_per_sec) const;

 private:
  // "a scalar", "a mapping", "a sequence": for wrong-type errors.
  std::string kind_text() const;
  // The scalar text, or an error saying that expected was wanted.
  std::optional<std::string> scalar(std::string_view expected) const;

  YamlErrors* errors_;
  YAML::Node node_;
  std::string path_;
  YAML::Mark fallback_;
};

}  // namespace mqlab::sim
