// HAConnection: the master's end of one slave's HA connection (RocketMQ's
// HAConnection, its ReadSocketService and WriteSocketService in one object
// on the executor). Owned by the HAService.
//
// Protocol (ha_protocol.h has the byte layout):
//   1. Nothing is sent until the slave's first offset report, which is its
//      requested start: 0 (an empty store) starts at the beginning of the
//      master's newest CommitLog segment, so older segments never reach a
//      fresh slave (RocketMQ 4.x; apache/rocketmq #3661); a request past the
//      master's max starts at the max (the slave then sees the master is
//      behind it and applies its divergence policy, ha_client.h); a request
//      below the master's min offset cannot be served and closes.
//   2. CommitLog bytes follow in frames of at most haTransferBatchSize, cut
//      at segment ends, read from the segment files (sendfile for real).
//      At most kMaxInFlightBytes go out ahead of the slave's acks, so a slave
//      catching up cannot queue the whole log in the transport.
//   3. Each later report is an ack: one past the master's max offset closes
//      the connection (4.9.x, apache/rocketmq #3015); otherwise it raises
//      push2SlaveMaxOffset and wakes SYNC_MASTER puts.
//   4. After haSendHeartbeatInterval without a frame, an empty frame
//      (bodySize 0) at the next transfer offset; a slave not heard from for
//      haHousekeepingInterval is dropped.
//
// Invariants: ack_offset <= next_transfer_from once transferring;
// next_transfer_from <= the store's max offset; after close() nothing is
// sent and no callback acts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "broker/common/lifetime.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/ha/ha_protocol.h"

namespace mqlab::ha {

class HAService;

class HAConnection {
 public:
  HAConnection(HAService& service, std::shared_ptr<env::Connection> connection, uint64_t id);
  ~HAConnection();
  HAConnection(const HAConnection&) = delete;
  HAConnection& operator=(const HAConnection&) = delete;

  void start();
  // Sends what the window allows of what the store holds beyond next_transfer_from.
  void push();
  // Closes the connection and has the service forget this object (later).
  void close(const std::string& why);

  uint64_t id() const { return id_; }
  bool transferring() const { return next_transfer_from_.value() >= 0; }
  PhyOffset ack_offset() const { return ack_offset_; }
  PhyOffset next_transfer_from() const { return next_transfer_from_; }
  const std::string& remote_address() const { return remote_; }

 private:
  void on_bytes(std::span<const uint8_t> bytes);
  void on_report(PhyOffset offset);
  void start_transfer(PhyOffset requested);
  void send_frame_header(PhyOffset offset, int32_t body_size);
  void tick();

  HAService& service_;
  std::shared_ptr<env::Connection> connection_;
  uint64_t id_;
  std::string remote_;
  OffsetReportDecoder decoder_;
  PhyOffset next_transfer_from_{-1};  // -1 until the first report
  PhyOffset ack_offset_{-1};
  PhyOffset transfer_start_{-1};  // the window counts from here until acks pass it
  Nanos last_read_ns_ = 0;
  Nanos last_write_ns_ = 0;
  env::TimerId tick_timer_ = env::kNoTimer;
  bool closed_ = false;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::ha
