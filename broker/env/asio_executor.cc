#include "broker/env/asio_executor.h"

#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace mqlab::env {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

Nanos steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// now + delay, saturating: a "never" delay such as INT64_MAX must not wrap
// into the past and fire at once.
Nanos deadline_after(Nanos now, Nanos delay) {
  MQ_ASSERT(delay >= 0);
  if (delay > std::numeric_limits<Nanos>::max() - now) return std::numeric_limits<Nanos>::max();
  return now + delay;
}

}  // namespace

struct AsioExecutor::TimerQueue : std::enable_shared_from_this<TimerQueue> {
  explicit TimerQueue(boost::asio::io_context& io) : timer(io) {}

  // (deadline, id): ids grow with scheduling order, so equal deadlines run in
  // the order they were scheduled.
  using Key = std::pair<Nanos, TimerId>;

  void add(TimerId id, Nanos deadline, Task task) {
    MQ_ASSERT(id != kNoTimer);
    const bool inserted = deadline_by_id.emplace(id, deadline).second;
    MQ_ASSERT(inserted);
    due_order.emplace(Key{deadline, id}, std::move(task));
    if (!armed_deadline || deadline < *armed_deadline) arm(deadline);
  }

  bool remove(TimerId id) {
    const auto found = deadline_by_id.find(id);
    if (found == deadline_by_id.end()) return false;
    const size_t erased = due_order.erase(Key{found->second, id});
    MQ_ASSERT(erased == 1);
    deadline_by_id.erase(found);
    // The steady_timer may stay armed for this deadline: firing with nothing
    // due is harmless and re-arms for the next one.
    return true;
  }

  // Points the single steady_timer at deadline. expires_at() cancels the
  // previous wait, whose handler then sees operation_aborted and does nothing.
  void arm(Nanos deadline) {
    armed_deadline = deadline;
    timer.expires_at(SteadyTime(std::chrono::nanoseconds(deadline)));
    timer.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
      if (error == boost::asio::error::operation_aborted) return;
      if (const std::shared_ptr<TimerQueue> queue = weak.lock()) queue->run_due();
    });
  }

  // Runs every timer due now that was scheduled before this call. A timer a
  // task schedules with delay 0 waits for the next firing, so a task that
  // re-schedules itself cannot starve posted tasks.
  void run_due() {
    armed_deadline.reset();
    const Nanos now = steady_now_ns();
    const TimerId newest = last_id;
    while (!closed && !due_order.empty()) {
      const auto first = due_order.begin();
      const auto [deadline, id] = first->first;
      if (deadline > now || id > newest) break;
      Task task = std::move(first->second);
      due_order.erase(first);
      deadline_by_id.erase(id);
      task();  // may schedule or cancel timers, or destroy the executor
    }
    if (!closed && !due_order.empty() && !armed_deadline) arm(due_order.begin()->first.first);
    MQ_ASSERT(due_order.size() == deadline_by_id.size());
  }

  boost::asio::steady_timer timer;
  std::map<Key, Task> due_order;
  std::unordered_map<TimerId, Nanos> deadline_by_id;  // for cancel()
  std::optional<Nanos> armed_deadline;                // what timer waits for
  TimerId last_id = kNoTimer;
  bool closed = false;  // the executor is gone; run nothing more
};

AsioExecutor::AsioExecutor(boost::asio::io_context& io) : io_(io), timers_(std::make_shared<TimerQueue>(io)) {}

AsioExecutor::~AsioExecutor() {
  timers_->closed = true;
  timers_->due_order.clear();
  timers_->deadline_by_id.clear();
  try {
    timers_->timer.cancel();  // the pending wait completes as operation_aborted
  } catch (const boost::system::system_error&) {
    // Only a failing timerfd could get here; the queue is closed either way,
    // so a wait that does complete runs nothing.
  }
}

void AsioExecutor::post(Task task) {
  MQ_ASSERT(task != nullptr);
  // io_context::post is thread-safe, and one thread running the io_context
  // runs handlers in the order they were posted. Copying a weak_ptr is
  // thread-safe too; the task is dropped if the executor is gone by then.
  boost::asio::post(io_, [weak = std::weak_ptr<TimerQueue>(timers_), task = std::move(task)] {
    const std::shared_ptr<TimerQueue> queue = weak.lock();
    if (queue && !queue->closed) task();
  });
}

TimerId AsioExecutor::run_after(Nanos delay, Task task) {
  MQ_ASSERT(delay >= 0);
  MQ_ASSERT(task != nullptr);
  const TimerId id = ++timers_->last_id;
  timers_->add(id, deadline_after(steady_now_ns(), delay), std::move(task));
  return id;
}

bool AsioExecutor::cancel(TimerId id) {
  if (id == kNoTimer) return false;
  return timers_->remove(id);
}

size_t AsioExecutor::pending_timers() const {
  MQ_ASSERT(timers_->due_order.size() == timers_->deadline_by_id.size());
  return timers_->due_order.size();
}

}  // namespace mqlab::env
