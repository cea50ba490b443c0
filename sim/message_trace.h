// MessageTrace: a run's sends and receipts as trace lines, so a replayed
// trace shows what every client did and saw beside the faults and the
// brokers' log lines, in virtual-time order. One line per send, at its
// outcome (at its invocation while it is still pending), and one per receipt:
//      30.001380 client-0 producer-0 send #1234 SEND_OK broker-a q2@45 1.380ms x1
//      30.002011 client-0 consumer-cg-0 receive #1234 broker-a q2@45
// (x1: attempts; a receipt adds "redelivery N" and "CORRUPT" when they apply.)
//
// The lines are rendered from the finished History rather than as things
// happen, so they cost the run nothing and need no hook in the clients. Their
// digest (FNV-1a 64, like the event trace's) is the run's history_digest:
// equal seeds give equal digests, so the determinism checks see a change in
// any message's fate, not only in faults and restarts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/types.h"
#include "sim/history.h"
#include "sim/history_order.h"
#include "sim/scenario.h"

namespace mqlab::sim {

struct TimedLine {
  Nanos at = 0;
  std::string text;  // a whole trace line, ending in '\n'
};

// Every send and receipt of history as trace lines, in time order (sends
// before receipts at one instant, then by seq; receipts in the order they
// were recorded): deterministic in the History alone. Yielded one at a
// time, read from the History's spilled records, so a long run's lines are
// never all in memory (they were: 14 million strings at 600 simulated
// minutes). Keeps the digest and count of the lines it yielded.
// history must outlive this.
class MessageLines {
 public:
  MessageLines(const History& history, const Scenario& scenario);

  std::optional<TimedLine> next();
  // Reads the rest (for the digest alone).
  void drain();

  // FNV-1a 64 of the yielded lines' text, 16 lowercase hex digits.
  std::string digest_hex() const;
  uint64_t count() const { return count_; }

 private:
  std::optional<TimedLine> next_receipt_line();
  // The machine running process, "-" for one outside the scenario (the
  // audit consumer). Remembered per name: a run has a handful of clients,
  // and each line looked its machine up by string in machine_of_.
  std::string_view machine_of(const InternedName& process);

  std::map<std::string, std::string> machine_of_;
  std::vector<std::pair<InternedName, std::string_view>> machine_cache_;  // views of machine_of_'s values
  SendsInOrder sends_;
  std::optional<TimedLine> send_line_;  // the next send's line, read ahead
  bool sends_done_ = false;
  const SpilledRecords<ReceiptRecord>& receipts_;
  SpilledRecords<ReceiptRecord>::const_iterator next_receipt_;
  // Receipts recorded out of time order (a hand-made History): their lines,
  // stably sorted by time, instead of next_receipt_.
  std::optional<std::vector<TimedLine>> sorted_receipts_;
  size_t next_sorted_ = 0;
  std::optional<TimedLine> receipt_line_;  // read ahead
  uint64_t digest_ = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis, as Trace
  uint64_t count_ = 0;
};

// Writes event_trace (the lines the run wrote, in run order) with messages
// merged in by virtual time; at one printed instant event lines come first.
// Reads messages to the end.
void write_merged_trace(std::string_view event_trace, MessageLines& messages, std::ostream& out);

}  // namespace mqlab::sim
