#include "broker/env/posix_env.h"

#include <random>
#include <utility>

namespace mqlab::env {
namespace {

// 64 bits from the OS, once per process Env: the real world's only source of
// randomness. std::random_device yields 32 bits per draw.
uint64_t seed_from_os() {
  std::random_device device;
  const uint64_t high = device();
  const uint64_t low = device();
  return (high << 32) | low;
}

}  // namespace

Nanos PosixClock::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t PosixClock::wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Nanos PosixClock::wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PosixEnv::PosixEnv(std::optional<uint64_t> seed)
    // Concurrency hint 1: one thread runs the io_context; posting from other
    // threads stays safe.
    : PosixEnv(std::make_unique<boost::asio::io_context>(1), nullptr, seed) {}

PosixEnv::PosixEnv(boost::asio::io_context& io, std::optional<uint64_t> seed) : PosixEnv(nullptr, &io, seed) {}

PosixEnv::PosixEnv(std::unique_ptr<boost::asio::io_context> owned_io, boost::asio::io_context* borrowed_io,
                   std::optional<uint64_t> seed)
    : owned_io_(std::move(owned_io)),
      io_(owned_io_ ? *owned_io_ : *borrowed_io),
      seed_(seed ? *seed : seed_from_os()),
      executor_(io_),
      files_(io_),
      network_(io_, executor_),
      preparer_(io_),
      random_(seed_) {
  MQ_ASSERT((owned_io_ == nullptr) != (borrowed_io == nullptr));  // exactly one io_context
}

PosixEnv::~PosixEnv() = default;

PowerLossFileSystem& PosixEnv::enable_power_loss_injection() {
  MQ_ASSERT(power_loss_ == nullptr);
  power_loss_ = std::make_unique<PowerLossFileSystem>(files_);
  return *power_loss_;
}

bool PosixEnv::run_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  MQ_ASSERT(limit.count() >= 0);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  if (io_.stopped()) io_.restart();  // an earlier run ran out of work
  // One Asio handler runs many posted tasks: stop after the one that makes
  // done() true, as when every task was a handler of its own.
  struct RestoreStop {
    AsioExecutor& executor;
    const std::function<bool()>* previous;
    ~RestoreStop() { executor.set_stop_between_tasks(previous); }
  } restore{executor_, executor_.set_stop_between_tasks(&done)};
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (io_.run_one_until(deadline) == 0 && io_.stopped()) {
      // Out of work (or stop() was called): nothing will run that could
      // change done(). Leave the io_context runnable for the next call.
      io_.restart();
      return done();
    }
  }
  return true;
}

void PosixEnv::run_for(std::chrono::milliseconds duration) {
  MQ_ASSERT(duration.count() >= 0);
  if (io_.stopped()) io_.restart();
  io_.run_for(duration);
  if (io_.stopped()) io_.restart();
}

}  // namespace mqlab::env
