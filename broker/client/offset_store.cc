#include "broker/client/offset_store.h"

#include <utility>

#include "broker/client/mix_all.h"
#include "broker/client/mq_client_api.h"
#include "broker/common/log.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {
constexpr const char* kLog = "consumer";
}  // namespace

OffsetStore::OffsetStore(MQClientInstance& instance, std::string group, MessageModel model)
    : instance_(instance), group_(std::move(group)), model_(model) {}

void OffsetStore::update_offset(const MessageQueue& queue, int64_t offset, bool increase_only) {
  MQ_ASSERT(offset >= 0);
  auto [it, inserted] = offsets_.emplace(queue, offset);
  if (inserted) return;
  if (!increase_only || offset > it->second) it->second = offset;
  if (increase_only) MQ_ASSERT(it->second >= offset);
}

std::optional<int64_t> OffsetStore::read_offset_in_memory(const MessageQueue& queue) const {
  const auto it = offsets_.find(queue);
  if (it == offsets_.end()) return std::nullopt;
  return it->second;
}

void OffsetStore::read_offset_from_store(const MessageQueue& queue, std::function<void(Result<int64_t>)> done) {
  if (model_ == MessageModel::BROADCASTING) {
    const auto it = persisted_local_.find(queue);
    const int64_t offset = it == persisted_local_.end() ? -1 : it->second;
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
      lifetime_.guard([this, queue, done = std::move(done)](Result<RemotingCommand> response) {
        if (!response.ok()) return done(response.status().with_context("QUERY_CONSUMER_OFFSET " + queue.to_string()));
        Result<int64_t> offset = api::parse_offset(*response, "QUERY_CONSUMER_OFFSET");
        if (!offset.ok() || *offset < 0) return done(int64_t{-1});  // Java: an MQBrokerException reads as "none"
        update_offset(queue, *offset, false);
        done(*offset);
      }));
}

void OffsetStore::persist(const MessageQueue& queue) {
  const auto it = offsets_.find(queue);
  if (it == offsets_.end()) return;
  if (model_ == MessageModel::BROADCASTING) {
    persisted_local_[queue] = it->second;
    return;
  }
  const auto broker = instance_.find_broker_address_in_subscribe(queue.brokerName, kMasterId, false);
  if (!broker) {
    MQ_LOG(kWarn, kLog, "cannot persist the offset of " << queue.to_string() << ": no address of its broker");
    return;
  }
  instance_.remoting().invoke_oneway(
      broker->address, api::build_update_consumer_offset(group_, queue.topic, queue.queueId, it->second),
      [queue](Status status) {
        if (!status.ok()) MQ_LOG(kWarn, kLog, "UPDATE_CONSUMER_OFFSET " << queue.to_string() << ": " << status.to_string());
      });
}

void OffsetStore::persist_all(const std::set<MessageQueue>& queues) {
  for (const MessageQueue& queue : queues) persist(queue);
}

}  // namespace mqlab::client
