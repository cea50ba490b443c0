// SimRemotingPair: a test fixture base with a server and a client process on
// one simulated network (virtual time, LoopbackNetwork), the client's
// RemotingClient, a way to run the world until something holds, and raw
// connections that feed the server what no client would. Derived fixtures
// add their server, its processors and their own state.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "broker/env/loopback_network.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/test/remoting_test_util.h"
#include "sim/scheduler.h"
#include "sim/sim_env.h"

namespace mqlab::remoting::test_support {

// A connection that speaks raw bytes.
struct RawPeer {
  std::shared_ptr<env::Connection> connection;
  Bytes received;
  std::optional<Status> closed;
};

class SimRemotingPair : public ::testing::Test {
 protected:
  // run_until's limit when a test names none.
  explicit SimRemotingPair(Nanos default_run_limit) : default_run_limit_(default_run_limit) {}

  void SetUp() override {
    server_env_ = &server_process_.start();
    client_env_ = &client_process_.start();
    client_ = std::make_unique<RemotingClient>(*client_env_);
  }

  // Runs events until done() holds; false if the world went idle or the
  // limit passed first.
  bool run_until(const std::function<bool()>& done, std::optional<Nanos> limit = std::nullopt) {
    const Nanos deadline = scheduler_.now() + limit.value_or(default_run_limit_);
    while (!done()) {
      if (scheduler_.pending_count() == 0 || scheduler_.next_due() > deadline) return false;
      scheduler_.run_one();
    }
    return true;
  }

  std::shared_ptr<RawPeer> connect_raw(const std::string& address) {
    auto peer = std::make_shared<RawPeer>();
    client_env_->network().connect(address, seconds(1), [peer](Result<std::shared_ptr<env::Connection>> c) {
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      peer->connection = std::move(c).value();
      peer->connection->set_handlers(
          [peer](std::span<const uint8_t> bytes) { peer->received.insert(peer->received.end(), bytes.begin(), bytes.end()); },
          [peer](Status reason) { peer->closed = reason; });
    });
    EXPECT_TRUE(run_until([&] { return peer->connection != nullptr; }));
    return peer;
  }

  const Nanos default_run_limit_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_{scheduler_};
  sim::SimExecutor world_executor_{scheduler_, sim::kWorldOwner};
  env::LoopbackNetwork network_{world_executor_, "10.0.0.100"};
  sim::SimProcess server_process_{"server", scheduler_, clock_, {}, env::Random(1), &network_, "10.0.0.1"};
  sim::SimProcess client_process_{"client", scheduler_, clock_, {}, env::Random(2), &network_, "10.0.0.2"};
  sim::SimEnv* server_env_ = nullptr;
  sim::SimEnv* client_env_ = nullptr;
  // Declared after the processes, so destroyed before them; derived
  // fixtures' servers go first of all.
  std::unique_ptr<RemotingClient> client_;
};

}  // namespace mqlab::remoting::test_support
