#include "sim/history_file.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "mqlab-history";
constexpr int64_t kVersion = 1;

// Where a record came from, for messages: "producer.history:12".
struct Place {
  const std::string* file = nullptr;
  size_t line = 0;

  std::string text() const { return *file + ":" + std::to_string(line); }
};

struct ResultEntry {
  Place place;
  Nanos at = 0;
  SendOutcome outcome = SendOutcome::kPending;
  std::string broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  std::string msg_id;
  int32_t attempts = 0;
};

struct SendEntry {
  Place place;
  Nanos invoked_at = 0;
  std::string key;
  uint32_t body_crc = 0;
  std::optional<ResultEntry> result;
};

struct ReceiptEntry {
  Place place;
  std::string producer;
  uint64_t seq = 0;
  Nanos at = 0;
  std::string group;
  std::string consumer;
  std::string broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  std::optional<uint32_t> body_crc;
  std::optional<bool> body_intact;
  int32_t reconsume_times = 0;
};

using MessageName = std::pair<std::string, uint64_t>;  // (producer, seq)

// Everything read so far, before the merge gives sends their History seqs.
struct Records {
  std::map<MessageName, SendEntry> sends;
  std::vector<std::pair<MessageName, ResultEntry>> results;  // matched after every file is read
  std::vector<ReceiptEntry> receipts;
  std::vector<WorldEvent> events;  // at: wall clock ns
  std::optional<Nanos> run_start;
  std::optional<Nanos> run_end;
};

// One line's object, with typed field reads that say what was expected.
class LineReader {
 public:
  LineReader(const json& object, const Place& place, std::string_view type)
      : object_(object), place_(place), type_(type) {}

  Result<std::string> text(const char* name, std::optional<std::string> fallback = std::nullopt) const {
    const json* value = find(name);
    if (value == nullptr) {
      if (fallback) return *fallback;
      return missing(name, "a string");
    }
    if (!value->is_string()) return wrong(name, "a string");
    return value->get<std::string>();
  }

  Result<int64_t> integer(const char* name, int64_t min, int64_t max, std::optional<int64_t> fallback = std::nullopt) const {
    const json* value = find(name);
    const std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (value == nullptr) {
      if (fallback) return *fallback;
      return missing(name, expected);
    }
    if (!value->is_number_integer()) return wrong(name, expected);
    // Unsigned values above INT64_MAX do not fit; they are out of range too.
    if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return wrong(name, expected);
    }
    const int64_t number = value->get<int64_t>();
    if (number < min || number > max) return wrong(name, expected);
    return number;
  }

  Result<bool> boolean(const char* name) const {
    const json* value = find(name);
    if (value == nullptr || !value->is_boolean()) return wrong(name, "true or false");
    return value->get<bool>();
  }

  bool has(const char* name) const { return find(name) != nullptr; }

 private:
  const json* find(const char* name) const {
    auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
  }
  Status missing(const char* name, const std::string& expected) const {
    return Status::InvalidArgument(place_.text() + ": " + std::string(type_) + " record: missing field '" + name +
                                   "' (" + expected + ")");
  }
  Status wrong(const char* name, const std::string& expected) const {
    return Status::InvalidArgument(place_.text() + ": " + std::string(type_) + " record: field '" + name +
                                   "' is " + object_.at(name).dump() + "; expected " + expected);
  }

  const json& object_;
  const Place& place_;
  std::string_view type_;
};

constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max() / 2;
constexpr int64_t kMaxSeq = std::numeric_limits<int64_t>::max();

Result<MessageName> history_message_name(const LineReader& r) {
  MQ_ASSIGN_OR_RETURN(std::string producer, r.text("producer"));
  MQ_ASSIGN_OR_RETURN(const int64_t seq, r.integer("seq", 0, kMaxSeq));
  return MessageName{std::move(producer), static_cast<uint64_t>(seq)};
}

Status read_send(const LineReader& r, const Place& place, Records& records) {
  MQ_ASSIGN_OR_RETURN(MessageName name, history_message_name(r));
  SendEntry send;
  send.place = place;
  MQ_ASSIGN_OR_RETURN(send.invoked_at, r.integer("at", 0, kMaxTime));
  MQ_ASSIGN_OR_RETURN(send.key, r.text("key", ""));
  MQ_ASSIGN_OR_RETURN(const int64_t crc, r.integer("body_crc", 0, UINT32_MAX));
  send.body_crc = static_cast<uint32_t>(crc);
  auto [it, inserted] = records.sends.emplace(name, std::move(send));
  if (!inserted) {
    return Status::InvalidArgument(place.text() + ": send record: producer '" + name.first + "' seq " +
                                   std::to_string(name.second) + " was already sent at " + it->second.place.text());
  }
  return Status::Ok();
}

Status read_send_result(const LineReader& r, const Place& place, Records& records) {
  MQ_ASSIGN_OR_RETURN(MessageName name, history_message_name(r));
  ResultEntry result;
  result.place = place;
  MQ_ASSIGN_OR_RETURN(result.at, r.integer("at", 0, kMaxTime));
  MQ_ASSIGN_OR_RETURN(const std::string outcome, r.text("outcome"));
  const std::optional<SendOutcome> parsed = parse_send_outcome(outcome);
  if (!parsed || *parsed == SendOutcome::kPending) {
    return Status::InvalidArgument(place.text() + ": send_result record: outcome '" + outcome +
                                   "'; expected SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, "
                                   "SLAVE_NOT_AVAILABLE, FAILED or UNKNOWN");
  }
  result.outcome = *parsed;
  MQ_ASSIGN_OR_RETURN(result.broker_name, r.text("broker_name", ""));
  MQ_ASSIGN_OR_RETURN(const int64_t queue_id, r.integer("queue_id", -1, INT32_MAX, -1));
  MQ_ASSIGN_OR_RETURN(result.queue_offset, r.integer("queue_offset", -1, kMaxSeq, -1));
  MQ_ASSIGN_OR_RETURN(result.msg_id, r.text("msg_id", ""));
  MQ_ASSIGN_OR_RETURN(const int64_t attempts, r.integer("attempts", 0, INT32_MAX, 0));
  result.queue_id = static_cast<int32_t>(queue_id);
  result.attempts = static_cast<int32_t>(attempts);
  records.results.emplace_back(std::move(name), std::move(result));
  return Status::Ok();
}

Status read_receipt(const LineReader& r, const Place& place, Records& records) {
  MQ_ASSIGN_OR_RETURN(MessageName name, history_message_name(r));
  ReceiptEntry receipt;
  receipt.place = place;
  receipt.producer = std::move(name.first);
  receipt.seq = name.second;
  MQ_ASSIGN_OR_RETURN(receipt.at, r.integer("at", 0, kMaxTime));
  MQ_ASSIGN_OR_RETURN(receipt.group, r.text("group"));
  if (receipt.group.empty()) return Status::InvalidArgument(place.text() + ": receipt record: group is empty");
  MQ_ASSIGN_OR_RETURN(receipt.consumer, r.text("consumer", ""));
  MQ_ASSIGN_OR_RETURN(receipt.broker_name, r.text("broker_name", ""));
  MQ_ASSIGN_OR_RETURN(const int64_t queue_id, r.integer("queue_id", -1, INT32_MAX, -1));
  MQ_ASSIGN_OR_RETURN(receipt.queue_offset, r.integer("queue_offset", -1, kMaxSeq, -1));
  MQ_ASSIGN_OR_RETURN(const int64_t reconsume, r.integer("reconsume_times", 0, INT32_MAX, 0));
  receipt.queue_id = static_cast<int32_t>(queue_id);
  receipt.reconsume_times = static_cast<int32_t>(reconsume);
  if (r.has("body_crc")) {
    MQ_ASSIGN_OR_RETURN(const int64_t crc, r.integer("body_crc", 0, UINT32_MAX));
    receipt.body_crc = static_cast<uint32_t>(crc);
  }
  if (r.has("body_intact")) {
    MQ_ASSIGN_OR_RETURN(const bool intact, r.boolean("body_intact"));
    receipt.body_intact = intact;
  }
  records.receipts.push_back(std::move(receipt));
  return Status::Ok();
}

Status read_event(const LineReader& r, Records& records) {
  WorldEvent event;
  MQ_ASSIGN_OR_RETURN(event.at, r.integer("at", 0, kMaxTime));
  MQ_ASSIGN_OR_RETURN(event.what, r.text("what"));
  MQ_ASSIGN_OR_RETURN(event.target, r.text("target", ""));
  MQ_ASSIGN_OR_RETURN(event.detail, r.text("detail", ""));
  MQ_ASSIGN_OR_RETURN(const int64_t index, r.integer("fault_index", -1, INT32_MAX, -1));
  event.fault_index = static_cast<int>(index);
  // The run's bounds, when the driver recorded them, beat the records' extremes.
  if (event.what == "run_start") records.run_start = event.at;
  if (event.what == "run_end") records.run_end = event.at;
  records.events.push_back(std::move(event));
  return Status::Ok();
}

Status read_header(const LineReader& r, const Place& place) {
  MQ_ASSIGN_OR_RETURN(const std::string format, r.text("format"));
  if (format != kFormat) {
    return Status::InvalidArgument(place.text() + ": history record: format '" + format + "'; expected '" +
                                   std::string(kFormat) + "'");
  }
  MQ_ASSIGN_OR_RETURN(const int64_t version, r.integer("version", 1, 1000));
  if (version != kVersion) {
    return Status::InvalidArgument(place.text() + ": history record: version " + std::to_string(version) +
                                   "; this mqsim reads version " + std::to_string(kVersion));
  }
  MQ_ASSIGN_OR_RETURN(const std::string clock, r.text("clock", "wall_ns"));
  if (clock != "wall_ns") {
    return Status::InvalidArgument(place.text() + ": history record: clock '" + clock + "'; expected 'wall_ns'");
  }
  return Status::Ok();
}

Status read_line(std::string_view line, const Place& place, bool first, Records& records) {
  json object;
  try {
    object = json::parse(line);
  } catch (const json::exception& error) {
    return Status::InvalidArgument(place.text() + ": not JSON (" + error.what() + "); expected one JSON object per line");
  }
  if (!object.is_object() || !object.contains("type") || !object["type"].is_string()) {
    return Status::InvalidArgument(place.text() + ": expected a JSON object with a string field 'type'");
  }
  const std::string type = object["type"].get<std::string>();
  const LineReader reader(object, place, type);
  if (first != (type == "history")) {
    return Status::InvalidArgument(place.text() + (first ? ": expected the history record first ({\"type\":\"history\",\"format\":\"mqlab-history\",...}), found '" + type + "'; is this a history file?"
                                                         : ": a second history record; expected one per file"));
  }
  if (type == "history") return read_header(reader, place);
  if (type == "send") return read_send(reader, place, records);
  if (type == "send_result") return read_send_result(reader, place, records);
  if (type == "receipt") return read_receipt(reader, place, records);
  if (type == "event") return read_event(reader, records);
  return Status::InvalidArgument(place.text() + ": record type '" + type +
                                 "'; expected history, send, send_result, receipt or event");
}

Status read_file(const std::string& name, std::string_view text, Records& records) {
  size_t line_number = 0;
  size_t at = 0;
  bool first = true;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank
    MQ_RETURN_IF_ERROR(read_line(line, Place{&name, line_number}, first, records));
    first = false;
  }
  if (first) return Status::InvalidArgument(name + ": empty; expected a history file (mqadmin perf ... --history)");
  return Status::Ok();
}

// Attaches every send_result to its send; a second one, or one without a send, is an error.
Status match_results(Records& records) {
  for (auto& [name, result] : records.results) {
    auto it = records.sends.find(name);
    if (it == records.sends.end()) {
      return Status::InvalidArgument(result.place.text() + ": send_result record: producer '" + name.first +
                                     "' seq " + std::to_string(name.second) +
                                     " has no send record in any file given (is its producer's file missing?)");
    }
    if (it->second.result) {
      return Status::InvalidArgument(result.place.text() + ": send_result record: producer '" + name.first +
                                     "' seq " + std::to_string(name.second) + " already ended at " +
                                     it->second.result->place.text());
    }
    it->second.result = std::move(result);
  }
  records.results.clear();
  return Status::Ok();
}

// The earliest and latest timestamps of any record.
std::pair<Nanos, Nanos> extremes(const Records& records) {
  Nanos first = std::numeric_limits<Nanos>::max();
  Nanos last = 0;
  auto see = [&](Nanos at) {
    first = std::min(first, at);
    last = std::max(last, at);
  };
  for (const auto& [name, send] : records.sends) {
    see(send.invoked_at);
    if (send.result) see(send.result->at);
  }
  for (const ReceiptEntry& r : records.receipts) see(r.at);
  for (const WorldEvent& e : records.events) see(e.at);
  if (first == std::numeric_limits<Nanos>::max()) first = 0;
  return {first, last};
}

Result<LoadedHistory> merge(Records records, std::vector<std::string> files) {
  MQ_RETURN_IF_ERROR(match_results(records));
  LoadedHistory loaded;
  loaded.files = std::move(files);
  const auto [first, last] = extremes(records);
  loaded.origin_wall_ns = records.run_start.value_or(first);
  const auto since_origin = [&](Nanos at) { return std::max<Nanos>(0, at - loaded.origin_wall_ns); };
  loaded.end = since_origin(records.run_end.value_or(last));

  // Sends in invocation order get History seqs 0, 1, ...
  std::vector<std::pair<const MessageName*, const SendEntry*>> order;
  order.reserve(records.sends.size());
  for (const auto& [name, send] : records.sends) order.emplace_back(&name, &send);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->invoked_at, *a.first) < std::tie(b.second->invoked_at, *b.first);
  });
  std::map<MessageName, uint64_t> seq_of;
  std::set<std::string> producers;
  for (const auto& [name, send] : order) {
    const Nanos invoked = since_origin(send->invoked_at);
    const uint64_t seq = loaded.history.begin_send(name->first, invoked, send->key, send->body_crc);
    seq_of.emplace(*name, seq);
    loaded.producer_seqs.push_back(name->second);
    MQ_ASSERT(loaded.producer_seqs.size() == seq + 1);
    producers.insert(name->first);
    if (!send->result) continue;  // pending: its producer died before learning the outcome
    const ResultEntry& r = *send->result;
    Nanos completed = since_origin(r.at);
    if (completed < invoked) {
      ++loaded.completions_before_invocation;
      completed = invoked;
    }
    loaded.history.complete_send(seq, completed, r.outcome, r.broker_name, r.queue_id, r.queue_offset, r.msg_id,
                                 r.attempts);
  }
  loaded.producers.assign(producers.begin(), producers.end());

  // Receipts in time order: the checker counts a duplicate or a reordering
  // against what the group had received before.
  std::stable_sort(records.receipts.begin(), records.receipts.end(),
                   [](const ReceiptEntry& a, const ReceiptEntry& b) { return a.at < b.at; });
  std::set<std::string> groups;
  for (const ReceiptEntry& r : records.receipts) {
    groups.insert(r.group);
    auto it = seq_of.find(MessageName{r.producer, r.seq});
    if (it == seq_of.end()) {
      ++loaded.receipts_without_send;
      continue;
    }
    const std::optional<SendRecord> sent = loaded.history.send(it->second);
    MQ_ASSERT(sent.has_value());
    ReceiptRecord receipt;
    receipt.seq = it->second;
    receipt.group = std::string_view(r.group);
    receipt.consumer = std::string_view(r.consumer);
    receipt.at = since_origin(r.at);
    receipt.broker_name = std::string_view(r.broker_name);
    receipt.queue_id = r.queue_id;
    receipt.queue_offset = r.queue_offset;
    receipt.reconsume_times = r.reconsume_times;
    receipt.body_intact = r.body_intact.value_or(!r.body_crc || *r.body_crc == sent->body_crc);
    loaded.history.receive(receipt);
  }
  loaded.consumer_groups.assign(groups.begin(), groups.end());

  std::stable_sort(records.events.begin(), records.events.end(),
                   [](const WorldEvent& a, const WorldEvent& b) { return a.at < b.at; });
  for (WorldEvent& event : records.events) {
    event.at = since_origin(event.at);
    loaded.history.record(std::move(event));
  }
  MQ_ASSERT(loaded.history.sends().size() == records.sends.size());
  return loaded;
}

}  // namespace

Result<LoadedHistory> parse_history_files(const std::vector<std::pair<std::string, std::string>>& name_and_text) {
  if (name_and_text.empty()) return Status::InvalidArgument("no history files given");
  Records records;
  std::vector<std::string> files;
  for (const auto& [name, text] : name_and_text) {
    MQ_RETURN_IF_ERROR(read_file(name, text, records));
    files.push_back(name);
  }
  return merge(std::move(records), std::move(files));
}

Result<LoadedHistory> load_history_files(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::NotFound("cannot read history file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    texts.emplace_back(path, text.str());
  }
  return parse_history_files(texts);
}

}  // namespace mqlab::sim
