#include "broker/processor/broker_controller.h"

#include <memory>
#include <utility>

#include "broker/common/log.h"
#include "broker/ha/ha_client.h"
#include "broker/ha/ha_service.h"
#include "broker/ha/slave_synchronize.h"
#include "broker/processor/admin_broker_processor.h"
#include "broker/processor/client_manage_processor.h"
#include "broker/processor/consumer_info_processor.h"
#include "broker/processor/consumer_send_msg_back_processor.h"
#include "broker/processor/host_address.h"
#include "broker/processor/pull_message_processor.h"
#include "broker/processor/query_message_processor.h"
#include "broker/processor/send_message_processor.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::RequestCode;
using remoting::ResponseChannel;

constexpr const char* kBrokerControllerLog = "broker";
// ClientHousekeepingService scans for expired channels every 10 s.
constexpr Nanos kChannelScanInterval = seconds(10);
// BrokerController.start: the first periodic registration comes 10 s after start.
constexpr Nanos kFirstPeriodicRegistration = seconds(10);

store::HostAddress store_host_of(const BrokerConfig& config) {
  Result<store::HostAddress> host = host_address_of(config.brokerIP1, config.listenPort);
  // An invalid brokerIP1 fails validate() in start(); until then any value will do.
  return host.ok() ? *host : store::HostAddress::ipv4(0, 0, 0, 0, 0);
}

// RocketMQ forces a master's brokerId to 0 (BrokerStartup); a slave needs > 0.
BrokerConfig apply_role_rules(BrokerConfig config, store::BrokerRole role) {
  if (role != store::BrokerRole::SLAVE && config.brokerId != 0) {
    MQ_LOG(
        kWarn, kBrokerControllerLog,
        "brokerId=" << config.brokerId << " ignored: a " << store::broker_role_name(role) << " is always brokerId 0");
    config.brokerId = 0;
  }
  return config;
}

}  // namespace

BrokerController::BrokerController(env::Env& env, BrokerConfig config, store::MessageStoreConfig store_config)
    : env_(env),
      config_(apply_role_rules(std::move(config), store_config.brokerRole)),
      store_config_(std::move(store_config)),
      store_host_(store_host_of(config_)),
      store_(std::make_unique<store::MessageStore>(env, store_config_, store_host_)),
      topics_(env, store_config_.config_dir(),
              meta::TopicConfigManagerOptions{config_.autoCreateTopicEnable, config_.defaultTopicQueueNums}),
      offsets_(env, store_config_.config_dir()),
      groups_(env, store_config_.config_dir(),
              meta::SubscriptionGroupManagerOptions{config_.autoCreateSubscriptionGroup}),
      server_(env, "broker " + config_.brokerName, config_.remoting_server_options()),
      outer_api_(env, config_) {
  send_processor_ = std::make_unique<SendMessageProcessor>(*this);
  pull_processor_ = std::make_unique<PullMessageProcessor>(*this);
  client_processor_ = std::make_unique<ClientManageProcessor>(*this);
  consumer_info_processor_ = std::make_unique<ConsumerInfoProcessor>(*this);
  send_back_processor_ = std::make_unique<ConsumerSendMsgBackProcessor>(*this);
  admin_processor_ = std::make_unique<AdminBrokerProcessor>(*this);
  query_processor_ = std::make_unique<QueryMessageProcessor>(*this);
  hold_service_ = std::make_unique<PullRequestHoldService>(
      env_,
      [this](PullRequest& pull) { pull_processor_->process_woken(pull); },
      [this](const std::string& topic, int32_t queue_id) { return store_->max_offset_in_queue(topic, queue_id); });
  register_processors();
  server_.set_connection_closed_listener(
      lifetime_.guard([this](const std::string& remote_address) { on_connection_closed(remote_address); }));
  MQ_ASSERT(store_ != nullptr);
}

BrokerController::~BrokerController() {
  cancel_timers();
  store_->set_replication_hook(nullptr);  // the HAService goes first
}

void BrokerController::register_processors() {
  // Each handler refuses work while the broker is not running: the store
  // and tables are only consistent between start and shutdown.
  auto route = [this](int32_t code, auto handler) {
    server_.register_processor(code, [this, handler](RemotingCommand& request, ResponseChannel channel) {
      if (!running_) return channel.reply(remoting::ResponseCode::SERVICE_NOT_AVAILABLE, "broker is not running");
      handler(request, std::move(channel));
    });
  };
  auto bind = [](auto* processor, auto method) {
    return [processor, method](RemotingCommand& request, ResponseChannel channel) {
      (processor->*method)(request, std::move(channel));
    };
  };
  route(RequestCode::SEND_MESSAGE, bind(send_processor_.get(), &SendMessageProcessor::process));
  route(RequestCode::SEND_MESSAGE_V2, bind(send_processor_.get(), &SendMessageProcessor::process));
  route(RequestCode::PULL_MESSAGE, bind(pull_processor_.get(), &PullMessageProcessor::process));
  route(RequestCode::CONSUMER_SEND_MSG_BACK, bind(send_back_processor_.get(), &ConsumerSendMsgBackProcessor::process));
  ClientManageProcessor* client = client_processor_.get();
  route(RequestCode::HEART_BEAT, bind(client, &ClientManageProcessor::heart_beat));
  route(RequestCode::UNREGISTER_CLIENT, bind(client, &ClientManageProcessor::unregister_client));
  route(RequestCode::GET_CONSUMER_LIST_BY_GROUP, bind(client, &ClientManageProcessor::get_consumer_list_by_group));
  route(RequestCode::QUERY_CONSUMER_OFFSET, bind(client, &ClientManageProcessor::query_consumer_offset));
  route(RequestCode::UPDATE_CONSUMER_OFFSET, bind(client, &ClientManageProcessor::update_consumer_offset));
  ConsumerInfoProcessor* consumer_info = consumer_info_processor_.get();
  route(RequestCode::QUERY_TOPIC_CONSUME_BY_WHO, bind(consumer_info, &ConsumerInfoProcessor::query_topic_consume_by_who));
  route(RequestCode::GET_CONSUMER_CONNECTION_LIST,
        bind(consumer_info, &ConsumerInfoProcessor::get_consumer_connection_list));
  QueryMessageProcessor* query = query_processor_.get();
  route(RequestCode::QUERY_MESSAGE, bind(query, &QueryMessageProcessor::query_message));
  route(RequestCode::VIEW_MESSAGE_BY_ID, bind(query, &QueryMessageProcessor::view_message_by_id));
  AdminBrokerProcessor* admin = admin_processor_.get();
  route(RequestCode::GET_MAX_OFFSET, bind(admin, &AdminBrokerProcessor::get_max_offset));
  route(RequestCode::GET_MIN_OFFSET, bind(admin, &AdminBrokerProcessor::get_min_offset));
  route(RequestCode::SEARCH_OFFSET_BY_TIMESTAMP, bind(admin, &AdminBrokerProcessor::search_offset_by_timestamp));
  route(RequestCode::GET_EARLIEST_MSG_STORETIME, bind(admin, &AdminBrokerProcessor::get_earliest_msg_storetime));
  route(RequestCode::UPDATE_AND_CREATE_TOPIC, bind(admin, &AdminBrokerProcessor::update_and_create_topic));
  route(RequestCode::GET_ALL_TOPIC_CONFIG, bind(admin, &AdminBrokerProcessor::get_all_topic_config));
  route(RequestCode::GET_ALL_CONSUMER_OFFSET, bind(admin, &AdminBrokerProcessor::get_all_consumer_offset));
  route(RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
        bind(admin, &AdminBrokerProcessor::get_all_subscription_group_config));
  route(RequestCode::GET_ALL_DELAY_OFFSET, bind(admin, &AdminBrokerProcessor::get_all_delay_offset));
  route(RequestCode::GET_BROKER_RUNTIME_INFO, bind(admin, &AdminBrokerProcessor::get_broker_runtime_info));
  route(RequestCode::GET_TOPIC_STATS_INFO, bind(admin, &AdminBrokerProcessor::get_topic_stats_info));
  route(RequestCode::GET_CONSUME_STATS, bind(admin, &AdminBrokerProcessor::get_consume_stats));
}

void BrokerController::start(std::function<void(Status)> done) {
  MQ_ASSERT_MSG(!started_, "a BrokerController starts once; a restart is a new controller");
  started_ = true;
  boot_timestamp_ms_ = env_.clock().wall_ms();
  auto fail = [&](Status status) {
    MQ_LOG(kError, kBrokerControllerLog, "broker " << config_.brokerName << " did not start: " << status.to_string());
    env_.executor().post([done = std::move(done), status] { done(status); });
  };
  if (Status s = config_.validate(); !s.ok()) return fail(s.with_context("broker config"));
  if (Status s = store_config_.validate(); !s.ok()) return fail(s.with_context("store config"));
  if (store_config_.brokerRole == store::BrokerRole::SLAVE && config_.brokerId <= 0) {
    return fail(
        Status::InvalidArgument("brokerId=" + std::to_string(config_.brokerId) + ": a SLAVE needs brokerId > 0"));
  }
  if (Status s = load_metadata(); !s.ok()) return fail(s);
  store_->set_message_arriving_listener(lifetime_.guard([this](const store::DispatchRequest& request) {
    hold_service_->notify_message_arriving(request.topic, request.queue_id, request.consume_queue_offset + 1,
                                           request.tags_code);
  }));
  store_->start(lifetime_.guard([this, done = std::move(done)](Status status) mutable {
    after_store_started(std::move(status), std::move(done));
  }));
}

Status BrokerController::load_metadata() {
  Result<meta::LoadSource> topics = topics_.load();
  if (!topics.ok()) return topics.status().with_context("loading topics");
  Result<meta::LoadSource> offsets = offsets_.load();
  if (!offsets.ok()) return offsets.status().with_context("loading consumer offsets");
  Result<meta::LoadSource> groups = groups_.load();
  if (!groups.ok()) return groups.status().with_context("loading subscription groups");
  MQ_LOG(kInfo, kBrokerControllerLog,
         "loaded " << topics_.all().size() << " topics (" << meta::load_source_name(*topics) << "), "
                   << offsets_.offset_table().size() << " offset entries (" << meta::load_source_name(*offsets) << "), "
                   << groups_.all().size() << " groups (" << meta::load_source_name(*groups) << ")");
  return Status::Ok();
}

void BrokerController::after_store_started(Status status, std::function<void(Status)> done) {
  if (!status.ok()) {
    MQ_LOG(kError, kBrokerControllerLog, "broker " << config_.brokerName << " did not start: " << status.to_string());
    return done(status.with_context("starting the message store"));
  }
  if (Status listening = server_.start(config_.broker_addr()); !listening.ok()) {
    MQ_LOG(kError, kBrokerControllerLog, "broker cannot listen on " << config_.broker_addr() << ": " << listening.to_string());
    // Leave the store as a clean shutdown would, so the next start is normal.
    store_->shutdown([done = std::move(done), listening](Status) { done(listening.with_context("listening")); });
    return;
  }
  if (Status ha = start_ha(); !ha.ok()) {
    MQ_LOG(kError, kBrokerControllerLog, "broker cannot start replication: " << ha.to_string());
    server_.shutdown();
    store_->shutdown([done = std::move(done), ha](Status) { done(ha); });
    return;
  }
  hold_service_->start(config_.longPollingEnable ? kLongPollingCheckInterval : millis(config_.shortPollingTimeMills));
  running_ = true;
  start_periodic_tasks();
  register_broker_all();
  MQ_LOG(kInfo, kBrokerControllerLog,
         "broker " << config_.brokerName << " (" << store::broker_role_name(store_config_.brokerRole) << ") serving on "
                   << server_.address());
  done(Status::Ok());
}

void BrokerController::start_periodic_tasks() {
  MQ_ASSERT(running_);
  register_timer_ =
      env_.executor().run_after(kFirstPeriodicRegistration, lifetime_.guard([this] { register_periodically(); }));
  offsets_timer_ = env_.executor().run_after(millis(config_.flushConsumerOffsetInterval),
                                             lifetime_.guard([this] { persist_consumer_offsets_periodically(); }));
  channels_timer_ =
      env_.executor().run_after(kChannelScanInterval, lifetime_.guard([this] { scan_not_active_channels(); }));
}

void BrokerController::cancel_timers() {
  for (env::TimerId* timer : {&register_timer_, &offsets_timer_, &channels_timer_, &master_lookup_timer_}) {
    if (*timer != env::kNoTimer) env_.executor().cancel(*timer);
    *timer = env::kNoTimer;
  }
}

void BrokerController::register_periodically() {
  register_timer_ = env::kNoTimer;
  if (!running_) return;
  register_broker_all();
  register_timer_ =
      env_.executor().run_after(config_.register_period(), lifetime_.guard([this] { register_periodically(); }));
}

void BrokerController::persist_consumer_offsets_periodically() {
  offsets_timer_ = env::kNoTimer;
  if (!running_) return;
  offsets_.persist([](Status status) {
    if (!status.ok()) MQ_LOG(kWarn, kBrokerControllerLog, "persisting consumer offsets failed: " << status.to_string());
  });
  offsets_timer_ = env_.executor().run_after(millis(config_.flushConsumerOffsetInterval),
                                             lifetime_.guard([this] { persist_consumer_offsets_periodically(); }));
}

void BrokerController::scan_not_active_channels() {
  channels_timer_ = env::kNoTimer;
  if (!running_) return;
  const Nanos now = env_.clock().now_ns();
  consumers_.scan_not_active_channels(now);
  producers_.scan_not_active_channels(now);
  channels_timer_ =
      env_.executor().run_after(kChannelScanInterval, lifetime_.guard([this] { scan_not_active_channels(); }));
}

void BrokerController::on_connection_closed(const std::string& remote_address) {
  consumers_.on_connection_closed(remote_address);
  producers_.on_connection_closed(remote_address);
}

void BrokerController::register_broker_all_soon() {
  if (!running_ || register_soon_pending_) return;
  register_soon_pending_ = true;
  env_.executor().post(lifetime_.guard([this] {
    register_soon_pending_ = false;
    if (running_) register_broker_all();
  }));
}

void BrokerController::register_broker_all(std::function<void(std::vector<RegistrationOutcome>)> done) {
  ++stats_.registrations_requested;
  outer_api_.register_broker_all(
      topic_config_wrapper(topics_, config_.brokerPermission),
      lifetime_.guard([this, done = std::move(done)](std::vector<RegistrationOutcome> outcomes) {
        on_registered(outcomes);
        if (done) done(std::move(outcomes));
      }));
}

void BrokerController::shutdown(std::function<void(Status)> done) {
  MQ_ASSERT_MSG(running_, "shutdown of a broker that is not running");
  running_ = false;
  cancel_timers();
  hold_service_->shutdown();
  shutdown_ha();
  server_.shutdown();
  MQ_LOG(kInfo, kBrokerControllerLog, "broker " << config_.brokerName << " shutting down");
  outer_api_.unregister_broker_all(
      lifetime_.guard([this, done = std::move(done)](std::vector<RegistrationOutcome>) mutable {
        store_->shutdown(lifetime_.guard([this, done = std::move(done)](Status store_status) mutable {
          finish_shutdown(std::move(store_status), std::move(done));
        }));
      }));
}

void BrokerController::finish_shutdown(Status first_error, std::function<void(Status)> done) {
  persist_metadata(lifetime_.guard([this, first_error, done = std::move(done)](Status persisted) mutable {
    outer_api_.shutdown();
    Status result = first_error.ok() ? persisted : first_error;
    if (!result.ok()) MQ_LOG(kError, kBrokerControllerLog, "broker shutdown: " << result.to_string());
    done(result);
  }));
}

// Offsets live in memory between periodic persists; topics and groups were
// persisted on each change, but one may still be in flight. Waits for all.
void BrokerController::persist_metadata(std::function<void(Status)> done) {
  struct Pending {
    int remaining = 3;
    Status first_error;
    std::function<void(Status)> done;
  };
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  auto one_done = [pending](Status status) {
    if (!status.ok() && pending->first_error.ok()) pending->first_error = status;
    MQ_ASSERT(pending->remaining > 0);
    if (--pending->remaining == 0) pending->done(pending->first_error);
  };
  offsets_.persist(one_done);
  topics_.persist(one_done);
  groups_.persist(one_done);
}

}  // namespace mqlab::broker
