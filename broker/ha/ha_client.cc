#include "broker/ha/ha_client.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "broker/common/log.h"

namespace mqlab::ha {
namespace {
constexpr const char* kHaClientLog = "ha";
// RocketMQ's HAClient waits 5 s after a failed connect before the next one.
constexpr Nanos kReconnectInterval = seconds(5);
constexpr Nanos kConnectTimeout = seconds(3);
constexpr Nanos kHaClientTickInterval = seconds(1);
// The largest frame body accepted. The master cuts at haTransferBatchSize;
// RocketMQ's slave read buffer is 4 MiB, so no master sends more.
constexpr int32_t kMaxFrameBodyBytes = 4 * 1024 * 1024;

// The start of the newest record any ConsumeQueue indexes below end: the
// dispatcher put it there, so it is a record boundary of this log, found
// without reading the log. nullopt when no queue indexes one.
std::optional<PhyOffset> newest_indexed_record(store::MessageStore& store, PhyOffset end) {
  std::optional<PhyOffset> newest;
  for (const auto& [topic, queue_id] : store.queues()) {
    store::ConsumeQueue* queue = store.find_consume_queue(topic, queue_id);
    if (queue == nullptr || queue->max_offset() <= queue->min_offset()) continue;
    Result<std::optional<store::ConsumeQueueEntry>> entry = queue->get(queue->max_offset() - 1);
    if (!entry.ok() || !entry->has_value() || (*entry)->is_placeholder()) continue;
    const store::ConsumeQueueEntry& last = **entry;
    if (last.offset < store.min_phy_offset() || last.end_offset() > end) continue;
    if (!newest || last.offset > *newest) newest = last.offset;
  }
  return newest;
}

// The start of the last message record in [from, end), scanning record by
// record; nullopt when there is none or the scan stops before end (from was
// not a record boundary after all).
std::optional<PhyOffset> last_record_from(store::MessageStore& store, PhyOffset from, PhyOffset end,
                                          uint64_t& bytes_scanned) {
  MQ_ASSERT(from <= end);
  store::CommitLogScanner scanner(store.commit_log(), from, end, /*check_crc=*/false);
  std::optional<PhyOffset> last;
  while (std::optional<store::ScannedRecord> record = scanner.next()) last = record->offset;
  bytes_scanned += static_cast<uint64_t>(scanner.position() - from);
  if (scanner.position() != end || scanner.stopped_on_corruption()) return std::nullopt;
  return last;
}

// Where the last message record of the log starts (the resume check's L), or
// the max offset when there is none to find. It scans forward from the
// newest record a ConsumeQueue indexes, so a resume reads the log's
// undispatched tail, not its newest segments; only when no queue helps does
// it scan the newest two segments from their starts.
PhyOffset last_record_start(store::MessageStore& store, uint64_t& bytes_scanned) {
  const PhyOffset max = store.max_phy_offset();
  if (std::optional<PhyOffset> hint = newest_indexed_record(store, max)) {
    if (std::optional<PhyOffset> last = last_record_from(store, *hint, max, bytes_scanned)) return *last;
  }
  const auto& files = store.commit_log().file_queue().files();
  int segments_tried = 0;
  for (auto it = files.rbegin(); it != files.rend() && segments_tried < 2; ++it, ++segments_tried) {
    const PhyOffset from((*it)->file_from_offset());
    if (from >= max) continue;
    store::CommitLogScanner scanner(store.commit_log(), from, max, /*check_crc=*/false);
    std::optional<PhyOffset> last;
    while (std::optional<store::ScannedRecord> record = scanner.next()) last = record->offset;
    bytes_scanned += static_cast<uint64_t>(scanner.position() - from);
    if (last) return *last;
  }
  return max;
}
}  // namespace

const char* ha_client_state_name(HAClientState state) {
  switch (state) {
    case HAClientState::kIdle: return "IDLE";
    case HAClientState::kConnecting: return "CONNECTING";
    case HAClientState::kTransfer: return "TRANSFER";
    case HAClientState::kRefused: return "REFUSED";
    case HAClientState::kStopped: return "STOPPED";
  }
  return "?";
}

HAClient::HAClient(env::Env& env, store::MessageStore& store) : env_(env), store_(store) {
  MQ_ASSERT(store_.config().brokerRole == store::BrokerRole::SLAVE);
}

HAClient::~HAClient() {
  if (tick_timer_ != env::kNoTimer) env_.executor().cancel(tick_timer_);
  if (connection_) connection_->close();
}

void HAClient::start() {
  MQ_ASSERT(!started_);
  started_ = true;
  schedule_tick();
  if (!master_address_.empty()) connect_now();
}

void HAClient::shutdown() {
  if (state_ == HAClientState::kStopped) return;
  close_connection();
  state_ = HAClientState::kStopped;
  if (tick_timer_ != env::kNoTimer) env_.executor().cancel(tick_timer_);
  tick_timer_ = env::kNoTimer;
}

void HAClient::update_master_address(const std::string& address) {
  if (address == master_address_) return;
  MQ_LOG(kInfo, kHaClientLog, "slave's master HA address: '" << master_address_ << "' -> '" << address << "'");
  master_address_ = address;
  if (!started_ || state_ == HAClientState::kRefused || state_ == HAClientState::kStopped) return;
  close_connection();
  state_ = HAClientState::kIdle;
  if (!master_address_.empty()) connect_now();
}

void HAClient::schedule_tick() {
  tick_timer_ = env_.executor().run_after(kHaClientTickInterval, lifetime_.guard([this] { tick(); }));
}

void HAClient::tick() {
  tick_timer_ = env::kNoTimer;
  if (state_ == HAClientState::kStopped || state_ == HAClientState::kRefused) return;
  const Nanos now = env_.clock().now_ns();
  const store::MessageStoreConfig& config = store_.config();
  if (connection_) {
    if (now - last_read_ns_ > millis(config.haHousekeepingInterval)) {
      drop("nothing from the master for " + std::to_string(config.haHousekeepingInterval) + " ms");
    } else if (now - last_report_ns_ >= millis(config.haSendHeartbeatInterval)) {
      report(/*force=*/true);
    }
  } else if (!connect_in_flight_ && !master_address_.empty() && now >= next_connect_ns_) {
    connect_now();
  }
  schedule_tick();
}

void HAClient::connect_now() {
  MQ_ASSERT(!connection_);
  MQ_ASSERT(!master_address_.empty());
  state_ = HAClientState::kConnecting;
  connect_in_flight_ = true;
  next_connect_ns_ = env_.clock().now_ns() + kReconnectInterval;
  const uint64_t generation = ++generation_;
  env_.network().connect(master_address_, kConnectTimeout,
                         lifetime_.guard([this, generation](Result<std::shared_ptr<env::Connection>> connection) {
                           on_connected(generation, std::move(connection));
                         }));
}

void HAClient::on_connected(uint64_t generation, Result<std::shared_ptr<env::Connection>> connection) {
  if (generation != generation_ || state_ != HAClientState::kConnecting) {
    if (connection.ok()) (*connection)->close();  // an attempt we gave up on
    return;
  }
  connect_in_flight_ = false;
  if (!connection.ok()) {
    MQ_LOG(kInfo, kHaClientLog, "slave cannot reach master " << master_address_ << ": " << connection.status().to_string());
    return;  // tick() retries after kReconnectInterval
  }
  connection_ = std::move(connection).value();
  ++stats_.connects;
  if (Status prepared = prepare_resume(); !prepared.ok()) return drop("cannot resume: " + prepared.to_string());
  connection_->set_handlers(lifetime_.guard([this, generation](std::span<const uint8_t> bytes) {
                              if (generation == generation_) on_bytes(bytes);
                            }),
                            lifetime_.guard([this, generation](Status reason) {
                              if (generation == generation_) drop("connection ended: " + reason.to_string());
                            }));
  state_ = HAClientState::kTransfer;
  last_read_ns_ = env_.clock().now_ns();
  MQ_LOG(kInfo, kHaClientLog, "slave connected to master " << master_address_ << ", log ends at "
                                                   << resume_at_.to_string() << ", asking from "
                                                   << confirmed_.to_string());
  report(/*force=*/true);  // at once: see "Deviation" in the header
}

Status HAClient::prepare_resume() {
  MQ_RETURN_IF_ERROR(store_.truncate_replica_tail());
  resume_at_ = store_.max_phy_offset();
  const bool fresh = resume_at_.value() == 0;
  confirmed_ = fresh ? PhyOffset(0) : last_record_start(store_, stats_.bytes_scanned_to_resume);
  expected_ = fresh ? PhyOffset(-1) : confirmed_;
  reported_ = PhyOffset(-1);
  first_frame_ = true;
  decoder_ = std::make_unique<TransferFrameDecoder>(std::max(kMaxFrameBodyBytes, store_.config().haTransferBatchSize));
  MQ_ASSERT(confirmed_ <= resume_at_);
  return Status::Ok();
}

void HAClient::on_bytes(std::span<const uint8_t> bytes) {
  MQ_ASSERT(connection_ != nullptr);
  last_read_ns_ = env_.clock().now_ns();
  decoder_->feed(bytes);
  const uint64_t generation = generation_;
  while (generation == generation_) {
    Result<std::optional<TransferFrame>> frame = decoder_->next();
    if (!frame.ok()) return drop("garbage from the master: " + frame.status().to_string());
    if (!frame->has_value()) break;
    if (!process_frame(**frame).ok()) return;  // the connection is gone
  }
  if (generation == generation_) report(/*force=*/false);
}

Status HAClient::process_frame(const TransferFrame& frame) {
  ++stats_.frames_received;
  const bool first = std::exchange(first_frame_, false);
  const int64_t body_size = static_cast<int64_t>(frame.body.size());
  if (expected_.value() >= 0 && frame.offset != expected_) {
    if (first && frame.offset < expected_) {
      refuse("the master's log ends at " + frame.offset.to_string() + ", below this slave's at " +
                 resume_at_.to_string(),
             resume_at_ - frame.offset);
      return Status::Aborted("refused");
    }
    ++stats_.offset_mismatches;
    drop("master pushed offset " + frame.offset.to_string() + ", expected " + expected_.to_string());
    return Status::Aborted("dropped");
  }
  if (body_size == 0) {
    // A heartbeat: the master has nothing past frame.offset. Below our end
    // it means its log stops inside our last record.
    if (frame.offset < resume_at_) {
      refuse("the master's log ends at " + frame.offset.to_string() + ", inside this slave's last record (log ends at " +
                 resume_at_.to_string() + ")",
             resume_at_ - frame.offset);
      return Status::Aborted("refused");
    }
    return Status::Ok();
  }
  PhyOffset at = frame.offset;
  std::span<const uint8_t> rest(frame.body);
  if (at < resume_at_) {
    const size_t overlap = static_cast<size_t>(std::min<int64_t>(body_size, resume_at_ - at));
    if (Status same = verify_overlap(at, rest.first(overlap)); !same.ok()) return same;
    stats_.bytes_verified += overlap;
    at += static_cast<int64_t>(overlap);
    rest = rest.subspan(overlap);
  }
  if (!rest.empty()) {
    if (Status appended = store_.append_replica(at, rest); !appended.ok()) {
      if (appended.code() == StatusCode::kCorruption) {
        refuse("the master's records do not line up with this slave's log: " + appended.to_string(), 0);
      } else {
        drop("appending the master's bytes failed: " + appended.to_string());
      }
      return Status::Aborted("closed");
    }
    stats_.bytes_appended += rest.size();
  }
  expected_ = frame.offset + body_size;
  confirmed_ = expected_;
  MQ_ASSERT(confirmed_ <= store_.max_phy_offset());
  return Status::Ok();
}

// The master's bytes [offset, offset + bytes.size()) must equal ours.
Status HAClient::verify_overlap(PhyOffset offset, std::span<const uint8_t> bytes) {
  MQ_ASSERT(offset + static_cast<int64_t>(bytes.size()) <= resume_at_);
  Result<std::vector<uint8_t>> ours = store_.commit_log().read(offset, static_cast<int32_t>(bytes.size()));
  if (!ours.ok()) {
    drop("cannot read this slave's own log for the resume check: " + ours.status().to_string());
    return Status::Aborted("dropped");
  }
  const auto [mine, theirs] = std::mismatch(ours->begin(), ours->end(), bytes.begin());
  if (mine == ours->end()) return Status::Ok();
  const PhyOffset differs_at = offset + (mine - ours->begin());
  refuse("the master's bytes differ from this slave's at offset " + differs_at.to_string(), resume_at_ - differs_at);
  return Status::Aborted("refused");
}

void HAClient::report(bool force) {
  if (!connection_) return;
  if (!force && confirmed_ == reported_) return;
  const auto bytes = encode_offset_report(confirmed_);
  connection_->send(std::vector<uint8_t>(bytes.begin(), bytes.end()));
  reported_ = confirmed_;
  last_report_ns_ = env_.clock().now_ns();
  ++stats_.reports_sent;
}

void HAClient::drop(const std::string& why) {
  MQ_LOG(kWarn, kHaClientLog, "slave drops its connection to master " << master_address_ << ": " << why);
  close_connection();
  ++stats_.disconnects;
  state_ = master_address_.empty() ? HAClientState::kIdle : HAClientState::kConnecting;
  next_connect_ns_ = env_.clock().now_ns() + kReconnectInterval;
}

void HAClient::refuse(const std::string& why, int64_t bytes_at_stake) {
  MQ_LOG(kError, kHaClientLog, "slave REFUSES master " << master_address_ << " and stays disconnected: " << why << "; "
                                               << bytes_at_stake
                                               << " bytes of this slave's log are not on the master. They are kept: "
                                                  "promote this slave or wipe it");
  close_connection();
  ++stats_.refusals;
  stats_.refused_bytes_at_stake = bytes_at_stake;
  refusal_reason_ = why;
  state_ = HAClientState::kRefused;
  if (tick_timer_ != env::kNoTimer) env_.executor().cancel(tick_timer_);
  tick_timer_ = env::kNoTimer;
}

void HAClient::close_connection() {
  ++generation_;  // callbacks of the old connection or attempt are ignored from now on
  connect_in_flight_ = false;
  if (connection_) connection_->close();
  connection_.reset();
  decoder_.reset();
}

}  // namespace mqlab::ha
