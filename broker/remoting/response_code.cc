#include "broker/remoting/response_code.h"

#include <algorithm>
#include <array>
#include <span>

namespace mqlab::remoting {
namespace {

struct ResponseCodeName {
  int32_t code;
  std::string_view name;
};

// The name is the constant's own spelling (#name), so the table cannot drift
// from response_code.h.
#define MQ_RESPONSE_CODE(name) ResponseCodeName{ResponseCode::name, #name}
constexpr auto kResponseCodeNames = std::to_array<ResponseCodeName>({
    MQ_RESPONSE_CODE(SUCCESS),
    MQ_RESPONSE_CODE(SYSTEM_ERROR),
    MQ_RESPONSE_CODE(SYSTEM_BUSY),
    MQ_RESPONSE_CODE(REQUEST_CODE_NOT_SUPPORTED),
    MQ_RESPONSE_CODE(TRANSACTION_FAILED),
    MQ_RESPONSE_CODE(FLUSH_DISK_TIMEOUT),
    MQ_RESPONSE_CODE(SLAVE_NOT_AVAILABLE),
    MQ_RESPONSE_CODE(FLUSH_SLAVE_TIMEOUT),
    MQ_RESPONSE_CODE(MESSAGE_ILLEGAL),
    MQ_RESPONSE_CODE(SERVICE_NOT_AVAILABLE),
    MQ_RESPONSE_CODE(VERSION_NOT_SUPPORTED),
    MQ_RESPONSE_CODE(NO_PERMISSION),
    MQ_RESPONSE_CODE(TOPIC_NOT_EXIST),
    MQ_RESPONSE_CODE(TOPIC_EXIST_ALREADY),
    MQ_RESPONSE_CODE(PULL_NOT_FOUND),
    MQ_RESPONSE_CODE(PULL_RETRY_IMMEDIATELY),
    MQ_RESPONSE_CODE(PULL_OFFSET_MOVED),
    MQ_RESPONSE_CODE(QUERY_NOT_FOUND),
    MQ_RESPONSE_CODE(SUBSCRIPTION_PARSE_FAILED),
    MQ_RESPONSE_CODE(SUBSCRIPTION_NOT_EXIST),
    MQ_RESPONSE_CODE(SUBSCRIPTION_NOT_LATEST),
    MQ_RESPONSE_CODE(SUBSCRIPTION_GROUP_NOT_EXIST),
    MQ_RESPONSE_CODE(FILTER_DATA_NOT_EXIST),
    MQ_RESPONSE_CODE(FILTER_DATA_NOT_LATEST),
    MQ_RESPONSE_CODE(TRANSACTION_SHOULD_COMMIT),
    MQ_RESPONSE_CODE(TRANSACTION_SHOULD_ROLLBACK),
    MQ_RESPONSE_CODE(TRANSACTION_STATE_UNKNOW),
    MQ_RESPONSE_CODE(TRANSACTION_STATE_GROUP_WRONG),
    MQ_RESPONSE_CODE(NO_BUYER_ID),
    MQ_RESPONSE_CODE(NOT_IN_CURRENT_UNIT),
    MQ_RESPONSE_CODE(CONSUMER_NOT_ONLINE),
    MQ_RESPONSE_CODE(CONSUME_MSG_TIMEOUT),
    MQ_RESPONSE_CODE(NO_MESSAGE),
    MQ_RESPONSE_CODE(FLOW_CONTROL),
});
#undef MQ_RESPONSE_CODE

constexpr bool response_codes_ascending(std::span<const ResponseCodeName> table) {
  for (size_t i = 1; i < table.size(); ++i) {
    if (table[i - 1].code >= table[i].code) return false;
  }
  return true;
}
// Sorted and duplicate-free: lookups binary-search, and two names for one
// number would be a typo in response_code.h.
static_assert(response_codes_ascending(kResponseCodeNames));

}  // namespace

std::string_view response_code_name(int32_t code) {
  const auto* it = std::lower_bound(kResponseCodeNames.begin(), kResponseCodeNames.end(), code,
                                    [](const ResponseCodeName& entry, int32_t wanted) { return entry.code < wanted; });
  if (it == kResponseCodeNames.end() || it->code != code) return "UNKNOWN";
  return it->name;
}

std::string describe_response_code(int32_t code) {
  std::string text(response_code_name(code));
  text += '(';
  text += std::to_string(code);
  text += ')';
  return text;
}

}  // namespace mqlab::remoting
