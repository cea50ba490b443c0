// BrokerController's replication wiring (RocketMQ's BrokerController and
// DefaultMessageStore HA start-up; broker/ha/ has the machinery):
//   master (ASYNC_MASTER, SYNC_MASTER)  an HAService on ha_server_addr(),
//       installed as the store's ReplicationHook, so SYNC_MASTER puts wait
//       for a slave and every append wakes the transfer;
//   SLAVE  an HAClient following haMasterAddress (when >= 6 characters, as
//       RocketMQ checks) or the haServerAddr the NameServer returns to its
//       registration, and a SlaveSynchronize copying the master's metadata.
//
// Deviation: while a SLAVE does not know its master yet (it registered
// before the master did), it registers again after 1 s instead of waiting
// for the periodic registration (10 s after start, then every 30 s), so a
// cluster started all at once replicates from its first seconds.
#include "broker/common/log.h"
#include "broker/ha/ha_client.h"
#include "broker/ha/ha_service.h"
#include "broker/ha/slave_synchronize.h"
#include "broker/processor/broker_controller.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::broker {
namespace {
constexpr const char* kBrokerControllerHaLog = "broker";
constexpr Nanos kMasterLookupRetry = seconds(1);
constexpr int64_t kFirstPeriodicRegistrationMs = 10'000;
// HAService.updateMasterAddress ignores shorter haMasterAddress values.
constexpr size_t kMinMasterAddressLength = 6;
}  // namespace

Status BrokerController::start_ha() {
  MQ_ASSERT(!ha_service_ && !ha_client_);
  if (store_config_.brokerRole != store::BrokerRole::SLAVE) {
    ha_service_ = std::make_unique<ha::HAService>(env_, *store_, config_.ha_server_addr());
    MQ_RETURN_IF_ERROR(ha_service_->start());
    store_->set_replication_hook(ha_service_.get());
    return Status::Ok();
  }
  ha_client_ = std::make_unique<ha::HAClient>(env_, *store_);
  if (store_config_.haMasterAddress.size() >= kMinMasterAddressLength) {
    ha_client_->update_master_address(store_config_.haMasterAddress);
  }
  ha_client_->start();
  slave_synchronize_ = std::make_unique<ha::SlaveSynchronize>(
      env_, topics_, offsets_, groups_, lifetime_.guard([this] { register_broker_all_soon(); }),
      store_->schedule_message_service().path());
  slave_synchronize_->start();
  MQ_ASSERT(ha_client_ && slave_synchronize_);
  return Status::Ok();
}

void BrokerController::shutdown_ha() {
  store_->set_replication_hook(nullptr);
  if (ha_service_) ha_service_->shutdown();
  if (ha_client_) ha_client_->shutdown();
  if (slave_synchronize_) slave_synchronize_->shutdown();
}

void BrokerController::on_registered(const std::vector<RegistrationOutcome>& outcomes) {
  if (store_config_.brokerRole != store::BrokerRole::SLAVE || !running_) return;
  MQ_ASSERT(ha_client_ && slave_synchronize_);
  for (const RegistrationOutcome& outcome : outcomes) {
    if (!outcome.status.ok() || outcome.master_addr.empty()) continue;
    if (slave_synchronize_->master_addr() != outcome.master_addr) {
      MQ_LOG(kInfo, kBrokerControllerHaLog, "slave " << config_.brokerName << "/" << config_.brokerId << " follows master "
                                   << outcome.master_addr << " (HA " << outcome.ha_server_addr << ")");
    }
    slave_synchronize_->set_master_addr(outcome.master_addr);
    if (store_config_.haMasterAddress.size() < kMinMasterAddressLength && !outcome.ha_server_addr.empty()) {
      ha_client_->update_master_address(outcome.ha_server_addr);
    }
    return;
  }
  // Only until the periodic registrations take over (10 s after start).
  const bool early = env_.clock().wall_ms() - boot_timestamp_ms_ < kFirstPeriodicRegistrationMs;
  if (!early || config_.namesrv_addrs().empty() || !slave_synchronize_->master_addr().empty() ||
      master_lookup_timer_ != env::kNoTimer) {
    return;
  }
  master_lookup_timer_ = env_.executor().run_after(kMasterLookupRetry, lifetime_.guard([this] {
    master_lookup_timer_ = env::kNoTimer;
    if (running_) register_broker_all();
  }));
}

}  // namespace mqlab::broker
