#include "sim/history_order.h"

#include <algorithm>
#include <limits>

#include "broker/common/assert.h"

namespace mqlab::sim {
Nanos invoked_at_of(const SendRecord& send) { return send.invoked_at; }

Nanos line_time_of(const SendRecord& send) {
  return send.outcome == SendOutcome::kPending ? send.invoked_at : send.completed_at;
}

SendsInOrder::SendsInOrder(const SpilledRecords<SendRecord>& sends, Key key)
    : sends_(sends), key_(key), unread_(sends.begin()) {
  MQ_ASSERT(key_ != nullptr);
  least_invoked_from_stretch_.assign((sends.size() + kStretch - 1) / kStretch, std::numeric_limits<Nanos>::max());
  for (const SendRecord& send : sends) {
    Nanos& least = least_invoked_from_stretch_[send.seq / kStretch];
    least = std::min(least, send.invoked_at);
  }
  // Suffix minima: stretch s's entry covers every send from its first on.
  for (size_t s = least_invoked_from_stretch_.size(); s-- > 1;) {
    least_invoked_from_stretch_[s - 1] = std::min(least_invoked_from_stretch_[s - 1], least_invoked_from_stretch_[s]);
  }
}

Nanos SendsInOrder::unread_invoked_at_least() const {
  if (unread_ == sends_.end()) return std::numeric_limits<Nanos>::max();
  return least_invoked_from_stretch_[unread_.index() / kStretch];
}

std::optional<SendRecord> SendsInOrder::next() {
  while (true) {
    // A held send whose key is at or before every unread send's invocation
    // (so at or before its key) comes first: on a tie, the unread one has
    // the larger seq.
    if (!heap_.empty() && heap_.top().key <= unread_invoked_at_least()) {
      const uint32_t slot = heap_.top().slot;
      heap_.pop();
      free_slots_.push_back(slot);
      return slots_[slot];
    }
    if (unread_ == sends_.end()) {
      MQ_ASSERT(heap_.empty());
      return std::nullopt;
    }
    const SendRecord& send = *unread_;
    MQ_ASSERT(send.seq == unread_.index());
    const Nanos key = key_(send);
    MQ_ASSERT(key >= send.invoked_at);
    uint32_t slot = 0;
    if (free_slots_.empty()) {
      MQ_ASSERT(slots_.size() < std::numeric_limits<uint32_t>::max());
      slot = static_cast<uint32_t>(slots_.size());
      slots_.push_back(send);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slots_[slot] = send;
    }
    heap_.push(Held{key, send.seq, slot});
    ++unread_;
  }
}

}  // namespace mqlab::sim
