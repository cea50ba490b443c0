#include "broker/client/offset_store.h"

#include <utility>

#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/common/log.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kOffsetStoreLog = "consumer";
}  // namespace

OffsetStore::OffsetStore(MQClientInstance& instance, std::string group, MessageModel model,
                         const std::string& local_offset_store_dir)
    : instance_(instance), group_(std::move(group)), model_(model) {
  if (model_ == MessageModel::BROADCASTING && !local_offset_store_dir.empty()) {
    local_file_ =
        std::make_unique<LocalFileOffsetStore>(instance_.env(), local_offset_store_dir, instance_.client_id(), group_);
  }
}

Status OffsetStore::load() {
  if (!local_file_ || local_load_source_) return Status::Ok();
  Result<meta::LoadSource> source = local_file_->load();
  if (!source.ok()) return source.status().with_context("loading the offsets of broadcasting group " + group_);
  local_load_source_ = *source;
  MQ_LOG(kInfo, kOffsetStoreLog, "group " << group_ << ": " << local_file_->table().size() << " queue offsets from "
                                << local_file_->path() << " (" << meta::load_source_name(*source) << ")");
  return Status::Ok();
}

OffsetStore::Offsets::value_type* OffsetStore::recent_entry(const MessageQueue& queue) const {
  for (Offsets::value_type* entry : recent_) {
    if (entry != nullptr && entry->first == queue) return entry;  // the queue id first: a mismatch is one compare
  }
  return nullptr;
}

void OffsetStore::remember(Offsets::value_type* entry) {
  MQ_ASSERT(entry != nullptr);
  recent_[next_recent_] = entry;
  next_recent_ = (next_recent_ + 1) % kRecent;
}

OffsetStore::Offsets::value_type* OffsetStore::find_entry(const MessageQueue& queue) {
  if (Offsets::value_type* entry = recent_entry(queue)) return entry;
  const auto it = offsets_.find(queue);
  if (it == offsets_.end()) return nullptr;
  remember(&*it);
  return &*it;
}

void OffsetStore::update_offset(const MessageQueue& queue, int64_t offset, bool increase_only) {
  MQ_ASSERT(offset >= 0);
  Offsets::value_type* entry = find_entry(queue);
  if (entry == nullptr) {
    remember(&*offsets_.emplace(queue, offset).first);
    return;
  }
  if (!increase_only || offset > entry->second) entry->second = offset;
  if (increase_only) MQ_ASSERT(entry->second >= offset);
}

void OffsetStore::remove_offset(const MessageQueue& queue) {
  recent_ = {};  // one may be the entry erased
  offsets_.erase(queue);
}

std::optional<int64_t> OffsetStore::read_offset_in_memory(const MessageQueue& queue) const {
  if (const Offsets::value_type* entry = recent_entry(queue)) return entry->second;  // a commit just before
  const auto it = offsets_.find(queue);
  if (it == offsets_.end()) return std::nullopt;
  return it->second;
}

void OffsetStore::read_offset_from_store(const MessageQueue& queue, std::function<void(Result<int64_t>)> done) {
  if (model_ == MessageModel::BROADCASTING) {
    MQ_ASSERT(!local_file_ || local_load_source_.has_value());  // load() came first
    const auto it = persisted_local().find(queue);
    const int64_t offset = it == persisted_local().end() ? -1 : it->second;
    instance_.env().executor().post([done = std::move(done), offset] { done(offset); });
    return;
  }
  const auto broker = instance_.find_broker_address_in_subscribe(queue.brokerName, kMasterId, false);
  if (!broker) {
    instance_.env().executor().post([done = std::move(done), queue] {
      done(Status::Unavailable("The broker[" + queue.brokerName + "] not exist"));
    });
    return;
  }
  instance_.remoting().invoke(
      broker->address, api::build_query_consumer_offset(group_, queue.topic, queue.queueId), instance_.api_timeout(),
      lifetime_.guard([this, queue, address = broker->address, done = std::move(done)](Result<RemotingCommand> response) {
        if (!response.ok()) {
          instance_.note_request_failure(address, response.status());  // the retry asks another address
          return done(response.status().with_context("QUERY_CONSUMER_OFFSET " + queue.to_string()));
        }
        Result<int64_t> offset = api::parse_offset(*response, "QUERY_CONSUMER_OFFSET");
        if (!offset.ok() || *offset < 0) return done(int64_t{-1});  // Java: an MQBrokerException reads as "none"
        update_offset(queue, *offset, false);
        done(*offset);
      }));
}

void OffsetStore::persist(const MessageQueue& queue) {
  const auto it = offsets_.find(queue);
  if (it == offsets_.end()) return;
  if (model_ == MessageModel::BROADCASTING) return persist_all({queue});
  const auto broker = instance_.find_broker_address_in_subscribe(queue.brokerName, kMasterId, false);
  if (!broker) {
    MQ_LOG(kWarn, kOffsetStoreLog, "cannot persist the offset of " << queue.to_string() << ": no address of its broker");
    return;
  }
  instance_.remoting().invoke_oneway(
      broker->address, api::build_update_consumer_offset(group_, queue.topic, queue.queueId, it->second),
      [queue](Status status) {
        if (!status.ok()) MQ_LOG(kWarn, kOffsetStoreLog, "UPDATE_CONSUMER_OFFSET " << queue.to_string() << ": " << status.to_string());
      });
}

void OffsetStore::persist_all(const std::set<MessageQueue>& queues, std::function<void(Status)> done) {
  if (model_ == MessageModel::CLUSTERING || !local_file_) {
    for (const MessageQueue& queue : queues) {
      if (model_ == MessageModel::CLUSTERING) {
        persist(queue);
      } else if (auto offset = read_offset_in_memory(queue)) {
        persisted_local_[queue] = *offset;
      }
    }
    if (done) instance_.env().executor().post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  for (const MessageQueue& queue : queues) {
    if (auto offset = read_offset_in_memory(queue)) local_file_->record(queue, *offset);
  }
  local_file_->persist(lifetime_.guard([path = local_file_->path(), done = std::move(done)](Status status) {
    if (!status.ok()) MQ_LOG(kWarn, kOffsetStoreLog, "persisting " << path << " failed: " << status.to_string());
    if (done) done(status);
  }));
}

}  // namespace mqlab::client
