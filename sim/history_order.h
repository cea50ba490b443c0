// SendsInOrder: a History's sends in the order of a time key, ties by seq,
// as std::stable_sort by that key over the seq-ordered sends would give
// them, without sorting (or holding) every send.
//
// Two readers of a finished History want its sends in time order: the
// checker's write-unavailability windows (by invocation) and the message
// trace (by the time its line is printed: completion, or invocation while
// pending). Seq order is almost that order, but not quite: a producer at its
// in-flight cap invokes a waiting arrival late, with the arrival's (earlier)
// time, and sends complete out of order. So the sends are read in seq order
// into a min-heap, and one leaves it once no send still unread can come
// before it: every key is at or after its send's invocation, and the
// invocations of the sends still unread are at or after the least of their
// stretch's (a table of one Nanos per kStretch sends, made in one pass). The
// heap then holds the sends reordered across about one stretch, not the run.
//
// Requires: key(send) >= send.invoked_at for every send (asserted).
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "sim/history.h"

namespace mqlab::sim {

class SendsInOrder {
 public:
  using Key = Nanos (*)(const SendRecord& send);

  // sends must outlive this.
  SendsInOrder(const SpilledRecords<SendRecord>& sends, Key key);

  // Sends per entry of the lower-bound table. A send waits in the heap
  // until the reading has passed its stretch, so the heap holds about a
  // stretch of sends (a block's 4,096 made each pop a dozen 100-byte moves:
  // 0.7% of a simulator run, twice); the table costs 8 bytes per 64 sends.
  static constexpr size_t kStretch = 64;

  // The next send by (key, seq); nullopt after the last.
  std::optional<SendRecord> next();
  // Sends held for reordering now, for tests.
  size_t held() const { return heap_.size(); }

 private:
  // A held send's place in the heap: its record waits in slots_, so the
  // heap's sifting moves 24 bytes, not a 100-byte record.
  struct Held {
    Nanos key = 0;
    uint64_t seq = 0;
    uint32_t slot = 0;
    bool operator>(const Held& other) const { return key != other.key ? key > other.key : seq > other.seq; }
  };

  // The least invocation of the sends not yet read (a lower bound).
  Nanos unread_invoked_at_least() const;

  const SpilledRecords<SendRecord>& sends_;
  const Key key_;
  SpilledRecords<SendRecord>::const_iterator unread_;
  // [s]: the least invoked_at of the sends from stretch s's first on.
  std::vector<Nanos> least_invoked_from_stretch_;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> heap_;
  std::vector<SendRecord> slots_;   // the held sends' records, and free ones
  std::vector<uint32_t> free_slots_;
};

// The keys the readers above use.
Nanos invoked_at_of(const SendRecord& send);
// When a send's trace line is printed: its completion, or its invocation while pending.
Nanos line_time_of(const SendRecord& send);

}  // namespace mqlab::sim
