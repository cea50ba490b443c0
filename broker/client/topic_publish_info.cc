#include "broker/client/topic_publish_info.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>

#include "broker/client/mix_all.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::client {
namespace {

// orderTopicConf "broker-a:4;broker-b:4"; malformed items are skipped, as a
// Java client would fail on them only when parsing its own config.
std::vector<MessageQueue> queues_from_order_conf(const std::string& topic, std::string_view conf) {
  std::vector<MessageQueue> queues;
  while (!conf.empty()) {
    const size_t semicolon = conf.find(';');
    const std::string_view item = conf.substr(0, semicolon);
    conf.remove_prefix(semicolon == std::string_view::npos ? conf.size() : semicolon + 1);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    const std::optional<int32_t> count = remoting::parse_int32(item.substr(colon + 1));
    if (!count || *count <= 0) continue;
    for (int32_t id = 0; id < *count; ++id) queues.push_back({topic, std::string(item.substr(0, colon)), id});
  }
  return queues;
}

bool has_master(const remoting::TopicRouteData& route, const std::string& broker_name) {
  for (const remoting::BrokerData& broker : route.brokerDatas) {
    if (broker.brokerName == broker_name) return broker.brokerAddrs.contains(kMasterId);
  }
  return false;
}

}  // namespace

TopicPublishInfo TopicPublishInfo::from_route(const std::string& topic, const remoting::TopicRouteData& route,
                                              uint64_t start_index) {
  TopicPublishInfo info;
  info.send_which_queue_ = start_index;
  if (!route.orderTopicConf.empty()) {
    info.queues_ = queues_from_order_conf(topic, route.orderTopicConf);
    info.order_topic_ = true;
    return info;
  }
  std::vector<remoting::QueueData> queue_datas = route.queueDatas;
  std::stable_sort(queue_datas.begin(), queue_datas.end(),
                   [](const auto& a, const auto& b) { return a.brokerName < b.brokerName; });
  for (const remoting::QueueData& queue_data : queue_datas) {
    if ((queue_data.perm & kPermWrite) == 0 || !has_master(route, queue_data.brokerName)) continue;
    for (int32_t id = 0; id < queue_data.writeQueueNums; ++id) {
      info.queues_.push_back({topic, queue_data.brokerName, id});
    }
  }
  return info;
}

const MessageQueue& TopicPublishInfo::next_queue() {
  MQ_ASSERT(!queues_.empty());
  return queues_[send_which_queue_++ % queues_.size()];
}

const MessageQueue& TopicPublishInfo::select_one_message_queue(const std::string& last_broker_name,
                                                               const LatencyFaultTolerance* faults,
                                                               int64_t now_ms) {
  MQ_ASSERT(ok());
  for (size_t i = 0; i < queues_.size(); ++i) {
    const MessageQueue& queue = next_queue();
    const bool available = faults == nullptr || faults->is_available(queue.brokerName, now_ms);
    if (queue.brokerName != last_broker_name && available) return queue;
  }
  if (faults != nullptr) {
    const MessageQueue* best = nullptr;
    int64_t best_at = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < queues_.size(); ++i) {
      const MessageQueue& queue = next_queue();
      const int64_t at = faults->available_at_ms(queue.brokerName, now_ms);
      if (queue.brokerName != last_broker_name && at < best_at) {
        best = &queue;
        best_at = at;
      }
    }
    if (best != nullptr) return *best;
  }
  return next_queue();
}

}  // namespace mqlab::client
