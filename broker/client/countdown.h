// Countdown: joins several asynchronous completions into one callback, for
// the client's fan-outs (a heartbeat to every broker, an unregistration
// from every broker, an admin query per queue).
//
// make_countdown(n, done) returns arrive(); done runs once, inside the n-th
// call of arrive(). Invariant: arrive() is called at most n times (more is a
// bug in the caller: MQ_ASSERT). Requires: n > 0; the caller handles n == 0
// itself, because then nothing would ever call done.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::client {

inline std::function<void()> make_countdown(size_t count, std::function<void()> done) {
  MQ_ASSERT(count > 0);
  struct State {
    size_t left;
    std::function<void()> done;
  };
  auto state = std::make_shared<State>(State{count, std::move(done)});
  return [state] {
    MQ_ASSERT(state->left > 0);
    if (--state->left == 0 && state->done) {
      auto done = std::move(state->done);
      done();
    }
  };
}

}  // namespace mqlab::client
