// AdminClient: the few mqadmin commands tests and tools need, asynchronous
// over a shared MQClientInstance (RocketMQ's DefaultMQAdminExt: updateTopic,
// topicStatus, consumerProgress, clusterList).
//
//   cluster_list       GET_BROKER_CLUSTER_INFO from a NameServer
//   create_topic       UPDATE_AND_CREATE_TOPIC on every master of a cluster
//                      (mqadmin updateTopic -c); fails when the cluster has
//                      no master or any master refuses
//   topic_status       GET_MIN_OFFSET and GET_MAX_OFFSET of every queue
//                      (0..max(read, write) queue nums per broker group)
//   consumer_progress  per readable queue: the broker's max offset and the
//                      group's committed offset (QUERY_CONSUMER_OFFSET; none
//                      counts as 0, as GET_CONSUME_STATS counts it), lag
//                      = max - committed
// Queue lookups go to the group's master, or any address when it has none.
// Results are sorted by queue. The instance need not be started: the admin
// client only sends requests (no heartbeats, no periodic tasks).
//
// Invariants: each done runs exactly once, on the executor, never inside the
// call; a failed request fails the whole command with its Status.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "broker/client/message_queue.h"
#include "broker/client/mq_client_api.h"
#include "broker/client/mq_client_instance.h"
#include "broker/common/lifetime.h"

namespace mqlab::client {

struct QueueOffsetRange {
  MessageQueue queue;
  int64_t minOffset = 0;
  int64_t maxOffset = 0;
};

struct QueueProgress {
  MessageQueue queue;
  int64_t brokerOffset = 0;    // the queue's max offset
  int64_t consumerOffset = 0;  // committed by the group; 0 when none
  int64_t lag() const { return brokerOffset - consumerOffset; }
};

struct ConsumerProgress {
  std::vector<QueueProgress> queues;
  int64_t total_lag() const;
};

class AdminClient {
 public:
  // Requires: instance outlives the admin client.
  explicit AdminClient(MQClientInstance& instance) : instance_(instance) {}

  void cluster_list(std::function<void(Result<api::ClusterInfo>)> done);
  // config.topicName names the topic.
  void create_topic(const std::string& cluster, remoting::TopicConfig config, StatusCallback done);
  void topic_status(const std::string& topic, std::function<void(Result<std::vector<QueueOffsetRange>>)> done);
  void consumer_progress(const std::string& group, const std::string& topic,
                         std::function<void(Result<ConsumerProgress>)> done);

 private:
  void create_topic_on_masters(const api::ClusterInfo& info, const std::string& cluster,
                               const remoting::TopicConfig& config, StatusCallback done);
  // Asks each queue's broker two offset questions; done gets the answers in queue order.
  struct OffsetPair {
    MessageQueue queue;
    int64_t first = 0;
    int64_t second = 0;
  };
  using RequestMaker = std::function<remoting::RemotingCommand(const MessageQueue&)>;
  void query_queue_pairs(std::vector<MessageQueue> queues, RequestMaker first, RequestMaker second,
                         bool second_may_be_missing, std::function<void(Result<std::vector<OffsetPair>>)> done);
  void with_fresh_route(const std::string& topic, std::function<void(Result<const remoting::TopicRouteData*>)> done);

  MQClientInstance& instance_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
