#include "sim/message_trace.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <cstdio>
#include <map>
#include <optional>

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
  // A run records receipts as they happen, so in time order; check rather
  // than trust it, and sort a hand-made History's (stably: equal times keep
  // their recorded order, as one stable sort of every line did).
  Nanos last = std::numeric_limits<Nanos>::min();
  for (const ReceiptRecord& receipt : receipts_) {
    if (receipt.at < last) {
      sorted_receipts_.emplace();
      for (const ReceiptRecord& r : receipts_) sorted_receipts_->push_back(receipt_line(r, machine_of(r.consumer)));
      std::stable_sort(sorted_receipts_->begin(), sorted_receipts_->end(),
                       [](const TimedLine& a, const TimedLine& b) { return a.at < b.at; });
      break;
    }
    last = receipt.at;
  }
}

std::string_view MessageLines::machine_of(const InternedName& process) {
  for (const auto& [name, machine] : machine_cache_) {
    if (name == process) return machine;  // an index comparison
  }
  const auto found = machine_of_.find(process.str());
  const std::string_view machine = found == machine_of_.end() ? std::string_view("-") : std::string_view(found->second);
  machine_cache_.emplace_back(process, machine);
  return machine;
}

std::optional<TimedLine> MessageLines::next_receipt_line() {
  if (sorted_receipts_) {
    if (next_sorted_ == sorted_receipts_->size()) return std::nullopt;
    return std::move((*sorted_receipts_)[next_sorted_++]);
  }
  if (next_receipt_ == receipts_.end()) return std::nullopt;
  TimedLine line = receipt_line(*next_receipt_, machine_of(next_receipt_->consumer));
  ++next_receipt_;
  return line;
}

std::optional<TimedLine> MessageLines::next() {
  if (!send_line_ && !sends_done_) {
    if (const std::optional<SendRecord> send = sends_.next()) {
      send_line_ = send_line(*send, machine_of(send->producer));
    } else {
      sends_done_ = true;
    }
  }
  if (!receipt_line_) receipt_line_ = next_receipt_line();
  // At one instant sends come first: they preceded the receipts in the
  // sequence the lines were once stably sorted from.
  std::optional<TimedLine>* from = nullptr;
  if (send_line_ && (!receipt_line_ || send_line_->at <= receipt_line_->at)) {
    from = &send_line_;
  } else if (receipt_line_) {
    from = &receipt_line_;
  } else {
    return std::nullopt;
  }
  TimedLine line = std::move(**from);
  from->reset();
  for (unsigned char c : line.text) {
    digest_ ^= c;
    digest_ *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  ++count_;
  return line;
}

void MessageLines::drain() {
  while (next()) {
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
