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
// The "heap" is a sorted run, not a binary heap: a send read is inserted by
// moving it back past the held sends whose keys are larger, which are few
// (the keys arrive nearly in order: only a late invocation or a slow
// completion moves back, past the sends that overtook it), and the first
// leaves from the front. A binary heap's sift down and up cost about 150
// instructions a send (1.2% of a simulator run); this costs a compare or two.
// Its worst case, many sends held with keys far ahead (thousands of sends
// awaiting a timeout), is a move per such send and insert: still a small
// part of a run that long.
//
// Requires: key(send) >= send.invoked_at for every send (asserted).
#pragma once

#include <cstdint>
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

  // The next send by (key, seq); null after the last. It points into this
  // reader and is valid until the next call (a copy of the 100-byte record
  // per send cost more than the reading).
  const SendRecord* next();
  // Sends held for reordering now, for tests.
  size_t held() const { return held_.size() - head_; }

 private:
  // A held send's place in the sorted run: its record waits in slots_, so
  // an insertion moves 24 bytes, not a 100-byte record.
  struct Held {
    Nanos key = 0;
    uint64_t seq = 0;
    uint32_t slot = 0;
    bool operator<(const Held& other) const { return key != other.key ? key < other.key : seq < other.seq; }
  };
  // Entries before head_ have left; past this many they are dropped from
  // the vector (the run rarely empties: a stretch is held at every moment).
  static constexpr size_t kCompactAfter = 4096;

  // The least invocation of the sends not yet read (a lower bound).
  Nanos unread_invoked_at_least() const;

  const SpilledRecords<SendRecord>& sends_;
  const Key key_;
  SpilledRecords<SendRecord>::const_iterator unread_;
  // [s]: the least invoked_at of the sends from stretch s's first on.
  std::vector<Nanos> least_invoked_from_stretch_;
  std::vector<Held> held_;  // [head_, end): the held sends, ascending by (key, seq)
  size_t head_ = 0;
  std::vector<SendRecord> slots_;   // the held sends' records, and free ones
  std::vector<uint32_t> free_slots_;
};

// The keys the readers above use.
Nanos invoked_at_of(const SendRecord& send);
// When a send's trace line is printed: its completion, or its invocation while pending.
Nanos line_time_of(const SendRecord& send);

}  // namespace mqlab::sim
