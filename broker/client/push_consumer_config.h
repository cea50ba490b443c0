// PushConsumerConfig: how a push consumer consumes (DefaultMQPushConsumer.java's
// options, spelled its way; the pull-loop constants of
// DefaultMQPushConsumerImpl). Times are milliseconds.
//
// Defaults are Java's except where noted: consumption runs one message at a
// time per queue (consumeConcurrentlyPerQueue 1, ali-ons' parallelConsumeLimit),
// and the subscription travels with every pull (postSubscriptionWhenPull on,
// as ali-ons does), so a broker that lost the heartbeat still filters right.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mqlab::client {

enum class MessageModel { CLUSTERING, BROADCASTING };
enum class ConsumeFromWhere { CONSUME_FROM_LAST_OFFSET, CONSUME_FROM_FIRST_OFFSET, CONSUME_FROM_TIMESTAMP };
enum class ConsumeResult { SUCCESS, RECONSUME_LATER };  // ConsumeConcurrentlyStatus

inline std::string_view message_model_name(MessageModel model) {
  return model == MessageModel::CLUSTERING ? "CLUSTERING" : "BROADCASTING";
}

inline std::string_view consume_from_where_name(ConsumeFromWhere where) {
  switch (where) {
    case ConsumeFromWhere::CONSUME_FROM_LAST_OFFSET: return "CONSUME_FROM_LAST_OFFSET";
    case ConsumeFromWhere::CONSUME_FROM_FIRST_OFFSET: return "CONSUME_FROM_FIRST_OFFSET";
    case ConsumeFromWhere::CONSUME_FROM_TIMESTAMP: return "CONSUME_FROM_TIMESTAMP";
  }
  return "CONSUME_FROM_LAST_OFFSET";
}

struct PushConsumerConfig {
  std::string consumerGroup;
  MessageModel messageModel = MessageModel::CLUSTERING;
  ConsumeFromWhere consumeFromWhere = ConsumeFromWhere::CONSUME_FROM_LAST_OFFSET;
  // For CONSUME_FROM_TIMESTAMP: wall-clock ms; 0 = half an hour before start (Java's default).
  int64_t consumeTimestamp = 0;

  int32_t pullBatchSize = 32;
  int32_t consumeConcurrentlyPerQueue = 1;  // handler calls in flight per queue
  int32_t maxReconsumeTimes = 16;           // then the broker moves it to %DLQ%<group>

  // Flow control: a queue holding more than this waits before its next pull.
  int32_t pullThresholdForQueue = 1'000;         // messages
  int32_t pullThresholdSizeForQueue = 100;       // MiB
  int32_t consumeConcurrentlyMaxSpan = 2'000;    // highest - lowest unconsumed offset
  int64_t pullTimeDelayMillsWhenFlowControl = 50;

  int64_t brokerSuspendMaxTimeMillis = 15'000;       // the broker holds an empty pull this long
  int64_t consumerTimeoutMillisWhenSuspend = 30'000;  // our timeout for such a pull
  int64_t pullTimeDelayMillsWhenException = 3'000;
  // Java re-pulls at once after NO_MATCHED_MSG and OFFSET_ILLEGAL. When such
  // an answer did not move the offset (a slave keeps answering 20 for an
  // offset it will not correct), that is a busy loop; we wait this long.
  int64_t pullTimeDelayMillsWhenNoProgress = 1'000;
  // A message whose handler failed and which could not be sent back is
  // consumed again locally after this (Java's 5 s).
  int64_t suspendCurrentQueueTimeMillis = 5'000;
  int64_t sendMessageBackTimeoutMillis = 5'000;  // CONSUMER_SEND_MSG_BACK (Java: 5000)
  bool postSubscriptionWhenPull = true;

  // BROADCASTING: offsets are kept in <localOffsetStoreDir>/<clientId>/<group>/offsets.json
  // (Java's rocketmq.client.localOffsetStoreDir, default ~/.rocketmq_offsets),
  // persisted every persistConsumerOffsetInterval and at shutdown, loaded at
  // start. Explicit here (broker code reads no HOME); empty keeps them in
  // memory only, so a restarted broadcasting consumer starts over at
  // consumeFromWhere.
  std::string localOffsetStoreDir;
};

}  // namespace mqlab::client
