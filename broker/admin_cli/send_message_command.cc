// sendMessage: one message through the real Producer (RocketMQ's
// SendMessageCommand: -t topic, -p body, -k keys, -c tags, and -b broker
// with -i queue to send to that queue only, without retries), printed as its
// table with one more column, #OffsetMsgId, the id queryMsgById reads
// without a topic. Exit 0 only for SEND_OK: any other status exits 1 and
// stderr says whether the broker stored the message (FLUSH_DISK_TIMEOUT
// and the slave statuses did store it, so re-sending makes a duplicate).
#include <limits>
#include <memory>
#include <optional>
#include <ostream>

#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"
#include "broker/client/producer.h"

namespace mqlab::admin_cli {
namespace {

constexpr const char* kRowFormat = "%-32s  %-4s  %-20s    %-32s  %s\n";

void print_result(std::ostream& out, const client::SendResult& result) {
  out << strprintf(kRowFormat, "#Broker Name", "#QID", "#Send Result", "#MsgId", "#OffsetMsgId");
  const bool has_queue = !result.messageQueue.brokerName.empty();
  out << strprintf(kRowFormat, has_queue ? result.messageQueue.brokerName.c_str() : "Unknown",
                   has_queue ? std::to_string(result.messageQueue.queueId).c_str() : "Unknown",
                   std::string(client::send_status_name(result.status)).c_str(),
                   result.msgId.empty() ? "None" : result.msgId.c_str(),
                   result.offsetMsgId.empty() ? "None" : result.offsetMsgId.c_str());
}

void execute_send_message(Invocation& inv) {
  client::Message message;
  message.topic = *inv.options().value("topic");
  const std::string body = *inv.options().value("body");
  message.body.assign(body.begin(), body.end());
  message.keys = inv.options().value_or("key", "");
  message.tags = inv.options().value_or("tags", "");

  std::optional<client::MessageQueue> queue;
  if (inv.options().has("broker") || inv.options().has("qid")) {
    // RocketMQ ignores -b without -i; naming a broker and not getting it is a surprise, so refuse.
    if (!inv.options().has("broker") || !inv.options().has("qid")) {
      return inv.usage_error("-b,--broker and -i,--qid go together");
    }
    Result<int64_t> qid = inv.options().integer("qid", 0, 0, std::numeric_limits<int32_t>::max());
    if (!qid.ok()) return inv.usage_error(qid.status().message());
    queue = client::MessageQueue{message.topic, *inv.options().value("broker"), static_cast<int32_t>(*qid)};
  }

  client::ProducerConfig config;
  config.producerGroup = "mqadmin_producer";
  auto producer = std::make_shared<client::Producer>(inv.instance(), config);
  inv.hold(producer);
  inv.add_cleanup([producer](client::DoneCallback done) { producer->shutdown(std::move(done)); });
  producer->start(inv.guard([&inv, producer, queue, message = std::move(message)](Status started) mutable {
    if (!started.ok()) return inv.fail(started.with_context("starting the producer"));
    auto report = inv.guard([&inv](client::SendResult result) {
      print_result(inv.out(), result);
      if (result.status == client::SendStatus::SEND_OK) return inv.succeed();
      const std::string stored = client::is_stored(result.status) ? "stored, but " : "not stored: ";
      inv.fail(Status::Unavailable(stored + std::string(client::send_status_name(result.status)) +
                                   (result.remark.empty() ? "" : ": " + result.remark)));
    });
    if (queue) return producer->send(std::move(message), *queue, std::move(report));
    producer->send(std::move(message), std::move(report));
  }));
}

}  // namespace

Command send_message_command() {
  return {"sendMessage",
          "Send a message",
          {
              {'t', "topic", "topic", "Topic name", true},
              {'p', "body", "body", "UTF-8 string format of the message body", true},
              {'k', "key", "key", "Message keys (space-separated)"},
              {'c', "tags", "tags", "Message tags"},
              {'b', "broker", "broker", "Send message to target broker (with -i)"},
              {'i', "qid", "qid", "Send message to target queue (with -b)"},
          },
          execute_send_message,
          default_time_limit};
}

}  // namespace mqlab::admin_cli
