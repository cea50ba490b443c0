#include "broker/client/process_queue.h"

#include <algorithm>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::client {

void ProcessQueue::put_messages(std::vector<MessageExt> messages, int64_t next_begin_offset) {
  for (MessageExt& message : messages) {
    const int64_t offset = message.queueOffset;
    if (entries_.contains(offset)) continue;
    cached_bytes_ += message.body.size();
    entries_.emplace(offset, Entry{std::make_shared<const MessageExt>(std::move(message)), State::kWaiting});
    waiting_.insert(offset);
  }
  frontier_ = next_begin_offset;
  check_invariants();
}

void ProcessQueue::reset(int64_t next_begin_offset) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.state == State::kInFlight) {
      ++it;
      continue;
    }
    cached_bytes_ -= it->second.message->body.size();
    it = entries_.erase(it);
  }
  waiting_.clear();
  frontier_ = next_begin_offset;
  check_invariants();
}

std::shared_ptr<const MessageExt> ProcessQueue::take_next() {
  if (waiting_.empty()) return nullptr;
  const int64_t offset = *waiting_.begin();
  waiting_.erase(waiting_.begin());
  Entry& entry = entries_.at(offset);
  MQ_ASSERT(entry.state == State::kWaiting);
  entry.state = State::kInFlight;
  ++in_flight_;
  check_invariants();
  return entry.message;
}

int64_t ProcessQueue::remove(int64_t queue_offset) {
  const auto it = entries_.find(queue_offset);
  if (it != entries_.end()) {
    MQ_ASSERT(it->second.state != State::kWaiting);  // only handed-out messages complete
    if (it->second.state == State::kInFlight) --in_flight_;
    cached_bytes_ -= it->second.message->body.size();
    entries_.erase(it);
  }
  check_invariants();
  return consumed_offset();
}

void ProcessQueue::park(int64_t queue_offset) {
  const auto it = entries_.find(queue_offset);
  if (it == entries_.end()) return;  // dropped by a reset meanwhile
  MQ_ASSERT(it->second.state == State::kInFlight);
  auto retried = std::make_shared<MessageExt>(*it->second.message);
  ++retried->reconsumeTimes;  // as Java counts a local retry
  it->second.message = std::move(retried);
  it->second.state = State::kParked;
  --in_flight_;
  check_invariants();
}

void ProcessQueue::release(int64_t queue_offset) {
  const auto it = entries_.find(queue_offset);
  if (it == entries_.end() || it->second.state != State::kParked) return;  // dropped by a reset meanwhile
  it->second.state = State::kWaiting;
  waiting_.insert(queue_offset);
  check_invariants();
}

int64_t ProcessQueue::consumed_offset() const {
  if (entries_.empty()) return frontier_;
  return std::min(entries_.begin()->first, frontier_);
}

int64_t ProcessQueue::max_span() const {
  if (entries_.empty()) return 0;
  return entries_.rbegin()->first - entries_.begin()->first;
}

void ProcessQueue::check_invariants() const {
  MQ_ASSERT(waiting_.size() + in_flight_ <= entries_.size());
  if (entries_.empty()) MQ_ASSERT(cached_bytes_ == 0);
  if (!waiting_.empty()) MQ_ASSERT(entries_.contains(*waiting_.begin()));
}

}  // namespace mqlab::client
