// HandedOverDispatchRequests: the DispatchRequests the put path made for the
// records it appended, oldest first, until the dispatcher takes them. Owned
// by the MessageStore; the dispatcher uses the one at the record it is at,
// instead of reading the record back and decoding it (dispatch_request.h).
//
// Invariants:
//   - offsets strictly increase from front to back (the CommitLog's append
//     order); a request may be missing for any record (the put did not hand
//     one over, or the queue was full): the dispatcher reads those;
//   - a request describes the record at its offset: when the CommitLog drops
//     records (a refused commit), the store drops theirs (drop_from) before
//     another record can take the offset.
// At most max_requests wait: a dispatcher that is stuck (a full disk) reads
// what follows once it moves again, and memory stays bounded.
// A ring of requests reused in place: no allocation per put once the ring
// has grown to the puts of a turn.
#pragma once

#include <cstddef>
#include <vector>

#include "broker/common/assert.h"
#include "broker/store/dispatch_request.h"

namespace mqlab::store {

class HandedOverDispatchRequests {
 public:
  explicit HandedOverDispatchRequests(size_t max_requests) : max_requests_(max_requests) {
    MQ_ASSERT(max_requests_ > 0);
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  bool full() const { return size_ == max_requests_; }

  // The slot for the next request, for the caller to fill, then push().
  // Requires: !full(). Its strings keep their old capacity.
  DispatchRequest& next_slot();
  // Adds the request filled into next_slot().
  void push();

  // The oldest request, or nullptr when none waits.
  const DispatchRequest* front() const { return size_ == 0 ? nullptr : &slots_[head_]; }
  void pop_front();
  // Forgets the requests of records before offset (the dispatcher read them).
  void drop_before(PhyOffset offset);
  // Forgets the requests of records at and past offset (the CommitLog
  // dropped them).
  void drop_from(PhyOffset offset);
  void clear() { head_ = size_ = 0; }

 private:
  size_t index(size_t i) const { return (head_ + i) % slots_.size(); }
  const DispatchRequest& back() const { return slots_[index(size_ - 1)]; }
  // Makes room for one more (size_ < slots_.size() after).
  void grow();

  size_t max_requests_;
  std::vector<DispatchRequest> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace mqlab::store
