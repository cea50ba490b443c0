#include "broker/ha/slave_synchronize.h"

#include <charconv>
#include <memory>
#include <system_error>
#include <utility>

#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::ha {
namespace {
constexpr const char* kSlaveSynchronizeLog = "ha";
// BrokerController.start: syncAll 3 s after start, then every 10 s.
constexpr Nanos kFirstSync = seconds(3);
constexpr Nanos kSyncInterval = seconds(10);
constexpr Nanos kRequestTimeout = seconds(3);

// delayOffset.json's shape ({"offsetTable":{"1":0,"2":5}}), checked before it
// is written where a promoted slave's ScheduleMessageService will load it:
// the canonical text, or Corruption saying what is wrong.
Result<std::string> validated_delay_offsets(std::string_view body) {
  MQ_ASSIGN_OR_RETURN(nlohmann::json root, meta::parse_json(body, "delay offsets"));
  if (!root.is_object()) return Status::Corruption("delay offsets: expected a JSON object");
  nlohmann::json table = nlohmann::json::object();
  const auto found = root.find("offsetTable");
  if (found != root.end() && !found->is_null()) {
    if (!found->is_object()) return Status::Corruption("delay offsets: offsetTable is not an object");
    for (const auto& item : found->items()) {
      const std::string& key = item.key();
      const std::string where = "delay offsets: level \"" + key + "\"";
      int32_t level = 0;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), level);
      if (error != std::errc() || end != key.data() + key.size() || level < 1) {
        return Status::Corruption(where + ": not a level (an integer >= 1)");
      }
      int64_t offset = -1;
      MQ_RETURN_IF_ERROR(meta::read_json_field(*found, key.c_str(), &offset, where));
      if (offset < 0) return Status::Corruption(where + ": offset " + std::to_string(offset) + " is negative");
      table[std::to_string(level)] = offset;
    }
  }
  nlohmann::json canonical = nlohmann::json::object();
  canonical["offsetTable"] = std::move(table);
  return meta::dump_json(canonical);
}
}  // namespace

struct SlaveSynchronize::Round {
  int remaining = 0;
  Status first_error;
  std::function<void(Status)> done;
};

SlaveSynchronize::SlaveSynchronize(env::Env& env, meta::TopicConfigManager& topics,
                                   meta::ConsumerOffsetManager& offsets, meta::SubscriptionGroupManager& groups,
                                   std::function<void()> on_topics_changed, std::string delay_offset_path)
    : env_(env),
      topics_(topics),
      offsets_(offsets),
      groups_(groups),
      on_topics_changed_(std::move(on_topics_changed)),
      client_(env) {
  if (!delay_offset_path.empty()) delay_offsets_ = std::make_unique<meta::ConfigFile>(env, std::move(delay_offset_path));
}

SlaveSynchronize::~SlaveSynchronize() {
  if (timer_ != env::kNoTimer) env_.executor().cancel(timer_);
}

void SlaveSynchronize::start() {
  MQ_ASSERT(!running_);
  running_ = true;
  if (delay_offsets_) {
    // ConfigFile learns what the file holds before its first persist (a bad
    // file is then not copied to .bak). Either way the master's copy replaces it.
    const Result<meta::LoadSource> loaded =
        delay_offsets_->load([](const std::string& content) { return validated_delay_offsets(content).status(); });
    if (!loaded.ok()) MQ_LOG(kWarn, kSlaveSynchronizeLog, "slave's " << delay_offsets_->path() << ": " << loaded.status().to_string());
  }
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
  const std::vector<int32_t> codes = request_codes();
  round->remaining = static_cast<int>(codes.size());
  for (int32_t code : codes) fetch(code, round);
}

std::vector<int32_t> SlaveSynchronize::request_codes() const {
  std::vector<int32_t> codes = {remoting::RequestCode::GET_ALL_TOPIC_CONFIG,
                                remoting::RequestCode::GET_ALL_CONSUMER_OFFSET,
                                remoting::RequestCode::GET_ALL_SUBSCRIPTIONGROUP_CONFIG};
  if (delay_offsets_) codes.push_back(remoting::RequestCode::GET_ALL_DELAY_OFFSET);
  return codes;
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
                     MQ_LOG(kWarn, kSlaveSynchronizeLog, "slave sync (request code " << code << ") from " << master_addr_
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
      if (!status.ok()) MQ_LOG(kWarn, kSlaveSynchronizeLog, "persisting synced " << what << " failed: " << status.to_string());
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
    case remoting::RequestCode::GET_ALL_DELAY_OFFSET:
      MQ_RETURN_IF_ERROR(apply_delay_offsets(body));
      break;
    default: MQ_UNREACHABLE("slave sync of request code " + std::to_string(code));
  }
  ++stats_.tables_synced;
  return Status::Ok();
}

Status SlaveSynchronize::apply_delay_offsets(std::string_view body) {
  MQ_ASSERT(delay_offsets_ != nullptr);
  MQ_ASSIGN_OR_RETURN(std::string content, validated_delay_offsets(body));
  delay_offsets_->persist(std::move(content), [path = delay_offsets_->path()](Status status) {
    if (!status.ok()) MQ_LOG(kWarn, kSlaveSynchronizeLog, "persisting synced " << path << " failed: " << status.to_string());
  });
  return Status::Ok();
}

}  // namespace mqlab::ha
