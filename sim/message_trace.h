// MessageTrace: a run's sends and receipts as trace lines, so a replayed
// trace shows what every client did and saw beside the faults and the
// brokers' log lines, in virtual-time order. One line per send, at its
// outcome (at its invocation while it is still pending), and one per receipt:
//      30.001380 client-0 producer-0 send #1234 SEND_OK broker-a q2@45 1.380ms x1
//      30.002011 client-0 consumer-cg-0 receive #1234 broker-a q2@45
// (x1: attempts; a receipt adds "redelivery N" and "CORRUPT" when they apply.)
//
// The lines are rendered from the finished History rather than as things
// happen, so they cost the run nothing and need no hook in the clients.
// Their digest is the run's history_digest: equal seeds give equal digests,
// so the determinism checks see a change in any message's fate, not only in
// faults and restarts. It is taken over the fields each line prints (times
// in nanoseconds, not the printed microseconds), in line order, not over the
// text: a run without --trace digests its sends and receipts without
// rendering a line, which was 5.7% of the standard scenario's instructions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
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
// minutes). Keeps the digest and count of the records it went past, whether
// it rendered their lines (next) or not (drain): the same either way.
// history must outlive this.
class MessageLines {
 public:
  MessageLines(const History& history, const Scenario& scenario);

  std::optional<TimedLine> next();
  // Goes past the rest without rendering them (for the digest alone).
  void drain();

  // The digest of the records gone past, 16 lowercase hex digits.
  std::string digest_hex() const;
  uint64_t count() const { return count_; }

 private:
  // What a line shows of a name, looked up once per name: a run has a
  // handful of clients and brokers, and each line looked its machine up by
  // string in machine_of_. The hashes feed the digest: an InternedName's
  // index depends on what the process interned before (a sweep's child
  // runs several seeds), its text does not.
  struct NameFacts {
    InternedName name;
    std::string_view machine;  // the machine running the process name, "-" for none; a view of machine_of_
    uint64_t name_hash = 0;
    uint64_t machine_hash = 0;
  };
  NameFacts facts_of(const InternedName& name);  // a copy: the vector may grow on the next call

  // The next send or receipt in line order, digested and counted, and
  // into taken_ when keep (next() prints it; drain() only digests, and
  // copying each record there was a sixth of its work); false at the end.
  bool advance(bool keep);
  std::optional<ReceiptRecord> next_receipt();
  void digest_send(const SendRecord& send);
  void digest_receipt(const ReceiptRecord& receipt);
  void mix(uint64_t word);

  std::map<std::string, std::string> machine_of_;
  std::vector<NameFacts> name_facts_;
  SendsInOrder sends_;
  const SendRecord* send_ = nullptr;  // the next send, read ahead: sends_ holds it until its next next()
  bool sends_done_ = false;
  const SpilledRecords<ReceiptRecord>& receipts_;
  SpilledRecords<ReceiptRecord>::const_iterator next_receipt_;
  // Receipts recorded out of time order (a hand-made History), stably
  // sorted by time, instead of next_receipt_.
  std::optional<std::vector<ReceiptRecord>> sorted_receipts_;
  size_t next_sorted_ = 0;
  std::optional<ReceiptRecord> receipt_;  // the next receipt, read ahead
  std::variant<std::monostate, SendRecord, ReceiptRecord> taken_;  // what advance() went past last
  uint64_t digest_ = 0xcbf29ce484222325ull;  // FNV-1a 64's offset basis, as Trace's
  uint64_t count_ = 0;
};

// Writes event_trace (the lines the run wrote, in run order) with messages
// merged in by virtual time; at one printed instant event lines come first.
// Reads messages to the end.
void write_merged_trace(std::string_view event_trace, MessageLines& messages, std::ostream& out);

}  // namespace mqlab::sim
