#include "sim/message_trace.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <cstdio>
#include <map>
#include <optional>
#include <variant>

#include "broker/common/assert.h"
#include "sim/trace.h"

namespace mqlab::sim {
namespace {

// Which machine runs each client process. The audit consumer is started by
// the world at the end of a run and is not in the scenario: it shows as "-".
std::map<std::string, std::string> machine_of_processes(const Scenario& scenario) {
  std::map<std::string, std::string> machine_of;
  for (const MachineSpec& machine : scenario_machines(scenario)) {
    for (const std::string& process : machine.processes) machine_of[process] = machine.name;
  }
  return machine_of;
}

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;  // FNV-1a 64, as Trace's digest
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = kFnvBasis;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= kFnvPrime;
  }
  return hash;
}

// Decimal digits of value, appended in place: std::to_string's temporary
// cost more than the rest of a field (two to five numbers a line).
template <typename Int>
void append_int(std::string& text, Int value) {
  char digits[24];
  const auto [end, error] = std::to_chars(std::begin(digits), std::end(digits), value);
  MQ_ASSERT(error == std::errc());
  text.append(digits, static_cast<size_t>(end - digits));
}

void append_placement(std::string& text, std::string_view broker_name, int32_t queue_id, int64_t queue_offset) {
  if (broker_name.empty()) {
    text += '-';
    return;
  }
  text += broker_name;
  text += " q";
  append_int(text, queue_id);
  text += '@';
  append_int(text, queue_offset);
}

// A line is built in one string, appended to in place: the trace digest
// formats two lines per message after every run.
void append_line_head(std::string& text, Nanos at, std::string_view machine, std::string_view process) {
  append_virtual_time(text, at);
  text += ' ';
  text += machine;
  text += ' ';
  text += process;
  text += ' ';
}

TimedLine send_line(const SendRecord& send, std::string_view machine) {
  const bool pending = send.outcome == SendOutcome::kPending;
  const Nanos at = pending ? send.invoked_at : send.completed_at;
  TimedLine line{at, {}};
  std::string& text = line.text;
  text.reserve(128);
  append_line_head(text, at, machine, send.producer);
  text += "send #";
  append_int(text, send.seq);
  text += ' ';
  text += send_outcome_name(send.outcome);
  if (!pending) {
    MQ_ASSERT(send.completed_at >= send.invoked_at);
    text += ' ';
    append_placement(text, send.broker_name, send.queue_id, send.queue_offset);
    text += ' ';
    append_micros_fixed(text, send.completed_at - send.invoked_at, 1'000, 0);  // "%.3f" milliseconds
    text += "ms x";
    append_int(text, send.attempts);
  }
  text += '\n';
  return line;
}

TimedLine receipt_line(const ReceiptRecord& receipt, std::string_view machine) {
  TimedLine line{receipt.at, {}};
  std::string& text = line.text;
  text.reserve(128);
  append_line_head(text, receipt.at, machine, receipt.consumer);
  text += "receive #";
  append_int(text, receipt.seq);
  text += ' ';
  append_placement(text, receipt.broker_name, receipt.queue_id, receipt.queue_offset);
  if (receipt.reconsume_times > 0) {
    text += " redelivery ";
    append_int(text, receipt.reconsume_times);
  }
  if (!receipt.body_intact) text += " CORRUPT";
  text += '\n';
  return line;
}

// The microseconds a line's "%12.6f" time prefix prints; nullopt for a line
// without one (a multi-line log message's continuation).
std::optional<int64_t> printed_micros(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string_view::npos) return std::nullopt;
  int64_t whole = 0;
  const size_t digits_from = i;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) whole = whole * 10 + (line[i] - '0');
  if (i == digits_from || i + 7 > line.size() || line[i] != '.') return std::nullopt;
  int64_t fraction = 0;
  for (size_t k = i + 1; k < i + 7; ++k) {
    if (line[k] < '0' || line[k] > '9') return std::nullopt;
    fraction = fraction * 10 + (line[k] - '0');
  }
  return whole * 1'000'000 + fraction;
}

}  // namespace

MessageLines::MessageLines(const History& history, const Scenario& scenario)
    : machine_of_(machine_of_processes(scenario)),
      sends_(history.sends(), line_time_of),
      receipts_(history.receipts()),
      next_receipt_(history.receipts().begin()) {
  // A run records receipts as they happen, so in time order; a hand-made
  // History's are sorted here (stably: equal times keep their recorded
  // order, as one stable sort of every line did).
  if (!history.receipts_in_time_order()) {
    sorted_receipts_.emplace(receipts_.begin(), receipts_.end());
    std::stable_sort(sorted_receipts_->begin(), sorted_receipts_->end(),
                     [](const ReceiptRecord& a, const ReceiptRecord& b) { return a.at < b.at; });
  }
}

MessageLines::NameFacts MessageLines::facts_of(const InternedName& name) {
  for (const NameFacts& facts : name_facts_) {
    if (facts.name == name) return facts;  // an index comparison
  }
  const auto found = machine_of_.find(name.str());
  NameFacts facts;
  facts.name = name;
  facts.machine = found == machine_of_.end() ? std::string_view("-") : std::string_view(found->second);
  facts.name_hash = fnv1a(name.str());
  facts.machine_hash = fnv1a(facts.machine);
  return name_facts_.emplace_back(facts);
}

// FNV-1a over 64-bit words, each product folded back on itself so that a
// word's high bits reach the digest's low ones too.
void MessageLines::mix(uint64_t word) {
  digest_ = (digest_ ^ word) * kFnvPrime;
  digest_ ^= digest_ >> 32;
}

// What send_line prints, in its order.
void MessageLines::digest_send(const SendRecord& send) {
  const NameFacts producer = facts_of(send.producer);
  mix('S');
  mix(static_cast<uint64_t>(line_time_of(send)));
  mix(producer.machine_hash);
  mix(producer.name_hash);
  mix(send.seq);
  mix(static_cast<uint64_t>(send.outcome));
  if (send.outcome == SendOutcome::kPending) return;
  mix(facts_of(send.broker_name).name_hash);
  mix(static_cast<uint64_t>(static_cast<int64_t>(send.queue_id)));
  mix(static_cast<uint64_t>(send.queue_offset));
  mix(static_cast<uint64_t>(send.completed_at - send.invoked_at));
  mix(static_cast<uint64_t>(static_cast<int64_t>(send.attempts)));
}

// What receipt_line prints, in its order.
void MessageLines::digest_receipt(const ReceiptRecord& receipt) {
  const NameFacts consumer = facts_of(receipt.consumer);
  mix('R');
  mix(static_cast<uint64_t>(receipt.at));
  mix(consumer.machine_hash);
  mix(consumer.name_hash);
  mix(receipt.seq);
  mix(facts_of(receipt.broker_name).name_hash);
  mix(static_cast<uint64_t>(static_cast<int64_t>(receipt.queue_id)));
  mix(static_cast<uint64_t>(receipt.queue_offset));
  mix(static_cast<uint64_t>(static_cast<int64_t>(receipt.reconsume_times)));
  mix(receipt.body_intact ? 1 : 0);
}

std::optional<ReceiptRecord> MessageLines::next_receipt() {
  if (sorted_receipts_) {
    if (next_sorted_ == sorted_receipts_->size()) return std::nullopt;
    return (*sorted_receipts_)[next_sorted_++];
  }
  if (next_receipt_ == receipts_.end()) return std::nullopt;
  const ReceiptRecord receipt = *next_receipt_;
  ++next_receipt_;
  return receipt;
}

bool MessageLines::advance(bool keep) {
  if (!send_ && !sends_done_) {
    send_ = sends_.next();
    sends_done_ = !send_;
  }
  if (!receipt_) receipt_ = next_receipt();
  // At one instant sends come first: they preceded the receipts in the
  // sequence the lines were once stably sorted from.
  if (send_ && (!receipt_ || line_time_of(*send_) <= receipt_->at)) {
    digest_send(*send_);
    if (keep) taken_ = *send_;
    send_ = nullptr;
  } else if (receipt_) {
    digest_receipt(*receipt_);
    if (keep) taken_ = *receipt_;
    receipt_.reset();
  } else {
    taken_ = std::monostate();
    return false;
  }
  ++count_;
  return true;
}

std::optional<TimedLine> MessageLines::next() {
  if (!advance(/*keep=*/true)) return std::nullopt;
  if (const auto* send = std::get_if<SendRecord>(&taken_)) return send_line(*send, facts_of(send->producer).machine);
  const auto& receipt = std::get<ReceiptRecord>(taken_);
  return receipt_line(receipt, facts_of(receipt.consumer).machine);
}

void MessageLines::drain() {
  while (advance(/*keep=*/false)) {
  }
}

std::string MessageLines::digest_hex() const {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest_));
  return text;
}

void write_merged_trace(std::string_view event_trace, MessageLines& messages, std::ostream& out) {
  std::optional<TimedLine> message = messages.next();
  int64_t event_micros = 0;
  while (!event_trace.empty()) {
    const size_t end = event_trace.find('\n');
    const std::string_view line = event_trace.substr(0, end == std::string_view::npos ? event_trace.size() : end + 1);
    event_trace.remove_prefix(line.size());
    // Messages printed before this event line's instant go first; a line
    // without a time keeps the previous one, so it stays with its message.
    event_micros = printed_micros(line).value_or(event_micros);
    for (; message; message = messages.next()) {
      const std::optional<int64_t> micros = printed_micros(message->text);
      MQ_ASSERT(micros.has_value());  // we printed it
      if (*micros >= event_micros) break;
      out << message->text;
    }
    out << line;
  }
  for (; message; message = messages.next()) out << message->text;
}

}  // namespace mqlab::sim
