// Task: a move-only `void()` callable with inline storage, what an Executor
// runs.
//
// Why not std::function: every event the simulator dispatches is a Task, and
// std::function heap-allocates any capture larger than two pointers, which a
// `[this, connection, frame]` lambda always is; a run of the standard
// scenario made ~13 allocations per message that way. A Task keeps captures
// of up to kInlineBytes inside itself and falls back to the heap only for
// larger ones (or for a callable whose move may throw). Move-only, so a
// capture may hold a unique_ptr or another Task.
//
// Invariants:
//   - an empty Task has ops_ == nullptr; a non-empty one holds exactly one
//     callable, inline (ops_->inline_storage) or behind heap_.
//   - a moved-from Task is empty.
//   - invoking an empty Task is a bug (asserted), as for std::function it
//     would throw bad_function_call.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::env {

template <class F>
constexpr bool kIsStdFunction = false;
template <class Signature>
constexpr bool kIsStdFunction<std::function<Signature>> = true;

class Task {
 public:
  // Room for the hot captures: a `this`, a shared_ptr and a std::function
  // (8 + 16 + 32), or a few handles and sizes. Makes a Task 64 bytes.
  static constexpr size_t kInlineBytes = 56;
  // Pointer alignment, not max_align_t (16): a 16-aligned buffer would pad
  // the Task to 80 bytes for captures that almost never need it.
  static constexpr size_t kInlineAlign = alignof(void*);

  // Whether a callable of type F is stored inside the Task (no allocation).
  template <class F>
  static constexpr bool fits_inline = sizeof(F) <= kInlineBytes && alignof(F) <= kInlineAlign &&
                                      std::is_nothrow_move_constructible_v<F>;

  Task() noexcept = default;
  Task(std::nullptr_t) noexcept {}  // NOLINT: as std::function, so `Task t = nullptr` reads naturally

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Task> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  Task(F&& callable) {  // NOLINT: implicit, as std::function's, so lambdas convert at every call site
    using Stored = std::decay_t<F>;
    if constexpr (std::is_pointer_v<Stored> || std::is_member_pointer_v<Stored> || kIsStdFunction<Stored>) {
      // A null function pointer or an empty std::function makes an empty
      // Task, as it would an empty std::function.
      if (callable == nullptr) return;
    }
    if constexpr (fits_inline<Stored>) {
      ::new (static_cast<void*>(storage_)) Stored(std::forward<F>(callable));
      ops_ = &kInlineOps<Stored>;
    } else {
      heap_ = new Stored(std::forward<F>(callable));
      ops_ = &kHeapOps<Stored>;
    }
  }

  Task(Task&& other) noexcept { take(other); }
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Task& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  // Const, as std::function's: the callable itself may change its captures.
  void operator()() const {
    MQ_ASSERT_MSG(ops_ != nullptr, "an empty Task was run");
    ops_->invoke(const_cast<Task&>(*this));
  }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  friend bool operator==(const Task& task, std::nullptr_t) noexcept { return task.ops_ == nullptr; }
  // Whether this Task's callable lives on the heap: for tests that pin the
  // hot call sites to inline storage.
  bool on_heap() const noexcept { return ops_ != nullptr && !ops_->inline_storage; }

 private:
  struct Ops {
    void (*invoke)(Task& self);
    // Moves the callable from `from` into the empty `to` and leaves `from`'s
    // storage destroyed (inline) or handed over (heap).
    void (*relocate)(Task& from, Task& to) noexcept;
    void (*destroy)(Task& self) noexcept;
    bool inline_storage;
  };

  template <class Stored>
  Stored& inline_callable() noexcept {
    return *std::launder(reinterpret_cast<Stored*>(storage_));
  }

  // One table per stored type; defined below, where Task is complete.
  template <class Stored>
  static const Ops kInlineOps;
  template <class Stored>
  static const Ops kHeapOps;

  template <class Stored>
  static void invoke_inline(Task& self) {
    self.inline_callable<Stored>()();
  }
  template <class Stored>
  static void relocate_inline(Task& from, Task& to) noexcept {
    Stored& source = from.inline_callable<Stored>();
    ::new (static_cast<void*>(to.storage_)) Stored(std::move(source));
    source.~Stored();
  }
  template <class Stored>
  static void destroy_inline(Task& self) noexcept {
    self.inline_callable<Stored>().~Stored();
  }
  template <class Stored>
  static void invoke_heap(Task& self) {
    (*static_cast<Stored*>(self.heap_))();
  }
  static void relocate_heap(Task& from, Task& to) noexcept { to.heap_ = from.heap_; }
  template <class Stored>
  static void destroy_heap(Task& self) noexcept {
    delete static_cast<Stored*>(self.heap_);
  }

  // Requires: this Task is empty.
  void take(Task& other) noexcept {
    MQ_ASSERT(ops_ == nullptr);
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(other, *this);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  void reset() noexcept {
    // Cleared before the callable is destroyed: its captures' destructors
    // may reach this Task again (a destructor that posts, or drops the
    // object owning this Task), and must find it empty.
    const Ops* ops = ops_;
    if (ops == nullptr) return;
    ops_ = nullptr;
    ops->destroy(*this);
  }

  union {
    alignas(kInlineAlign) unsigned char storage_[kInlineBytes];
    void* heap_;
  };
  const Ops* ops_ = nullptr;
};

template <class Stored>
const Task::Ops Task::kInlineOps = {&invoke_inline<Stored>, &relocate_inline<Stored>, &destroy_inline<Stored>, true};
template <class Stored>
const Task::Ops Task::kHeapOps = {&invoke_heap<Stored>, &relocate_heap, &destroy_heap<Stored>, false};

static_assert(sizeof(Task) == 64, "a Task is one cache line");

}  // namespace mqlab::env
