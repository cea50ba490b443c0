#include "sim/disk_queue.h"

#include <algorithm>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::sim {

DiskQueue::~DiskQueue() {
  // The events point at this queue; none may outlive it.
  for (const Request& request : requests_) scheduler_.cancel(request.event);
}

void DiskQueue::submit(Nanos service_ns, Completion completion) {
  MQ_ASSERT(service_ns >= 0);
  MQ_ASSERT(completion != nullptr);
  const Nanos start = std::max(busy_until_, scheduler_.now());
  const Nanos done_at = start + service_ns;
  MQ_ASSERT(requests_.empty() || requests_.back().done_at <= done_at);
  busy_until_ = done_at;
  requests_.push_back(Request{done_at, schedule(done_at), std::move(completion)});
}

void DiskQueue::stall(Nanos duration) {
  MQ_ASSERT(duration >= 0);
  // Rescheduling in queue order keeps equal-time requests in FIFO order,
  // because the scheduler breaks ties by scheduling order.
  for (Request& request : requests_) {
    const bool was_pending = scheduler_.cancel(request.event);
    if (scheduler_.owner_alive(owner_)) MQ_ASSERT(was_pending);
    request.done_at += duration;
    request.event = schedule(request.done_at);
  }
  busy_until_ = std::max(busy_until_, scheduler_.now()) + duration;
  MQ_ASSERT(requests_.empty() || requests_.back().done_at <= busy_until_);
}

size_t DiskQueue::drop_all() {
  const size_t dropped = requests_.size();
  for (const Request& request : requests_) scheduler_.cancel(request.event);
  requests_.clear();
  busy_until_ = scheduler_.now();
  return dropped;
}

void DiskQueue::fail_all(const Status& status) {
  MQ_ASSERT(!status.ok());
  // Take the queue first: a completion may submit again (a retry), and that
  // request belongs to the new queue, not to this loop.
  std::deque<Request> failed = std::move(requests_);
  requests_.clear();
  busy_until_ = scheduler_.now();
  for (Request& request : failed) {
    scheduler_.cancel(request.event);
    request.completion(status);
  }
}

EventId DiskQueue::schedule(Nanos done_at) {
  return scheduler_.schedule_at(done_at, [this] { complete_front(); }, owner_);
}

void DiskQueue::complete_front() {
  MQ_ASSERT(!requests_.empty());
  Request request = std::move(requests_.front());
  requests_.pop_front();
  MQ_ASSERT(request.done_at == scheduler_.now());
  request.completion(Status::Ok());
}

}  // namespace mqlab::sim
