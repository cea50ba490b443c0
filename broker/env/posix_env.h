// PosixEnv: the real world, as mqbroker, mqnamesrv and the benchmarks see it.
//
// It bundles a PosixClock (steady_clock, system_clock), an AsioExecutor over
// one io_context, a PosixFileSystem whose flush thread posts completions to
// that io_context, and a Random seeded once from std::random_device (or from
// a given seed, to replay a run's random choices). The real Env is the only
// place where threads, mutexes, steady_clock and random_device appear.
//
// Threading: the io_context is run by one thread, the broker core's. Only
// executor().post() may be called from other threads.
//
// Destruction order matters and is fixed by member order: the file system
// (joining its flush thread) and the executor go before the io_context they
// post to; completions still queued in the io_context are destroyed unrun.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "broker/env/asio.h"
#include "broker/env/asio_executor.h"
#include "broker/env/asio_network.h"
#include "broker/env/env.h"
#include "broker/env/posix_file_preparer.h"
#include "broker/env/posix_file_system.h"
#include "broker/env/power_loss_file_system.h"

namespace mqlab::env {

class PosixClock final : public Clock {
 public:
  Nanos now_ns() override;
  int64_t wall_ms() override;
  Nanos wall_ns() override;
};

class PosixEnv final : public Env {
 public:
  // Owns a fresh io_context. Without a seed, draws one from std::random_device.
  explicit PosixEnv(std::optional<uint64_t> seed = std::nullopt);
  // Borrows io, which the caller runs. Requires: io outlives this Env.
  explicit PosixEnv(boost::asio::io_context& io, std::optional<uint64_t> seed = std::nullopt);
  ~PosixEnv() override;

  PosixEnv(const PosixEnv&) = delete;
  PosixEnv& operator=(const PosixEnv&) = delete;

  Clock& clock() override { return clock_; }
  Executor& executor() override { return executor_; }
  FileSystem& files() override { return power_loss_ ? static_cast<FileSystem&>(*power_loss_) : files_; }
  Network& network() override { return network_; }
  Random& random() override { return random_; }
  // On the preparer's thread (posix_file_preparer.h).
  void prepare_file(std::shared_ptr<File> file, uint64_t size, bool pretouch, SyncCallback done) override {
    preparer_.prepare(std::move(file), size, pretouch, std::move(done));
  }
  bool stop_preparing_file(const std::shared_ptr<File>& file) override { return preparer_.stop(file); }

  boost::asio::io_context& io_context() { return io_; }
  // From now on files() is a PowerLossFileSystem over the POSIX files, so a
  // test can power-cut this process (mqbroker's powerLossInjection). Requires:
  // called once, before anything is opened through files().
  PowerLossFileSystem& enable_power_loss_injection();
  // The seed random() started from, so a run can print it.
  uint64_t seed() const { return seed_; }

  // Runs the io_context on this thread until done() holds, limit of wall time
  // passes, or the io_context has no work left (nothing queued, no timer, no
  // sync pending: then done() can no longer change). Returns done()'s final
  // value. For tests and simple programs; mqbroker just runs the io_context.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit);
  // Runs the io_context for duration of wall time (or until it runs out of work).
  void run_for(std::chrono::milliseconds duration);

 private:
  PosixEnv(std::unique_ptr<boost::asio::io_context> owned_io, boost::asio::io_context* borrowed_io,
           std::optional<uint64_t> seed);

  std::unique_ptr<boost::asio::io_context> owned_io_;  // null when borrowed
  boost::asio::io_context& io_;
  const uint64_t seed_;
  PosixClock clock_;
  AsioExecutor executor_;
  PosixFileSystem files_;
  std::unique_ptr<PowerLossFileSystem> power_loss_;  // over files_, destroyed before it
  AsioNetwork network_;  // after executor_: destroyed before it
  PosixFilePreparer preparer_;  // joined before the io_context it posts to goes
  Random random_;
};

}  // namespace mqlab::env
