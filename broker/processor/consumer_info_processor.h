// ConsumerInfoProcessor: who consumes what, for operators (RocketMQ's
// AdminBrokerProcessor.queryTopicConsumeByWho and getConsumerConnectionList):
//
//   QUERY_TOPIC_CONSUME_BY_WHO (300)   ext topic*. SUCCESS with body
//     {"groupList":[...]}: the live groups that subscribe to the topic and
//     the groups holding a committed offset on it, sorted, each once.
//   GET_CONSUMER_CONNECTION_LIST (203) ext consumerGroup*. SUCCESS with body
//     ConsumerConnection {"connectionSet":[{clientId, clientAddr, language,
//     version}], "subscriptionTable":{topic: SubscriptionData},
//     "consumeType", "messageModel", "consumeFromWhere"}; a group with no
//     live client is CONSUMER_NOT_ONLINE (206) "the consumer group[G] not
//     online", as RocketMQ answers, so mqadmin can tell "offline" from failure.
//
// A missing required field (*) is SYSTEM_ERROR naming it.
#pragma once

#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {

class BrokerController;

class ConsumerInfoProcessor {
 public:
  explicit ConsumerInfoProcessor(BrokerController& controller) : controller_(controller) {}

  void query_topic_consume_by_who(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void get_consumer_connection_list(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  BrokerController& controller_;
};

}  // namespace mqlab::broker
