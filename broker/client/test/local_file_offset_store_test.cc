// A broadcasting consumer's offsets in <dir>/<clientId>/<group>/offsets.json: a restarted consumer (clean
// shutdown or kill -9) resumes from them, reconsuming at most what came after the last periodic persist; a
// corrupt file is reported and its .bak used; two corrupt copies stop the start. A client process with its own
// simulated disk, a fake NameServer and broker, on virtual time.
#include "broker/client/local_file_offset_store.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broker/client/push_consumer.h"
#include "broker/client/test/fake_cluster.h"
#include "broker/common/log.h"
#include "broker/env/path.h"
#include "sim/disk_profile.h"

namespace mqlab::client::local_file_offset_store_test {
namespace {

using testing::FakeBroker;
using testing::FakeNameServer;

constexpr const char* kOffsetsDir = "/var/mq-offsets";
constexpr const char* kClientHost = "10.0.0.20";
constexpr const char* kOffsetsFile = "/var/mq-offsets/10.0.0.20@bc/G/offsets.json";

struct Delivery {
  uint32_t incarnation = 0;
  std::string body;
  int64_t queue_offset = 0;
};

// A NameServer and one broker (broker-a, topic T with 2 queues) and a client
// process with a disk of its own that can be shut down, killed and started again.
class BroadcastWorld {
 public:
  BroadcastWorld()
      : random_(5),
        clock_(scheduler_),
        world_executor_(scheduler_, sim::kWorldOwner),
        network_(world_executor_, "10.0.0.254"),
        client_disk_(scheduler_, sim::DiskProfile::nvme(), sim::SimDiskOptions{.name = "client-disk"}, random_.split()),
        namesrv_process_("namesrv", scheduler_, clock_, {}, random_.split(), &network_, "10.0.0.1"),
        broker_process_("broker-a", scheduler_, clock_, {}, random_.split(), &network_, "10.0.0.2"),
        client_process_("client", scheduler_, clock_, {sim::Mount{"/", &client_disk_}}, random_.split(), &network_,
                        kClientHost) {
    namesrv_ = std::make_unique<FakeNameServer>(namesrv_process_.start(), "10.0.0.1:9876");
    broker_ = std::make_unique<FakeBroker>(broker_process_.start(), "broker-a", "10.0.0.2:10911",
                                           store::HostAddress::ipv4(10, 0, 0, 2, 10911));
    namesrv_->cluster_info.brokerAddrTable["broker-a"] = {"DefaultCluster", "broker-a", {{0, "10.0.0.2:10911"}}};
    namesrv_->cluster_info.clusterAddrTable["DefaultCluster"].insert("broker-a");
    namesrv_->set_route("T", testing::make_route({{"broker-a", "10.0.0.2:10911"}}, 2));
  }

  ~BroadcastWorld() {
    if (client_process_.running()) client_process_.kill();
    consumer_.reset();
    instance_.reset();
    broker_.reset();
    namesrv_.reset();
  }

  // A fresh client incarnation; its consumer started (the status returned).
  // before(env) runs first, on the new incarnation (to plant files).
  Status start_consumer(const std::function<void(env::Env&)>& before = {}) {
    sim::SimEnv& env = client_process_.start();
    if (before) before(env);
    ClientConfig config;
    config.namesrvAddr = {"10.0.0.1:9876"};
    config.clientIP = kClientHost;
    config.instanceName = "bc";
    instance_ = std::make_unique<MQClientInstance>(env, config);
    PushConsumerConfig consumer_config;
    consumer_config.consumerGroup = "G";
    consumer_config.messageModel = MessageModel::BROADCASTING;
    consumer_config.consumeFromWhere = ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET;
    consumer_config.localOffsetStoreDir = kOffsetsDir;
    consumer_ = std::make_unique<PushConsumer>(*instance_, consumer_config);
    EXPECT_TRUE(consumer_->subscribe("T", "*").ok());
    const uint32_t incarnation = client_process_.incarnation();
    consumer_->register_message_listener([this, incarnation](const MessageExt& message, ConsumeCallback done) {
      deliveries.push_back({incarnation, message.body_text(), message.queueOffset});
      done(ConsumeResult::SUCCESS);
    });
    std::optional<Status> started;
    consumer_->start([&](Status status) { started = status; });
    run_until([&] { return started.has_value(); }, seconds(5));
    return started.value_or(Status::Timeout("consumer start"));
  }

  void shutdown_consumer() {
    bool stopped = false;
    consumer_->shutdown([&] { stopped = true; });
    ASSERT_TRUE(run_until([&] { return stopped; }, seconds(10)));
    stopped = false;
    instance_->shutdown([&] { stopped = true; });
    ASSERT_TRUE(run_until([&] { return stopped; }, seconds(10)));
    client_process_.kill();
    consumer_.reset();
    instance_.reset();
  }

  // kill -9: the page cache survives, the process's memory does not.
  void kill_consumer() {
    client_process_.kill();
    consumer_.reset();
    instance_.reset();
  }

  void put(int32_t queue_id, const std::string& body) {
    store::MessageToStore message;
    message.topic = "T";
    message.queue_id = queue_id;
    message.body.assign(body.begin(), body.end());
    message.born_host = store::HostAddress::ipv4(10, 0, 0, 50, 1234);
    broker_->put(std::move(message));
  }

  // Bodies handled by incarnation n, in order.
  std::vector<std::string> handled_by(uint32_t incarnation) const {
    std::vector<std::string> bodies;
    for (const Delivery& d : deliveries) {
      if (d.incarnation == incarnation) bodies.push_back(d.body);
    }
    return bodies;
  }

  bool run_until(const std::function<bool()>& pred, Nanos limit) {
    return scheduler_.run_until_true(pred, limit);
  }
  void run_for(Nanos duration) { scheduler_.run_for(duration); }
  uint32_t incarnation() const { return client_process_.incarnation(); }
  PushConsumer& consumer() { return *consumer_; }
  sim::SimEnv& client_env() { return client_process_.env(); }

  std::vector<Delivery> deliveries;

 private:
  env::Random random_;
  sim::Scheduler scheduler_;
  sim::SimClock clock_;
  sim::SimExecutor world_executor_;
  env::LoopbackNetwork network_;
  sim::SimDisk client_disk_;
  sim::SimProcess namesrv_process_;
  sim::SimProcess broker_process_;
  sim::SimProcess client_process_;
  std::unique_ptr<FakeNameServer> namesrv_;
  std::unique_ptr<FakeBroker> broker_;
  std::unique_ptr<MQClientInstance> instance_;
  std::unique_ptr<PushConsumer> consumer_;
};

std::string read_file(env::Env& env, const std::string& path) {
  Result<std::shared_ptr<env::File>> file = env.files().open(path, env::OpenOptions{});
  if (!file.ok()) return "";
  std::string content(static_cast<size_t>((*file)->size().value()), '\0');
  EXPECT_TRUE((*file)->pread(0, std::span<uint8_t>(reinterpret_cast<uint8_t*>(content.data()), content.size())).ok());
  return content;
}

void write_file(env::Env& env, const std::string& path, const std::string& content) {
  ASSERT_TRUE(env.files().mkdirs(env::parent_dir(path)).ok());
  Result<std::shared_ptr<env::File>> file = env.files().open(path, env::OpenOptions{.create = true, .truncate = true});
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_TRUE((*file)->pwrite(0, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(content.data()),
                                                          content.size()))
                  .ok());
}

std::vector<std::string> bodies(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST(LocalFileOffsetStore, ACleanlyRestartedBroadcastConsumerResumesWhereItStopped) {
  BroadcastWorld world;
  for (int i = 0; i < 10; ++i) world.put(0, "a" + std::to_string(i));
  for (int i = 0; i < 4; ++i) world.put(1, "b" + std::to_string(i));
  ASSERT_TRUE(world.start_consumer().ok());
  ASSERT_TRUE(world.run_until([&] { return world.deliveries.size() == 14; }, seconds(10)));
  ASSERT_NO_FATAL_FAILURE(world.shutdown_consumer());

  for (int i = 10; i < 13; ++i) world.put(0, "a" + std::to_string(i));
  std::string content;
  ASSERT_TRUE(world.start_consumer([&](env::Env& env) { content = read_file(env, kOffsetsFile); }).ok());
  EXPECT_EQ(nlohmann::json::parse(content), nlohmann::json::parse(R"({"offsetTable":{"T":{"broker-a":{"0":10,"1":4}}}})"));
  EXPECT_EQ(world.consumer().offset_store().local_load_source(), meta::LoadSource::kFile);
  world.run_for(seconds(10));
  EXPECT_EQ(world.handled_by(2), bodies("a", 10, 13));  // nothing handled twice
}

TEST(LocalFileOffsetStore, AKilledBroadcastConsumerReconsumesOnlyWhatCameAfterTheLastPersist) {
  BroadcastWorld world;
  for (int i = 0; i < 10; ++i) world.put(0, "a" + std::to_string(i));
  ASSERT_TRUE(world.start_consumer().ok());
  ASSERT_TRUE(world.run_until([&] { return world.deliveries.size() == 10; }, seconds(4)));
  world.run_for(seconds(6));  // past the persist 5 s after the start
  for (int i = 10; i < 13; ++i) world.put(0, "a" + std::to_string(i));
  ASSERT_TRUE(world.run_until([&] { return world.deliveries.size() == 13; }, seconds(2)));
  world.kill_consumer();  // before the persist 10 s after the start

  ASSERT_TRUE(world.start_consumer().ok());
  world.run_for(seconds(10));
  EXPECT_EQ(world.handled_by(2), bodies("a", 10, 13));  // the last interval again, nothing older
}

TEST(LocalFileOffsetStore, ACorruptFileIsReportedAndTheBackupUsed) {
  BroadcastWorld world;
  for (int i = 0; i < 4; ++i) world.put(0, "a" + std::to_string(i));
  ASSERT_TRUE(world.start_consumer().ok());
  world.run_for(seconds(6));  // offsets.json: 4
  for (int i = 4; i < 7; ++i) world.put(0, "a" + std::to_string(i));
  world.run_for(seconds(5));  // offsets.json: 7, offsets.json.bak: 4
  ASSERT_EQ(world.deliveries.size(), 7u);
  world.kill_consumer();

  std::vector<std::string> warnings;
  set_log_sink([&](LogLevel level, std::string_view, std::string_view message) {
    if (level >= LogLevel::kWarn) warnings.emplace_back(message);
  });
  const Status started =
      world.start_consumer([](env::Env& env) { write_file(env, kOffsetsFile, "{\"offsetTable\":{\"T\":{\"broker-a\""); });
  set_log_sink(nullptr);
  ASSERT_TRUE(started.ok()) << started.to_string();
  EXPECT_EQ(world.consumer().offset_store().local_load_source(), meta::LoadSource::kBackup);
  bool reported = false;
  for (const std::string& warning : warnings) {
    reported |= warning.find("offsets.json.bak") != std::string::npos &&
                warning.find("not valid JSON") != std::string::npos;
  }
  EXPECT_TRUE(reported) << "the corrupt offsets.json was not reported";
  world.run_for(seconds(10));
  EXPECT_EQ(world.handled_by(2), bodies("a", 4, 7));  // from the backup's offset, not from the start
}

TEST(LocalFileOffsetStore, TwoCorruptCopiesStopTheStartNamingTheFile) {
  BroadcastWorld world;
  const Status started = world.start_consumer([](env::Env& env) {
    write_file(env, kOffsetsFile, "{\"offsetTable\":{\"T\":{\"broker-a\":{\"0\":-3}}}}");
    write_file(env, std::string(kOffsetsFile) + ".bak", "garbage");
  });
  EXPECT_EQ(started.code(), StatusCode::kCorruption);
  EXPECT_NE(started.message().find(kOffsetsFile), std::string::npos) << started.to_string();
  EXPECT_FALSE(world.consumer().running());
  world.run_for(seconds(1));
  EXPECT_TRUE(world.deliveries.empty());
}

}  // namespace
}  // namespace mqlab::client::local_file_offset_store_test
