#include "sim/sim_apps.h"

#include <algorithm>
#include <charconv>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>

#include "broker/client/mq_client_instance.h"
#include "broker/client/producer.h"
#include "broker/client/push_consumer.h"
#include "broker/common/assert.h"
#include "broker/common/crc32.h"
#include "broker/namesrv/namesrv_controller.h"
#include "broker/processor/broker_controller.h"
#include "sim/sim_machine.h"
#include "sim/sim_world.h"
#include "sim/telemetry.h"

namespace mqlab::sim {
namespace {

constexpr char kSeqProperty[] = "SEQ";

// The eight letters 'a' + b * 26 / 256 of the eight bytes b of bits, lowest
// byte first (the memory order of a little-endian store), computed in four
// 16-bit lanes at a time: b * 26 <= 6630 never carries into the next lane.
// Byte by byte this loop was 1.8% of a whole simulation.
uint64_t letters_of(uint64_t bits) {
  static_assert(std::endian::native == std::endian::little, "letters are stored lowest byte first");
  constexpr uint64_t kLowBytes = 0x00FF00FF00FF00FFull;
  const uint64_t even = (((bits & kLowBytes) * 26) >> 8) & kLowBytes;
  const uint64_t odd = ((((bits >> 8) & kLowBytes) * 26) >> 8) & kLowBytes;
  return (even | (odd << 8)) + 0x6161616161616161ull;  // + 'a' in every byte: each is <= 25, no carry
}

std::string join_addresses(const std::vector<std::string>& addresses) {
  std::string joined;
  for (const std::string& a : addresses) joined += (joined.empty() ? "" : ";") + a;
  return joined;
}

// --- broker -------------------------------------------------------------------

class BrokerApp final : public SimApp {
 public:
  BrokerApp(SimWorld& world, SimMachine& machine, SimEnv& env, std::string name)
      : world_(world), machine_(machine), name_(std::move(name)) {
    const Scenario& scenario = world.scenario();
    broker::BrokerConfig config;
    config.brokerName = machine.spec().broker_group;
    // The group's current ids: a promote_slave swaps them (sim_world_failover.cc).
    config.brokerId = world.broker_id_of(machine);
    config.brokerIP1 = machine.host();
    config.listenPort = kBrokerListenPort;
    config.namesrvAddr = join_addresses(world.namesrv_addresses());
    const auto& conf = scenario.broker.broker_conf;
    if (auto it = conf.find("brokerClusterName"); it != conf.end()) config.brokerClusterName = it->second;
    if (auto it = conf.find("autoCreateTopicEnable"); it != conf.end()) config.autoCreateTopicEnable = it->second == "true";
    if (auto it = conf.find("defaultTopicQueueNums"); it != conf.end()) config.defaultTopicQueueNums = std::stoi(it->second);
    if (auto it = conf.find("slaveReadEnable"); it != conf.end()) config.slaveReadEnable = it->second == "true";
    if (auto it = conf.find("registerNameServerPeriod"); it != conf.end()) {
      config.registerNameServerPeriod = std::stoll(it->second);
    }
    store::MessageStoreConfig store_config = scenario.broker.store;
    store_config.storePathRootDir = "/store";
    if (config.brokerId > 0) store_config.brokerRole = store::BrokerRole::SLAVE;
    broker_id_ = config.brokerId;
    controller_ = std::make_unique<broker::BrokerController>(env, config, store_config);
  }

  std::optional<bool> caught_up(const std::string& topic, const std::vector<std::string>& groups) const override {
    // A slave too: it keeps the offsets consumers commit while its master is lost.
    if (!ready_) return std::nullopt;
    store::MessageStore& store = controller_->message_store();
    for (const auto& [queue_topic, queue_id] : store.queues()) {
      if (queue_topic != topic) continue;
      const int64_t max = store.max_offset_in_queue(topic, queue_id).value();
      for (const std::string& group : groups) {
        const auto committed = controller_->consumer_offset_manager().query_offset(group, topic, queue_id);
        if (max > 0 && (!committed || *committed < max)) return false;
      }
    }
    return true;
  }

  std::optional<int64_t> commit_log_max_offset() const override {
    if (!ready_) return std::nullopt;
    return controller_->message_store().max_phy_offset().value();
  }

  broker::BrokerController* running_broker() override { return ready_ ? controller_.get() : nullptr; }

  void start() override {
    const Nanos started = world_.scheduler().now();
    controller_->start([this, started](Status status) {
      ready_ = status.ok();
      const store::RecoveryReport& recovery = controller_->message_store().recovery_report();
      world_.record_ready(name_, started, status.ok(), recovery.abnormal, recovery.stop_reason);
      if (!status.ok()) {
        world_.note(machine_.name(), name_, "broker start failed: " + status.to_string());
        return;
      }
      ensure_topic();
    });
  }

 private:
  // The scenario's topic exists on every master before producers send (as an
  // operator's `mqadmin updateTopic` would make it); it survives restarts in
  // topics.json.
  void ensure_topic() {
    if (broker_id_ != 0) return;
    const WorkloadSpec& workload = world_.scenario().workload;
    if (controller_->topic_config_manager().find(workload.topic) != nullptr) return;
    meta::TopicConfig topic;
    topic.topicName = workload.topic;
    topic.readQueueNums = workload.queues_per_broker;
    topic.writeQueueNums = workload.queues_per_broker;
    topic.perm = 6;
    if (auto created = controller_->topic_config_manager().create_or_update(topic); !created.ok()) {
      world_.note(machine_.name(), name_, "creating the topic failed: " + created.status().to_string());
      return;
    }
    controller_->register_broker_all_soon();
  }

  SimWorld& world_;
  SimMachine& machine_;
  std::string name_;
  std::unique_ptr<broker::BrokerController> controller_;
  int64_t broker_id_ = 0;
  bool ready_ = false;
};

// --- NameServer -----------------------------------------------------------------

class NamesrvApp final : public SimApp {
 public:
  NamesrvApp(SimWorld& world, SimMachine& machine, SimEnv& env, std::string name)
      : world_(world), machine_(machine), name_(std::move(name)) {
    namesrv::NamesrvConfig config;
    config.listenAddress = machine.host() + ":" + std::to_string(kNamesrvListenPort);
    controller_ = std::make_unique<namesrv::NamesrvController>(env, config);
  }
  void start() override {
    const Nanos started = world_.scheduler().now();
    controller_->start([this, started](Status status) {
      world_.record_ready(name_, started, status.ok(), false, "");
      if (!status.ok()) world_.note(machine_.name(), name_, "namesrv start failed: " + status.to_string());
    });
  }

 private:
  SimWorld& world_;
  SimMachine& machine_;
  std::string name_;
  std::unique_ptr<namesrv::NamesrvController> controller_;
};

// --- producer -------------------------------------------------------------------

SendOutcome outcome_of(client::SendStatus status) {
  switch (status) {
    case client::SendStatus::SEND_OK: return SendOutcome::kOk;
    case client::SendStatus::FLUSH_DISK_TIMEOUT: return SendOutcome::kFlushDiskTimeout;
    case client::SendStatus::FLUSH_SLAVE_TIMEOUT: return SendOutcome::kFlushSlaveTimeout;
    case client::SendStatus::SLAVE_NOT_AVAILABLE: return SendOutcome::kSlaveNotAvailable;
    case client::SendStatus::FAILED: return SendOutcome::kFailed;
    case client::SendStatus::UNKNOWN: return SendOutcome::kUnknown;
  }
  return SendOutcome::kUnknown;
}

class ProducerApp final : public SimApp {
 public:
  ProducerApp(SimWorld& world, SimMachine& machine, SimEnv& env, std::string name)
      : world_(world), machine_(machine), env_(env), name_(std::move(name)) {
    const ProducerSpec& spec = world.scenario().workload.producers;
    const client::ClientConfig config =
        world.scenario().client.for_client(world.namesrv_addresses(), machine.host(), name_);
    instance_ = std::make_unique<client::MQClientInstance>(env, config);
    client::ProducerConfig producer_config;
    producer_config.producerGroup = "mqsim-producers";
    producer_config.sendMsgTimeout = spec.send_timeout / kNanosPerMilli;
    producer_config.retryTimesWhenSendFailed = spec.retries;
    producer_ = std::make_unique<client::Producer>(*instance_, producer_config);
  }

  void start() override {
    instance_->start([](Status) {});
    producer_->start([this](Status status) {
      if (!status.ok()) return world_.note(machine_.name(), name_, "producer start failed: " + status.to_string());
      const Nanos first = std::max<Nanos>(kProduceStartDelay - world_.scheduler().now(), 0);
      schedule_next(first);
    });
  }
  void stop_producing() override { stopped_ = true; }

 private:
  void schedule_next(Nanos delay) {
    env_.executor().run_after(delay, [this] {
      if (stopped_ || !world_.producing()) return;
      const ProducerSpec& spec = world_.scenario().workload.producers;
      const int burst = spec.arrival == Arrival::kBursts ? std::max(1, spec.burst_size) : 1;
      for (int i = 0; i < burst; ++i) arrive();
      schedule_next(next_gap());
    });
  }

  // A message is due now: sent at once while fewer than max_in_flight are
  // outstanding, else it waits for a reply (FIFO). Its send is invoked when
  // it arrived, so the wait shows in its send latency, as a sender thread
  // blocked on the previous reply makes the next message late in a real run.
  void arrive() {
    const int cap = world_.scenario().workload.producers.max_in_flight;
    MQ_ASSERT(cap >= 1 && in_flight_ <= cap);
    if (in_flight_ < cap) return send_one(world_.scheduler().now());
    waiting_.push_back(world_.scheduler().now());
  }

  // A reply freed a slot: the oldest waiting arrival takes it. Arrivals still
  // waiting when the producers stop were never invoked, and are not recorded.
  void on_reply() {
    MQ_ASSERT(in_flight_ > 0);
    --in_flight_;
    if (waiting_.empty() || stopped_ || !world_.producing()) return;
    const Nanos arrived_at = waiting_.front();
    waiting_.pop_front();
    send_one(arrived_at);
  }

  Nanos next_gap() {
    const ProducerSpec& spec = world_.scenario().workload.producers;
    if (spec.arrival == Arrival::kBursts) return std::max<Nanos>(spec.burst_period, 1);
    const double mean_ns = static_cast<double>(kNanosPerSecond) / std::max(spec.rate_per_sec, 1e-9);
    if (spec.arrival == Arrival::kConstant) return static_cast<Nanos>(mean_ns);
    const double u = 1.0 - env_.random().unit();
    return std::max<Nanos>(1, static_cast<Nanos>(-std::log(u) * mean_ns));
  }

  std::vector<uint8_t> body_for(uint64_t seq, const std::string& key) {
    const ProducerSpec& spec = world_.scenario().workload.producers;
    env::Random& random = env_.random();
    if (spec.size == SizeDistribution::kTelemetry) {
      const std::string text = telemetry_body(random, telemetry_device(static_cast<int>(seq % 64)),
                                              static_cast<int64_t>(seq), env_.clock().wall_ms());
      return {text.begin(), text.end()};
    }
    (void)key;
    const uint64_t size = spec.size == SizeDistribution::kUniform
                              ? static_cast<uint64_t>(random.range(static_cast<int64_t>(spec.size_min_bytes),
                                                                   static_cast<int64_t>(spec.size_max_bytes)))
                              : spec.size_min_bytes;
    MQ_ASSERT(size <= spec.size_max_bytes);
    // A window of this producer's pool of random letters, at a start drawn
    // for the message: one draw a message. Letters drawn afresh for every
    // body (a draw per eight bytes) were 1.6% of the standard scenario's
    // instructions, for bytes nothing reads but the CRCs. Bodies stay random
    // letters, as compressible as before (zlib sees one body at a time). A
    // body recurs about once in kLetterPoolStarts sends of a producer, which
    // nothing minds: the checker tells messages apart by their SEQ property
    // and checks each body against its own send's CRC.
    if (letter_pool_.empty()) letter_pool_ = random_letters(random, kLetterPoolStarts + spec.size_max_bytes);
    const uint64_t start = random.uniform(kLetterPoolStarts);
    MQ_ASSERT(start + size <= letter_pool_.size());
    std::vector<uint8_t> body(letter_pool_.begin() + static_cast<std::ptrdiff_t>(start),
                              letter_pool_.begin() + static_cast<std::ptrdiff_t>(start + size));
    MQ_ASSERT(body.empty() || (body.front() >= 'a' && body.back() <= 'z'));
    return body;
  }

  // count random lower-case letters, eight per draw (letters_of; the last
  // draw's first count % 8 when count is not a multiple of eight).
  static std::vector<uint8_t> random_letters(env::Random& random, size_t count) {
    std::vector<uint8_t> letters(count);
    for (size_t i = 0; i < count; i += 8) {
      const uint64_t word = letters_of(random.next_u64());
      std::memcpy(letters.data() + i, &word, std::min<size_t>(8, count - i));
    }
    return letters;
  }

  void send_one(Nanos invoked_at) {
    const WorkloadSpec& workload = world_.scenario().workload;
    MQ_ASSERT(in_flight_ < workload.producers.max_in_flight && invoked_at <= world_.scheduler().now());
    const uint64_t next = world_.history().sends().size();
    const std::string key =
        workload.producers.keys == KeyMode::kDevice ? telemetry_device(static_cast<int>(next % 64)).device_id : "";
    std::vector<uint8_t> body = body_for(next, key);
    const uint32_t crc = crc32_ieee(0, body);
    const uint64_t seq = world_.history().begin_send(name_, invoked_at, key, crc);
    MQ_ASSERT(seq == next);
    client::Message message;
    message.topic = workload.topic;
    message.tags = "status";
    message.keys = key;
    message.body = std::move(body);
    message.properties[kSeqProperty] = std::to_string(seq);
    // Counted before the call: a completion (always posted, never inline
    // today) must find its send counted.
    ++in_flight_;
    world_.note_sends_in_flight(in_flight_);
    producer_->send(std::move(message), [this, seq](const client::SendResult& result) {
      world_.history().complete_send(seq, world_.scheduler().now(), outcome_of(result.status),
                                     result.messageQueue.brokerName, result.messageQueue.queueId, result.queueOffset,
                                     result.offsetMsgId, result.attempts);
      on_reply();
    });
  }

  SimWorld& world_;
  SimMachine& machine_;
  SimEnv& env_;
  std::string name_;
  std::unique_ptr<client::MQClientInstance> instance_;
  std::unique_ptr<client::Producer> producer_;
  bool stopped_ = false;
  int in_flight_ = 0;       // sends invoked, not yet answered
  std::deque<Nanos> waiting_;  // arrival times of messages waiting for a slot, oldest first
  // Random letters that bodies are windows of (body_for), drawn at the
  // first send: kLetterPoolStarts starts, and room after the last for the
  // largest body.
  static constexpr uint64_t kLetterPoolStarts = 64 * 1024;
  std::vector<uint8_t> letter_pool_;
};

// --- consumer -------------------------------------------------------------------

class ConsumerApp final : public SimApp {
 public:
  ConsumerApp(SimWorld& world, SimMachine& machine, SimEnv& env, std::string name, std::string group)
      : world_(world), machine_(machine), env_(env), name_(std::move(name)), group_(std::move(group)) {
    const client::ClientConfig config =
        world.scenario().client.for_client(world.namesrv_addresses(), machine.host(), name_);
    instance_ = std::make_unique<client::MQClientInstance>(env, config);
    client::PushConsumerConfig consumer_config;
    consumer_config.consumerGroup = group_;
    consumer_config.consumeFromWhere = client::ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET;
    for (const ConsumerGroupSpec& spec : world.scenario().workload.consumer_groups) {
      if (spec.name != group_) continue;
      failure_probability_ = spec.handler_failure_probability;
      if (spec.mode == ConsumeMode::kBroadcasting) consumer_config.messageModel = client::MessageModel::BROADCASTING;
    }
    consumer_ = std::make_unique<client::PushConsumer>(*instance_, consumer_config);
  }

  void start() override {
    if (Status status = consumer_->subscribe(world_.scenario().workload.topic, "*"); !status.ok()) {
      world_.note(machine_.name(), name_, "subscribe failed: " + status.to_string());
      return;
    }
    consumer_->register_message_listener([this](const client::MessageExt& message, client::ConsumeCallback done) {
      on_message(message, std::move(done));
    });
    instance_->start([](Status) {});
    consumer_->start([this](Status status) {
      if (!status.ok()) world_.note(machine_.name(), name_, "consumer start failed: " + status.to_string());
    });
  }

 private:
  void on_message(const client::MessageExt& message, client::ConsumeCallback done) {
    if (failure_probability_ > 0 && env_.random().chance(failure_probability_)) {
      done(client::ConsumeResult::RECONSUME_LATER);
      return;
    }
    const std::optional<uint64_t> seq = seq_of(message);
    ReceiptRecord receipt;
    receipt.group = group_name_;
    receipt.consumer = consumer_name_;
    receipt.at = world_.scheduler().now();
    receipt.broker_name = message.brokerName;
    receipt.queue_id = message.queueId;
    receipt.queue_offset = message.queueOffset;
    receipt.reconsume_times = message.reconsumeTimes;
    if (seq) {
      receipt.seq = *seq;
      const std::optional<SendRecord> sent = world_.history().send(receipt.seq);
      receipt.body_intact = sent.has_value() && sent->body_crc == crc32_ieee(0, message.body);
      world_.history().receive(receipt);
    } else {
      world_.note(machine_.name(), name_, "received a message without SEQ: " + message.msgId);
    }
    done(client::ConsumeResult::SUCCESS);
  }

  // The SEQ property our producers stamp: read in place, not copied out.
  // nullopt when missing or not a number (the caller notes it).
  static std::optional<uint64_t> seq_of(const client::MessageExt& message) {
    const std::optional<std::string_view> text = store::find_property(message.properties_text, kSeqProperty);
    if (!text || text->empty()) return std::nullopt;
    uint64_t seq = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), seq);
    if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
    return seq;
  }

  SimWorld& world_;
  SimMachine& machine_;
  SimEnv& env_;
  std::string name_;
  std::string group_;
  // Interned once: a receipt names its group and consumer.
  InternedName group_name_{group_};
  InternedName consumer_name_{name_};
  double failure_probability_ = 0;
  std::unique_ptr<client::MQClientInstance> instance_;
  std::unique_ptr<client::PushConsumer> consumer_;
};

}  // namespace

std::unique_ptr<SimApp> make_broker_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name) {
  return std::make_unique<BrokerApp>(world, machine, env, name);
}
std::unique_ptr<SimApp> make_namesrv_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name) {
  return std::make_unique<NamesrvApp>(world, machine, env, name);
}
std::unique_ptr<SimApp> make_producer_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name) {
  return std::make_unique<ProducerApp>(world, machine, env, name);
}
std::unique_ptr<SimApp> make_consumer_app(SimWorld& world, SimMachine& machine, SimEnv& env, const std::string& name,
                                          const std::string& group) {
  return std::make_unique<ConsumerApp>(world, machine, env, name, group);
}

}  // namespace mqlab::sim
