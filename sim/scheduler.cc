#include "sim/scheduler.h"

#include <algorithm>
#include <string>

#include "broker/common/assert.h"

namespace mqlab::sim {

EventId Scheduler::schedule_at(Nanos t, env::Task task, OwnerId owner) {
  MQ_ASSERT_MSG(t >= now_, "event due at " + std::to_string(t) + " before now " + std::to_string(now_));
  MQ_ASSERT(task != nullptr);
  const EventId id = next_id_++;
  Owner& state = owner_state(owner);
  // A dead owner's code must not run again, not even code it queued while
  // dying (a destructor's post, a completion the disk routes to it).
  if (!state.alive) return id;
  if (!state.paused) order_.emplace(t, id);
  events_.emplace(id, Event{t, owner, std::move(task), state.paused});
  if (owner != kWorldOwner) state.pending.insert(id);
  MQ_ASSERT(order_.size() <= events_.size());
  return id;
}

EventId Scheduler::schedule_after(Nanos delay, env::Task task, OwnerId owner) {
  MQ_ASSERT(delay >= 0);
  return schedule_at(now_ + delay, std::move(task), owner);
}

bool Scheduler::cancel(EventId id) {
  if (!events_.contains(id)) return false;
  take(id);
  return true;
}

OwnerId Scheduler::owner_of(EventId id) const {
  const auto it = events_.find(id);
  MQ_ASSERT(it != events_.end());
  return it->second.owner;
}

OwnerId Scheduler::add_owner() {
  owners_.push_back(Owner{});
  return owners_.size() - 1;
}

void Scheduler::kill_owner(OwnerId owner) {
  MQ_ASSERT_MSG(owner != kWorldOwner, "the world itself cannot be killed");
  Owner& state = owner_state(owner);
  state.alive = false;
  // Move the tasks out first: destroying one may release objects whose
  // destructors (wrongly) schedule more work; that work is refused above.
  std::vector<Event> dropped;
  while (!state.pending.empty()) dropped.push_back(take(*state.pending.begin()));
  MQ_ASSERT(state.pending.empty());
}

void Scheduler::pause_owner(OwnerId owner) {
  MQ_ASSERT_MSG(owner != kWorldOwner, "the world itself cannot be paused");
  Owner& state = owner_state(owner);
  if (!state.alive || state.paused) return;
  state.paused = true;
  for (EventId id : state.pending) {
    Event& event = events_.at(id);
    MQ_ASSERT(!event.held);
    order_.erase({event.due, id});
    event.held = true;
  }
}

void Scheduler::resume_owner(OwnerId owner) {
  Owner& state = owner_state(owner);
  if (!state.alive || !state.paused) return;
  state.paused = false;
  for (EventId id : state.pending) {
    Event& event = events_.at(id);
    MQ_ASSERT(event.held);
    event.held = false;
    event.due = std::max(event.due, now_);  // what fell due while stopped runs now
    order_.emplace(event.due, id);
  }
}

bool Scheduler::owner_paused(OwnerId owner) const {
  MQ_ASSERT(owner < owners_.size());
  return owners_[owner].paused;
}

bool Scheduler::owner_alive(OwnerId owner) const {
  MQ_ASSERT(owner < owners_.size());
  return owners_[owner].alive;
}

bool Scheduler::run_one() {
  if (order_.empty()) return false;
  const auto [due, id] = *order_.begin();
  MQ_ASSERT(due >= now_);
  Event event = take(id);
  MQ_ASSERT(owners_[event.owner].alive);
  now_ = due;
  ++events_run_;
  event.task();
  return true;
}

void Scheduler::run_until(Nanos t) {
  MQ_ASSERT_MSG(t >= now_, "run_until " + std::to_string(t) + " is before now " + std::to_string(now_));
  while (!order_.empty() && order_.begin()->first <= t) run_one();
  MQ_ASSERT(now_ <= t);
  now_ = t;
}

size_t Scheduler::run_until_idle(size_t max_events) {
  size_t ran = 0;
  while (ran < max_events && run_one()) ++ran;
  return ran;
}

Nanos Scheduler::next_due() const {
  MQ_ASSERT(!order_.empty());
  return order_.begin()->first;
}

Scheduler::Event Scheduler::take(EventId id) {
  auto it = events_.find(id);
  MQ_ASSERT(it != events_.end());
  Event event = std::move(it->second);
  events_.erase(it);
  const size_t erased = event.held ? 0 : order_.erase({event.due, id});
  MQ_ASSERT(erased == (event.held ? 0u : 1u));
  if (event.owner != kWorldOwner) owners_[event.owner].pending.erase(id);
  return event;
}

Scheduler::Owner& Scheduler::owner_state(OwnerId owner) {
  MQ_ASSERT_MSG(owner < owners_.size(), "unknown owner " + std::to_string(owner));
  return owners_[owner];
}

}  // namespace mqlab::sim
