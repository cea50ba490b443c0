// Scheduler: the simulated world's one clock and one event queue.
//
// Virtual time is an int64 count of nanoseconds that starts at 0 and moves
// only when the scheduler dispatches an event (or run_until() is told to), so
// idle time costs nothing: the clock jumps to the next event. Events are
// ordered by (due time, sequence number); the sequence number is handed out
// in scheduling order, so events due at the same instant run in the order
// they were scheduled. An EventId is the sequence number with the event's
// slot in its low bits: ids still grow in scheduling order, and cancel()
// finds an event without a search.
//
// Every event has an owner. kWorldOwner is the simulator itself (device
// completions, kernel writeback, fault schedules) and is never killed. Each
// incarnation of a simulated process is a fresh owner from add_owner();
// kill_owner() drops that owner's pending events at once and refuses any it
// would schedule later, so a killed process runs no more code and nothing of
// it gets a last word. A restart is a new owner, never a revived one.
//
// Layout, for speed (a run dispatches millions of events): pending events
// live in a slab of slots reused through a free list, and the queue is two
// binary min-heaps of (due, event id) entries, 16 bytes (an id orders as
// its sequence and holds its slot): the near heap for events due within
// far_after of when they were scheduled (a chunk's delivery, a disk's
// completion), the far heap for the rest (timers, periodic tasks, a
// producer's next arrival). The next event is the smaller of the two tops,
// so the order is exactly one heap's; the split only keeps the few near
// events, which come and go several times a message, from climbing past
// and sinking under the many far ones (the standard scenario: 61 entries
// on average, 70% of the pushes near). Each slot knows its heap and
// position, so cancel() removes its entry at once. Events due at the
// current instant (post(), completions) are most of a run's events: they
// skip the heaps and go to the now-queue, a FIFO whose entries are all due
// now() in sequence order; run_one() takes the smallest (due, sequence) of
// the heaps' tops and the now-queue's front, so the order is exactly one
// heap's alone. A now-queue entry whose slot was released or paused is
// stale (skipped when reached). A paused owner's events are out of both
// (held). Killing and pausing walk the slab: they are rare, and the slab is
// as large as the most events ever pending at once.
//
// Invariants:
//   - now() never decreases; no event is ever due before now().
//   - every queued event belongs to kWorldOwner or to a live owner.
//   - a slot is in one heap or the now-queue iff it holds an event whose
//     owner is not paused; every live now-queue entry is due now().
//   - behaviour depends on nothing but the calls made: no wall clock, no
//     threads, no iteration over unordered containers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/types.h"
#include "broker/env/env.h"

namespace mqlab::sim {

using EventId = uint64_t;
constexpr EventId kNoEvent = 0;

using OwnerId = uint64_t;
constexpr OwnerId kWorldOwner = 0;

class Scheduler {
 public:
  // Events due more than this after they are scheduled go to the far heap
  // (the file comment): a millisecond, past a simulated network's latency
  // and short of the producers' gaps and every timer.
  static constexpr Nanos kDefaultFarAfter = 1'000'000;

  Scheduler() = default;
  // far_after: as kDefaultFarAfter; any value gives the same order (tests
  // pick one that splits their events).
  explicit Scheduler(Nanos far_after) : far_after_(far_after) { MQ_ASSERT(far_after >= 0); }
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Nanos now() const { return now_; }

  // Queues task to run at time t on behalf of owner. Requires: t >= now().
  // Returns a non-zero id. When owner is dead the task is dropped at once and
  // the id is one that cancel() reports as not pending. The task is taken
  // by reference and always consumed: by value, it was relocated once more
  // on its way into its slot, for every event of a run (0.7% of them).
  EventId schedule_at(Nanos t, env::Task&& task, OwnerId owner = kWorldOwner);
  // schedule_at(now() + delay, ...). Requires: delay >= 0.
  EventId schedule_after(Nanos delay, env::Task&& task, OwnerId owner = kWorldOwner);
  // Drops a pending event; returns whether it was pending.
  bool cancel(EventId id);
  bool is_pending(EventId id) const { return pending_slot(id) != nullptr; }
  // The owner of a pending event. Requires: is_pending(id).
  OwnerId owner_of(EventId id) const;

  // A fresh owner (a process incarnation), alive until kill_owner().
  OwnerId add_owner();
  // Drops every pending event of owner and every event it schedules later.
  // Requires: owner was returned by add_owner(). Killing twice is harmless.
  void kill_owner(OwnerId owner);
  // Inline: asked about every delivery and disk completion.
  bool owner_alive(OwnerId owner) const {
    MQ_ASSERT(owner < owners_.size());
    return owners_[owner].alive;
  }
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
  // Runs events one at a time until done() holds or limit of virtual time
  // has passed (then now() is at the deadline, even when idle); returns
  // done(). The tests' "run the world until X" loop.
  bool run_until_true(const std::function<bool()>& done, Nanos limit);
  // Runs events until none is pending or max_events have run; returns how many
  // ran. A caller that must reach idle checks pending_count() == 0 after.
  size_t run_until_idle(size_t max_events = std::numeric_limits<size_t>::max());

  size_t pending_count() const { return near_heap_.size() + far_heap_.size() + now_live_; }  // runnable (not held)
  // Due time of the earliest pending event. Requires: pending_count() > 0.
  Nanos next_due() const;
  uint64_t events_run() const { return events_run_; }

 private:
  using SlotIndex = uint32_t;
  static constexpr int kSlotBits = 24;  // at most 16 M events pending at once
  static constexpr SlotIndex kNoSlot = (SlotIndex{1} << kSlotBits) - 1;  // ids of refused events
  static constexpr uint32_t kHeld = std::numeric_limits<uint32_t>::max();  // heap position of a held event
  static constexpr uint32_t kInNowQueue = kHeld - 1;                       // heap position of a now-queue event
  // A heap position's top bit: the far heap's (below it, the index in it).
  static constexpr uint32_t kFarHeapBit = uint32_t{1} << 31;

  struct Slot {
    env::Task task;
    Nanos due = 0;
    uint64_t sequence = 0;  // 0: the slot is free
    OwnerId owner = kWorldOwner;
    uint32_t heap_position = kHeld;  // kHeld, kInNowQueue, or an index in a heap (kFarHeapBit: the far one)
    SlotIndex next_free = kNoSlot;
  };
  // 16 bytes: the event's id orders as its sequence (the sequence is its
  // high bits) and holds its slot.
  struct HeapEntry {
    Nanos due;
    EventId id;
    uint64_t sequence() const { return id >> kSlotBits; }
    SlotIndex slot() const { return static_cast<SlotIndex>(id & kNoSlot); }
    bool operator<(const HeapEntry& other) const { return due != other.due ? due < other.due : id < other.id; }
  };
  struct NowEntry {
    EventId id;
    uint64_t sequence() const { return id >> kSlotBits; }
    SlotIndex slot() const { return static_cast<SlotIndex>(id & kNoSlot); }
  };
  struct Owner {
    bool alive = true;
    bool paused = false;
  };

  static EventId event_id(uint64_t sequence, SlotIndex slot) { return (sequence << kSlotBits) | slot; }
  // The slot of a pending event, or nullptr.
  const Slot* pending_slot(EventId id) const;
  // The slots of owner's pending events, in sequence order.
  std::vector<SlotIndex> slots_of(OwnerId owner) const;

  // The helpers an event passes through on its way in and out are always
  // inlined (defined inline in scheduler.cc, their one user): gcc had kept
  // them as calls (their assertions' message building counts against
  // inlining), and the calls, their saved registers and a task returned
  // through memory cost 80 instructions an event; inlined, the standard
  // scenario ran 1.4% fewer instructions. The sifts stay calls.
  [[gnu::always_inline]] SlotIndex allocate_slot();
  // Frees a pending event's slot (out of the heap) and returns its task.
  [[gnu::always_inline]] env::Task release(SlotIndex slot);
  // Into the near or the far heap, by how far off the event is due.
  [[gnu::always_inline]] void heap_push(SlotIndex slot);
  // Queues a runnable event: the now-queue when it is due now, else a heap.
  [[gnu::always_inline]] void enqueue(SlotIndex slot);
  // Drops stale entries from the now-queue's front; whether a live one is there.
  [[gnu::always_inline]] bool now_queue_front_live();
  // The heap holding the runnable event due first, or nullptr when both are empty.
  const std::vector<HeapEntry>* first_heap() const;
  // Removes the entry at an encoded heap position (kFarHeapBit and index).
  [[gnu::always_inline]] void heap_remove(uint32_t position);
  void sift_up(std::vector<HeapEntry>& heap, uint32_t position);
  void sift_down(std::vector<HeapEntry>& heap, uint32_t position);
  void place(std::vector<HeapEntry>& heap, uint32_t position, const HeapEntry& entry);
  [[gnu::always_inline]] Owner& owner_state(OwnerId owner);

  Nanos far_after_ = kDefaultFarAfter;
  Nanos now_ = 0;
  uint64_t next_sequence_ = 1;
  uint64_t events_run_ = 0;
  // The queue: runnable events by (due, sequence), in two heaps (the file comment).
  std::vector<HeapEntry> near_heap_;
  std::vector<HeapEntry> far_heap_;
  std::vector<NowEntry> now_queue_;    // runnable events due now(), by sequence, from now_head_
  size_t now_head_ = 0;
  size_t now_live_ = 0;                // entries of now_queue_ still pending
  std::vector<Slot> slots_;            // every pending event, held ones included
  SlotIndex free_slots_ = kNoSlot;     // head of the free list through Slot::next_free
  std::vector<Owner> owners_{Owner{}};  // indexed by OwnerId; [0] is the world
};

}  // namespace mqlab::sim
