// HAService: a master's replication endpoint (RocketMQ 4.x HAService). It
// listens on the HA address (brokerIP2:haListenPort, listenPort + 1 by
// default) through env.network(), runs one HAConnection per slave, keeps
// push2SlaveMaxOffset (the highest offset any slave acknowledged, shared by
// all connections, never lowered), and is the store's ReplicationHook: a
// SYNC_MASTER put asks is_slave_ok() and then waits in the
// GroupTransferService for an ack covering it.
//
//   is_slave_ok(end) = at least one connection
//                      && end - push2SlaveMaxOffset < haSlaveFallbehindMax
//   wait_for_slave    done(true) on an ack >= end, done(false) after
//                     slaveTimeout (or at shutdown)
//
// The wire protocol and the per-slave state machine are in ha_connection.h
// and ha_protocol.h; the slave's side in ha_client.h; the divergence policy
// in README.md beside this file.
//
// Invariants: connections are kept by id in accept order (std::map), so
// pushes and ack handling run in a deterministic order; after shutdown()
// nothing is accepted, sent or waited for; the store's hook is uninstalled
// by the owner before this object is destroyed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/ha/group_transfer_service.h"
#include "broker/ha/ha_connection.h"
#include "broker/store/message_store.h"
#include "broker/store/replication_hook.h"

namespace mqlab::ha {

struct HAServiceStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_closed = 0;
  uint64_t frames_sent = 0;
  uint64_t bytes_sent = 0;        // CommitLog bytes, headers excluded
  uint64_t heartbeats_sent = 0;
  uint64_t acks_received = 0;
  uint64_t acks_beyond_max = 0;   // reports past our max offset: connection closed
};

class HAService final : public store::ReplicationHook {
 public:
  HAService(env::Env& env, store::MessageStore& store, std::string listen_address);
  ~HAService() override;
  HAService(const HAService&) = delete;
  HAService& operator=(const HAService&) = delete;

  // Listens; an error (address in use) is the broker's start failure.
  Status start();
  // Stops listening, closes every connection, fails waiting puts (kTimeout).
  void shutdown();

  // store::ReplicationHook
  void notify_appended(PhyOffset max_offset) override;
  bool is_slave_ok(PhyOffset end_offset) const override;
  void wait_for_slave(PhyOffset end_offset, std::function<void(bool acked)> done) override;

  PhyOffset push2slave_max_offset() const { return push2slave_max_offset_; }
  size_t connection_count() const { return connections_.size(); }
  // Every slave connection by id, in accept order (status pages, /metrics).
  const std::map<uint64_t, std::unique_ptr<HAConnection>>& connections() const { return connections_; }
  const std::string& listen_address() const { return listen_address_; }
  const HAServiceStats& stats() const { return stats_; }
  const GroupTransferService& group_transfer() const { return group_transfer_; }

 private:
  friend class HAConnection;
  void on_accept(std::shared_ptr<env::Connection> connection);
  // A slave acknowledged offset (already checked against our max).
  void on_slave_ack(PhyOffset offset);
  // Forgets a closed connection from a later task (never inside its own call).
  void remove_connection_soon(uint64_t id);
  env::Env& env() { return env_; }
  store::MessageStore& store() { return store_; }
  HAServiceStats& mutable_stats() { return stats_; }

  env::Env& env_;
  store::MessageStore& store_;
  std::string listen_address_;
  std::shared_ptr<env::Listener> listener_;
  std::map<uint64_t, std::unique_ptr<HAConnection>> connections_;
  uint64_t next_connection_id_ = 1;
  PhyOffset push2slave_max_offset_{0};
  GroupTransferService group_transfer_;
  bool push_scheduled_ = false;
  bool running_ = false;
  HAServiceStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::ha
