#include "broker/processor/subscription_filter.h"

#include "broker/remoting/wire_text.h"
#include "broker/store/message_codec.h"

namespace mqlab::broker {
namespace {

std::string_view trim_filter_text(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

bool SubscriptionFilter::matches(int64_t tags_code) const {
  if (all) return true;
  return codes.contains(static_cast<int32_t>(tags_code));  // Java's tagsCode.intValue()
}

std::vector<int64_t> SubscriptionFilter::store_filter() const {
  MQ_ASSERT(all == codes.empty());
  // Entries hold the hash sign-extended (tags_code), so the int64 of each
  // int code is what an entry of that tag holds.
  return {codes.begin(), codes.end()};
}

Result<SubscriptionFilter> build_subscription_filter(std::string_view sub_string) {
  SubscriptionFilter filter;
  if (trim_filter_text(sub_string).empty() || sub_string == kSubAll) return filter;
  std::string_view rest = sub_string;
  while (true) {
    const size_t bar = rest.find("||");
    const std::string_view tag = trim_filter_text(rest.substr(0, bar));
    if (!tag.empty()) {
      filter.tags.emplace(tag);
      filter.codes.insert(store::java_string_hash(tag));
    }
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 2);
  }
  if (filter.codes.empty()) {
    return Status::InvalidArgument("subscription '" + remoting::printable_excerpt(sub_string) + "' names no tag");
  }
  filter.all = false;
  MQ_ASSERT(!filter.tags.empty());
  return filter;
}

Result<SubscriptionFilter> subscription_filter_of(const remoting::SubscriptionData& subscription) {
  if (subscription.subString == kSubAll) return SubscriptionFilter{};
  if (subscription.codeSet.empty() && subscription.tagsSet.empty()) {
    return build_subscription_filter(subscription.subString);
  }
  SubscriptionFilter filter;
  filter.all = false;
  filter.codes = subscription.codeSet;
  for (const std::string& tag : subscription.tagsSet) {
    filter.tags.insert(tag);
    filter.codes.insert(store::java_string_hash(tag));
  }
  MQ_ASSERT(!filter.codes.empty());
  return filter;
}

}  // namespace mqlab::broker
