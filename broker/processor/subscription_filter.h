// SubscriptionFilter: which messages of a queue a consumer's subscription
// accepts, by the tag code stored in the ConsumeQueue (RocketMQ's
// FilterAPI.buildSubscriptionData and ExpressionMessageFilter
// .isMatchedByConsumeQueue, TAG expressions only).
//
// A subscription string is "*" (or empty: everything) or tags separated by
// "||", each trimmed; a message matches when String.hashCode() of its TAGS is
// the code of one of them. Codes are compared as Java ints, as RocketMQ does
// (tagsCode.intValue()), so an entry's 64-bit tag field is truncated first.
// Matching by hash lets different tags with equal hashes through; clients
// filter again by the tag text, as RocketMQ's do.
//
// Invariants: all implies no codes; !all implies at least one code.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/remoting/route_data.h"

namespace mqlab::broker {

inline constexpr std::string_view kSubAll = "*";  // SubscriptionData.SUB_ALL

struct SubscriptionFilter {
  bool all = true;
  std::set<std::string> tags;
  std::set<int32_t> codes;

  bool matches(int64_t tags_code) const;
  // What MessageStore::get_message takes: the accepted codes, empty for all.
  std::vector<int64_t> store_filter() const;
};

// From a pull's `subscription` field. InvalidArgument (answered
// SUBSCRIPTION_PARSE_FAILED) when the text names no tag, e.g. "||".
Result<SubscriptionFilter> build_subscription_filter(std::string_view sub_string);
// From a heartbeat's SubscriptionData: its codeSet, plus the codes of its
// tagsSet, or its subString when both are empty.
Result<SubscriptionFilter> subscription_filter_of(const remoting::SubscriptionData& subscription);

}  // namespace mqlab::broker
