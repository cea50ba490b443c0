// The Scheduler's heaps, slots and owner bookkeeping against a plain model: a
// list of pending events run in (due, scheduling order), with owners that may
// be paused, resumed and killed. Random operations on both must run the same
// tasks at the same instants and agree on what is pending.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/scheduler.h"

namespace mqlab::sim::scheduler_prop_test {
namespace {

struct ModelEvent {
  Nanos due = 0;
  uint64_t order = 0;  // scheduling order
  OwnerId owner = kWorldOwner;
  int label = 0;
  EventId id = kNoEvent;
  bool pending = true;
};

struct ModelOwner {
  bool alive = true;
  bool paused = false;
};

class Model {
 public:
  explicit Model(size_t owners) : owners_(owners + 1) {}

  // Whether the event is accepted (its owner is alive).
  bool schedule(Nanos due, OwnerId owner, int label, EventId id) {
    if (!owners_[owner].alive) return false;
    events_.push_back(ModelEvent{due, next_order_++, owner, label, id, true});
    return true;
  }
  bool cancel(EventId id) {
    for (ModelEvent& event : events_) {
      if (event.id == id && event.pending) {
        event.pending = false;
        return true;
      }
    }
    return false;
  }
  bool is_pending(EventId id) const {
    return std::any_of(events_.begin(), events_.end(), [id](const ModelEvent& e) { return e.id == id && e.pending; });
  }
  void kill(OwnerId owner) {
    owners_[owner].alive = false;
    for (ModelEvent& event : events_) {
      if (event.owner == owner) event.pending = false;
    }
  }
  void pause(OwnerId owner) {
    if (owners_[owner].alive) owners_[owner].paused = true;
  }
  void resume(OwnerId owner) {
    if (!owners_[owner].alive || !owners_[owner].paused) return;
    owners_[owner].paused = false;
    for (ModelEvent& event : events_) {
      if (event.owner == owner && event.pending) event.due = std::max(event.due, now_);
    }
  }
  // The next runnable event, if any.
  ModelEvent* next() {
    ModelEvent* best = nullptr;
    for (ModelEvent& event : events_) {
      if (!event.pending || owners_[event.owner].paused) continue;
      if (best == nullptr || std::tie(event.due, event.order) < std::tie(best->due, best->order)) best = &event;
    }
    return best;
  }
  std::optional<int> run_one() {
    ModelEvent* event = next();
    if (event == nullptr) return std::nullopt;
    event->pending = false;
    now_ = event->due;
    return event->label;
  }
  size_t runnable() {
    size_t count = 0;
    for (const ModelEvent& event : events_) count += event.pending && !owners_[event.owner].paused ? 1 : 0;
    return count;
  }
  Nanos now() const { return now_; }
  void set_now(Nanos now) { now_ = now; }

 private:
  std::vector<ModelEvent> events_;
  std::vector<ModelOwner> owners_;
  uint64_t next_order_ = 0;
  Nanos now_ = 0;
};

RC_GTEST_PROP(SchedulerModel, RandomOperationsMatchTheModel, ()) {
  constexpr size_t kOwners = 3;
  // Where the near heap ends: every delay below is far, some are, or none
  // (the default): the order must not depend on it.
  const Nanos far_after = *rc::gen::element<Nanos>(0, 15, 25, Scheduler::kDefaultFarAfter);
  Scheduler scheduler(far_after);
  Model model(kOwners);
  std::vector<OwnerId> owners = {kWorldOwner};
  for (size_t i = 0; i < kOwners; ++i) owners.push_back(scheduler.add_owner());
  std::vector<EventId> ids;
  std::vector<int> ran;           // labels in the order the scheduler ran them
  std::vector<int> expected_ran;  // ... and the model
  int next_label = 0;

  const auto steps = *rc::gen::inRange(1, 200);
  for (int step = 0; step < steps; ++step) {
    const OwnerId owner = owners[*rc::gen::inRange<size_t>(0, owners.size())];
    switch (*rc::gen::inRange(0, 10)) {
      case 0:
      case 1:
      case 2: {
        // Few distinct delays, so same-instant ties are common.
        const Nanos due = scheduler.now() + *rc::gen::inRange<Nanos>(0, 5) * 10;
        const int label = next_label++;
        const EventId id = scheduler.schedule_at(due, [&ran, label] { ran.push_back(label); }, owner);
        RC_ASSERT(id != kNoEvent);
        RC_ASSERT(model.schedule(due, owner, label, id) == scheduler.is_pending(id));
        ids.push_back(id);
        break;
      }
      case 3:
        if (!ids.empty()) {
          const EventId id = ids[*rc::gen::inRange<size_t>(0, ids.size())];
          RC_ASSERT(scheduler.cancel(id) == model.cancel(id));
        }
        break;
      case 4:
        if (owner != kWorldOwner) {
          scheduler.pause_owner(owner);
          model.pause(owner);
        }
        break;
      case 5:
        scheduler.resume_owner(owner);
        model.resume(owner);
        break;
      case 6:
        if (owner != kWorldOwner && *rc::gen::inRange(0, 4) == 0) {
          scheduler.kill_owner(owner);
          model.kill(owner);
        }
        break;
      case 7: {
        const Nanos until = scheduler.now() + *rc::gen::inRange<Nanos>(0, 30);
        scheduler.run_until(until);
        while (model.next() != nullptr && model.next()->due <= until) expected_ran.push_back(*model.run_one());
        model.set_now(until);
        break;
      }
      default: {
        const std::optional<int> expected = model.run_one();
        if (expected) expected_ran.push_back(*expected);
        RC_ASSERT(scheduler.run_one() == expected.has_value());
        break;
      }
    }
    RC_ASSERT(ran == expected_ran);
    RC_ASSERT(scheduler.now() == model.now());
    RC_ASSERT(scheduler.pending_count() == model.runnable());
    if (model.runnable() > 0) RC_ASSERT(scheduler.next_due() == model.next()->due);
    for (const EventId id : ids) RC_ASSERT(scheduler.is_pending(id) == model.is_pending(id));
  }
}

}  // namespace
}  // namespace mqlab::sim::scheduler_prop_test
