// AdminBrokerProcessor: queue offsets, topics and statistics, for consumers
// starting up and for mqadmin (RocketMQ's AdminBrokerProcessor). Required ext
// fields are marked *; a missing one is SYSTEM_ERROR naming it.
//
//   GET_MAX_OFFSET (30) / GET_MIN_OFFSET (31)  ext topic*, queueId* -> ext
//     offset (an unknown queue answers 0, as RocketMQ's lookup creates it empty).
//   SEARCH_OFFSET_BY_TIMESTAMP (29)  ext topic*, queueId*, timestamp* -> ext
//     offset: the first message stored at or after timestamp (max offset
//     when all are older).
//   GET_EARLIEST_MSG_STORETIME (32)  ext topic*, queueId* -> ext timestamp
//     of the queue's first message, -1 when it has none.
//   UPDATE_AND_CREATE_TOPIC (17)  ext topic*, readQueueNums*, writeQueueNums*,
//     perm*, topicFilterType*, topicSysFlag, order. Refuses invalid names,
//     system topics and the cluster name (SYSTEM_ERROR); persists, then
//     re-registers with the NameServers. SUCCESS.
//   GET_ALL_TOPIC_CONFIG (21)  body TopicConfigSerializeWrapper JSON.
//   GET_ALL_CONSUMER_OFFSET (43)  body consumerOffset.json's JSON.
//   GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201)  body subscriptionGroup.json's JSON.
//   GET_ALL_DELAY_OFFSET (45)  body delayOffset.json's JSON
//     ({"offsetTable":{"1":0,...}}): the ScheduleMessageService's offsets as
//     they are in memory (RocketMQ reads the file; ours may be newer by up to
//     flushDelayOffsetInterval, never claiming a delivery whose copy is not
//     in the CommitLog). A slave's answer is its synced copy.
//   GET_BROKER_RUNTIME_INFO (28)  body KVTable {"table":{"key":"value",...}},
//     string values: versions, boot time, commitlog offsets and disk ratio,
//     put/get totals since boot, dispatch lag, client counts.
//   GET_TOPIC_STATS_INFO (202)  ext topic* (TOPIC_NOT_EXIST when unknown).
//   GET_CONSUME_STATS (208)  ext consumerGroup*, topic (absent or empty: every
//     topic the group has offsets on).
//
// Bodies of 202 and 208. RocketMQ's fastjson writes these maps with
// MessageQueue objects as keys ({{"brokerName":..}:{..}}), which no JSON
// parser but fastjson reads; we send the same fields as standard JSON lists,
// sorted by topic then queueId:
//   TopicStatsTable {"offsetTable":[{"brokerName","queueId","topic",
//                    "minOffset","maxOffset","lastUpdateTimestamp"}]}
//     lastUpdateTimestamp: store time of the newest message, 0 when empty.
//   ConsumeStats    {"consumeTps":0,"diffTotal":N,"offsetTable":[{"brokerName",
//                    "queueId","topic","brokerOffset","consumerOffset",
//                    "lastTimestamp"}]}
//     brokerOffset = max offset; consumerOffset = committed (0 when none);
//     diffTotal = sum of brokerOffset - consumerOffset (the consumer lag);
//     lastTimestamp = store time of the last consumed message, 0 when none.
//     Topics the group's live consumers do not subscribe to are skipped, as
//     RocketMQ skips them. consumeTps is not measured (0).
#pragma once

#include <cstdint>
#include <string>

#include "broker/common/status.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {

class BrokerController;

class AdminBrokerProcessor {
 public:
  explicit AdminBrokerProcessor(BrokerController& controller) : controller_(controller) {}

  void get_max_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_min_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void search_offset_by_timestamp(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_earliest_msg_storetime(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void update_and_create_topic(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_all_topic_config(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_all_consumer_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_all_subscription_group_config(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_all_delay_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_broker_runtime_info(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_topic_stats_info(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_consume_stats(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  // Store time of the message at offset in (topic, queue_id); NotFound when
  // the queue has no entry there.
  Result<int64_t> store_time_at(const std::string& topic, int32_t queue_id, QueueOffset offset);

  BrokerController& controller_;
};

}  // namespace mqlab::broker
