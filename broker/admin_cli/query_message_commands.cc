// Looking messages up: queryMsgByKey and queryMsgById (RocketMQ's
// QueryMsgByKeySubCommand and QueryMsgByIdSubCommand), over the broker's
// IndexFile (QUERY_MESSAGE) and CommitLog (VIEW_MESSAGE_BY_ID).
//
// Two kinds of id exist, both 32 hex digits for IPv4 (reference 1.6): the
// broker's offset msgId (store host, port, CommitLog offset), which
// VIEW_MESSAGE_BY_ID reads directly, and the producer's UNIQ_KEY (what
// sendMessage and SendResult.msgId print), which only the index knows. A
// UNIQ_KEY also decodes as an offset msgId, into a nonsense address, so the
// index goes first when the topic is known (-t); without -t the id is taken
// as an offset msgId, as RocketMQ's viewMessage(msgId) takes it.
#include <algorithm>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"

namespace mqlab::admin_cli {
namespace {

using client::MessageExt;

constexpr int32_t kQueryMaxNum = 64;  // QueryMsgByKeySubCommand's maxNum
constexpr int64_t kEndOfTime = std::numeric_limits<int64_t>::max();

bool has_key(const MessageExt& message, const std::string& key) {
  std::istringstream keys(message.keys());
  std::string one;
  while (keys >> one) {
    if (one == key) return true;
  }
  return false;
}

// Java's HashMap.toString of the properties: "{K=V, K2=V2}".
std::string properties_text(const store::MessageProperties& properties) {
  std::string out = "{";
  for (const auto& [name, value] : properties) {
    out += (out.size() > 1 ? ", " : "") + name + "=" + value;
  }
  return out + "}";
}

// QueryMsgByIdSubCommand.printMsg's layout, with the body inline (RocketMQ
// writes it to a file under /tmp and prints the path).
void print_message_detail(std::ostream& out, const MessageExt& message) {
  const auto line = [&out](const char* label, const std::string& value) {
    out << strprintf("%-20s %s\n", label, value.c_str());
  };
  line("OffsetID:", message.offsetMsgId());
  line("Topic:", message.topic);
  line("Tags:", "[" + message.tags() + "]");
  line("Keys:", "[" + message.keys() + "]");
  line("Queue ID:", std::to_string(message.queueId));
  line("Queue Offset:", std::to_string(message.queueOffset));
  line("CommitLog Offset:", std::to_string(message.commitLogOffset));
  line("Reconsume Times:", std::to_string(message.reconsumeTimes));
  line("Born Timestamp:", human_time_ms(message.bornTimestamp));
  line("Store Timestamp:", human_time_ms(message.storeTimestamp));
  line("Born Host:", message.bornHost);
  line("Store Host:", message.storeHost);
  line("System Flag:", std::to_string(message.sysFlag));
  line("Properties:", properties_text(message.properties()));
  line("Message Body:", printable_body(message.body));
}

// QUERY_MESSAGE to every broker group of topic's route; done gets the
// messages (each stamped with its broker group) and the first error, if any.
using QueryDone = std::function<void(std::vector<MessageExt> messages, Status first_error)>;
void query_index(Invocation& inv, const std::string& topic, const std::string& key, bool unique_key, QueryDone done) {
  fetch_topic_route(inv.instance(), topic, inv.guard([&inv, topic, key, unique_key, done = std::move(done)](
                                                          Result<remoting::TopicRouteData> route) {
    if (!route.ok()) return done({}, route.status());
    std::vector<std::pair<std::string, RemotingCommand>> requests;
    std::vector<std::string> names;
    for (const remoting::BrokerData& broker : route->brokerDatas) {
      const std::string address = select_broker_addr(broker);
      if (address.empty()) continue;
      requests.emplace_back(address, build_query_message(topic, key, kQueryMaxNum, 0, kEndOfTime, unique_key));
      names.push_back(broker.brokerName);
    }
    fan_out(inv.instance(), std::move(requests), [names, done](Answers answers) {
      std::vector<MessageExt> messages;
      Status first_error;
      for (size_t i = 0; i < answers.size(); ++i) {
        Result<std::vector<MessageExt>> found = answers[i].ok() ? parse_query_message(*answers[i]) : answers[i].status();
        if (!found.ok()) {
          if (first_error.ok()) first_error = found.status();
          continue;
        }
        for (MessageExt& message : *found) {
          message.brokerName = names[i];
          messages.push_back(std::move(message));
        }
      }
      done(std::move(messages), first_error);
    });
  }));
}

void execute_query_by_key(Invocation& inv) {
  const std::string topic = *inv.options().value("topic");
  const std::string key = *inv.options().value("msgKey");
  query_index(inv, topic, key, false, inv.guard([&inv, topic, key](std::vector<MessageExt> messages, Status error) {
    // The index is a hash: keep only what really carries the key and topic.
    std::erase_if(messages, [&](const MessageExt& m) { return m.topic != topic || !has_key(m, key); });
    std::sort(messages.begin(), messages.end(), [](const MessageExt& a, const MessageExt& b) {
      return std::tie(a.storeTimestamp, a.brokerName, a.queueId, a.queueOffset) <
             std::tie(b.storeTimestamp, b.brokerName, b.queueId, b.queueOffset);
    });
    if (messages.empty() && !error.ok()) return inv.fail(error);
    if (messages.empty()) return inv.fail(Status::NotFound("no message with key " + key + " in topic " + topic));
    inv.out() << strprintf("%-50s %4s %40s\n", "#Message ID", "#QID", "#Offset");
    for (const MessageExt& message : messages) {
      inv.out() << strprintf("%-50s %4d %40lld\n", message.msgId.c_str(), message.queueId,
                             static_cast<long long>(message.queueOffset));
    }
    error.ok() ? inv.succeed() : inv.fail(error.with_context("some brokers did not answer"));
  }));
}

void view_by_offset_id(Invocation& inv, const std::string& id) {
  Result<store::OffsetMessageId> decoded = store::decode_offset_message_id(id);
  if (!decoded.ok()) {
    return inv.usage_error("'" + id + "' is not an offset msgId (" + decoded.status().message() +
                           "); for a client msgId (UNIQ_KEY) give its topic with -t");
  }
  const std::string address = decoded->store_host.to_string();
  inv.instance().remoting().invoke(
      address, build_view_message_by_id(decoded->offset.value()), inv.instance().api_timeout(),
      inv.guard([&inv, id, address](Result<RemotingCommand> response) {
        Result<MessageExt> message = response.ok() ? parse_view_message(*response) : response.status();
        if (!message.ok()) {
          return inv.fail(message.status().with_context(
              "message " + id + " at " + address + " (a client msgId (UNIQ_KEY) needs -t topic)"));
        }
        print_message_detail(inv.out(), *message);
        inv.succeed();
      }));
}

void execute_query_by_id(Invocation& inv) {
  const std::string id = *inv.options().value("msgId");
  if (!inv.options().has("topic")) return view_by_offset_id(inv, id);
  const std::string topic = *inv.options().value("topic");
  query_index(inv, topic, id, true, inv.guard([&inv, topic, id](std::vector<MessageExt> messages, Status error) {
    std::erase_if(messages, [&](const MessageExt& m) { return m.topic != topic || m.msgId != id; });
    if (messages.empty() && store::decode_offset_message_id(id).ok()) return view_by_offset_id(inv, id);
    if (messages.empty()) {
      return inv.fail(error.ok() ? Status::NotFound("no message with msgId " + id + " in topic " + topic) : error);
    }
    // A UNIQ_KEY stored twice (a retried send) shows both copies.
    for (size_t i = 0; i < messages.size(); ++i) {
      if (i > 0) inv.out() << "\n";
      print_message_detail(inv.out(), messages[i]);
    }
    inv.succeed();
  }));
}

}  // namespace

Command query_msg_by_key_command() {
  return {"queryMsgByKey",
          "Query Message by Key",
          {
              {'t', "topic", "topic", "topic name", true},
              {'k', "msgKey", "msgKey", "Message Key", true},
          },
          execute_query_by_key,
          default_time_limit};
}

Command query_msg_by_id_command() {
  Command command{"queryMsgById",
                  "Query Message by Id",
                  {
                      {'i', "msgId", "msgId", "Message Id: the offset msgId, or a client msgId (UNIQ_KEY) with -t", true},
                      {'t', "topic", "topic", "topic name: look the id up as a client msgId (UNIQ_KEY) first"},
                  },
                  execute_query_by_id,
                  default_time_limit};
  command.needs_namesrv = false;  // an offset msgId names its broker
  return command;
}

}  // namespace mqlab::admin_cli
