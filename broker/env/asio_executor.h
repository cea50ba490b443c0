// AsioExecutor: the real broker core's executor, an env::Executor over one
// Boost.Asio io_context run by one thread.
//
// Threading: post() is the one entry point that may be called from any thread
// (the flush thread posts sync completions through the io_context directly, a
// network thread could post here). run_after() and cancel() belong to the
// thread running the io_context, or to the setup code before it runs.
//
// Posted tasks go through the executor's own run queue, not one Asio handler
// each: a task posted from the io_context's thread is pushed onto the queue,
// and one Asio handler (the drain) runs queued tasks until the queue is empty
// or kTasksPerTurn ran, then re-posts itself behind whatever Asio has ready.
// Why: a put's chain (put -> group write task -> reply -> next put) went once
// around Asio's scheduler per task, which allocated an operation per post and
// ran the reactor (an epoll_wait syscall) between every two handlers:
// store_bench measured one epoll_wait per put at one put in flight.
//
// Invariants:
//   - Posted tasks run in one FIFO order: a post that happens before another
//     (on one thread, or across threads ordered by a lock or an atomic) runs
//     first. Posts from other threads wait in a locked inbox that is moved
//     onto the run queue before the io thread's next post, and by a wake
//     handler they post; so a post from another thread never overtakes, and
//     is never overtaken by, a post ordered before or after it.
//   - Fairness: at most kTasksPerTurn tasks run between two turns of Asio's
//     own queue (socket reads and writes, the timer below, completions posted
//     to the io_context directly), so a task that re-posts itself forever
//     cannot starve them.
//   - Timer ids are non-zero and never reused (a 64-bit counter).
//   - A timer runs at most once, never before its deadline, and not at all
//     once cancel() returned true for it.
//   - Nothing posted or scheduled here runs after the executor is destroyed,
//     even if the io_context runs on: a gone broker gets no last word.
//   - Due timers run in (deadline, scheduling order) order, so timers due at
//     the same instant run in the order they were scheduled, as the simulator
//     runs them. Asio's own timer queue is a heap that promises no order among
//     equal expiries, so the executor keeps its own ordered queue and arms a
//     single steady_timer for the earliest deadline.
#pragma once

#include <functional>
#include <memory>

#include "broker/env/asio.h"
#include "broker/env/env.h"

namespace mqlab::env {

class AsioExecutor final : public Executor {
 public:
  // Posted tasks run per turn of the io_context before sockets and timers get
  // theirs. A turn of Asio costs an epoll_wait; 64 tasks of a put's chain
  // (two or three per put) are tens of microseconds, well under any socket
  // or timer latency the broker cares about.
  static constexpr int kTasksPerTurn = 64;

  // Requires: io outlives this executor.
  explicit AsioExecutor(boost::asio::io_context& io);
  // Drops every pending timer and posted task without running it.
  ~AsioExecutor() override;

  AsioExecutor(const AsioExecutor&) = delete;
  AsioExecutor& operator=(const AsioExecutor&) = delete;

  void post(Task&& task) override;
  TimerId run_after(Nanos delay, Task&& task) override;
  bool cancel(TimerId id) override;

  // While stop is set, a turn of posted tasks ends right after a task that
  // makes (*stop)() true, leaving the rest queued in order: PosixEnv's
  // run_until checks its condition after every task, as it did when each
  // task was an Asio handler of its own. Returns the check it replaces (a
  // nested run_until puts it back). Requires: called on the io thread,
  // between tasks; stop outlives its use (pass nullptr to clear it).
  const std::function<bool()>* set_stop_between_tasks(const std::function<bool()>* stop);

  // Timers scheduled and neither run nor cancelled yet.
  size_t pending_timers() const;
  // Tasks posted and not run yet (those posted from other threads included).
  size_t queued_tasks() const;
  boost::asio::io_context& io_context() { return io_; }

 private:
  // Shared (weakly) with the handlers given to Asio, so a handler that Asio
  // runs after this executor is gone finds the queue gone or closed.
  struct TimerQueue;
  struct RunQueue;

  boost::asio::io_context& io_;
  std::shared_ptr<TimerQueue> timers_;
  std::shared_ptr<RunQueue> tasks_;
};

}  // namespace mqlab::env
