#include "broker/env/asio_executor.h"

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

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

// A FIFO of Tasks in one growable ring. Why not std::deque: it allocates
// and frees a 512-byte block every 8 Tasks (64 bytes each) that pass through
// it; the ring allocates only when it grows past its largest backlog so far.
class TaskRing {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // By rvalue reference, as everything on the post path: each move of a
  // Task is an indirect call, and a post used to make four.
  void push_back(Task&& task) {
    MQ_ASSERT(task != nullptr);
    if (size_ == slots_.size()) grow();
    Task& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    MQ_ASSERT(slot == nullptr);  // popped slots are left empty
    slot = std::move(task);
    ++size_;
  }

  // Requires: !empty().
  Task pop_front() {
    MQ_ASSERT(size_ > 0);
    Task task = std::move(slots_[head_]);  // leaves the slot empty
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    MQ_ASSERT(task != nullptr);
    return task;
  }

 private:
  void grow() {
    const size_t capacity = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<Task> bigger(capacity);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_.swap(bigger);
    head_ = 0;
    MQ_ASSERT((slots_.size() & (slots_.size() - 1)) == 0);  // the index masks need a power of two
  }

  std::vector<Task> slots_;  // empty or a power of two in size
  size_t head_ = 0;          // the oldest task's slot
  size_t size_ = 0;
};

}  // namespace

// The run queue: tasks posted and not yet run, and the one drain handler
// that runs them inside Asio.
struct AsioExecutor::RunQueue : std::enable_shared_from_this<RunQueue> {
  explicit RunQueue(boost::asio::io_context& io_in) : io(io_in) {}

  void post(Task&& task) {
    // A task destroyed while the executor goes (its captures may post) has
    // nowhere to run.
    if (closed) return;
    if (io.get_executor().running_in_this_thread()) {
      post_here(std::move(task));
    } else {
      post_from_elsewhere(std::move(task));
    }
  }

  // On the io thread.
  void post_here(Task&& task) {
    // Posts from other threads that happened before this one run before it.
    if (inbox_filled.load(std::memory_order_acquire)) take_inbox();
    ready.push_back(std::move(task));
    if (!drain_posted) post_drain();
    MQ_ASSERT(drain_posted);
  }

  // From any thread but the io thread: the inbox, and a wake handler when the
  // inbox was empty (a non-empty one has a wake on its way, or was emptied by
  // the io thread after this post's predecessor: then this post's wake comes
  // from its own empty-inbox push).
  void post_from_elsewhere(Task&& task) {
    bool wake = false;
    {
      const std::lock_guard<std::mutex> lock(inbox_mutex);
      wake = inbox.empty();
      inbox.push_back(std::move(task));
      inbox_filled.store(true, std::memory_order_release);
    }
    if (!wake) return;
    boost::asio::post(io, [weak = weak_from_this()] {
      const std::shared_ptr<RunQueue> queue = weak.lock();
      if (!queue || queue->closed) return;
      queue->take_inbox();
      if (!queue->ready.empty() && !queue->drain_posted) queue->post_drain();
    });
  }

  // On the io thread: moves the inbox, in its order, behind the ready tasks.
  void take_inbox() {
    std::vector<Task> taken;
    {
      const std::lock_guard<std::mutex> lock(inbox_mutex);
      taken.swap(inbox);
      inbox_filled.store(false, std::memory_order_relaxed);
    }
    for (Task& task : taken) ready.push_back(std::move(task));
  }

  void post_drain() {
    MQ_ASSERT(!drain_posted);
    drain_posted = true;
    boost::asio::post(io, [weak = weak_from_this()] {
      if (const std::shared_ptr<RunQueue> queue = weak.lock()) queue->drain();
    });
  }

  // One turn: runs ready tasks in order until none is left, kTasksPerTurn
  // ran, or the stop check holds; then, if any is left, queues the next turn
  // behind whatever Asio has ready by now (the reactor, sockets, timers).
  // Tasks posted meanwhile join this turn: drain_posted stays set, so they
  // post no handler of their own.
  void drain() {
    MQ_ASSERT(drain_posted);
    if (closed) return;
    for (int ran = 0; ran < kTasksPerTurn && !ready.empty(); ++ran) {
      const Task task = ready.pop_front();
      task();  // may post (joining this turn), or destroy the executor
      if (closed) return;
      if (stop_between_tasks != nullptr && (*stop_between_tasks)()) break;
    }
    drain_posted = false;
    if (!ready.empty()) post_drain();
  }

  void close() {
    closed = true;
    // Destroyed, not run; a destructor that posts finds the queue closed.
    while (!ready.empty()) ready.pop_front();
    std::vector<Task> dropped;
    {
      const std::lock_guard<std::mutex> lock(inbox_mutex);
      dropped.swap(inbox);
      inbox_filled.store(false, std::memory_order_relaxed);
    }
  }

  size_t size() {
    const std::lock_guard<std::mutex> lock(inbox_mutex);
    return ready.size() + inbox.size();
  }

  boost::asio::io_context& io;
  // io thread only:
  TaskRing ready;             // in run order
  bool drain_posted = false;  // a drain handler is queued or running; holds while ready is not empty
  // The executor is gone; run nothing more. Atomic because post() reads it
  // on any thread (a flush thread may post while the executor goes).
  std::atomic<bool> closed{false};
  const std::function<bool()>* stop_between_tasks = nullptr;
  // Any thread:
  std::mutex inbox_mutex;
  std::vector<Task> inbox;                // posts from other threads, in order; under inbox_mutex
  std::atomic<bool> inbox_filled{false};  // !inbox.empty(), readable without the lock
};

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

AsioExecutor::AsioExecutor(boost::asio::io_context& io)
    : io_(io), timers_(std::make_shared<TimerQueue>(io)), tasks_(std::make_shared<RunQueue>(io)) {}

AsioExecutor::~AsioExecutor() {
  tasks_->close();
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

void AsioExecutor::post(Task&& task) {
  MQ_ASSERT(task != nullptr);
  tasks_->post(std::move(task));
}

const std::function<bool()>* AsioExecutor::set_stop_between_tasks(const std::function<bool()>* stop) {
  return std::exchange(tasks_->stop_between_tasks, stop);
}

TimerId AsioExecutor::run_after(Nanos delay, Task&& task) {
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

size_t AsioExecutor::queued_tasks() const { return tasks_->size(); }

size_t AsioExecutor::pending_timers() const {
  MQ_ASSERT(timers_->due_order.size() == timers_->deadline_by_id.size());
  return timers_->due_order.size();
}

}  // namespace mqlab::env
