// ClientManageProcessor: what clients say about themselves and their
// consume offsets (RocketMQ's ClientManageProcessor and
// ConsumerManageProcessor):
//
//   HEART_BEAT (34)            body HeartbeatData JSON. Registers the
//     producer and consumer channels of the connection; for each consumer
//     group found or auto-created (autoCreateSubscriptionGroup) creates
//     "%RETRY%group" with the group's retryQueueNums and re-registers with
//     the NameServers when it is new. SUCCESS, no body.
//   UNREGISTER_CLIENT (35)     ext clientID*, producerGroup, consumerGroup. SUCCESS.
//   GET_CONSUMER_LIST_BY_GROUP (38)  ext consumerGroup*. SUCCESS with body
//     {"consumerIdList":[...]} (sorted), or SYSTEM_ERROR
//     "no consumer for this group, G" when no live client.
//   QUERY_CONSUMER_OFFSET (14) ext consumerGroup*, topic*, queueId*. SUCCESS
//     with ext offset; without a committed offset: offset 0 when the queue's
//     min offset is 0 (a young queue: a new group starts from the beginning),
//     else QUERY_NOT_FOUND (22).
//   UPDATE_CONSUMER_OFFSET (15) ext consumerGroup*, topic*, queueId*,
//     commitOffset*. SUCCESS; a negative commitOffset (ali-ons sends 0 as -1)
//     is accepted and not stored, so it cannot overwrite a real offset. The
//     request is answered unless it is flagged oneway (ali-ons never flags it).
//
// RocketMQ's young-queue rule also asks whether the queue's first message is
// still in the page cache; mqlab does not model page-cache residency, so a
// queue that still starts at offset 0 counts as young however long it is.
// Membership changes do not push NOTIFY_CONSUMER_IDS_CHANGED (the server has
// no client-bound requests yet); clients rebalance every 10-20 s anyway.
// A missing required field (*) is SYSTEM_ERROR naming it.
#pragma once

#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"
#include "broker/remoting/route_data.h"

namespace mqlab::broker {

class BrokerController;

class ClientManageProcessor {
 public:
  explicit ClientManageProcessor(BrokerController& controller) : controller_(controller) {}

  void heart_beat(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void unregister_client(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_consumer_list_by_group(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void query_consumer_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void update_consumer_offset(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  // Finds or creates the group and its retry topic; false when the group is
  // unknown and may not be created.
  bool prepare_consumer_group(const remoting::ConsumerData& consumer);

  BrokerController& controller_;
};

}  // namespace mqlab::broker
