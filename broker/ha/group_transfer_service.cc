#include "broker/ha/group_transfer_service.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab::ha {

GroupTransferService::GroupTransferService(env::Env& env, Nanos timeout) : env_(env), timeout_(timeout) {
  MQ_ASSERT(timeout_ > 0);
}

GroupTransferService::~GroupTransferService() {
  if (watchdog_ != env::kNoTimer) env_.executor().cancel(watchdog_);
}

void GroupTransferService::submit(PhyOffset next_offset, PhyOffset acked, Done done) {
  MQ_ASSERT(requests_.empty() || requests_.back().next_offset <= next_offset);
  MQ_ASSERT(done != nullptr);
  if (acked >= next_offset) {  // an ack already covers it
    ++transferred_;
    env_.executor().post([done = std::move(done)] { done(TransferOutcome::kTransferred); });
    return;
  }
  requests_.push_back(Request{next_offset, env_.clock().now_ns() + timeout_, std::move(done)});
  arm_watchdog();
}

void GroupTransferService::notify_acked(PhyOffset acked) {
  // Complete from a snapshot: a done() may submit again (a reply that
  // triggers the next put), which must not be completed by this pass early.
  std::deque<Request> covered;
  while (!requests_.empty() && requests_.front().next_offset <= acked) {
    covered.push_back(std::move(requests_.front()));
    requests_.pop_front();
  }
  transferred_ += covered.size();
  for (Request& request : covered) request.done(TransferOutcome::kTransferred);
}

void GroupTransferService::fail_all() {
  std::deque<Request> failed;
  failed.swap(requests_);
  timeouts_ += failed.size();
  for (Request& request : failed) request.done(TransferOutcome::kTimeout);
}

void GroupTransferService::arm_watchdog() {
  if (requests_.empty()) return;
  const Nanos deadline = requests_.front().deadline;
  if (watchdog_ != env::kNoTimer && watchdog_deadline_ <= deadline) return;
  if (watchdog_ != env::kNoTimer) env_.executor().cancel(watchdog_);
  watchdog_deadline_ = deadline;
  const Nanos delay = std::max<Nanos>(0, deadline - env_.clock().now_ns());
  watchdog_ = env_.executor().run_after(delay, lifetime_.guard([this] { on_watchdog(); }));
}

void GroupTransferService::on_watchdog() {
  watchdog_ = env::kNoTimer;
  const Nanos now = env_.clock().now_ns();
  std::deque<Request> expired;
  while (!requests_.empty() && requests_.front().deadline <= now) {
    expired.push_back(std::move(requests_.front()));
    requests_.pop_front();
  }
  timeouts_ += expired.size();
  arm_watchdog();
  for (Request& request : expired) request.done(TransferOutcome::kTimeout);
}

}  // namespace mqlab::ha
