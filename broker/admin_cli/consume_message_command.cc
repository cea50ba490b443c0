// consumeMessage: print stored messages by pulling them, without a consumer
// group's bookkeeping (RocketMQ's ConsumeMessageCommand over a pull
// consumer): -t topic, optionally -b brokerName, -i queueId (needs -b), -o
// offset (needs -i), -c how many (128 by default), -g the group named in
// the pulls (TOOLS_CONSUMER). Queues are read one after another in
// (broker, queue id) order, each from its min offset (or -o) towards its
// max offset, until -c messages are printed. Pulls never suspend and never
// commit an offset, so this reads what is there and changes nothing.
//
// Each message prints as PrintMessageByQueueCommand.printMessage does:
//   MSGID: <msgId> MessageExt [brokerName=.., queueId=.., ...] BODY: <body>
#include <algorithm>
#include <memory>
#include <ostream>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"
#include "broker/client/message_queue.h"

namespace mqlab::admin_cli {
namespace {

using client::MessageExt;

constexpr int32_t kPullBatch = 32;

struct QueueToRead {
  std::string broker_name;
  std::string address;
  int32_t queue_id = 0;
};

std::string message_line(const MessageExt& m, const std::string& broker_name) {
  return strprintf(
      "MSGID: %s MessageExt [brokerName=%s, queueId=%d, queueOffset=%lld, commitLogOffset=%lld, bornTimestamp=%lld, "
      "storeTimestamp=%lld, reconsumeTimes=%d, tags=%s, keys=%s] BODY: %s\n",
      m.msgId.c_str(), broker_name.c_str(), m.queueId, static_cast<long long>(m.queueOffset),
      static_cast<long long>(m.commitLogOffset), static_cast<long long>(m.bornTimestamp),
      static_cast<long long>(m.storeTimestamp), m.reconsumeTimes, m.tags().c_str(), m.keys().c_str(),
      printable_body(m.body).c_str());
}

// Reads the queues one by one; owned by the Invocation (hold()).
class ConsumeMessageRun : public std::enable_shared_from_this<ConsumeMessageRun> {
 public:
  ConsumeMessageRun(Invocation& inv, std::string topic, std::string group, std::vector<QueueToRead> queues,
                    std::optional<int64_t> start_offset, int64_t count)
      : inv_(inv),
        topic_(std::move(topic)),
        group_(std::move(group)),
        queues_(std::move(queues)),
        start_offset_(start_offset),
        left_(count) {
    MQ_ASSERT(left_ > 0);
  }

  void next_queue() {
    if (left_ == 0 || index_ == queues_.size()) return inv_.succeed();
    const QueueToRead& queue = queues_[index_];
    std::vector<std::pair<std::string, RemotingCommand>> requests;
    requests.emplace_back(queue.address, client::api::build_get_min_offset(topic_, queue.queue_id));
    requests.emplace_back(queue.address, client::api::build_get_max_offset(topic_, queue.queue_id));
    fan_out(inv_.instance(), std::move(requests), inv_.guard([self = shared_from_this()](Answers answers) {
      Result<int64_t> min = answers[0].ok() ? client::api::parse_offset(*answers[0], "GET_MIN_OFFSET") : answers[0].status();
      Result<int64_t> max = answers[1].ok() ? client::api::parse_offset(*answers[1], "GET_MAX_OFFSET") : answers[1].status();
      if (!min.ok()) return self->inv_.fail(min.status());
      if (!max.ok()) return self->inv_.fail(max.status());
      self->read_range(*min, *max);
    }));
  }

 private:
  std::string queue_name() const {
    const QueueToRead& queue = queues_[index_];
    return client::MessageQueue{topic_, queue.broker_name, queue.queue_id}.to_string();
  }

  void read_range(int64_t min, int64_t max) {
    const int64_t from = std::max(min, start_offset_.value_or(min));
    if (from >= max) {
      inv_.out() << queue_name() << " no matched msg, offset=" << from << "\n";
      ++index_;
      return next_queue();
    }
    pull(from, std::min(max, from + left_));
  }

  // Pulls [offset, end) of the current queue.
  void pull(int64_t offset, int64_t end) {
    if (offset >= end || left_ == 0) {
      ++index_;
      return next_queue();
    }
    client::api::PullMessageRequestHeader header;
    header.consumerGroup = group_;
    header.topic = topic_;
    header.queueId = queues_[index_].queue_id;
    header.queueOffset = offset;
    header.maxMsgNums = static_cast<int32_t>(std::min<int64_t>(kPullBatch, end - offset));
    header.sysFlag = client::api::kPullFlagSubscription;  // no suspend, no commit
    header.suspendTimeoutMillis = 0;
    header.subscription = "*";
    inv_.instance().remoting().invoke(
        queues_[index_].address, client::api::build_pull_message(header), inv_.instance().api_timeout(),
        inv_.guard([self = shared_from_this(), offset, end](Result<RemotingCommand> response) {
          self->on_pull(std::move(response), offset, end);
        }));
  }

  void on_pull(Result<RemotingCommand> response, int64_t offset, int64_t end) {
    Result<client::api::PullResponse> pulled =
        response.ok() ? client::api::parse_pull_message(std::move(response.value())) : response.status();
    if (!pulled.ok()) return inv_.fail(pulled.status().with_context(queue_name()));
    const bool progressed = pulled->nextBeginOffset > offset;
    if (pulled->status == client::api::PullStatus::FOUND) {
      client::PulledMessages decoded = client::decode_pulled_messages(pulled->body);
      for (const MessageExt& message : decoded.messages) {
        if (left_ == 0 || message.queueOffset >= end) break;
        inv_.out() << message_line(message, queues_[index_].broker_name);
        --left_;
      }
      if (!decoded.error.ok()) return inv_.fail(decoded.error.with_context(queue_name()));
    } else if (pulled->status != client::api::PullStatus::NO_MATCHED_MSG || !progressed) {
      inv_.out() << queue_name() << " print msg finished. status="
                 << client::api::pull_status_name(pulled->status) << ", offset=" << pulled->nextBeginOffset << "\n";
      ++index_;
      return next_queue();
    }
    if (!progressed) return inv_.fail(Status::Corruption(queue_name() + ": the broker's nextBeginOffset did not move"));
    pull(pulled->nextBeginOffset, end);
  }

  Invocation& inv_;
  const std::string topic_;
  const std::string group_;
  const std::vector<QueueToRead> queues_;
  const std::optional<int64_t> start_offset_;
  int64_t left_;
  size_t index_ = 0;
};

// The readable queues of the route, sorted, narrowed by -b and -i.
// A broker the route names without an address is reported on `out`, never
// skipped in silence: a reader must tell "not stored" from "not read".
Result<std::vector<QueueToRead>> queues_to_read(const std::string& route_topic, const remoting::TopicRouteData& route,
                                                const ParsedOptions& options, std::optional<int64_t> queue_id,
                                                std::ostream& out) {
  const std::optional<std::string> broker_name = options.value("brokerName");
  std::vector<QueueToRead> queues;
  for (const remoting::QueueData& data : route.queueDatas) {
    if (broker_name && data.brokerName != *broker_name) continue;
    const auto broker = std::find_if(route.brokerDatas.begin(), route.brokerDatas.end(),
                                     [&](const remoting::BrokerData& b) { return b.brokerName == data.brokerName; });
    const std::string address = broker == route.brokerDatas.end() ? "" : select_broker_addr(*broker);
    if (address.empty()) {
      out << data.brokerName << " has no address in the route of " << route_topic << ", its queues are not read\n";
      continue;
    }
    for (int32_t id = 0; id < data.readQueueNums; ++id) {
      if (!queue_id || *queue_id == id) queues.push_back({data.brokerName, address, id});
    }
  }
  std::sort(queues.begin(), queues.end(), [](const QueueToRead& a, const QueueToRead& b) {
    return std::tie(a.broker_name, a.queue_id) < std::tie(b.broker_name, b.queue_id);
  });
  if (queues.empty()) {
    return Status::NotFound("the route of topic " + route_topic + " has no readable queue" +
                            (broker_name ? " on broker " + *broker_name : "") +
                            (queue_id ? " with id " + std::to_string(*queue_id) : ""));
  }
  return queues;
}

void execute_consume_message(Invocation& inv) {
  const ParsedOptions& options = inv.options();
  if (options.has("queueId") && !options.has("brokerName")) return inv.usage_error("-i queueId needs -b brokerName");
  if (options.has("offset") && !options.has("queueId")) return inv.usage_error("-o offset needs -i queueId");
  Result<int64_t> count = options.integer("messageNumber", 128, 1, INT32_MAX);
  Result<int64_t> queue_id = options.integer("queueId", -1, 0, INT32_MAX);
  Result<int64_t> offset = options.integer("offset", -1, 0, INT64_MAX);
  for (const Result<int64_t>* parsed : {&count, &queue_id, &offset}) {
    if (!parsed->ok()) return inv.usage_error(parsed->status().message());
  }
  const std::string topic = *options.value("topic");
  const std::string group = options.value_or("consumerGroup", "TOOLS_CONSUMER");
  const std::optional<int64_t> only_queue = options.has("queueId") ? std::optional(*queue_id) : std::nullopt;
  const std::optional<int64_t> start = options.has("offset") ? std::optional(*offset) : std::nullopt;
  fetch_topic_route(inv.instance(), topic, inv.guard([&inv, topic, group, only_queue, start, count = *count](
                                                          Result<remoting::TopicRouteData> route) {
    if (!route.ok()) return inv.fail(route.status());
    Result<std::vector<QueueToRead>> queues = queues_to_read(topic, *route, inv.options(), only_queue, inv.out());
    if (!queues.ok()) return inv.fail(queues.status());
    auto run = std::make_shared<ConsumeMessageRun>(inv, topic, group, std::move(queues).value(), start, count);
    inv.hold(run);
    run->next_queue();
  }));
}

}  // namespace

Command consume_message_command() {
  return {"consumeMessage",
          "Consume message",
          {
              {'t', "topic", "topic", "Topic name", true},
              {'b', "brokerName", "brokerName", "Broker name"},
              {'i', "queueId", "queueId", "Queue Id (needs -b)"},
              {'o', "offset", "offset", "Queue offset (needs -i)"},
              {'g', "consumerGroup", "consumerGroup", "Consumer group name (default TOOLS_CONSUMER)"},
              {'c', "messageNumber", "messageNumber", "Number of message to be consumed (default 128)"},
          },
          execute_consume_message,
          default_time_limit};
}

}  // namespace mqlab::admin_cli
