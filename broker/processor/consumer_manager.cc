#include "broker/processor/consumer_manager.h"

#include <set>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/log.h"

namespace mqlab::broker {
namespace {
constexpr const char* kConsumerManagerLog = "broker";
}  // namespace

std::vector<std::string> ConsumerGroupInfo::client_ids() const {
  std::set<std::string> ids;
  for (const auto& [address, channel] : channels) ids.insert(channel.client_id);
  return {ids.begin(), ids.end()};
}

const remoting::SubscriptionData* ConsumerGroupInfo::find_subscription(std::string_view topic) const {
  auto it = subscriptions.find(std::string(topic));
  return it == subscriptions.end() ? nullptr : &it->second;
}

bool ConsumerManager::register_consumer(const remoting::ConsumerData& consumer, const ClientChannelInfo& channel) {
  MQ_ASSERT(!consumer.groupName.empty());
  MQ_ASSERT(!channel.remote_address.empty());
  auto [it, created] = groups_.try_emplace(consumer.groupName);
  ConsumerGroupInfo& info = it->second;
  info.group_name = consumer.groupName;
  info.consume_type = consumer.consumeType;
  info.message_model = consumer.messageModel;
  info.consume_from_where = consumer.consumeFromWhere;
  auto existing = info.channels.find(channel.remote_address);
  bool changed = created;
  if (existing == info.channels.end() || existing->second.client_id != channel.client_id) {
    MQ_LOG(
        kInfo, kConsumerManagerLog,
        "consumer " << channel.client_id << " (" << channel.remote_address << ") joined group " << consumer.groupName);
    changed = true;
  }
  info.channels[channel.remote_address] = channel;
  changed = update_subscriptions(info, consumer.subscriptionDataSet) || changed;
  MQ_ASSERT(!info.channels.empty());
  return changed;
}

bool ConsumerManager::update_subscriptions(ConsumerGroupInfo& info,
                                           const std::vector<remoting::SubscriptionData>& subscriptions) {
  bool changed = false;
  std::set<std::string> listed;
  for (const remoting::SubscriptionData& sub : subscriptions) {
    listed.insert(sub.topic);
    auto it = info.subscriptions.find(sub.topic);
    if (it == info.subscriptions.end()) {
      info.subscriptions.emplace(sub.topic, sub);
      changed = true;
    } else if (sub.subVersion > it->second.subVersion) {
      it->second = sub;
      changed = true;
    }
  }
  for (auto it = info.subscriptions.begin(); it != info.subscriptions.end();) {
    if (listed.contains(it->first)) {
      ++it;
    } else {
      MQ_LOG(kInfo, kConsumerManagerLog, "group " << info.group_name << " no longer subscribes to " << it->first);
      it = info.subscriptions.erase(it);
      changed = true;
    }
  }
  return changed;
}

bool ConsumerManager::unregister_consumer(std::string_view group, std::string_view client_id) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return false;
  bool removed = false;
  auto& channels = it->second.channels;
  for (auto channel = channels.begin(); channel != channels.end();) {
    if (channel->second.client_id == client_id) {
      channel = channels.erase(channel);
      removed = true;
    } else {
      ++channel;
    }
  }
  if (removed) MQ_LOG(kInfo, kConsumerManagerLog, "consumer " << client_id << " left group " << group);
  drop_empty_groups();
  return removed;
}

std::vector<std::string> ConsumerManager::on_connection_closed(std::string_view remote_address) {
  std::vector<std::string> left;
  for (auto& [group, info] : groups_) {
    if (info.channels.erase(std::string(remote_address)) > 0) left.push_back(group);
  }
  for (const std::string& group : left) {
    MQ_LOG(kInfo, kConsumerManagerLog, "connection " << remote_address << " closed: its consumer left group " << group);
  }
  drop_empty_groups();
  return left;
}

std::vector<std::string> ConsumerManager::scan_not_active_channels(Nanos now_ns) {
  std::vector<std::string> expired;
  for (auto& [group, info] : groups_) {
    for (auto it = info.channels.begin(); it != info.channels.end();) {
      if (now_ns - it->second.last_update_ns > kChannelExpiredTimeout) {
        MQ_LOG(kWarn, kConsumerManagerLog,
               "consumer " << it->second.client_id << " of group " << group << " sent no heartbeat for 120 s: removed");
        expired.push_back(group);
        it = info.channels.erase(it);
      } else {
        ++it;
      }
    }
  }
  drop_empty_groups();
  return expired;
}

void ConsumerManager::drop_empty_groups() {
  std::erase_if(groups_, [](const auto& entry) { return entry.second.channels.empty(); });
}

const ConsumerGroupInfo* ConsumerManager::find(std::string_view group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

const remoting::SubscriptionData* ConsumerManager::find_subscription(std::string_view group,
                                                                     std::string_view topic) const {
  const ConsumerGroupInfo* info = find(group);
  return info ? info->find_subscription(topic) : nullptr;
}

}  // namespace mqlab::broker
