#include "broker/processor/consumer_info_processor.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "broker/processor/broker_controller.h"
#include "broker/remoting/response_code.h"
#include "broker/remoting/wire_text.h"

namespace mqlab::broker {
namespace {

using remoting::RemotingCommand;
using remoting::ResponseCode;

void reply_json(const RemotingCommand& request, remoting::ResponseChannel& channel, const nlohmann::json& body) {
  RemotingCommand response = request.make_response(ResponseCode::SUCCESS);
  const std::string text = remoting::dump_json_text(body);
  response.body.assign(text.begin(), text.end());
  channel.reply(std::move(response));
}

// SubscriptionData as fastjson writes it (keys sorted by dump_json_text).
nlohmann::json subscription_json(const remoting::SubscriptionData& subscription) {
  return {{"classFilterMode", subscription.classFilterMode},
          {"codeSet", subscription.codeSet},
          {"expressionType", subscription.expressionType},
          {"subString", subscription.subString},
          {"subVersion", subscription.subVersion},
          {"tagsSet", subscription.tagsSet},
          {"topic", subscription.topic}};
}

}  // namespace

void ConsumerInfoProcessor::query_topic_consume_by_who(const RemotingCommand& request,
                                                       remoting::ResponseChannel channel) {
  Result<std::string> topic = request.ext_string("topic");
  if (!topic.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, topic.status().message());
  // ConsumerManager.queryTopicConsumeByWho plus ConsumerOffsetManager.whichGroupByTopic:
  // a group that consumed the topic once still counts while its offsets live.
  std::set<std::string> groups = controller_.consumer_offset_manager().groups_of_topic(*topic);
  for (const auto& [name, group] : controller_.consumer_manager().groups()) {
    if (group.find_subscription(*topic) != nullptr) groups.insert(name);
  }
  reply_json(request, channel, nlohmann::json{{"groupList", groups}});
}

void ConsumerInfoProcessor::get_consumer_connection_list(const RemotingCommand& request,
                                                         remoting::ResponseChannel channel) {
  Result<std::string> group = request.ext_string("consumerGroup");
  if (!group.ok()) return channel.reply(ResponseCode::SYSTEM_ERROR, group.status().message());
  const ConsumerGroupInfo* info = controller_.consumer_manager().find(*group);
  if (info == nullptr) {
    return channel.reply(ResponseCode::CONSUMER_NOT_ONLINE, "the consumer group[" + *group + "] not online");
  }
  MQ_ASSERT_MSG(!info->channels.empty(), "ConsumerManager keeps no group without channels");
  nlohmann::json connections = nlohmann::json::array();
  for (const auto& [address, client] : info->channels) {  // a std::map: sorted by address
    connections.push_back({{"clientAddr", client.remote_address},
                           {"clientId", client.client_id},
                           {"language", client.language},
                           {"version", client.version}});
  }
  nlohmann::json subscriptions = nlohmann::json::object();
  for (const auto& [topic, subscription] : info->subscriptions) subscriptions[topic] = subscription_json(subscription);
  reply_json(request, channel,
             nlohmann::json{{"connectionSet", connections},
                            {"consumeFromWhere", info->consume_from_where},
                            {"consumeType", info->consume_type},
                            {"messageModel", info->message_model},
                            {"subscriptionTable", subscriptions}});
}

}  // namespace mqlab::broker
