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
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/types.h"
#include "sim/history.h"
#include "sim/scenario.h"

namespace mqlab::sim {

struct TimedLine {
  Nanos at = 0;
  std::string text;  // a whole trace line, ending in '\n'
};

// Every send and receipt of history, sorted by time (sends before receipts
// at one instant, then by seq): deterministic in the History alone.
std::vector<TimedLine> message_lines(const History& history, const Scenario& scenario);

// FNV-1a 64 of the lines' text, 16 lowercase hex digits.
std::string lines_digest_hex(const std::vector<TimedLine>& lines);

// Writes event_trace (the lines the run wrote, in run order) with messages
// merged in by virtual time; at one printed instant event lines come first.
void write_merged_trace(std::string_view event_trace, const std::vector<TimedLine>& messages, std::ostream& out);

}  // namespace mqlab::sim
