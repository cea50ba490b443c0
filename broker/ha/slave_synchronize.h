// SlaveSynchronize: a SLAVE's metadata sync from its master (RocketMQ's
// SlaveSynchronize.syncAll). Metadata is not in the HA stream: every 10 s
// (the first 3 s after start) the slave asks the master over remoting for
//   GET_ALL_TOPIC_CONFIG (21)              -> topics.json
//   GET_ALL_CONSUMER_OFFSET (43)           -> consumerOffset.json
//   GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) -> subscriptionGroup.json
//   GET_ALL_DELAY_OFFSET (45)              -> delayOffset.json
// and overwrites its local copies with the master's (entries the master
// has replace ours; direction is master -> slave only), then persists them.
//
// Delay offsets: a slave does not run the ScheduleMessageService, so its
// delayOffset.json is only ever what the master last sent, written as a
// file (validated first: levels >= 1, offsets >= 0), as RocketMQ's
// syncDelayOffset writes the master's string to the file. A slave promoted
// to master restarts and loads it, so it does not deliver again what the
// master already delivered (their copies are in the replicated log). Bounds
// of that promise: deliveries since the last round (up to 10 s of them) are
// delivered again (at-least-once, as RocketMQ); and the master sends its
// offsets as they are in memory, so a delivered copy the slave has not yet
// replicated at the instant of the round is counted as delivered: a promotion
// inside that window (the replication lag) loses that copy, as it loses any
// unreplicated message.
//
// The master's address is its remoting address (brokerAddr), learned from
// the NameServer's answer to the slave's registration (masterAddr).
//
// Invariants: at most one sync round in flight; a failed request is logged
// and leaves that table as it was; after shutdown() no request goes out and
// no answer is applied.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/config_file.h"
#include "broker/meta/consumer_offset_manager.h"
#include "broker/meta/subscription_group.h"
#include "broker/meta/topic_config.h"
#include "broker/remoting/remoting_client.h"

namespace mqlab::ha {

struct SlaveSynchronizeStats {
  uint64_t rounds = 0;
  uint64_t tables_synced = 0;
  uint64_t failures = 0;
};

class SlaveSynchronize {
 public:
  // on_topics_changed: the broker re-registers with the NameServers.
  // delay_offset_path: the store's delayOffset.json (ScheduleMessageService::
  // path()); empty: delay offsets are not synced.
  SlaveSynchronize(env::Env& env, meta::TopicConfigManager& topics, meta::ConsumerOffsetManager& offsets,
                   meta::SubscriptionGroupManager& groups, std::function<void()> on_topics_changed,
                   std::string delay_offset_path = {});
  ~SlaveSynchronize();
  SlaveSynchronize(const SlaveSynchronize&) = delete;
  SlaveSynchronize& operator=(const SlaveSynchronize&) = delete;

  void start();
  void shutdown();
  void set_master_addr(const std::string& address) { master_addr_ = address; }
  const std::string& master_addr() const { return master_addr_; }
  // One round now; done (optional) with the first error, after every answer
  // (the persists they start complete later).
  void sync_all(std::function<void(Status)> done = {});
  const SlaveSynchronizeStats& stats() const { return stats_; }

 private:
  struct Round;
  void sync_periodically();
  void fetch(int32_t code, std::shared_ptr<Round> round);
  Status apply(int32_t code, std::string_view body);
  Status apply_delay_offsets(std::string_view body);
  std::vector<int32_t> request_codes() const;

  env::Env& env_;
  meta::TopicConfigManager& topics_;
  meta::ConsumerOffsetManager& offsets_;
  meta::SubscriptionGroupManager& groups_;
  std::function<void()> on_topics_changed_;
  std::unique_ptr<meta::ConfigFile> delay_offsets_;  // null: not synced
  remoting::RemotingClient client_;
  std::string master_addr_;
  bool running_ = false;
  bool round_in_flight_ = false;
  env::TimerId timer_ = env::kNoTimer;
  SlaveSynchronizeStats stats_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::ha
