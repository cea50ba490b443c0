// HASimWorld: a master and a slave BrokerController of one broker group, a
// NameServer and a client, each a SimProcess on its own simulated machine
// (own SimDisk, host 10.0.0.x) on one SimNet, in virtual time. Tests send
// with the remoting requests clients use (broker_sim_world.h's builders),
// partition the network, pause, crash or power off either broker, and
// compare the two CommitLogs byte for byte.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/ha/ha_client.h"
#include "broker/ha/ha_service.h"
#include "broker/ha/slave_synchronize.h"
#include "broker/namesrv/namesrv_controller.h"
#include "broker/processor/test/broker_sim_world.h"
#include "sim/sim_net.h"

namespace mqlab::ha::testing {

using broker::BrokerController;
using broker::testing::PendingCall;
using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;

inline constexpr const char* kMasterHost = "10.0.0.1";
inline constexpr const char* kSlaveHost = "10.0.0.2";
inline constexpr const char* kNamesrvHost = "10.0.0.5";
inline constexpr const char* kClientHost = "10.0.0.9";
inline constexpr const char* kMasterAddr = "10.0.0.1:10911";
inline constexpr const char* kMasterHaAddr = "10.0.0.1:10912";
inline constexpr const char* kSlaveAddr = "10.0.0.2:10911";
inline constexpr const char* kNamesrvAddr = "10.0.0.5:9876";

// Segments of 72 KiB so a few hundred messages roll several of them (and
// their BLANK records travel in the stream); ASYNC_FLUSH unless a test says.
inline store::MessageStoreConfig ha_store_config(store::BrokerRole role) {
  store::MessageStoreConfig config = broker::testing::test_store_config();
  config.flushDiskType = store::FlushDiskType::ASYNC_FLUSH;
  config.brokerRole = role;
  return config;
}

class HASimWorld {
 public:
  explicit HASimWorld(store::BrokerRole master_role = store::BrokerRole::ASYNC_MASTER)
      : random_(11),
        clock_(scheduler_),
        net_(scheduler_, random_.split()),
        master_disk_(scheduler_, sim::DiskProfile::sata_ssd(), disk_options("master-disk"), random_.split()),
        slave_disk_(scheduler_, sim::DiskProfile::sata_ssd(), disk_options("slave-disk"), random_.split()),
        master_process_("master", scheduler_, clock_, {sim::Mount{"/", &master_disk_}}, random_.split(), net_,
                        kMasterHost),
        slave_process_("slave", scheduler_, clock_, {sim::Mount{"/", &slave_disk_}}, random_.split(), net_,
                       kSlaveHost),
        namesrv_process_("namesrv", scheduler_, clock_, {}, random_.split(), net_, kNamesrvHost),
        client_process_("client", scheduler_, clock_, {}, random_.split(), net_, kClientHost) {
    master_config_ = broker_config(kMasterHost, 0);
    slave_config_ = broker_config(kSlaveHost, 1);
    master_store_ = ha_store_config(master_role);
    slave_store_ = ha_store_config(store::BrokerRole::SLAVE);
    namesrv::NamesrvConfig namesrv_config;
    namesrv_config.listenAddress = kNamesrvAddr;
    namesrv_ = std::make_unique<namesrv::NamesrvController>(namesrv_process_.start(), namesrv_config);
    namesrv_->start([](Status status) { MQ_ASSERT(status.ok()); });
    client_env_ = &client_process_.start();
    client_ = std::make_unique<remoting::RemotingClient>(*client_env_);
  }

  ~HASimWorld() {
    client_.reset();
    master_.reset();
    slave_.reset();
    namesrv_.reset();
  }

  Status start_master() { return start(master_process_, master_, master_config_, master_store_); }
  Status start_slave() { return start(slave_process_, slave_, slave_config_, slave_store_); }
  void crash_master() { crash(master_process_, master_); }
  void crash_slave() { crash(slave_process_, slave_); }
  // The machine loses power: the process dies and unsynced writes are lost.
  void power_loss_master() {
    crash_master();
    master_disk_.power_loss(random_);
  }
  void power_loss_slave() {
    crash_slave();
    slave_disk_.power_loss(random_);
  }

  PendingCall call_async(RemotingCommand request, const std::string& to = kMasterAddr, Nanos timeout = seconds(10)) {
    auto slot = std::make_shared<std::optional<Result<RemotingCommand>>>();
    client_->invoke(to, std::move(request), timeout,
                    [slot](Result<RemotingCommand> response) { *slot = std::move(response); });
    return slot;
  }
  RemotingCommand must_call(RemotingCommand request, const std::string& to = kMasterAddr,
                            Nanos timeout = seconds(10)) {
    PendingCall slot = call_async(std::move(request), to, timeout);
    run_until([&] { return slot->has_value(); }, timeout + seconds(1));
    EXPECT_TRUE(slot->has_value() && (*slot)->ok());
    return slot->has_value() && (*slot)->ok() ? std::move(**slot).value() : RemotingCommand{};
  }
  // One message of body_bytes to queue 0 of topic; the response.
  RemotingCommand send(const std::string& topic, size_t body_bytes, char fill = 'm') {
    return must_call(broker::testing::send_v2(topic, std::string(body_bytes, fill)));
  }

  template <typename Predicate>
  void run_until(Predicate done, Nanos limit = seconds(120)) {
    const Nanos deadline = scheduler_.now() + limit;
    while (!done() && scheduler_.pending_count() > 0 && scheduler_.next_due() <= deadline) scheduler_.run_one();
  }
  void run_for(Nanos duration) { scheduler_.run_until(scheduler_.now() + duration); }
  Nanos now() const { return scheduler_.now(); }

  // Runs until the slave's CommitLog ends where the master's does.
  bool wait_caught_up(Nanos limit = seconds(30)) {
    run_until([&] { return slave_ && master_ && slave_store().max_phy_offset() == master_store().max_phy_offset(); },
              limit);
    return slave_ && master_ && slave_store().max_phy_offset() == master_store().max_phy_offset();
  }

  // The bytes [from, to) of a store's CommitLog, read segment by segment.
  static std::vector<uint8_t> log_bytes(store::MessageStore& store, PhyOffset from, PhyOffset to) {
    std::vector<uint8_t> bytes;
    for (PhyOffset at = from; at < to;) {
      Result<store::FileRegion> region = store.commit_log_region(at, 1 << 20);
      EXPECT_TRUE(region.ok()) << region.status().to_string();
      if (!region.ok() || region->length == 0) break;
      const uint32_t length = static_cast<uint32_t>(std::min<int64_t>(region->length, to - at));
      region->length = length;
      Result<std::vector<uint8_t>> chunk = store::MessageStore::read_region(*region);
      EXPECT_TRUE(chunk.ok());
      bytes.insert(bytes.end(), chunk->begin(), chunk->end());
      at += length;
    }
    return bytes;
  }
  // Whether the slave's log equals the master's over the slave's extent.
  ::testing::AssertionResult slave_is_prefix_of_master() {
    store::MessageStore& slave = slave_store();
    store::MessageStore& master = master_store();
    if (slave.max_phy_offset() > master.max_phy_offset()) {
      return ::testing::AssertionFailure() << "slave ends at " << slave.max_phy_offset().to_string()
                                           << ", past the master's " << master.max_phy_offset().to_string();
    }
    const auto ours = log_bytes(slave, slave.min_phy_offset(), slave.max_phy_offset());
    const auto theirs = log_bytes(master, slave.min_phy_offset(), slave.max_phy_offset());
    if (ours != theirs) return ::testing::AssertionFailure() << "the logs differ";
    return ::testing::AssertionSuccess() << ours.size() << " bytes equal";
  }

  BrokerController& master() { return *master_; }
  BrokerController& slave() { return *slave_; }
  bool master_running() const { return master_ != nullptr; }
  bool slave_running() const { return slave_ != nullptr; }
  store::MessageStore& master_store() { return master_->message_store(); }
  store::MessageStore& slave_store() { return slave_->message_store(); }
  HAService& ha_service() { return *master_->ha_service(); }
  HAClient& ha_client() { return *slave_->ha_client(); }
  broker::BrokerConfig& master_config() { return master_config_; }
  broker::BrokerConfig& slave_config() { return slave_config_; }
  store::MessageStoreConfig& master_store_config() { return master_store_; }
  store::MessageStoreConfig& slave_store_config() { return slave_store_; }
  sim::SimNet& net() { return net_; }
  sim::Scheduler& scheduler() { return scheduler_; }
  sim::SimEnv& client_env() { return *client_env_; }
  sim::SimProcess& slave_process() { return slave_process_; }
  namesrv::NamesrvController& namesrv() { return *namesrv_; }

 private:
  static sim::SimDiskOptions disk_options(const char* name) {
    return sim::SimDiskOptions{.name = name, .capacity_bytes = 1ull << 30, .torn_sector_probability = 0.0};
  }
  static broker::BrokerConfig broker_config(const char* host, int64_t broker_id) {
    broker::BrokerConfig config = broker::testing::test_broker_config();
    config.brokerIP1 = host;
    config.brokerId = broker_id;
    config.namesrvAddr = kNamesrvAddr;
    return config;
  }
  Status start(sim::SimProcess& process, std::unique_ptr<BrokerController>& broker, const broker::BrokerConfig& config,
               const store::MessageStoreConfig& store_config) {
    MQ_ASSERT(!broker);
    broker = std::make_unique<BrokerController>(process.start(), config, store_config);
    std::optional<Status> started;
    broker->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); });
    MQ_ASSERT(started.has_value());
    if (!started->ok()) crash(process, broker);
    return *started;
  }
  static void crash(sim::SimProcess& process, std::unique_ptr<BrokerController>& broker) {
    if (process.running()) process.kill();
    broker.reset();
  }

  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimNet net_;
  sim::SimDisk master_disk_;
  sim::SimDisk slave_disk_;
  sim::SimProcess master_process_;
  sim::SimProcess slave_process_;
  sim::SimProcess namesrv_process_;
  sim::SimProcess client_process_;
  broker::BrokerConfig master_config_;
  broker::BrokerConfig slave_config_;
  store::MessageStoreConfig master_store_;
  store::MessageStoreConfig slave_store_;
  std::unique_ptr<namesrv::NamesrvController> namesrv_;
  sim::SimEnv* client_env_ = nullptr;
  std::unique_ptr<remoting::RemotingClient> client_;
  std::unique_ptr<BrokerController> master_;
  std::unique_ptr<BrokerController> slave_;
};

}  // namespace mqlab::ha::testing
