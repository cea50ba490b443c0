// LifetimeToken: lets a callback that may outlive its owner notice that the
// owner is gone. A store destroyed without a clean shutdown (a crash in a
// test on the real Env) can still have an fsync completion in flight; the
// completion must then do nothing rather than touch freed memory. In mqsim a
// killed process's events are dropped by the scheduler, so this is the real
// Env's safety net, and costs one weak_ptr check per completion.
#pragma once

#include <memory>
#include <utility>

namespace mqlab {

class LifetimeToken {
 public:
  LifetimeToken() : alive_(std::make_shared<bool>(true)) {}
  LifetimeToken(const LifetimeToken&) = delete;
  LifetimeToken& operator=(const LifetimeToken&) = delete;

  // Wraps fn so that it runs only while this token (its owner) is alive.
  template <typename F>
  auto guard(F fn) const {
    return [weak = std::weak_ptr<bool>(alive_), fn = std::move(fn)](auto&&... args) mutable {
      if (weak.expired()) return;
      fn(std::forward<decltype(args)>(args)...);
    };
  }

 private:
  std::shared_ptr<bool> alive_;
};

}  // namespace mqlab
