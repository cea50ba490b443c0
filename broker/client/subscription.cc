#include "broker/client/subscription.h"

#include <string>

#include "broker/store/message_codec.h"

namespace mqlab::client {
namespace {

std::string_view trim_subscription_text(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

Result<remoting::SubscriptionData> build_subscription_data(std::string_view topic, std::string_view expression,
                                                           int64_t sub_version) {
  remoting::SubscriptionData data;
  data.topic = std::string(topic);
  data.subVersion = sub_version;
  data.expressionType = "TAG";
  if (trim_subscription_text(expression).empty() || trim_subscription_text(expression) == kSubscribeAll) {
    data.subString = std::string(kSubscribeAll);
    return data;
  }
  data.subString = std::string(expression);
  std::string_view rest = expression;
  while (true) {
    const size_t bar = rest.find("||");
    const std::string_view tag = trim_subscription_text(rest.substr(0, bar));
    if (!tag.empty()) {
      data.tagsSet.insert(std::string(tag));
      data.codeSet.insert(store::java_string_hash(tag));
    }
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 2);
  }
  if (data.tagsSet.empty()) {
    return Status::InvalidArgument("subscription of topic " + std::string(topic) + ": expression '" +
                                   std::string(expression) + "' names no tag");
  }
  return data;
}

bool tags_match(const remoting::SubscriptionData& subscription, std::string_view tags) {
  if (subscription.tagsSet.empty() || subscription.classFilterMode) return true;
  return !tags.empty() && subscription.tagsSet.contains(std::string(tags));
}

}  // namespace mqlab::client
