// BrokerSimWorld: one BrokerController on a simulated machine (host
// 10.0.0.1, a SimDisk, virtual time) and a client process (host 10.0.0.9)
// that speaks to it with a RemotingClient over a shared loopback network.
// Tests build requests the way ali-ons and the Java client do, send them with
// call() (which runs virtual time until the answer comes) and look at the
// response, the store and the metadata. The broker can be shut down, killed
// (kill -9) and restarted over the same disk.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/env/loopback_network.h"
#include "broker/processor/broker_controller.h"
#include "broker/remoting/remoting_client.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/route_data.h"
#include "broker/store/message_codec.h"
#include "sim/disk_profile.h"
#include "sim/scheduler.h"
#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::broker::testing {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseCode;

inline constexpr const char* kBrokerHost = "10.0.0.1";
inline constexpr const char* kClientHost = "10.0.0.9";
inline constexpr const char* kBrokerAddr = "10.0.0.1:10911";

inline BrokerConfig test_broker_config() {
  BrokerConfig config;
  config.brokerName = "broker-a";
  config.brokerIP1 = kBrokerHost;
  config.listenPort = 10911;
  return config;
}

// Small segments so tests stay small; SYNC_FLUSH so a put's answer waits
// for its group commit, as a careful deployment's would.
inline store::MessageStoreConfig test_store_config() {
  store::MessageStoreConfig config;
  config.storePathRootDir = "/store";
  config.maxMessageSize = 4096;
  config.mappedFileSizeCommitLog = 64 * 1024 + 4096 + 8 + 4096;
  config.mappedFileSizeConsumeQueue = 20 * 64;
  config.maxHashSlotNum = 64;
  config.maxIndexNum = 256;
  config.flushDiskType = store::FlushDiskType::SYNC_FLUSH;
  config.cleanResourceInterval = 1'000;
  return config;
}

// A pulled body cut into its records, each decoded into owned values.
struct PulledMessage {
  std::string topic;
  int32_t queue_id = 0;
  int64_t queue_offset = 0;
  int64_t physical_offset = 0;
  int32_t reconsume_times = 0;
  std::string body;
  store::MessageProperties properties;
  store::HostAddress born_host;
  store::HostAddress store_host;
};

inline std::vector<PulledMessage> decode_records(const std::vector<uint8_t>& body) {
  std::vector<PulledMessage> messages;
  size_t at = 0;
  while (at < body.size()) {
    Result<store::DecodedRecord> decoded = store::decode_record(std::span<const uint8_t>(body).subspan(at));
    EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
    if (!decoded.ok() || decoded->kind != store::RecordKind::kMessage) break;
    const store::DecodedMessage& m = decoded->message;
    messages.push_back(PulledMessage{
        std::string(m.topic), m.queue_id, m.queue_offset.value(), m.physical_offset.value(), m.reconsume_times,
        std::string(m.body.begin(), m.body.end()), m.properties(), m.born_host, m.store_host});
    at += static_cast<size_t>(decoded->total_size);
  }
  EXPECT_EQ(at, body.size());
  return messages;
}

// --- requests as clients build them ------------------------------------------

// SEND_MESSAGE_V2 as ali-ons sends it (short names, numbers as text).
inline RemotingCommand send_v2(const std::string& topic, const std::string& body, int32_t queue_id = 0,
                               const store::MessageProperties& properties = {}, int32_t reconsume_times = 0) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::SEND_MESSAGE_V2);
  request.version = 121;  // ali-ons
  request.set_ext_string("a", "PG");
  request.set_ext_string("b", topic);
  request.set_ext_string("c", "TBW102");
  request.set_ext_int("d", 4);
  request.set_ext_int("e", queue_id);
  request.set_ext_int("f", 0);
  request.set_ext_int("g", 1'700'000'000'123);
  request.set_ext_int("h", 0);
  request.set_ext_string("i", store::encode_properties(properties));
  request.set_ext_int("j", reconsume_times);
  request.set_ext_bool("k", false);
  request.body.assign(body.begin(), body.end());
  return request;
}

// SEND_MESSAGE (V1) as the Java client names the fields.
inline RemotingCommand send_v1(const std::string& topic, const std::string& body, int32_t queue_id = 0,
                               const store::MessageProperties& properties = {}) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::SEND_MESSAGE);
  request.set_ext_string("producerGroup", "PG");
  request.set_ext_string("topic", topic);
  request.set_ext_string("defaultTopic", "TBW102");
  request.set_ext_int("defaultTopicQueueNums", 4);
  request.set_ext_int("queueId", queue_id);
  request.set_ext_int("sysFlag", 0);
  request.set_ext_int("bornTimestamp", 1'700'000'000'456);
  request.set_ext_int("flag", 7);
  request.set_ext_string("properties", store::encode_properties(properties));
  request.body.assign(body.begin(), body.end());
  return request;
}

struct PullOptions {
  int32_t sys_flag = 2 | 4;  // SUSPEND | SUBSCRIPTION, as ali-ons
  std::string subscription = "*";
  int64_t suspend_timeout_ms = 15'000;
  int32_t max_msg_nums = 32;
  int64_t commit_offset = 0;
};

inline RemotingCommand pull(const std::string& group, const std::string& topic, int32_t queue_id, int64_t offset,
                            PullOptions options = {}) {
  RemotingCommand request = RemotingCommand::make_request(RequestCode::PULL_MESSAGE);
  request.set_ext_string("consumerGroup", group);
  request.set_ext_string("topic", topic);
  request.set_ext_int("queueId", queue_id);
  request.set_ext_int("queueOffset", offset);
  request.set_ext_int("maxMsgNums", options.max_msg_nums);
  request.set_ext_int("sysFlag", options.sys_flag);
  request.set_ext_int("commitOffset", options.commit_offset);
  request.set_ext_int("suspendTimeoutMillis", options.suspend_timeout_ms);
  request.set_ext_string("subscription", options.subscription);
  request.set_ext_int("subVersion", 1'700'000'000'000);
  return request;
}

inline RemotingCommand heartbeat(const std::string& client_id, const std::string& consumer_group,
                                 const std::vector<std::string>& topics, const std::string& producer_group = "") {
  remoting::HeartbeatData data;
  data.clientID = client_id;
  if (!producer_group.empty()) data.producerDataSet.push_back({producer_group});
  if (!consumer_group.empty()) {
    remoting::ConsumerData consumer;
    consumer.groupName = consumer_group;
    consumer.consumeType = "CONSUME_PASSIVELY";
    consumer.messageModel = "CLUSTERING";
    consumer.consumeFromWhere = "CONSUME_FROM_LAST_OFFSET";
    for (const std::string& topic : topics) {
      remoting::SubscriptionData sub;
      sub.topic = topic;
      sub.subString = "*";
      sub.subVersion = 1'700'000'000'000;
      consumer.subscriptionDataSet.push_back(sub);
    }
    data.consumerDataSet.push_back(consumer);
  }
  RemotingCommand request = RemotingCommand::make_request(RequestCode::HEART_BEAT);
  const std::string json = data.to_json();
  request.body.assign(json.begin(), json.end());
  return request;
}

inline RemotingCommand request_with(int32_t code, remoting::ExtFields ext) {
  return RemotingCommand::make_request(code, std::move(ext));
}

inline std::string body_text(const RemotingCommand& command) {
  return std::string(command.body.begin(), command.body.end());
}

// --- the world ---------------------------------------------------------------

// An answer that may still be on its way.
using PendingCall = std::shared_ptr<std::optional<Result<RemotingCommand>>>;

class BrokerSimWorld {
 public:
  explicit BrokerSimWorld(BrokerConfig config = test_broker_config(),
                          store::MessageStoreConfig store_config = test_store_config())
      : config_(std::move(config)),
        store_config_(std::move(store_config)),
        random_(7),
        clock_(scheduler_),
        world_executor_(scheduler_, sim::kWorldOwner),
        network_(world_executor_, "10.0.0.254"),
        disk_(scheduler_, sim::DiskProfile::sata_ssd(),
              sim::SimDiskOptions{.name = "broker-disk", .capacity_bytes = 1ull << 30, .torn_sector_probability = 0.5},
              random_.split()),
        broker_process_("broker", scheduler_, clock_, {sim::Mount{"/", &disk_}}, random_.split(), &network_,
                        kBrokerHost),
        client_process_("client", scheduler_, clock_, {}, random_.split(), &network_, kClientHost) {
    client_env_ = &client_process_.start();
    client_ = std::make_unique<remoting::RemotingClient>(*client_env_);
  }

  ~BrokerSimWorld() {
    client_.reset();
    broker_.reset();
  }

  // Builds a controller on a fresh incarnation and runs until it started.
  Status start_broker() {
    MQ_ASSERT(!broker_);
    sim::SimEnv& env = broker_process_.start();
    broker_ = std::make_unique<BrokerController>(env, config_, store_config_);
    std::optional<Status> started;
    broker_->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); });
    MQ_ASSERT(started.has_value());
    if (!started->ok()) crash_broker();
    return *started;
  }

  Status shutdown_broker() {
    std::optional<Status> stopped;
    broker_->shutdown([&](Status status) { stopped = status; });
    run_until([&] { return stopped.has_value(); });
    MQ_ASSERT(stopped.has_value());
    broker_.reset();
    broker_process_.kill();
    return *stopped;
  }

  // kill -9: the controller's memory is gone, its page cache is not.
  void crash_broker() {
    broker_process_.kill();
    broker_.reset();
  }

  PendingCall call_async(RemotingCommand request, Nanos timeout = seconds(3), const std::string& to = kBrokerAddr) {
    auto slot = std::make_shared<std::optional<Result<RemotingCommand>>>();
    client_->invoke(to, std::move(request), timeout,
                    [slot](Result<RemotingCommand> response) { *slot = std::move(response); });
    return slot;
  }

  // Sends and runs virtual time until the answer (or the timeout) comes.
  Result<RemotingCommand> call(RemotingCommand request, Nanos timeout = seconds(3),
                               const std::string& to = kBrokerAddr) {
    PendingCall slot = call_async(std::move(request), timeout, to);
    run_until([&] { return slot->has_value(); }, timeout + seconds(1));
    if (!slot->has_value()) return Status::Timeout("no answer in virtual time");
    return std::move(**slot);
  }

  // The answer's command; fails the test on a transport error.
  RemotingCommand must_call(RemotingCommand request, Nanos timeout = seconds(3)) {
    Result<RemotingCommand> response = call(std::move(request), timeout);
    EXPECT_TRUE(response.ok()) << response.status().to_string();
    return response.ok() ? std::move(response).value() : RemotingCommand{};
  }

  template <typename Predicate>
  void run_until(Predicate done, Nanos limit = seconds(120)) {
    const Nanos deadline = scheduler_.now() + limit;
    while (!done() && scheduler_.pending_count() > 0 && scheduler_.next_due() <= deadline) scheduler_.run_one();
  }
  void run_for(Nanos duration) { scheduler_.run_until(scheduler_.now() + duration); }
  Nanos now() const { return scheduler_.now(); }

  BrokerController& broker() { return *broker_; }
  bool broker_running() const { return broker_ != nullptr; }
  sim::SimDisk& disk() { return disk_; }
  sim::Scheduler& scheduler() { return scheduler_; }
  sim::SimClock& clock() { return clock_; }
  env::LoopbackNetwork& network() { return network_; }
  remoting::RemotingClient& client() { return *client_; }
  sim::SimEnv& client_env() { return *client_env_; }
  BrokerConfig& config() { return config_; }
  store::MessageStoreConfig& store_config() { return store_config_; }
  env::Random& random() { return random_; }

 private:
  BrokerConfig config_;
  store::MessageStoreConfig store_config_;
  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimExecutor world_executor_;
  env::LoopbackNetwork network_;
  sim::SimDisk disk_;
  sim::SimProcess broker_process_;
  sim::SimProcess client_process_;
  sim::SimEnv* client_env_ = nullptr;
  std::unique_ptr<remoting::RemotingClient> client_;
  std::unique_ptr<BrokerController> broker_;
};

}  // namespace mqlab::broker::testing
