// ProducerManager: the producer clients a broker knows, per producer group,
// learned from HEART_BEAT (RocketMQ's ProducerManager). The broker needs them
// only for GET_PRODUCER_CONNECTION_LIST and transaction checks; keeping them
// with the same expiry rules as consumers makes connection counts in
// GET_BROKER_RUNTIME_INFO honest.
//
// A channel leaves when UNREGISTER_CLIENT names it, when its connection
// closes, or after kChannelExpiredTimeout without a heartbeat.
//
// Invariants: every group in the table has at least one channel; iteration
// is sorted (std::map).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "broker/processor/consumer_manager.h"

namespace mqlab::broker {

class ProducerManager {
 public:
  using Channels = std::map<std::string, ClientChannelInfo>;  // by remote address

  void register_producer(std::string_view group, const ClientChannelInfo& channel);
  // Removes the channel with that client id from the group; false when absent.
  bool unregister_producer(std::string_view group, std::string_view client_id);
  void on_connection_closed(std::string_view remote_address);
  void scan_not_active_channels(Nanos now_ns);

  const Channels* find(std::string_view group) const;
  const std::map<std::string, Channels, std::less<>>& groups() const { return groups_; }
  size_t channel_count() const;

 private:
  void drop_empty_groups();

  std::map<std::string, Channels, std::less<>> groups_;
};

}  // namespace mqlab::broker
