#include "sim/message_trace.h"

#include <algorithm>
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

std::string placement(const std::string& broker_name, int32_t queue_id, int64_t queue_offset) {
  if (broker_name.empty()) return "-";
  return broker_name + " q" + std::to_string(queue_id) + "@" + std::to_string(queue_offset);
}

std::string line_head(Nanos at, const std::map<std::string, std::string>& machine_of, const std::string& process) {
  const auto machine = machine_of.find(process);
  return format_virtual_time(at) + " " + (machine == machine_of.end() ? std::string("-") : machine->second) + " " +
         process + " ";
}

TimedLine send_line(const SendRecord& send, const std::map<std::string, std::string>& machine_of) {
  const bool pending = send.outcome == SendOutcome::kPending;
  const Nanos at = pending ? send.invoked_at : send.completed_at;
  std::string text = line_head(at, machine_of, send.producer) + "send #" + std::to_string(send.seq) + " " +
                     send_outcome_name(send.outcome);
  if (!pending) {
    MQ_ASSERT(send.completed_at >= send.invoked_at);
    char latency[48];
    std::snprintf(latency, sizeof(latency), " %.3fms x%d",
                  static_cast<double>(send.completed_at - send.invoked_at) / kNanosPerMilli, send.attempts);
    text += " " + placement(send.broker_name, send.queue_id, send.queue_offset) + latency;
  }
  return TimedLine{at, text + "\n"};
}

TimedLine receipt_line(const ReceiptRecord& receipt, const std::map<std::string, std::string>& machine_of) {
  std::string text = line_head(receipt.at, machine_of, receipt.consumer) + "receive #" + std::to_string(receipt.seq) +
                     " " + placement(receipt.broker_name, receipt.queue_id, receipt.queue_offset);
  if (receipt.reconsume_times > 0) text += " redelivery " + std::to_string(receipt.reconsume_times);
  if (!receipt.body_intact) text += " CORRUPT";
  return TimedLine{receipt.at, text + "\n"};
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

std::vector<TimedLine> message_lines(const History& history, const Scenario& scenario) {
  const std::map<std::string, std::string> machine_of = machine_of_processes(scenario);
  std::vector<TimedLine> lines;
  lines.reserve(history.sends().size() + history.receipts().size());
  for (const SendRecord& send : history.sends()) lines.push_back(send_line(send, machine_of));
  for (const ReceiptRecord& receipt : history.receipts()) lines.push_back(receipt_line(receipt, machine_of));
  // Sends are in seq order and receipts in arrival order, so a stable sort
  // by time alone gives one order for one History.
  std::stable_sort(lines.begin(), lines.end(), [](const TimedLine& a, const TimedLine& b) { return a.at < b.at; });
  return lines;
}

std::string lines_digest_hex(const std::vector<TimedLine>& lines) {
  uint64_t digest = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis, as Trace
  for (const TimedLine& line : lines) {
    for (unsigned char c : line.text) {
      digest ^= c;
      digest *= 0x100000001b3ull;  // FNV-1a 64 prime
    }
  }
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

void write_merged_trace(std::string_view event_trace, const std::vector<TimedLine>& messages, std::ostream& out) {
  size_t next_message = 0;
  int64_t event_micros = 0;
  while (!event_trace.empty()) {
    const size_t end = event_trace.find('\n');
    const std::string_view line = event_trace.substr(0, end == std::string_view::npos ? event_trace.size() : end + 1);
    event_trace.remove_prefix(line.size());
    // Messages printed before this event line's instant go first; a line
    // without a time keeps the previous one, so it stays with its message.
    event_micros = printed_micros(line).value_or(event_micros);
    for (; next_message < messages.size(); ++next_message) {
      const std::optional<int64_t> micros = printed_micros(messages[next_message].text);
      MQ_ASSERT(micros.has_value());  // we printed it
      if (*micros >= event_micros) break;
      out << messages[next_message].text;
    }
    out << line;
  }
  for (; next_message < messages.size(); ++next_message) out << messages[next_message].text;
}

}  // namespace mqlab::sim
