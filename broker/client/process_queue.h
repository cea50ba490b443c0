// ProcessQueue: the bookkeeping of one assigned queue between pulling and
// committing (RocketMQ's ProcessQueue.java): which pulled messages are still
// unconsumed, which are with the handler, and the offset that may be
// committed.
//
// The frontier is the nextBeginOffset of the last pull answered: every
// offset below it was either delivered to this queue (and is tracked here
// until consumed) or was passed over by the broker or the tag filter. So
// the consumed offset, the one committed to the broker, is the smallest
// unconsumed offset: the lowest tracked message, or the frontier when none
// is tracked. Handlers finishing out of order never move it past a message
// still being consumed; a crash then re-delivers from there (at least once).
//
// A message is waiting (not yet handed out), in flight (with the handler) or
// parked (its handler failed and it could not be sent back: it stays
// unconsumed, holding the offset, until released for a local retry).
//
// Storage: one deque of entries sorted by queue offset. Pulls append at the
// back and consumption mostly removes at the front, so a message costs no
// tree node (a std::map entry and a std::set entry per message were a tenth
// of the consumer's allocations); offsets are found by binary search.
//
// Invariants: entries_ is strictly increasing by offset; waiting_count_,
// in_flight_count_ count the entries in those states; cached_bytes_ sums the
// bodies of every entry; no waiting entry lies below waiting_from_ (where
// take_next starts looking).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <vector>

#include "broker/client/message.h"

namespace mqlab::client {

class ProcessQueue {
 public:
  explicit ProcessQueue(int64_t start_offset) : frontier_(start_offset) {}

  // FOUND: the messages that passed the tag filter, and nextBeginOffset. An
  // offset already tracked is ignored (a re-pulled duplicate).
  void put_messages(std::vector<MessageExt> messages, int64_t next_begin_offset);
  // The same for messages already shared (decoded in place by the
  // consumer), taken out of messages, which is left empty with its room (the
  // consumer's, kept from pull to pull). Requires: no null message.
  void put_messages(std::vector<std::shared_ptr<MessageExt>>& messages, int64_t next_begin_offset);
  // NO_NEW_MSG / NO_MATCHED_MSG: nothing for us below next_begin_offset.
  void advance(int64_t next_begin_offset) { frontier_ = next_begin_offset; }
  // OFFSET_ILLEGAL: start over at next_begin_offset (which may be lower).
  // Waiting and parked messages are dropped (they will be pulled again if
  // still there); in-flight ones stay tracked until their handler returns.
  void reset(int64_t next_begin_offset);

  // The lowest waiting message, now in flight; null when none waits.
  std::shared_ptr<const MessageExt> take_next();
  // The message at queue_offset is consumed (handled, or sent back): returns
  // the consumed offset. Unknown offsets (dropped by reset) are ignored.
  int64_t remove(int64_t queue_offset);
  // An in-flight message to retry locally later: reconsumeTimes + 1, and not
  // handed out again until release().
  void park(int64_t queue_offset);
  void release(int64_t queue_offset);

  int64_t consumed_offset() const;
  int64_t frontier() const { return frontier_; }
  size_t message_count() const { return entries_.size(); }
  size_t waiting_count() const { return waiting_count_; }
  size_t in_flight_count() const { return in_flight_count_; }
  uint64_t cached_bytes() const { return cached_bytes_; }
  // Highest minus lowest tracked offset (Java's getMaxSpan); 0 when empty.
  int64_t max_span() const;

 private:
  enum class State { kWaiting, kInFlight, kParked };
  struct Entry {
    int64_t offset = 0;
    std::shared_ptr<const MessageExt> message;
    State state = State::kWaiting;
  };
  using Entries = std::deque<Entry>;

  // The entry at offset, or entries_.end().
  Entries::iterator find(int64_t offset);
  // The first entry at or above offset.
  Entries::iterator lower_bound(int64_t offset);
  void insert(std::shared_ptr<const MessageExt> message);
  void check_invariants() const;

  Entries entries_;  // by queue offset, strictly increasing
  size_t waiting_count_ = 0;
  size_t in_flight_count_ = 0;
  uint64_t cached_bytes_ = 0;
  int64_t waiting_from_ = std::numeric_limits<int64_t>::max();
  int64_t frontier_;
};

}  // namespace mqlab::client
