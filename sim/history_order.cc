#include "sim/history_order.h"

#include <algorithm>
#include <limits>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

constexpr size_t kBlock = SpilledRecords<SendRecord>::kBlockRecords;

}  // namespace

Nanos invoked_at_of(const SendRecord& send) { return send.invoked_at; }

Nanos line_time_of(const SendRecord& send) {
  return send.outcome == SendOutcome::kPending ? send.invoked_at : send.completed_at;
}

SendsInOrder::SendsInOrder(const SpilledRecords<SendRecord>& sends, Key key)
    : sends_(sends), key_(key), unread_(sends.begin()) {
  MQ_ASSERT(key_ != nullptr);
  least_invoked_from_block_.assign((sends.size() + kBlock - 1) / kBlock, std::numeric_limits<Nanos>::max());
  for (const SendRecord& send : sends) {
    Nanos& least = least_invoked_from_block_[send.seq / kBlock];
    least = std::min(least, send.invoked_at);
  }
  // Suffix minima: block b's entry covers every send from its first on.
  for (size_t b = least_invoked_from_block_.size(); b-- > 1;) {
    least_invoked_from_block_[b - 1] = std::min(least_invoked_from_block_[b - 1], least_invoked_from_block_[b]);
  }
}

Nanos SendsInOrder::unread_invoked_at_least() const {
  if (unread_ == sends_.end()) return std::numeric_limits<Nanos>::max();
  return least_invoked_from_block_[unread_.index() / kBlock];
}

std::optional<SendRecord> SendsInOrder::next() {
  while (true) {
    // A held send whose key is at or before every unread send's invocation
    // (so at or before its key) comes first: on a tie, the unread one has
    // the larger seq.
    if (!heap_.empty() && heap_.top().key <= unread_invoked_at_least()) {
      SendRecord send = heap_.top().send;
      heap_.pop();
      return send;
    }
    if (unread_ == sends_.end()) {
      MQ_ASSERT(heap_.empty());
      return std::nullopt;
    }
    const SendRecord& send = *unread_;
    MQ_ASSERT(send.seq == unread_.index());
    const Nanos key = key_(send);
    MQ_ASSERT(key >= send.invoked_at);
    heap_.push(Held{key, send});
    ++unread_;
  }
}

}  // namespace mqlab::sim
