#include "broker/common/assert.h"

#include <cstdio>
#include <cstdlib>

namespace mqlab {
namespace {
std::function<std::string()>& assert_context() {
  static std::function<std::string()> context;
  return context;
}
}  // namespace

void set_assert_context(std::function<std::string()> context) { assert_context() = std::move(context); }

void assert_failed(const char* expression, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "MQ_ASSERT failed: %s\n  at %s:%d\n", expression, file, line);
  if (!detail.empty()) std::fprintf(stderr, "  detail: %s\n", detail.c_str());
  if (assert_context()) {
    const std::string context = assert_context()();
    std::fprintf(stderr, "  context: %s\n", context.c_str());
  }
  std::fflush(stderr);
  std::abort();
}

void assert_failed_here(const char* expression, const char* file, int line) noexcept {
  assert_failed(expression, file, line, std::string());
}

}  // namespace mqlab
