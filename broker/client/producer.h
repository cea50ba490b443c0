// Producer: sends messages to a topic's queues, asynchronously, with
// RocketMQ's retry and broker-avoidance rules (DefaultMQProducer.java and
// DefaultMQProducerImpl.sendDefaultImpl / sendKernelImpl; reference 8.3).
//
// One send, step by step:
//   1. validate (topic name, non-empty body within maxMessageSize) and stamp
//      a UNIQ_KEY unless the message has one (a consumer's retry keeps it);
//   2. the topic's route: cached, or fetched from a NameServer on first use;
//      no route is FAILED (there is no TBW102 auto-create fallback);
//   3. up to 1 + retryTimesWhenSendFailed attempts, all within sendMsgTimeout
//      (each gets what is left of it): pick a queue (topic_publish_info.h:
//      round robin, avoiding the previous attempt's broker and brokers that
//      are backing off), SEND_MESSAGE_V2 to that group's master;
//   4. each attempt's latency, or its failure, feeds LatencyFaultTolerance;
//   5. the response decides (send_result.h): stored ends the send (unless
//      retryAnotherBrokerWhenNotStoreOK and not SEND_OK), a retryable failure
//      tries the next queue, any other error response ends it.
// The result: the stored status, or FAILED when nothing can have been stored,
// or UNKNOWN when some attempt may have stored it (a timeout, a connection
// that broke after the write): the caller may re-send, and a consumer then
// sees the same UNIQ_KEY twice.
//
// Invariants: done runs exactly once per send, on the executor, never inside
// send(); attempts <= 1 + retryTimesWhenSendFailed; no attempt starts after
// sendMsgTimeout has passed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "broker/client/latency_fault_tolerance.h"
#include "broker/client/message.h"
#include "broker/client/message_client_id.h"
#include "broker/client/mix_all.h"
#include "broker/client/mq_client_instance.h"
#include "broker/client/send_result.h"
#include "broker/client/topic_publish_info.h"
#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/remembered_entries.h"
#include "broker/common/shared_shelf.h"

namespace mqlab::client {

struct ProducerConfig {
  std::string producerGroup;
  int64_t sendMsgTimeout = 3'000;  // ms, for the whole send with its retries
  // Java's default for sync sends: 3 attempts in all (ali-ons: 3 retries).
  int32_t retryTimesWhenSendFailed = 2;
  bool retryAnotherBrokerWhenNotStoreOK = false;
  // Java's default is off; on here, because avoiding a failing broker for a
  // while is what a client in a faulty world should do. See
  // latency_fault_tolerance.h for the back-off table.
  bool sendLatencyFaultEnable = true;
  // Java always compresses bodies over compressMsgBodyOverHowmuch; mqlab only
  // when asked, so stored bodies stay readable in tests and traces.
  bool compressMsgBodyEnable = false;
  int32_t compressMsgBodyOverHowmuch = 4 * 1024;
  int32_t maxMessageSize = 4 * 1024 * 1024;
  std::string createTopicKey{kAutoCreateTopicKey};
  int32_t defaultTopicQueueNums = 4;
};

// The result by rvalue reference: the producer hands over its own. A
// SendResult is five strings, and by value it was moved once into the
// call and once more into a callback taking it by value; now a callback
// taking it by reference gets it without a move.
using SendCallback = std::function<void(SendResult&&)>;

class Producer {
 public:
  // Requires: instance outlives the producer.
  Producer(MQClientInstance& instance, ProducerConfig config);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Starts the instance if needed and registers the group (at once when the
  // instance runs; done still runs later); InvalidArgument for
  // a bad config, AlreadyExists when the group is taken on this instance.
  void start(StatusCallback done);
  // Sends UNREGISTER_CLIENT for the group; sends in flight still complete.
  void shutdown(DoneCallback done);
  bool running() const { return running_; }

  // The message is handed over (a caller that keeps it passes a copy): by
  // value, it was moved once more per send, three strings, the body and
  // the properties.
  void send(Message&& message, SendCallback done);
  // To this queue only (RocketMQ's send(msg, mq)): one attempt, no retry
  // elsewhere; FAILED at once when queue.topic is not the message's topic.
  void send(Message&& message, MessageQueue queue, SendCallback done);

  const ProducerConfig& config() const { return config_; }
  const LatencyFaultTolerance& fault_tolerance() const { return faults_; }

 private:
  struct SendContext;
  struct PublishEntry {
    TopicPublishInfo info;
    uint64_t route_version = 0;
  };

  Status register_with_instance();
  Status validate(const Message& message) const;
  // Puts a context taken back by contexts_ to a default one, keeping room.
  static void reset_send_context(SendContext& context);
  // A send's context, from contexts_: one let go (delivered, its retries
  // and timers done) is used again (shared_shelf.h). 64: a producer's
  // sends in flight at once, and more.
  std::shared_ptr<SendContext> prepare(Message&& message, SendCallback done);
  void send_with_route(std::shared_ptr<SendContext> context);
  void attempt(std::shared_ptr<SendContext> context);
  void on_response(std::shared_ptr<SendContext> context, Nanos attempt_start,
                   Result<remoting::RemotingCommand>&& response);
  // Sets result (every field) to the stored result of the attempt to
  // context's last queue.
  void set_stored_result(const SendContext& context, const AttemptOutcome& outcome,
                         const remoting::RemotingCommand& response, SendResult& result) const;
  void finish(std::shared_ptr<SendContext> context);
  // Hands context's result (set: set_stored_result or finish) to its callback.
  void deliver(std::shared_ptr<SendContext> context);
  TopicPublishInfo* publish_info(const std::string& topic);
  int64_t now_ms() const;

  MQClientInstance& instance_;
  const ProducerConfig config_;
  bool running_ = false;
  MessageClientIdGenerator ids_;
  SharedShelf<SendContext, 64, &Producer::reset_send_context> contexts_;
  LatencyFaultTolerance faults_;
  std::map<std::string, PublishEntry, NameLess> publish_;  // never erased
  RememberedEntries<std::map<std::string, PublishEntry, NameLess>> publish_found_;  // publish_'s entries
  LifetimeToken lifetime_;
};

}  // namespace mqlab::client
