#include "sim/scheduler.h"

#include <algorithm>
#include <string>

#include "broker/common/assert.h"

namespace mqlab::sim {

EventId Scheduler::schedule_at(Nanos t, env::Task&& task, OwnerId owner) {
  MQ_ASSERT_MSG(t >= now_, "event due at " + std::to_string(t) + " before now " + std::to_string(now_));
  MQ_ASSERT(task != nullptr);
  const uint64_t sequence = next_sequence_++;
  MQ_ASSERT(sequence < (uint64_t{1} << (64 - kSlotBits)));
  const Owner& state = owner_state(owner);
  // A dead owner's code must not run again, not even code it queued while
  // dying (a destructor's post, a completion the disk routes to it).
  if (!state.alive) {
    const env::Task dropped = std::move(task);  // taken by reference: dropped here, whatever the caller passed
    return event_id(sequence, kNoSlot);
  }
  const SlotIndex index = allocate_slot();
  Slot& slot = slots_[index];
  slot.task = std::move(task);
  slot.due = t;
  slot.sequence = sequence;
  slot.owner = owner;
  slot.heap_position = kHeld;
  if (!state.paused) enqueue(index);
  return event_id(sequence, index);
}

EventId Scheduler::schedule_after(Nanos delay, env::Task&& task, OwnerId owner) {
  MQ_ASSERT(delay >= 0);
  return schedule_at(now_ + delay, std::move(task), owner);
}

bool Scheduler::cancel(EventId id) {
  if (pending_slot(id) == nullptr) return false;
  // Destroyed here, after the event is unlinked: its destructor may call back.
  const env::Task dropped = release(static_cast<SlotIndex>(id & kNoSlot));
  return true;
}

OwnerId Scheduler::owner_of(EventId id) const {
  const Slot* slot = pending_slot(id);
  MQ_ASSERT(slot != nullptr);
  return slot->owner;
}

OwnerId Scheduler::add_owner() {
  owners_.push_back(Owner{});
  return owners_.size() - 1;
}

void Scheduler::kill_owner(OwnerId owner) {
  MQ_ASSERT_MSG(owner != kWorldOwner, "the world itself cannot be killed");
  Owner& state = owner_state(owner);
  state.alive = false;
  // Move the tasks out first, in scheduling order: destroying one may
  // release objects whose destructors (wrongly) schedule more work; that work
  // is refused above.
  std::vector<env::Task> dropped;
  for (const SlotIndex index : slots_of(owner)) dropped.push_back(release(index));
  MQ_ASSERT(slots_of(owner).empty());
}

void Scheduler::pause_owner(OwnerId owner) {
  MQ_ASSERT_MSG(owner != kWorldOwner, "the world itself cannot be paused");
  Owner& state = owner_state(owner);
  if (!state.alive || state.paused) return;
  state.paused = true;
  for (const SlotIndex index : slots_of(owner)) {
    Slot& slot = slots_[index];
    MQ_ASSERT(slot.heap_position != kHeld);
    if (slot.heap_position == kInNowQueue) {
      slot.heap_position = kHeld;  // its now-queue entry is stale from here
      --now_live_;
    } else {
      heap_remove(slot.heap_position);
    }
    MQ_ASSERT(slot.heap_position == kHeld);
  }
}

void Scheduler::resume_owner(OwnerId owner) {
  Owner& state = owner_state(owner);
  if (!state.alive || !state.paused) return;
  state.paused = false;
  for (const SlotIndex index : slots_of(owner)) {
    Slot& slot = slots_[index];
    MQ_ASSERT(slot.heap_position == kHeld);
    slot.due = std::max(slot.due, now_);  // what fell due while stopped runs now
    heap_push(index);  // not the now-queue: its sequence is older than entries there
  }
}

bool Scheduler::owner_paused(OwnerId owner) const {
  MQ_ASSERT(owner < owners_.size());
  return owners_[owner].paused;
}

bool Scheduler::run_one() {
  const bool now_ready = now_queue_front_live();
  const std::vector<HeapEntry>* const heap = first_heap();
  if (now_ready) {
    const NowEntry front = now_queue_[now_head_];
    // The heaps' first runs first only when it too is due now and older.
    if (heap == nullptr || heap->front().due > now_ || heap->front().id > front.id) {
      MQ_ASSERT(owners_[slots_[front.slot()].owner].alive);
      ++now_head_;
      const env::Task task = release(front.slot());
      ++events_run_;
      task();
      return true;
    }
  }
  if (heap == nullptr) return false;
  const HeapEntry top = heap->front();
  MQ_ASSERT(top.due >= now_);
  MQ_ASSERT(slots_[top.slot()].sequence == top.sequence());
  MQ_ASSERT(owners_[slots_[top.slot()].owner].alive);
  if (top.due > now_) {
    // Time moves on: whatever the now-queue still holds is stale.
    MQ_ASSERT(now_live_ == 0);
    now_queue_.clear();
    now_head_ = 0;
  }
  const env::Task task = release(top.slot());
  now_ = top.due;
  ++events_run_;
  task();
  return true;
}

bool Scheduler::run_until_true(const std::function<bool()>& done, Nanos limit) {
  const Nanos deadline = now_ + limit;
  while (!done()) {
    if (pending_count() == 0 || next_due() > deadline) {
      run_until(std::max(deadline, now_));
      return done();
    }
    run_one();
  }
  return true;
}

void Scheduler::run_until(Nanos t) {
  MQ_ASSERT_MSG(t >= now_, "run_until " + std::to_string(t) + " is before now " + std::to_string(now_));
  while (true) {
    const std::vector<HeapEntry>* const heap = first_heap();
    if (now_live_ == 0 && (heap == nullptr || heap->front().due > t)) break;
    run_one();
  }
  now_queue_.clear();  // only stale entries are left
  now_head_ = 0;
  MQ_ASSERT(now_ <= t);
  now_ = t;
}

size_t Scheduler::run_until_idle(size_t max_events) {
  size_t ran = 0;
  while (ran < max_events && run_one()) ++ran;
  return ran;
}

Nanos Scheduler::next_due() const {
  MQ_ASSERT(pending_count() > 0);
  if (now_live_ > 0) return now_;
  return first_heap()->front().due;
}

// --- slots --------------------------------------------------------------------

const Scheduler::Slot* Scheduler::pending_slot(EventId id) const {
  const auto index = static_cast<SlotIndex>(id & kNoSlot);
  if (index >= slots_.size()) return nullptr;  // kNoSlot included: a refused event
  const Slot& slot = slots_[index];
  return slot.sequence != 0 && slot.sequence == (id >> kSlotBits) ? &slot : nullptr;
}

std::vector<Scheduler::SlotIndex> Scheduler::slots_of(OwnerId owner) const {
  std::vector<SlotIndex> found;
  for (SlotIndex index = 0; index < slots_.size(); ++index) {
    if (slots_[index].sequence != 0 && slots_[index].owner == owner) found.push_back(index);
  }
  std::sort(found.begin(), found.end(),
            [this](SlotIndex a, SlotIndex b) { return slots_[a].sequence < slots_[b].sequence; });
  return found;
}

inline Scheduler::SlotIndex Scheduler::allocate_slot() {
  if (free_slots_ != kNoSlot) {
    const SlotIndex index = free_slots_;
    free_slots_ = slots_[index].next_free;
    MQ_ASSERT(slots_[index].sequence == 0);
    return index;
  }
  MQ_ASSERT_MSG(slots_.size() < kNoSlot, "more than " + std::to_string(kNoSlot) + " events pending at once");
  slots_.emplace_back();
  return static_cast<SlotIndex>(slots_.size() - 1);
}

inline env::Task Scheduler::release(SlotIndex index) {
  Slot& slot = slots_[index];
  MQ_ASSERT(slot.sequence != 0);
  if (slot.heap_position == kInNowQueue) {
    MQ_ASSERT(now_live_ > 0);
    --now_live_;  // its entry, if not yet taken, is stale from here
    slot.heap_position = kHeld;
  } else if (slot.heap_position != kHeld) {
    heap_remove(slot.heap_position);
  }
  MQ_ASSERT(slot.heap_position == kHeld);
  env::Task task = std::move(slot.task);
  slot.task = nullptr;
  slot.sequence = 0;
  slot.next_free = free_slots_;
  free_slots_ = index;
  return task;
}

// --- the queues ---------------------------------------------------------------

inline void Scheduler::enqueue(SlotIndex index) {
  Slot& slot = slots_[index];
  MQ_ASSERT(slot.heap_position == kHeld);
  if (slot.due != now_) return heap_push(index);
  // Its sequence is the newest: it belongs at the now-queue's back.
  MQ_ASSERT(now_queue_.size() == now_head_ || now_queue_.back().sequence() < slot.sequence);
  now_queue_.push_back(NowEntry{event_id(slot.sequence, index)});
  slot.heap_position = kInNowQueue;
  ++now_live_;
}

inline bool Scheduler::now_queue_front_live() {
  while (now_head_ < now_queue_.size()) {
    const NowEntry& front = now_queue_[now_head_];
    const Slot& slot = slots_[front.slot()];
    if (slot.sequence == front.sequence() && slot.heap_position == kInNowQueue) {
      MQ_ASSERT(slot.due == now_);
      return true;
    }
    ++now_head_;  // released, or paused (and maybe resumed into the heap)
  }
  now_queue_.clear();
  now_head_ = 0;
  MQ_ASSERT(now_live_ == 0);
  return false;
}

inline void Scheduler::heap_push(SlotIndex index) {
  const Slot& slot = slots_[index];
  MQ_ASSERT(slot.heap_position == kHeld);
  MQ_ASSERT(slot.due >= now_);
  std::vector<HeapEntry>& heap = slot.due - now_ > far_after_ ? far_heap_ : near_heap_;
  MQ_ASSERT(heap.size() < (uint32_t{1} << kSlotBits));  // positions stay clear of kFarHeapBit and the sentinels
  heap.push_back(HeapEntry{slot.due, event_id(slot.sequence, index)});
  sift_up(heap, static_cast<uint32_t>(heap.size() - 1));
}

const std::vector<Scheduler::HeapEntry>* Scheduler::first_heap() const {
  if (near_heap_.empty()) return far_heap_.empty() ? nullptr : &far_heap_;
  if (far_heap_.empty()) return &near_heap_;
  return far_heap_.front() < near_heap_.front() ? &far_heap_ : &near_heap_;
}

inline void Scheduler::heap_remove(uint32_t encoded) {
  std::vector<HeapEntry>& heap = (encoded & kFarHeapBit) != 0 ? far_heap_ : near_heap_;
  const uint32_t position = encoded & ~kFarHeapBit;
  MQ_ASSERT(position < heap.size());
  slots_[heap[position].slot()].heap_position = kHeld;
  const HeapEntry last = heap.back();
  heap.pop_back();
  if (position == heap.size()) return;  // it was the last entry
  place(heap, position, last);
  // The moved entry may belong above or below its new position.
  if (position > 0 && last < heap[(position - 1) / 2]) {
    sift_up(heap, position);
  } else {
    sift_down(heap, position);
  }
}

void Scheduler::sift_up(std::vector<HeapEntry>& heap, uint32_t position) {
  const HeapEntry entry = heap[position];
  while (position > 0) {
    const uint32_t parent = (position - 1) / 2;
    if (!(entry < heap[parent])) break;
    place(heap, position, heap[parent]);
    position = parent;
  }
  place(heap, position, entry);
}

void Scheduler::sift_down(std::vector<HeapEntry>& heap, uint32_t position) {
  const HeapEntry entry = heap[position];
  const auto size = static_cast<uint32_t>(heap.size());
  while (true) {
    uint32_t child = 2 * position + 1;
    if (child >= size) break;
    if (child + 1 < size && heap[child + 1] < heap[child]) ++child;
    if (!(heap[child] < entry)) break;
    place(heap, position, heap[child]);
    position = child;
  }
  place(heap, position, entry);
}

void Scheduler::place(std::vector<HeapEntry>& heap, uint32_t position, const HeapEntry& entry) {
  heap[position] = entry;
  slots_[entry.slot()].heap_position = &heap == &far_heap_ ? position | kFarHeapBit : position;
}

inline Scheduler::Owner& Scheduler::owner_state(OwnerId owner) {
  MQ_ASSERT_MSG(owner < owners_.size(), "unknown owner " + std::to_string(owner));
  return owners_[owner];
}

}  // namespace mqlab::sim
