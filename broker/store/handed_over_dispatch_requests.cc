#include "broker/store/handed_over_dispatch_requests.h"

#include <algorithm>
#include <utility>

namespace mqlab::store {

void HandedOverDispatchRequests::grow() {
  MQ_ASSERT(size_ < max_requests_);
  if (size_ < slots_.size()) return;
  // Unrolled into a new ring, oldest first; the requests move with their strings.
  std::vector<DispatchRequest> grown(std::min(max_requests_, std::max<size_t>(8, 2 * slots_.size())));
  for (size_t i = 0; i < size_; ++i) grown[i] = std::move(slots_[index(i)]);
  slots_ = std::move(grown);
  head_ = 0;
  MQ_ASSERT(size_ < slots_.size());
}

DispatchRequest& HandedOverDispatchRequests::next_slot() {
  MQ_ASSERT(!full());
  grow();
  return slots_[index(size_)];
}

void HandedOverDispatchRequests::push() {
  MQ_ASSERT(size_ < slots_.size());
  const DispatchRequest& added = slots_[index(size_)];
  MQ_ASSERT(added.msg_size > 0);
  // Strictly after the last: a request left behind by a dropped record
  // would otherwise describe the next record at its offset.
  if (size_ > 0) MQ_ASSERT(back().end_offset() <= added.commit_log_offset);
  ++size_;
}

void HandedOverDispatchRequests::pop_front() {
  MQ_ASSERT(size_ > 0);
  head_ = index(1);
  --size_;
  if (size_ == 0) head_ = 0;
}

void HandedOverDispatchRequests::drop_before(PhyOffset offset) {
  while (size_ > 0 && slots_[head_].commit_log_offset < offset) pop_front();
}

void HandedOverDispatchRequests::drop_from(PhyOffset offset) {
  while (size_ > 0 && back().commit_log_offset >= offset) --size_;
  if (size_ == 0) head_ = 0;
}

}  // namespace mqlab::store
