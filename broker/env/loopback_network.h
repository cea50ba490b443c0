// LoopbackNetwork: an in-process, deterministic env::Network for tests.
//
// One LoopbackNetwork object is one endpoint: the network as one process sees
// it, delivering that process's callbacks on its own executor. endpoint()
// makes a sibling (another process, another executor) that shares the same
// registry of listening addresses, so connections join endpoints of one
// family. There is no latency and no loss: every hop is one executor.post()
// onto the receiving endpoint's executor, and each executor runs its posts in
// order, so a stream's bytes and its close arrive in send order. (SimNet, the
// simulator's network, adds latency, bandwidth and partitions behind the same
// interface.)
//
// Faults a test can inject: kill() is a process crash (every peer sees a
// reset, the dead endpoint runs nothing more), set_unreachable() makes
// connects to an address hang until their timeout (a dead machine).
//
// Invariants:
//   - Behaviour depends only on the calls made: ports and connection ids come
//     from counters, tables are ordered maps, nothing is ordered by pointer.
//   - Nothing runs inline: every callback is a task posted to the executor of
//     the endpoint it belongs to, and checks when it runs that its endpoint is
//     alive and its connection has not been closed by its owner.
//   - A dead endpoint's executor is never posted to again, so it may be
//     destroyed right after the endpoint is killed.
//   - Not thread-safe: all endpoints of a family are used from one thread
//     (the simulator's, or a test's).
//
// send_file_region() reads the region with File::pread when it is called and
// sends a copy; reading past the end of the file breaks the connection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "broker/env/env.h"
#include "broker/env/network.h"

namespace mqlab::env {

class LoopbackNetwork final : public Network {
 public:
  // The first endpoint of a fresh, empty network. Its callbacks run on
  // executor; host names it in the local addresses of its outgoing
  // connections. Requires: executor outlives this endpoint.
  explicit LoopbackNetwork(Executor& executor, std::string host = "127.0.0.1");
  // Kills the endpoint (see kill()): a destroyed Network is a dead process.
  ~LoopbackNetwork() override;

  LoopbackNetwork(const LoopbackNetwork&) = delete;
  LoopbackNetwork& operator=(const LoopbackNetwork&) = delete;

  // Another endpoint of this network (another process), with its own executor.
  std::unique_ptr<LoopbackNetwork> endpoint(Executor& executor, std::string host = "127.0.0.1");

  // Listening on "0.0.0.0:<port>" also accepts connects to any host at that
  // port, as a wildcard bind does. Port 0 picks the next free port.
  Result<std::shared_ptr<Listener>> listen(const std::string& address, AcceptCallback on_accept) override;
  void connect(const std::string& address, Nanos timeout, ConnectCallback done) override;

  // A crash (kill -9): every connection of this endpoint is reset (its peers'
  // on_close report IoError "connection reset by peer"), its listeners close,
  // and none of its callbacks runs again, not even a pending connect's done.
  // Later listen() calls fail with Unavailable; connects never complete.
  // Idempotent.
  void kill();
  bool alive() const;

  // While set, connects to address (as spelled by parse_address) hang until
  // their timeout, as to a machine that is down. Network-wide.
  // Requires: address parses.
  void set_unreachable(const std::string& address, bool unreachable);

  // This endpoint's connections that are open (neither closed nor broken).
  size_t open_connections() const;

  // The state shared by the endpoints of one network, and one endpoint's own;
  // defined in loopback_network.cc.
  struct Registry;
  struct Endpoint;

 private:
  LoopbackNetwork(std::shared_ptr<Registry> registry, Executor& executor, std::string host);

  std::shared_ptr<Endpoint> endpoint_;
};

}  // namespace mqlab::env
