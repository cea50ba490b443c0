// HAClient: a SLAVE's replication client (RocketMQ 4.x HAService.HAClient).
// It connects to the master's HA address (haMasterAddress when configured,
// else the haServerAddr the NameServer returns to the slave's
// registration), asks for the CommitLog from where its own log ends,
// appends what arrives at exactly its max offset (MessageStore::
// append_replica, which dispatches into ConsumeQueues and the index as a
// master would), and acknowledges with its new offset after every frame.
//
// Timers: while disconnected it retries every 5 s (RocketMQ's HAClient
// loop); it reports at least every haSendHeartbeatInterval; it drops a
// connection on which nothing arrived for haHousekeepingInterval (the
// master heartbeats every 5 s, so silence means a dead path).
//
// Deviation from RocketMQ, on purpose: RocketMQ's slave sends its first
// report only haSendHeartbeatInterval (5 s) after connecting, and the
// master waits for it, so replication starts ~5 s late after every
// (re)connect. We report at once: nothing in the protocol needs the wait,
// and a slave that is 5 s behind after each reconnect is 5 s more loss in an
// ASYNC_MASTER failover and 5 s of FLUSH_SLAVE_TIMEOUTs for a SYNC_MASTER.
//
// Resuming and divergence (README.md beside this file):
//   - A partial record left at the tail by a broken connection is dropped
//     before reconnecting, so the slave always resumes at a record boundary.
//   - A restarted slave resumes from its own recovered log: it asks for
//     nothing it holds but its last record. With data it asks to resume at
//     the START of its last message record L (not at its end S) and
//     compares the master's bytes [L, S) with its own: the last record must
//     be byte-identical on both. Reports during that check say how far the
//     slave verified. It finds L by scanning forward from the newest record
//     a ConsumeQueue indexes (the undispatched tail), not its whole newest
//     segment.
//   - The first byte appended at S must begin a well-formed record whose
//     PHYSICALOFFSET is S (MessageStore::append_replica checks every record).
//   - A master whose stream starts below S (its log is shorter: it lost its
//     tail in a power loss, or it is a different master), or whose bytes
//     differ in [L, S), or whose records do not line up at S, has diverged
//     from this slave. Policy: REFUSE. The slave closes, keeps its log
//     untouched and does not reconnect until it is restarted; the refusal
//     and the bytes at stake are logged at ERROR and kept in stats(). Its
//     extra bytes may hold messages a SYNC_MASTER acknowledged (the master
//     acks once the slave has them, before its own flush), so they are
//     never truncated automatically: an operator promotes this slave or
//     wipes it.
//   - Any other offset mismatch (RocketMQ's rule) drops the connection and
//     reconnects.
//
// Invariants: at most one connection (attempt) at a time; callbacks of an
// older attempt are ignored (generation counter); confirmed_ only grows
// within one connection; in kRefused nothing reconnects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/ha/ha_protocol.h"
#include "broker/store/message_store.h"

namespace mqlab::ha {

enum class HAClientState {
  kIdle,        // not started, or no master address known yet
  kConnecting,  // a connect is in flight, or waiting to retry
  kTransfer,    // connected to the master
  kRefused,     // diverged from the master: disconnected until restarted
  kStopped,     // shut down
};
const char* ha_client_state_name(HAClientState state);

struct HAClientStats {
  uint64_t connects = 0;
  uint64_t disconnects = 0;
  uint64_t frames_received = 0;
  uint64_t bytes_appended = 0;
  uint64_t bytes_verified = 0;     // of the resume check [L, S)
  uint64_t bytes_scanned_to_resume = 0;  // of its own log, read to find L
  uint64_t reports_sent = 0;
  uint64_t offset_mismatches = 0;  // dropped and reconnected
  uint64_t refusals = 0;           // diverged: see refusal_reason()
  int64_t refused_bytes_at_stake = 0;  // slave bytes past the master's log when refused
};

class HAClient {
 public:
  HAClient(env::Env& env, store::MessageStore& store);
  ~HAClient();
  HAClient(const HAClient&) = delete;
  HAClient& operator=(const HAClient&) = delete;

  // Starts connecting (when an address is known) and the retry loop.
  void start();
  void shutdown();
  // The master's HA address; a change closes the current connection and
  // connects to the new one. Empty forgets it.
  void update_master_address(const std::string& address);

  const std::string& master_address() const { return master_address_; }
  HAClientState state() const { return state_; }
  const std::string& refusal_reason() const { return refusal_reason_; }
  const HAClientStats& stats() const { return stats_; }
  // How far this slave has confirmed the master's log (its last report).
  PhyOffset confirmed_offset() const { return confirmed_; }

 private:
  void connect_now();
  void on_connected(uint64_t generation, Result<std::shared_ptr<env::Connection>> connection);
  Status prepare_resume();
  void on_bytes(std::span<const uint8_t> bytes);
  Status process_frame(const TransferFrame& frame);
  Status verify_overlap(PhyOffset offset, std::span<const uint8_t> bytes);
  void report(bool force);
  void tick();
  // Closes and retries later (RocketMQ's closeMaster).
  void drop(const std::string& why);
  // Closes for good: the logs diverged.
  void refuse(const std::string& why, int64_t bytes_at_stake);
  void close_connection();
  void schedule_tick();

  env::Env& env_;
  store::MessageStore& store_;
  std::string master_address_;
  HAClientState state_ = HAClientState::kIdle;
  std::shared_ptr<env::Connection> connection_;
  uint64_t generation_ = 0;  // bumped per connect attempt
  std::unique_ptr<TransferFrameDecoder> decoder_;
  PhyOffset resume_at_;      // S: our max offset when the connection started
  PhyOffset expected_;       // the offset the next frame must carry (-1: any, a fresh slave)
  PhyOffset confirmed_;      // what we last reported or will report
  PhyOffset reported_{-1};
  bool first_frame_ = true;
  bool started_ = false;
  bool connect_in_flight_ = false;
  Nanos last_read_ns_ = 0;
  Nanos last_report_ns_ = 0;
  Nanos next_connect_ns_ = 0;
  env::TimerId tick_timer_ = env::kNoTimer;
  std::string refusal_reason_;
  HAClientStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::ha
