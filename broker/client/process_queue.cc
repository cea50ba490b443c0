#include "broker/client/process_queue.h"

#include <algorithm>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::client {

ProcessQueue::Entries::iterator ProcessQueue::lower_bound(int64_t offset) {
  // Most lookups are for the oldest entry (in-order consumption) or past the
  // newest (a pull's next message): answer those without a search.
  if (entries_.empty() || offset <= entries_.front().offset) return entries_.begin();
  if (offset > entries_.back().offset) return entries_.end();
  return std::lower_bound(entries_.begin(), entries_.end(), offset,
                          [](const Entry& entry, int64_t value) { return entry.offset < value; });
}

ProcessQueue::Entries::iterator ProcessQueue::find(int64_t offset) {
  const auto it = lower_bound(offset);
  return it != entries_.end() && it->offset == offset ? it : entries_.end();
}

void ProcessQueue::insert(std::shared_ptr<const MessageExt> message) {
  MQ_ASSERT(message != nullptr);
  const int64_t offset = message->queueOffset;
  const auto at = lower_bound(offset);
  if (at != entries_.end() && at->offset == offset) return;  // a re-pulled duplicate
  cached_bytes_ += message->body.size();
  Entry entry{offset, std::move(message), State::kWaiting};
  // A pull's messages follow everything tracked; only a reset to a lower
  // offset, with in-flight messages kept, makes one land in the middle.
  if (at == entries_.end()) {
    entries_.push_back(std::move(entry));
  } else {
    entries_.insert(at, std::move(entry));
  }
  ++waiting_count_;
  waiting_from_ = std::min(waiting_from_, offset);
}

void ProcessQueue::put_messages(std::vector<MessageExt> messages, int64_t next_begin_offset) {
  for (MessageExt& message : messages) insert(std::make_shared<const MessageExt>(std::move(message)));
  frontier_ = next_begin_offset;
  check_invariants();
}

void ProcessQueue::put_messages(std::vector<std::shared_ptr<MessageExt>>& messages, int64_t next_begin_offset) {
  for (std::shared_ptr<MessageExt>& message : messages) insert(std::move(message));
  messages.clear();
  frontier_ = next_begin_offset;
  check_invariants();
}

void ProcessQueue::reset(int64_t next_begin_offset) {
  for (const Entry& entry : entries_) {
    if (entry.state != State::kInFlight) cached_bytes_ -= entry.message->body.size();
  }
  const auto kept = std::remove_if(entries_.begin(), entries_.end(),
                                   [](const Entry& entry) { return entry.state != State::kInFlight; });
  entries_.erase(kept, entries_.end());  // remove_if keeps the order: still sorted
  MQ_ASSERT(entries_.size() == in_flight_count_);
  waiting_count_ = 0;
  waiting_from_ = std::numeric_limits<int64_t>::max();
  frontier_ = next_begin_offset;
  check_invariants();
}

std::shared_ptr<const MessageExt> ProcessQueue::take_next() {
  if (waiting_count_ == 0) return nullptr;
  // The entries below the first waiting one are in flight or parked: at
  // most consumeConcurrentlyPerQueue plus the parked ones.
  auto it = lower_bound(waiting_from_);
  while (it != entries_.end() && it->state != State::kWaiting) ++it;
  MQ_ASSERT(it != entries_.end());  // waiting_count_ > 0 and none lies below waiting_from_
  it->state = State::kInFlight;
  --waiting_count_;
  ++in_flight_count_;
  waiting_from_ = it->offset + 1;
  check_invariants();
  return it->message;
}

int64_t ProcessQueue::remove(int64_t queue_offset) {
  const auto it = find(queue_offset);
  if (it != entries_.end()) {
    MQ_ASSERT(it->state != State::kWaiting);  // only handed-out messages complete
    if (it->state == State::kInFlight) --in_flight_count_;
    cached_bytes_ -= it->message->body.size();
    entries_.erase(it);  // at the front when handlers finish in order: O(1)
  }
  check_invariants();
  return consumed_offset();
}

void ProcessQueue::park(int64_t queue_offset) {
  const auto it = find(queue_offset);
  if (it == entries_.end()) return;  // dropped by a reset meanwhile
  MQ_ASSERT(it->state == State::kInFlight);
  auto retried = std::make_shared<MessageExt>(*it->message);
  ++retried->reconsumeTimes;  // as Java counts a local retry
  it->message = std::move(retried);
  it->state = State::kParked;
  --in_flight_count_;
  check_invariants();
}

void ProcessQueue::release(int64_t queue_offset) {
  const auto it = find(queue_offset);
  if (it == entries_.end() || it->state != State::kParked) return;  // dropped by a reset meanwhile
  it->state = State::kWaiting;
  ++waiting_count_;
  waiting_from_ = std::min(waiting_from_, queue_offset);
  check_invariants();
}

int64_t ProcessQueue::consumed_offset() const {
  if (entries_.empty()) return frontier_;
  return std::min(entries_.front().offset, frontier_);
}

int64_t ProcessQueue::max_span() const {
  if (entries_.empty()) return 0;
  return entries_.back().offset - entries_.front().offset;
}

// O(1) checks only: this runs on every operation of every consumed message.
// The property test checks the whole order and every count against a model.
void ProcessQueue::check_invariants() const {
  MQ_ASSERT(waiting_count_ + in_flight_count_ <= entries_.size());
  if (entries_.empty()) MQ_ASSERT(cached_bytes_ == 0);
  if (!entries_.empty()) MQ_ASSERT(entries_.front().offset <= entries_.back().offset);
  if (waiting_count_ > 0) MQ_ASSERT(!entries_.empty() && waiting_from_ <= entries_.back().offset);
}

}  // namespace mqlab::client
