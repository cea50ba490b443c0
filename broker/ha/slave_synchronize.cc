#include "broker/ha/slave_synchronize.h"

#include <memory>
#include <utility>

#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::ha {
namespace {
constexpr const char* kLog = "ha";
// BrokerController.start: syncAll 3 s after start, then every 10 s.
constexpr Nanos kFirstSync = seconds(3);
constexpr Nanos kSyncInterval = seconds(10);
constexpr Nanos kRequestTimeout = seconds(3);
constexpr int32_t kCodes[] = {remoting::RequestCode::GET_ALL_TOPIC_CONFIG, remoting::RequestCode::GET_ALL_CONSUMER_OFFSET,
                              remoting::RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG};
}  // namespace

struct SlaveSynchronize::Round {
  int remaining = 0;
  Status first_error;
  std::function<void(Status)> done;
};

SlaveSynchronize::SlaveSynchronize(env::Env& env, meta::TopicConfigManager& topics,
                                   meta::ConsumerOffsetManager& offsets, meta::SubscriptionGroupManager& groups,
                                   std::function<void()> on_topics_changed)
    : env_(env),
      topics_(topics),
      offsets_(offsets),
      groups_(groups),
      on_topics_changed_(std::move(on_topics_changed)),
      client_(env) {}

SlaveSynchronize::~SlaveSynchronize() {
  if (timer_ != env::kNoTimer) env_.executor().cancel(timer_);
}

void SlaveSynchronize::start() {
  MQ_ASSERT(!running_);
  running_ = true;
  timer_ = env_.executor().run_after(kFirstSync, lifetime_.guard([this] { sync_periodically(); }));
}

void SlaveSynchronize::shutdown() {
  running_ = false;
  if (timer_ != env::kNoTimer) env_.executor().cancel(timer_);
  timer_ = env::kNoTimer;
  client_.shutdown();
}

void SlaveSynchronize::sync_periodically() {
  timer_ = env::kNoTimer;
  if (!running_) return;
  if (!master_addr_.empty() && !round_in_flight_) sync_all();
  timer_ = env_.executor().run_after(kSyncInterval, lifetime_.guard([this] { sync_periodically(); }));
}

void SlaveSynchronize::sync_all(std::function<void(Status)> done) {
  auto round = std::make_shared<Round>();
  round->done = std::move(done);
  if (!running_ || master_addr_.empty()) {
    const Status why = Status::Unavailable(running_ ? "no master address yet" : "not running");
    if (round->done) env_.executor().post([round, why] { round->done(why); });
    return;
  }
  round_in_flight_ = true;
  ++stats_.rounds;
  round->remaining = static_cast<int>(std::size(kCodes));
  for (int32_t code : kCodes) fetch(code, round);
}

void SlaveSynchronize::fetch(int32_t code, std::shared_ptr<Round> round) {
  client_.invoke(master_addr_, remoting::RemotingCommand::make_request(code), kRequestTimeout,
                 lifetime_.guard([this, code, round](Result<remoting::RemotingCommand> response) {
                   Status status = response.status();
                   if (response.ok() && response->code != remoting::ResponseCode::SUCCESS) {
                     status = Status::Unavailable(remoting::describe_response_code(response->code) + " " +
                                                  response->remark);
                   }
                   if (status.ok() && running_) {
                     status = apply(code, std::string_view(reinterpret_cast<const char*>(response->body.data()),
                                                           response->body.size()));
                   }
                   if (!status.ok()) {
                     ++stats_.failures;
                     MQ_LOG(kWarn, kLog, "slave sync (request code " << code << ") from " << master_addr_
                                                                     << " failed: " << status.to_string());
                     if (round->first_error.ok()) round->first_error = status;
                   }
                   MQ_ASSERT(round->remaining > 0);
                   if (--round->remaining > 0) return;
                   round_in_flight_ = false;
                   if (round->done) round->done(round->first_error);
                 }));
}

Status SlaveSynchronize::apply(int32_t code, std::string_view body) {
  auto log_persist = [](const char* what) {
    return [what](Status status) {
      if (!status.ok()) MQ_LOG(kWarn, kLog, "persisting synced " << what << " failed: " << status.to_string());
    };
  };
  switch (code) {
    case remoting::RequestCode::GET_ALL_TOPIC_CONFIG: {
      const auto before = topics_.data_version();
      MQ_RETURN_IF_ERROR(topics_.replace_from_json(body));
      topics_.persist(log_persist("topics"));
      const auto after = topics_.data_version();
      if ((before.timestamp != after.timestamp || before.counter != after.counter) && on_topics_changed_) {
        on_topics_changed_();
      }
      break;
    }
    case remoting::RequestCode::GET_ALL_CONSUMER_OFFSET:
      MQ_RETURN_IF_ERROR(offsets_.replace_from_json(body));
      offsets_.persist(log_persist("consumer offsets"));
      break;
    case remoting::RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
      MQ_RETURN_IF_ERROR(groups_.replace_from_json(body));
      groups_.persist(log_persist("subscription groups"));
      break;
    default: MQ_UNREACHABLE("slave sync of request code " + std::to_string(code));
  }
  ++stats_.tables_synced;
  return Status::Ok();
}

}  // namespace mqlab::ha
