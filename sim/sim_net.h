// SimNet: the simulated world's network. One SimNet per simulation, owned by
// it and driven by its Scheduler; each simulated process gets an endpoint (an
// env::Network) with its own executor and its machine's host address. Broker
// code sees the same contract as on real TCP (broker/env/network.h).
//
// The model:
//   - Machines are host strings ("10.0.0.1"). A process listens on
//     "<its host>:port", "0.0.0.0:port" (any address of its machine) or
//     "127.0.0.1:port" (its machine only); one listener per machine and port.
//     Connecting to "127.0.0.1" or "localhost" reaches the caller's machine.
//   - A connection is two ordered byte streams, one per direction. Each
//     directed link (from host, to host) has a NetworkProfile and a wire: a
//     chunk (one send(), one file region, a FIN, a RST) occupies the wire for
//     bytes / bandwidth behind what the link is already sending, then travels
//     latency_base + jitter (an exponential tail with mean latency_jitter,
//     capped at 10x that mean), plus one retransmission timeout when it is
//     "lost" (loss_probability). A stream never reorders: each chunk is
//     delivered at max(the previous chunk's delivery, its own arrival).
//     Draws come from SimNet's Random, in event order.
//   - Partitions are a set of blocked directed host pairs (partition(),
//     one-way or both), whole isolated hosts (isolate()) and machines that are
//     down (set_host_down(): packets to and from it vanish). A direction whose
//     path is blocked when a chunk is sent or due stalls: nothing more of it is
//     delivered, as TCP retransmits into the void. On heal, stalled chunks go
//     out again in order, with fresh latencies. A direction stalled with data
//     outstanding for tcp_user_timeout breaks the connection: both ends get
//     Timeout "connection timed out: <remote>" (the far end stands for its own
//     eventual failure to send there). An idle connection never breaks, as TCP
//     without keepalive does not.
//   - Connects: a SYN that finds the path blocked either way (or arrives to a
//     blocked path) is resent after 1 s, 2 s, 4 s, ... as the kernel does, so
//     a connect across a partition succeeds if it heals in time and otherwise
//     fails with Timeout after min(the caller's timeout, connect_timeout).
//     With the path open, the SYN reaches the machine after one latency: a
//     listener accepts (the server end exists from then on) and the client's
//     done runs one latency later; no listener answers RST, so the caller sees
//     Unavailable "connection refused: host:port" after one round trip. A
//     handshake's answer is not itself subject to a partition that begins
//     while it is in flight. A host SimNet has never heard of is Unavailable
//     "unknown host" at once.
//   - A process dies (kill_process(), an endpoint's kill()): its listeners
//     vanish and each of its connections sends a RST behind what it had
//     already sent, so peers see IoError "connection reset by peer: <remote>"
//     one latency later. Its callbacks never run again. A process that dies
//     only in the Scheduler (kill_owner without the network hearing) is
//     discovered when data reaches it: its machine answers with a RST, and
//     its listening port counts as free again.
//   - A machine that is down sends nothing: a dead process on it sends no RST
//     and loses what it had queued, so its peers' idle connections stay open
//     and their sends time out; connects to it time out rather than being
//     refused. Powering a machine off is kill every process on it (the
//     caller's job) plus set_host_down(host, true).
//   - send_file_region() reads the region with File::pread when called and
//     sends a copy; reading past the end of the file breaks the connection.
//
// Invariants:
//   - Deterministic: ordered maps and sets only, ports and ids from counters,
//     every random draw from the Random given, time from the Scheduler.
//   - Transmission runs as world-owned scheduler events. A process's
//     callbacks run only while its endpoint is alive, never inside a call of
//     its own: bytes (and a peer's FIN or RST) are read in the delivery
//     event itself when the process is not paused and nothing of that
//     connection is waiting, else they wait in order for a flush posted to
//     its executor; local failures and time-outs are always posted. A dead
//     endpoint's executor is never posted to.
//   - Per direction, delivery times never decrease and a chunk leaves only
//     from the front of its queue; a stalled direction has no delivery event
//     and exactly one timeout event.
//
// Lifetime: the Scheduler outlives the SimNet. Endpoints, connections and
// listeners may outlive it; once it is destroyed they are inert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "broker/common/status.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/env/network.h"
#include "broker/env/random.h"
#include "sim/scheduler.h"

namespace mqlab::sim {

// One directed link's behaviour. The defaults are one data-centre LAN hop.
struct NetworkProfile {
  // One-way propagation and switching delay.
  Nanos latency_base_ns = 100 * kNanosPerMicro;
  // Mean of the exponential tail added to each chunk's latency (queueing in
  // switches); capped at 10x the mean. 0: every chunk takes latency_base.
  Nanos latency_jitter_ns = 20 * kNanosPerMicro;
  // 10 Gbit/s. The wire is shared by every connection on the directed link.
  uint64_t bandwidth_bytes_per_sec = 1'250'000'000;
  // Chance that a chunk is lost once; TCP resends it one retransmission
  // timeout later, and the chunks behind it wait (head-of-line blocking).
  double loss_probability = 0.0;
  // Linux's minimum RTO.
  Nanos retransmission_timeout_ns = millis(200);

  // InvalidArgument naming the field: latencies >= 0, bandwidth > 0,
  // loss in [0, 1), retransmission timeout > 0.
  Status validate() const;
};

struct SimNetOptions {
  // Between two different machines, unless set_link_profile() says otherwise.
  NetworkProfile profile;
  // Within one machine (the loopback interface).
  NetworkProfile loopback_profile{10 * kNanosPerMicro, 0, 10'000'000'000, 0.0, millis(200)};
  // TCP_USER_TIMEOUT: how long a direction may stall with data outstanding
  // before the connection breaks.
  Nanos tcp_user_timeout_ns = seconds(15);
  // The kernel's own limit on a connect (net.ipv4.tcp_syn_retries = 6 gives
  // about 127 s); a connect fails at the earlier of this and its timeout.
  Nanos connect_timeout_ns = seconds(127);
  // The first SYN retransmission (RFC 6298's initial RTO); doubled each time.
  Nanos syn_retransmission_timeout_ns = seconds(1);
};

struct NetCounters {
  uint64_t bytes_sent = 0;       // accepted by send() and send_file_region()
  uint64_t bytes_delivered = 0;  // reached the receiving machine
  uint64_t bytes_dropped = 0;    // queued when their stream broke, or lost with a machine
  uint64_t chunks_sent = 0;
  uint64_t chunks_delivered = 0;
  uint64_t chunks_retransmitted = 0;   // lost once (loss_probability), resent an RTO later
  uint64_t stalls = 0;                 // a direction found its path blocked with data to send
  uint64_t connections_opened = 0;     // handshakes that reached a listener
  uint64_t connections_closed = 0;     // FINs sent (an owner's close())
  uint64_t connections_reset = 0;      // RSTs sent (a dead process, an unreadable file region)
  uint64_t connections_timed_out = 0;  // broken by tcp_user_timeout
  uint64_t connects_refused = 0;
  uint64_t connects_timed_out = 0;
};

// Traffic on one directed link (from host, to host).
struct LinkCounters {
  uint64_t bytes_sent = 0;
  uint64_t bytes_delivered = 0;
  uint64_t chunks_delivered = 0;
};

using HostPair = std::pair<std::string, std::string>;  // (from host, to host)

class SimNetEndpoint;

class SimNet {
 public:
  // random: the network's own stream, split from the scenario seed.
  // Requires: options' profiles validate().
  SimNet(Scheduler& scheduler, env::Random random, SimNetOptions options = {});
  // Makes every endpoint, connection and listener inert.
  ~SimNet();
  SimNet(const SimNet&) = delete;
  SimNet& operator=(const SimNet&) = delete;

  // The network as one process incarnation sees it: callbacks run on
  // executor (which belongs to owner), addresses are on host's machine.
  // Registers host. Requires: executor outlives the endpoint's liveness
  // (it is never posted to once the endpoint or its owner is dead).
  std::unique_ptr<SimNetEndpoint> endpoint(env::Executor& executor, OwnerId owner, std::string host);
  // Makes a machine known without a process on it (connects get refused).
  void add_host(const std::string& host);
  bool has_host(const std::string& host) const;

  // --- links
  // Overrides the profile of from -> to (and to -> from when symmetric).
  // Requires: profile.validate() is ok.
  void set_link_profile(const std::string& from, const std::string& to, const NetworkProfile& profile,
                        bool symmetric = true);
  const NetworkProfile& link_profile(const std::string& from, const std::string& to) const;

  // --- partitions. Healing sends stalled data on at once.
  // Blocks every side_a -> side_b pair, and side_b -> side_a when symmetric.
  // Requires: the sides are disjoint.
  void partition(const std::set<std::string>& side_a, const std::set<std::string>& side_b, bool symmetric = true);
  // Blocks host from and to every other machine, present and future.
  void isolate(const std::string& host);
  // Unblocks side_a <-> side_b, both directions.
  void heal(const std::set<std::string>& side_a, const std::set<std::string>& side_b);
  // Ends host's isolation and unblocks every pair that involves it.
  void heal_host(const std::string& host);
  // Ends every partition and isolation (machines that are down stay down).
  void heal_all();
  // Whether a packet from -> to is dropped now (partition, isolation, a
  // machine down). A machine never blocks itself unless it is down.
  bool blocked(const std::string& from, const std::string& to) const;

  // --- processes and machines
  // kill -9 of every endpoint of owner (see SimNetEndpoint::kill()).
  void kill_process(OwnerId owner);
  // A machine losing (or regaining) power, as the network sees it: packets to
  // and from it vanish; its dead processes' unsent data and RSTs are lost.
  void set_host_down(const std::string& host, bool down);
  bool host_down(const std::string& host) const;

  // --- observation
  const NetCounters& counters() const;
  // Keyed by (from host, to host), only links that carried traffic.
  const std::map<HostPair, LinkCounters>& link_counters() const;
  const SimNetOptions& options() const;
  // Streams with an end still open or data still in flight.
  size_t live_streams() const;

  struct Core;  // the state endpoints and connections share; sim_net.cc

 private:
  std::shared_ptr<Core> core_;
};

// One process incarnation's network. Destroying it kills it.
class SimNetEndpoint final : public env::Network {
 public:
  ~SimNetEndpoint() override;
  SimNetEndpoint(const SimNetEndpoint&) = delete;
  SimNetEndpoint& operator=(const SimNetEndpoint&) = delete;

  // InvalidArgument (bad address), IoError "cannot assign requested address"
  // (another machine's address), AlreadyExists (port taken on this machine),
  // Unavailable (the process is dead). Port 0 picks a free ephemeral port.
  Result<std::shared_ptr<env::Listener>> listen(const std::string& address, env::AcceptCallback on_accept) override;
  void connect(const std::string& address, Nanos timeout, env::ConnectCallback done) override;

  // kill -9: every connection resets (peers hear IoError one latency later
  // unless the machine is down), listeners vanish, no callback of this
  // endpoint runs again, not even a pending connect's. Idempotent.
  void kill();
  // Not killed, its owner alive in the Scheduler, and the SimNet not gone.
  bool alive() const;
  const std::string& host() const;
  OwnerId owner() const;
  // Connections of this endpoint that are open (neither closed nor broken).
  size_t open_connections() const;

  struct State;  // sim_net.cc

 private:
  friend class SimNet;
  explicit SimNetEndpoint(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
};

}  // namespace mqlab::sim
