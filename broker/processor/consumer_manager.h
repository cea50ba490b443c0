// ConsumerManager: the consumer clients a broker knows, per consumer group,
// learned from HEART_BEAT (RocketMQ's ConsumerManager and ConsumerGroupInfo).
// A client is known by the connection it heartbeats on (its remote address,
// RocketMQ's Channel) and its clientID; a group also keeps its subscriptions,
// which a PULL without the SUBSCRIPTION flag filters by.
//
// A client channel leaves its group when UNREGISTER_CLIENT names it, when its
// connection closes, or when no heartbeat came for kChannelExpiredTimeout
// (scan_not_active_channels, called every 10 s by the controller). A group
// without channels is dropped with its subscriptions, as RocketMQ drops it.
//
// Invariants: every group in the table has at least one channel; every
// channel's group_name is its group's key; tables are std::maps, so
// consumer id lists come out sorted and identical run to run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/types.h"
#include "broker/remoting/route_data.h"

namespace mqlab::broker {

// ConsumerManager.CHANNEL_EXPIRED_TIMEOUT: 120 s without a heartbeat.
inline constexpr Nanos kChannelExpiredTimeout = seconds(120);

struct ClientChannelInfo {
  std::string client_id;       // "clientIP@instanceName"
  std::string remote_address;  // the connection's, as the server sees it
  std::string language;
  int32_t version = 0;
  Nanos last_update_ns = 0;  // monotonic time of the last heartbeat
};

struct ConsumerGroupInfo {
  std::string group_name;
  std::string consume_type;   // CONSUME_ACTIVELY | CONSUME_PASSIVELY
  std::string message_model;  // CLUSTERING | BROADCASTING
  std::string consume_from_where;
  std::map<std::string, ClientChannelInfo> channels;                // by remote address
  std::map<std::string, remoting::SubscriptionData> subscriptions;  // by topic

  // The distinct client ids of the group's channels, sorted.
  std::vector<std::string> client_ids() const;
  const remoting::SubscriptionData* find_subscription(std::string_view topic) const;
};

class ConsumerManager {
 public:
  // Adds or refreshes a channel and updates the group's subscriptions (a
  // subscription replaces its topic's only when its subVersion is newer;
  // topics the heartbeat no longer lists are dropped). Returns whether the
  // group's membership or subscriptions changed.
  bool register_consumer(const remoting::ConsumerData& consumer, const ClientChannelInfo& channel);
  // Removes the channel with that client id from the group; false when absent.
  bool unregister_consumer(std::string_view group, std::string_view client_id);
  // Drops every channel of a closed connection; returns the groups it left.
  std::vector<std::string> on_connection_closed(std::string_view remote_address);
  // Drops channels whose last heartbeat is older than kChannelExpiredTimeout.
  std::vector<std::string> scan_not_active_channels(Nanos now_ns);

  const ConsumerGroupInfo* find(std::string_view group) const;
  const remoting::SubscriptionData* find_subscription(std::string_view group, std::string_view topic) const;
  const std::map<std::string, ConsumerGroupInfo, std::less<>>& groups() const { return groups_; }

 private:
  bool update_subscriptions(ConsumerGroupInfo& info, const std::vector<remoting::SubscriptionData>& subscriptions);
  void drop_empty_groups();

  std::map<std::string, ConsumerGroupInfo, std::less<>> groups_;
};

}  // namespace mqlab::broker
