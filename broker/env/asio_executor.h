// AsioExecutor: the real broker core's executor, an env::Executor over one
// Boost.Asio io_context run by one thread.
//
// Threading: post() is the one entry point that may be called from any thread
// (the flush thread posts sync completions through the io_context directly, a
// network thread could post here). run_after() and cancel() belong to the
// thread running the io_context, or to the setup code before it runs.
//
// Invariants:
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

#include <memory>

#include "broker/env/asio.h"
#include "broker/env/env.h"

namespace mqlab::env {

class AsioExecutor final : public Executor {
 public:
  // Requires: io outlives this executor.
  explicit AsioExecutor(boost::asio::io_context& io);
  // Drops every pending timer and posted task without running it.
  ~AsioExecutor() override;

  AsioExecutor(const AsioExecutor&) = delete;
  AsioExecutor& operator=(const AsioExecutor&) = delete;

  void post(Task task) override;
  TimerId run_after(Nanos delay, Task task) override;
  bool cancel(TimerId id) override;

  // Timers scheduled and neither run nor cancelled yet.
  size_t pending_timers() const;
  boost::asio::io_context& io_context() { return io_; }

 private:
  // Shared (weakly) with the handlers given to Asio, so a handler that Asio
  // runs after this executor is gone finds the queue gone or closed.
  struct TimerQueue;

  boost::asio::io_context& io_;
  std::shared_ptr<TimerQueue> timers_;
};

}  // namespace mqlab::env
