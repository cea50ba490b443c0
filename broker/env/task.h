// Task: a move-only `void()` callable with inline storage, what an Executor
// runs: an InlineFunction<void()> (broker/common/inline_function.h says why
// not std::function). Every event the simulator dispatches is a Task.
#pragma once

#include "broker/common/inline_function.h"

namespace mqlab::env {

using Task = InlineFunction<void()>;

static_assert(sizeof(Task) == 64, "a Task is one cache line");

}  // namespace mqlab::env
