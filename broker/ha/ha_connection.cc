#include "broker/ha/ha_connection.h"

#include <algorithm>
#include <utility>

#include "broker/common/log.h"
#include "broker/ha/ha_service.h"

namespace mqlab::ha {
namespace {
constexpr const char* kHaConnectionLog = "ha";
// How often a connection checks its heartbeat and housekeeping timers; the
// intervals themselves are seconds, so a second of slack is noise.
constexpr Nanos kHaConnectionTickInterval = seconds(1);
// Transfer frames in flight ahead of the slave's acks, in batches.
constexpr int64_t kMaxInFlightBatches = 4;
}  // namespace

HAConnection::HAConnection(HAService& service, std::shared_ptr<env::Connection> connection, uint64_t id)
    : service_(service), connection_(std::move(connection)), id_(id), remote_(connection_->remote_address()) {
  MQ_ASSERT(id_ > 0);
}

HAConnection::~HAConnection() {
  if (tick_timer_ != env::kNoTimer) service_.env().executor().cancel(tick_timer_);
  if (connection_) connection_->close();
}

void HAConnection::start() {
  const Nanos now = service_.env().clock().now_ns();
  last_read_ns_ = now;
  last_write_ns_ = now;
  connection_->set_handlers(lifetime_.guard([this](std::span<const uint8_t> bytes) { on_bytes(bytes); }),
                            lifetime_.guard([this](Status reason) {
                              close("connection ended: " + reason.to_string());
                            }));
  tick_timer_ = service_.env().executor().run_after(kHaConnectionTickInterval, lifetime_.guard([this] { tick(); }));
}

void HAConnection::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  MQ_LOG(kInfo, kHaConnectionLog, "HA connection " << id_ << " to slave " << remote_ << " closed: " << why);
  connection_->close();
  if (tick_timer_ != env::kNoTimer) service_.env().executor().cancel(tick_timer_);
  tick_timer_ = env::kNoTimer;
  service_.remove_connection_soon(id_);
}

void HAConnection::on_bytes(std::span<const uint8_t> bytes) {
  if (closed_) return;
  last_read_ns_ = service_.env().clock().now_ns();
  Result<std::optional<PhyOffset>> report = decoder_.feed(bytes);
  if (!report.ok()) return close("garbage from the slave: " + report.status().to_string());
  if (report->has_value()) on_report(**report);
}

void HAConnection::on_report(PhyOffset offset) {
  const PhyOffset max = service_.store().max_phy_offset();
  if (!transferring()) {
    start_transfer(offset);
    if (closed_ || offset > max) return;  // a request past our max acknowledges nothing
  } else if (offset > max) {
    ++service_.mutable_stats().acks_beyond_max;
    return close("slave acknowledged offset " + offset.to_string() + " beyond the master's max " + max.to_string());
  }
  ack_offset_ = offset;
  service_.on_slave_ack(offset);
  push();  // the window moved
}

void HAConnection::start_transfer(PhyOffset requested) {
  store::MessageStore& store = service_.store();
  const PhyOffset max = store.max_phy_offset();
  PhyOffset start = requested;
  if (requested.value() == 0) {
    // A fresh slave starts at the newest segment (RocketMQ 4.x, #3661).
    start = max - max.value() % store.config().mappedFileSizeCommitLog;
  } else if (requested > max) {
    MQ_LOG(kWarn, kHaConnectionLog, "slave " << remote_ << " asks for offset " << requested.to_string()
                                 << " but the master's log ends at " << max.to_string()
                                 << ": starting there, the slave decides what its extra bytes mean");
    start = max;
  } else if (requested < store.min_phy_offset()) {
    return close("slave asks for offset " + requested.to_string() + ", below the master's min offset " +
                 store.min_phy_offset().to_string() + " (removed by retention)");
  }
  MQ_ASSERT(start <= max);
  MQ_ASSERT(start.value() >= 0);
  next_transfer_from_ = start;
  transfer_start_ = start;
  ack_offset_ = std::min(requested, start);
  MQ_LOG(kInfo, kHaConnectionLog, "slave " << remote_ << " requested " << requested.to_string() << ", transfer starts at "
                               << start.to_string());
  // The first frame goes out at once, even empty: it tells the slave where
  // the stream starts (a slave ahead of us learns it here, not 5 s later).
  push();
  if (!closed_ && next_transfer_from_ == start) {
    send_frame_header(next_transfer_from_, 0);
  }
}

void HAConnection::push() {
  if (closed_ || !transferring()) return;
  store::MessageStore& store = service_.store();
  const int32_t batch = store.config().haTransferBatchSize;
  const int64_t window = kMaxInFlightBatches * batch;
  // A fresh slave acks 0 while the stream starts at the newest segment: the
  // window counts from the transfer's start until acks pass it.
  const PhyOffset acked = std::max(ack_offset_, transfer_start_);
  while (next_transfer_from_ < store.max_phy_offset() && next_transfer_from_ - acked < window) {
    Result<store::FileRegion> region = store.commit_log_region(next_transfer_from_, batch);
    if (!region.ok()) return close("cannot read the commitlog for the slave: " + region.status().to_string());
    MQ_ASSERT(region->length > 0);
    MQ_ASSERT(region->phy_offset == next_transfer_from_);
    send_frame_header(next_transfer_from_, static_cast<int32_t>(region->length));
    connection_->send_file_region(region->file, region->position, region->length);
    next_transfer_from_ += region->length;
    service_.mutable_stats().bytes_sent += region->length;
  }
}

void HAConnection::send_frame_header(PhyOffset offset, int32_t body_size) {
  const auto header = encode_transfer_header(offset, body_size);
  connection_->send(std::vector<uint8_t>(header.begin(), header.end()));
  last_write_ns_ = service_.env().clock().now_ns();
  ++service_.mutable_stats().frames_sent;
  if (body_size == 0) ++service_.mutable_stats().heartbeats_sent;
}

void HAConnection::tick() {
  tick_timer_ = env::kNoTimer;
  if (closed_) return;
  const store::MessageStoreConfig& config = service_.store().config();
  const Nanos now = service_.env().clock().now_ns();
  if (now - last_read_ns_ > millis(config.haHousekeepingInterval)) {
    return close("no report from the slave for " + std::to_string(config.haHousekeepingInterval) + " ms");
  }
  push();
  if (transferring() && now - last_write_ns_ >= millis(config.haSendHeartbeatInterval)) {
    send_frame_header(next_transfer_from_, 0);
  }
  tick_timer_ = service_.env().executor().run_after(kHaConnectionTickInterval, lifetime_.guard([this] { tick(); }));
}

}  // namespace mqlab::ha
