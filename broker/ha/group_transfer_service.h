// GroupTransferService: SYNC_MASTER's wait for a slave (RocketMQ's
// HAService.GroupTransferService), shaped like the group commit: each put
// parks a request "tell me when a slave acknowledged next_offset"; every ack
// that raises push2SlaveMaxOffset completes, in one pass, every request it
// covers; a request whose slaveTimeout passes first completes with kTimeout
// (FLUSH_SLAVE_TIMEOUT: stored on the master, not confirmed by a slave).
// RocketMQ re-checks every second until the deadline; we are woken by acks,
// so nothing polls.
//
// Invariants: requests are ordered by next_offset and by deadline (appends
// are sequential and the timeout is fixed), so completing is popping the
// front; every request completes exactly once, on the executor, never inside
// submit().
#pragma once

#include <deque>
#include <functional>

#include "broker/common/lifetime.h"
#include "broker/common/types.h"
#include "broker/env/env.h"

namespace mqlab::ha {

enum class TransferOutcome { kTransferred, kTimeout };

class GroupTransferService {
 public:
  using Done = std::function<void(TransferOutcome)>;
  GroupTransferService(env::Env& env, Nanos timeout);
  ~GroupTransferService();
  GroupTransferService(const GroupTransferService&) = delete;
  GroupTransferService& operator=(const GroupTransferService&) = delete;

  // acked: push2SlaveMaxOffset now. Requires: next_offset >= the last submitted.
  void submit(PhyOffset next_offset, PhyOffset acked, Done done);
  // A slave acknowledged up to acked: completes every request it covers.
  void notify_acked(PhyOffset acked);
  // Completes every waiting request with kTimeout (replication stopping).
  void fail_all();
  size_t waiting() const { return requests_.size(); }
  uint64_t transferred() const { return transferred_; }
  uint64_t timeouts() const { return timeouts_; }

 private:
  struct Request {
    PhyOffset next_offset;
    Nanos deadline;
    Done done;
  };
  void arm_watchdog();
  void on_watchdog();

  env::Env& env_;
  Nanos timeout_;
  std::deque<Request> requests_;
  env::TimerId watchdog_ = env::kNoTimer;
  Nanos watchdog_deadline_ = 0;
  uint64_t transferred_ = 0;
  uint64_t timeouts_ = 0;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::ha
