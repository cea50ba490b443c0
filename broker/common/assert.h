// MQ_ASSERT: our own mistakes are crashes, in every build.
//
// An assertion states an invariant of mqlab's code, never a property of bytes
// from outside (those are Status values). On failure it prints the expression,
// file and line, then the context registered by the host (mqsim registers the
// seed and virtual time so a failure names its replay command), and aborts.
#pragma once

#include <functional>
#include <string>

namespace mqlab {

[[noreturn]] void assert_failed(const char* expression, const char* file, int line, const std::string& detail);

// The host program's words for an assertion failure ("seed 42, t=12.5s").
// Set by mqsim per run; empty elsewhere. Not thread-safe by design: the core is
// single-threaded.
void set_assert_context(std::function<std::string()> context);

}  // namespace mqlab

#define MQ_ASSERT(cond)                                              \
  do {                                                               \
    if (!(cond)) [[unlikely]] {                                      \
      ::mqlab::assert_failed(#cond, __FILE__, __LINE__, std::string()); \
    }                                                                \
  } while (0)

// MQ_ASSERT_MSG(a <= b, "flushed " + std::to_string(a) + " > wrote " + ...)
#define MQ_ASSERT_MSG(cond, detail)                           \
  do {                                                        \
    if (!(cond)) [[unlikely]] {                               \
      ::mqlab::assert_failed(#cond, __FILE__, __LINE__, (detail)); \
    }                                                         \
  } while (0)

#define MQ_UNREACHABLE(detail) ::mqlab::assert_failed("unreachable", __FILE__, __LINE__, (detail))
