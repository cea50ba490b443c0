#include "sim/history_order.h"

#include <algorithm>
#include <cstddef>
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

const SendRecord* SendsInOrder::next() {
  while (true) {
    // A held send whose key is at or before every unread send's invocation
    // (so at or before its key) comes first: on a tie, the unread one has
    // the larger seq.
    if (head_ != held_.size() && held_[head_].key <= unread_invoked_at_least()) {
      const uint32_t slot = held_[head_].slot;
      if (++head_ == held_.size()) {
        held_.clear();
        head_ = 0;
      } else if (head_ >= kCompactAfter) {
        held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
      free_slots_.push_back(slot);  // reused from the next call on
      return &slots_[slot];
    }
    if (unread_ == sends_.end()) {
      MQ_ASSERT(head_ == held_.size());
      return nullptr;
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
    // Into its place in the sorted run: back past the held sends after it.
    const Held entry{key, send.seq, slot};
    held_.push_back(entry);
    size_t place = held_.size() - 1;
    while (place > head_ && entry < held_[place - 1]) {
      held_[place] = held_[place - 1];
      --place;
    }
    held_[place] = entry;
    MQ_ASSERT(place == head_ || held_[place - 1] < entry);
    ++unread_;
  }
}

}  // namespace mqlab::sim
