#include "broker/store/message_delay_level.h"

#include <charconv>
#include <string>

namespace mqlab::store {
namespace {

// An item's unit and its length in ms (ScheduleMessageService.parseDelayLevel).
Result<int64_t> unit_ms(char unit) {
  switch (unit) {
    case 's': return int64_t{1'000};
    case 'm': return int64_t{60'000};
    case 'h': return int64_t{3'600'000};
    case 'd': return int64_t{86'400'000};
    default: return Status::InvalidArgument("unknown unit");
  }
}

// A year bounds one level, so count x unit never overflows and a typo such
// as "5000000h" is caught rather than parking messages for centuries.
constexpr int64_t kMaxDelayMs = int64_t{365} * 86'400'000;

Result<int64_t> parse_item(std::string_view item) {
  MQ_ASSERT(!item.empty());
  Result<int64_t> unit = unit_ms(item.back());
  const std::string_view digits = item.substr(0, item.size() - 1);
  int64_t count = 0;
  const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  const bool number_ok = !digits.empty() && error == std::errc() && stop == digits.data() + digits.size();
  if (!unit.ok() || !number_ok || count <= 0 || count > kMaxDelayMs / *unit) {
    return Status::InvalidArgument("'" + std::string(item) + "'");
  }
  const int64_t ms = count * *unit;
  MQ_ASSERT(ms > 0 && ms <= kMaxDelayMs);
  return ms;
}

Status bad_delay_levels(std::string_view text, const std::string& why) {
  return Status::InvalidArgument("messageDelayLevel=" + std::string(text) + ": " + why);
}

}  // namespace

Result<std::vector<int64_t>> parse_message_delay_level(std::string_view text) {
  std::vector<int64_t> levels;
  size_t start = 0;
  while (start < text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string_view::npos) space = text.size();
    const std::string_view item = text.substr(start, space - start);
    start = space + 1;
    if (item.empty()) continue;  // several spaces in a row
    Result<int64_t> ms = parse_item(item);
    if (!ms.ok()) {
      return bad_delay_levels(text, "bad level " + std::to_string(levels.size() + 1) + " " + ms.status().message() +
                           " (want a positive count and a unit, e.g. 5s, 1m, 2h, 1d)");
    }
    levels.push_back(*ms);
  }
  if (levels.empty() || levels.size() > kMaxDelayLevels) {
    return bad_delay_levels(text, "must hold 1 to " + std::to_string(kMaxDelayLevels) + " levels, has " +
                         std::to_string(levels.size()));
  }
  MQ_ASSERT(levels.size() <= kMaxDelayLevels);
  return levels;
}

}  // namespace mqlab::store
