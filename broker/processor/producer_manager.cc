#include "broker/processor/producer_manager.h"

#include "broker/common/assert.h"
#include "broker/common/log.h"

namespace mqlab::broker {
namespace {
constexpr const char* kProducerManagerLog = "broker";
}  // namespace

void ProducerManager::register_producer(std::string_view group, const ClientChannelInfo& channel) {
  MQ_ASSERT(!group.empty());
  MQ_ASSERT(!channel.remote_address.empty());
  auto [it, created] = groups_.try_emplace(std::string(group));
  if (!it->second.contains(channel.remote_address)) {
    MQ_LOG(kInfo, kProducerManagerLog,
           "producer " << channel.client_id << " (" << channel.remote_address << ") joined group " << group);
  }
  it->second[channel.remote_address] = channel;
}

bool ProducerManager::unregister_producer(std::string_view group, std::string_view client_id) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return false;
  const size_t removed =
      std::erase_if(it->second, [&](const auto& entry) { return entry.second.client_id == client_id; });
  drop_empty_groups();
  return removed > 0;
}

void ProducerManager::on_connection_closed(std::string_view remote_address) {
  for (auto& [group, channels] : groups_) channels.erase(std::string(remote_address));
  drop_empty_groups();
}

void ProducerManager::scan_not_active_channels(Nanos now_ns) {
  for (auto& [group, channels] : groups_) {
    std::erase_if(channels, [&, &group = group](const auto& entry) {  // clang 14 cannot capture a binding implicitly
      const bool expired = now_ns - entry.second.last_update_ns > kChannelExpiredTimeout;
      if (expired) {
        MQ_LOG(
            kWarn, kProducerManagerLog,
            "producer " << entry.second.client_id << " of group " << group << " sent no heartbeat for 120 s: removed");
      }
      return expired;
    });
  }
  drop_empty_groups();
}

const ProducerManager::Channels* ProducerManager::find(std::string_view group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

size_t ProducerManager::channel_count() const {
  size_t count = 0;
  for (const auto& [group, channels] : groups_) count += channels.size();
  return count;
}

void ProducerManager::drop_empty_groups() {
  std::erase_if(groups_, [](const auto& entry) { return entry.second.empty(); });
}

}  // namespace mqlab::broker
