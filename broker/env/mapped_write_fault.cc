#include "broker/env/mapped_write_fault.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "broker/common/assert.h"

namespace mqlab::env {
namespace {

const char* g_program = "mqlab";

// Only async-signal-safe calls below: write(2) and plain stores.
void write_text(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void on_sigbus(int, siginfo_t* info, void*) {
  char address[2 + 16 + 1] = "0x";
  auto value = reinterpret_cast<uintptr_t>(info != nullptr ? info->si_addr : nullptr);
  char digits[16];
  int count = 0;
  do {
    digits[count++] = "0123456789abcdef"[value & 0xF];
    value >>= 4;
  } while (value != 0 && count < 16);
  for (int i = 0; i < count; ++i) address[2 + i] = digits[count - 1 - i];
  address[2 + count] = '\0';
  write_text(g_program);
  write_text(": SIGBUS at ");
  write_text(address);
  write_text(": a page of a mapped file could not be backed (a disk read error, or the file was cut "
             "by another process) while a put was copied into the CommitLog's mapping. Stopping: "
             "acknowledged messages are in the page cache or on disk, and the next start recovers "
             "the CommitLog from its checkpoint (commitLogMappedWriteEnable=false writes with pwrite, "
             "which reports such errors instead).\n");
  // SA_RESETHAND restored the default action: returning retries the faulting
  // copy, which now ends the process with SIGBUS.
}

}  // namespace

void install_mapped_write_fault_report(const char* program) {
  MQ_ASSERT(program != nullptr);
  g_program = program;
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  MQ_ASSERT(::sigaction(SIGBUS, &action, nullptr) == 0);
}

}  // namespace mqlab::env
