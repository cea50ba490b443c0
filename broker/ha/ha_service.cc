#include "broker/ha/ha_service.h"

#include <utility>

#include "broker/common/log.h"

namespace mqlab::ha {
namespace {
constexpr const char* kHaServiceLog = "ha";
}  // namespace

HAService::HAService(env::Env& env, store::MessageStore& store, std::string listen_address)
    : env_(env),
      store_(store),
      listen_address_(std::move(listen_address)),
      group_transfer_(env, millis(store.config().slaveTimeout)) {
  MQ_ASSERT(store_.config().brokerRole != store::BrokerRole::SLAVE);
}

HAService::~HAService() {
  // No I/O beyond what dropping connections does: a destroyed service is a
  // crashed broker, and its slaves see the connections break.
  connections_.clear();
}

Status HAService::start() {
  MQ_ASSERT(!running_);
  Result<std::shared_ptr<env::Listener>> listener = env_.network().listen(
      listen_address_, lifetime_.guard([this](std::shared_ptr<env::Connection> connection) {
        on_accept(std::move(connection));
      }));
  if (!listener.ok()) return listener.status().with_context("HA service listening on " + listen_address_);
  listener_ = std::move(listener).value();
  running_ = true;
  MQ_LOG(kInfo, kHaServiceLog, "HA service listening on " << listener_->local_address());
  return Status::Ok();
}

void HAService::shutdown() {
  if (!running_) return;
  running_ = false;
  if (listener_) listener_->close();
  listener_.reset();
  for (auto& [id, connection] : connections_) connection->close("master shutting down");
  connections_.clear();
  group_transfer_.fail_all();
}

void HAService::on_accept(std::shared_ptr<env::Connection> connection) {
  MQ_ASSERT(connection != nullptr);
  if (!running_) return connection->close();
  const uint64_t id = next_connection_id_++;
  ++stats_.connections_accepted;
  MQ_LOG(kInfo, kHaServiceLog, "slave connected from " << connection->remote_address() << " (HA connection " << id << ")");
  auto [it, inserted] = connections_.emplace(id, std::make_unique<HAConnection>(*this, std::move(connection), id));
  MQ_ASSERT(inserted);
  it->second->start();
}

void HAService::remove_connection_soon(uint64_t id) {
  env_.executor().post(lifetime_.guard([this, id] {
    if (connections_.erase(id) > 0) ++stats_.connections_closed;
  }));
}

void HAService::notify_appended(PhyOffset max_offset) {
  MQ_ASSERT(max_offset <= store_.max_phy_offset());
  // Coalesced: a burst of puts in one task becomes one push per slave.
  if (!running_ || push_scheduled_ || connections_.empty()) return;
  push_scheduled_ = true;
  env_.executor().post(lifetime_.guard([this] {
    push_scheduled_ = false;
    for (auto& [id, connection] : connections_) connection->push();
  }));
}

bool HAService::is_slave_ok(PhyOffset end_offset) const {
  if (!running_ || connections_.empty()) return false;
  return end_offset - push2slave_max_offset_ < store_.config().haSlaveFallbehindMax;
}

void HAService::wait_for_slave(PhyOffset end_offset, std::function<void(bool acked)> done) {
  MQ_ASSERT(done != nullptr);
  if (!running_) {
    env_.executor().post([done = std::move(done)] { done(false); });
    return;
  }
  group_transfer_.submit(end_offset, push2slave_max_offset_, [done = std::move(done)](TransferOutcome outcome) {
    done(outcome == TransferOutcome::kTransferred);
  });
}

void HAService::on_slave_ack(PhyOffset offset) {
  MQ_ASSERT(offset <= store_.max_phy_offset());
  ++stats_.acks_received;
  if (offset <= push2slave_max_offset_) return;
  push2slave_max_offset_ = offset;
  group_transfer_.notify_acked(offset);
}

}  // namespace mqlab::ha
