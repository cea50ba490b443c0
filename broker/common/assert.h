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

// The failure paths the macros below call: one call with constant
// arguments (and, for MQ_ASSERT_MSG, a closure that builds the detail), so
// an assertion adds a compare and a call to the function that holds it, no
// landing pad. A std::string built at every site, with the cleanup it needs
// should the call throw, made gcc judge small functions too large to
// inline (the store's record writer took a call 2.4 million times in the
// simulator's standard scenario).
[[noreturn, gnu::cold, gnu::noinline]] void assert_failed_here(const char* expression, const char* file,
                                                               int line) noexcept;

template <typename Detail>
[[noreturn, gnu::cold, gnu::noinline]] void assert_failed_with(const char* expression, const char* file, int line,
                                                               const Detail& detail) noexcept {
  assert_failed(expression, file, line, detail());
}

// The host program's words for an assertion failure ("seed 42, t=12.5s").
// Set by mqsim per run; empty elsewhere. Not thread-safe by design: the core is
// single-threaded.
void set_assert_context(std::function<std::string()> context);

}  // namespace mqlab

#define MQ_ASSERT(cond)                                      \
  do {                                                       \
    if (!(cond)) [[unlikely]] {                              \
      ::mqlab::assert_failed_here(#cond, __FILE__, __LINE__); \
    }                                                        \
  } while (0)

// MQ_ASSERT_MSG(a <= b, "flushed " + std::to_string(a) + " > wrote " + ...)
#define MQ_ASSERT_MSG(cond, detail)                                                                      \
  do {                                                                                                   \
    if (!(cond)) [[unlikely]] {                                                                          \
      ::mqlab::assert_failed_with(#cond, __FILE__, __LINE__, [&]() -> std::string { return (detail); }); \
    }                                                                                                    \
  } while (0)

#define MQ_UNREACHABLE(detail) ::mqlab::assert_failed("unreachable", __FILE__, __LINE__, (detail))
