// InlineFunction<R(Args...)>: a move-only callable with inline storage, for
// the callbacks a message's path makes and drops once per message (the
// executor's Tasks, a request's response callback, a put's completion, a
// consumed message's report).
//
// Why not std::function: it heap-allocates any capture larger than two
// pointers (or not trivially copyable), which a `[this, connection, frame]`
// lambda or a lifetime guard's weak_ptr with its lambda always is; a run of
// the standard scenario made ~13 allocations per message that way for the
// executor's tasks alone, and ~4 more for the callbacks above. An
// InlineFunction keeps captures of up to kInlineBytes inside itself and
// falls back to the heap only for larger ones (or for a callable whose move
// may throw). Move-only, so a capture may hold a unique_ptr or another
// InlineFunction, and a callback that must run at most once cannot be
// copied into two owners that each run it.
//
// Invariants:
//   - an empty InlineFunction has ops_ == nullptr; a non-empty one holds
//     exactly one callable, inline (ops_->inline_storage) or behind heap_.
//   - a moved-from InlineFunction is empty.
//   - invoking an empty one is a bug (asserted), as for std::function it
//     would throw bad_function_call.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab {

template <class F>
constexpr bool kIsStdFunction = false;
template <class Signature>
constexpr bool kIsStdFunction<std::function<Signature>> = true;

// The default room for the hot captures: a `this`, a shared_ptr and a
// std::function (8 + 16 + 32), or a lifetime guard's weak_ptr with a `this`,
// a shared_ptr and a time. Makes an InlineFunction 64 bytes, a cache line.
inline constexpr size_t kDefaultInlineFunctionBytes = 56;

// InlineBytes: a callback type whose usual capture is larger names its own
// room (a put's completion holds a response channel and its destination).
template <class Signature, size_t InlineBytes = kDefaultInlineFunctionBytes>
class InlineFunction;

template <class R, class... Args, size_t InlineBytes>
class InlineFunction<R(Args...), InlineBytes> {
 public:
  static constexpr size_t kInlineBytes = InlineBytes;
  // Pointer alignment, not max_align_t (16): a 16-aligned buffer would pad
  // the object to 80 bytes for captures that almost never need it.
  static constexpr size_t kInlineAlign = alignof(void*);

  // Whether a callable of type F is stored inside (no allocation).
  template <class F>
  static constexpr bool fits_inline = sizeof(F) <= kInlineBytes && alignof(F) <= kInlineAlign &&
                                      std::is_nothrow_move_constructible_v<F>;

  InlineFunction() noexcept = default;
  InlineFunction(std::nullptr_t) noexcept {}  // NOLINT: as std::function, so `= nullptr` reads naturally

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, InlineFunction> &&
             std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
  InlineFunction(F&& callable) {  // NOLINT: implicit, as std::function's, so lambdas convert at every call site
    using Stored = std::decay_t<F>;
    if constexpr (std::is_pointer_v<Stored> || std::is_member_pointer_v<Stored> || kIsStdFunction<Stored>) {
      // A null function pointer or an empty std::function makes an empty
      // one, as it would an empty std::function.
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

  InlineFunction(InlineFunction&& other) noexcept { take(other); }
  InlineFunction& operator=(InlineFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  InlineFunction& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  InlineFunction(const InlineFunction&) = delete;
  InlineFunction& operator=(const InlineFunction&) = delete;
  ~InlineFunction() { reset(); }

  // Const, as std::function's: the callable itself may change its captures.
  R operator()(Args... args) const {
    MQ_ASSERT_MSG(ops_ != nullptr, "an empty InlineFunction was called");
    return ops_->invoke(const_cast<InlineFunction&>(*this), std::forward<Args>(args)...);
  }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  friend bool operator==(const InlineFunction& function, std::nullptr_t) noexcept { return function.ops_ == nullptr; }
  // Whether the callable lives on the heap: for tests that pin the hot call
  // sites to inline storage.
  bool on_heap() const noexcept { return ops_ != nullptr && !ops_->inline_storage; }

 private:
  struct Ops {
    R (*invoke)(InlineFunction& self, Args&&... args);
    // Moves the callable from `from` into the empty `to` and leaves `from`'s
    // storage destroyed (inline) or handed over (heap).
    void (*relocate)(InlineFunction& from, InlineFunction& to) noexcept;
    void (*destroy)(InlineFunction& self) noexcept;
    bool inline_storage;
  };

  template <class Stored>
  Stored& inline_callable() noexcept {
    return *std::launder(reinterpret_cast<Stored*>(storage_));
  }

  // One table per stored type; defined below, where the class is complete.
  template <class Stored>
  static const Ops kInlineOps;
  template <class Stored>
  static const Ops kHeapOps;

  template <class Stored>
  static R invoke_inline(InlineFunction& self, Args&&... args) {
    return std::invoke(self.inline_callable<Stored>(), std::forward<Args>(args)...);
  }
  template <class Stored>
  static void relocate_inline(InlineFunction& from, InlineFunction& to) noexcept {
    Stored& source = from.inline_callable<Stored>();
    ::new (static_cast<void*>(to.storage_)) Stored(std::move(source));
    source.~Stored();
  }
  template <class Stored>
  static void destroy_inline(InlineFunction& self) noexcept {
    self.inline_callable<Stored>().~Stored();
  }
  template <class Stored>
  static R invoke_heap(InlineFunction& self, Args&&... args) {
    return std::invoke(*static_cast<Stored*>(self.heap_), std::forward<Args>(args)...);
  }
  static void relocate_heap(InlineFunction& from, InlineFunction& to) noexcept { to.heap_ = from.heap_; }
  template <class Stored>
  static void destroy_heap(InlineFunction& self) noexcept {
    delete static_cast<Stored*>(self.heap_);
  }

  // Requires: this one is empty.
  void take(InlineFunction& other) noexcept {
    MQ_ASSERT(ops_ == nullptr);
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(other, *this);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  void reset() noexcept {
    // Cleared before the callable is destroyed: its captures' destructors
    // may reach this object again (a destructor that posts, or drops the
    // object owning it), and must find it empty.
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

template <class R, class... Args, size_t InlineBytes>
template <class Stored>
const typename InlineFunction<R(Args...), InlineBytes>::Ops InlineFunction<R(Args...), InlineBytes>::kInlineOps = {
    &invoke_inline<Stored>, &relocate_inline<Stored>, &destroy_inline<Stored>, true};
template <class R, class... Args, size_t InlineBytes>
template <class Stored>
const typename InlineFunction<R(Args...), InlineBytes>::Ops InlineFunction<R(Args...), InlineBytes>::kHeapOps = {
    &invoke_heap<Stored>, &relocate_heap, &destroy_heap<Stored>, false};

static_assert(sizeof(InlineFunction<void()>) == 64, "an InlineFunction is one cache line");

}  // namespace mqlab
