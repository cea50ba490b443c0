// ConsumerSendMsgBackProcessor: CONSUMER_SEND_MSG_BACK (36), a consumer
// handing back a message it failed to consume, for a later retry (RocketMQ's
// SendMessageProcessor.asyncConsumerSendMsgBack, 4.9.7).
//
// Request ext: offset* (the message's CommitLog offset), group*, delayLevel*,
// originMsgId, originTopic, unitMode, maxReconsumeTimes.
//
// The broker reads the message back at offset (SYSTEM_ERROR when it is
// gone) and stores a copy with reconsumeTimes + 1, RETRY_TOPIC = its
// original topic (kept when already set), ORIGIN_MESSAGE_ID = the first
// delivery's msgId, and WAIT=false (nobody waits for a retry's flush):
//   - into "%DLQ%group" (1 queue), when the message was already reconsumed
//     maxReconsumeTimes times (the request's value when the sender is at
//     least V3_4_9, else the group's retryMaxTimes) or delayLevel < 0;
//   - otherwise for "%RETRY%group" (a random queue of retryQueueNums), with
//     the delay level (delayLevel, or 3 + reconsumeTimes when 0, capped at
//     the last messageDelayLevel) in the DELAY property: the store parks it
//     in SCHEDULE_TOPIC_XXXX and the ScheduleMessageService puts it into the
//     retry queue once the level's delay has passed, so a failed message is
//     consumed again after 10 s, 30 s, 1 m, ... (store/schedule_message_service.h).
// A group with retryQueueNums 0 drops the message (SUCCESS), as RocketMQ.
//
// Answers SUCCESS once stored, SYSTEM_ERROR with the store status name
// otherwise; SUBSCRIPTION_GROUP_NOT_EXIST / NO_PERMISSION as RocketMQ.
#pragma once

#include <cstdint>
#include <string>

#include "broker/common/lifetime.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {

class BrokerController;

class ConsumerSendMsgBackProcessor {
 public:
  explicit ConsumerSendMsgBackProcessor(BrokerController& controller) : controller_(controller) {}

  void process(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  BrokerController& controller_;
  LifetimeToken lifetime_;  // put completions that outlive us do nothing
};

}  // namespace mqlab::broker
