// Scheduler: the simulated world's one clock and one event queue.
//
// Virtual time is an int64 count of nanoseconds that starts at 0 and moves
// only when the scheduler dispatches an event (or run_until() is told to), so
// idle time costs nothing: the clock jumps to the next event. Events are
// ordered by (due time, sequence number); the sequence number is the event id,
// handed out in scheduling order, so events due at the same instant run in the
// order they were scheduled.
//
// Every event has an owner. kWorldOwner is the simulator itself (device
// completions, kernel writeback, fault schedules) and is never killed. Each
// incarnation of a simulated process is a fresh owner from add_owner();
// kill_owner() drops that owner's pending events at once and refuses any it
// would schedule later, so a killed process runs no more code and nothing of
// it gets a last word. A restart is a new owner, never a revived one.
//
// Invariants:
//   - now() never decreases; no event is ever due before now().
//   - every queued event belongs to kWorldOwner or to a live owner.
//   - behaviour depends on nothing but the calls made: no wall clock, no
//     threads, no iteration over unordered containers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "broker/common/types.h"
#include "broker/env/env.h"

namespace mqlab::sim {

using EventId = uint64_t;
constexpr EventId kNoEvent = 0;

using OwnerId = uint64_t;
constexpr OwnerId kWorldOwner = 0;

class Scheduler {
 public:
  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Nanos now() const { return now_; }

  // Queues task to run at time t on behalf of owner. Requires: t >= now().
  // Returns a non-zero id. When owner is dead the task is dropped at once and
  // the id is one that cancel() reports as not pending.
  EventId schedule_at(Nanos t, env::Task task, OwnerId owner = kWorldOwner);
  // schedule_at(now() + delay, ...). Requires: delay >= 0.
  EventId schedule_after(Nanos delay, env::Task task, OwnerId owner = kWorldOwner);
  // Drops a pending event; returns whether it was pending.
  bool cancel(EventId id);
  bool is_pending(EventId id) const { return events_.contains(id); }
  // The owner of a pending event. Requires: is_pending(id).
  OwnerId owner_of(EventId id) const;

  // A fresh owner (a process incarnation), alive until kill_owner().
  OwnerId add_owner();
  // Drops every pending event of owner and every event it schedules later.
  // Requires: owner was returned by add_owner(). Killing twice is harmless.
  void kill_owner(OwnerId owner);
  bool owner_alive(OwnerId owner) const;
  // SIGSTOP: the owner's events (pending and newly scheduled) are held, not
  // run, until resume_owner(); then each runs at max(its due time, now), in
  // (due, id) order. Killing a paused owner drops its held events too.
  void pause_owner(OwnerId owner);
  void resume_owner(OwnerId owner);
  bool owner_paused(OwnerId owner) const;

  // Runs the earliest pending event, advancing now() to its due time.
  // Returns false when nothing is pending.
  bool run_one();
  // Runs every event due at or before t, then sets now() to t even when idle.
  // Requires: t >= now().
  void run_until(Nanos t);
  void run_for(Nanos duration) { run_until(now_ + duration); }
  // Runs events until none is pending or max_events have run; returns how many
  // ran. A caller that must reach idle checks pending_count() == 0 after.
  size_t run_until_idle(size_t max_events = std::numeric_limits<size_t>::max());

  size_t pending_count() const { return order_.size(); }  // runnable (not held)
  // Due time of the earliest pending event. Requires: pending_count() > 0.
  Nanos next_due() const;
  uint64_t events_run() const { return events_run_; }

 private:
  struct Event {
    Nanos due = 0;
    OwnerId owner = kWorldOwner;
    env::Task task;
    bool held = false;  // its owner is paused: not in order_
  };
  struct Owner {
    bool alive = true;
    bool paused = false;
    std::set<EventId> pending;  // ordered, so a purge is deterministic
  };

  // Unlinks a pending event from every index and returns it.
  Event take(EventId id);
  Owner& owner_state(OwnerId owner);

  Nanos now_ = 0;
  EventId next_id_ = 1;
  uint64_t events_run_ = 0;
  std::set<std::pair<Nanos, EventId>> order_;  // the queue: (due, id)
  std::map<EventId, Event> events_;            // every pending event by id
  std::vector<Owner> owners_{Owner{}};         // indexed by OwnerId; [0] is the world
};

}  // namespace mqlab::sim
