// DiskQueue: a simulated device's FIFO of requests (flushes, writebacks,
// directory syncs). The device serves one request at a time: a request starts
// when the device is free and holds it for its service time, so a sync issued
// behind a large writeback waits for it, as on a real disk.
//
// Completions run as events of the queue's owner (the machine, never a
// process): a request in flight reaches the medium even if the process that
// asked for it was killed. Routing the answer to that process is the caller's
// business.
//
// Invariants: requests complete in submission order; completion times never
// decrease along the queue; busy_until() >= the last request's completion.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "broker/common/status.h"
#include "broker/common/types.h"
#include "sim/scheduler.h"

namespace mqlab::sim {

class DiskQueue {
 public:
  using Completion = std::function<void(Status)>;

  DiskQueue(Scheduler& scheduler, OwnerId owner) : scheduler_(scheduler), owner_(owner) {}
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  // Queues a request holding the device for service_ns; completion(ok) runs
  // when it ends. Requires: service_ns >= 0.
  void submit(Nanos service_ns, Completion completion);
  // The device does nothing for duration from now: queued requests and the
  // device's free time move back by duration.
  void stall(Nanos duration);
  // A power cut: forgets every queued request; no completion runs.
  size_t drop_all();
  // A device failure: runs every queued completion with status, in order.
  void fail_all(const Status& status);

  size_t in_flight() const { return requests_.size(); }
  Nanos busy_until() const { return busy_until_; }

 private:
  struct Request {
    Nanos done_at = 0;
    EventId event = kNoEvent;
    Completion completion;
  };

  EventId schedule(Nanos done_at);
  void complete_front();

  Scheduler& scheduler_;
  const OwnerId owner_;
  std::deque<Request> requests_;
  Nanos busy_until_ = 0;
};

}  // namespace mqlab::sim
