#include "broker/client/allocate_message_queue.h"

#include <algorithm>

#include "broker/common/assert.h"

namespace mqlab::client {
namespace {

template <typename T>
void sort_unique(std::vector<T>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

std::vector<MessageQueue> allocate_message_queue_averagely(const std::string& current_cid,
                                                           std::vector<MessageQueue> mq_all,
                                                           std::vector<std::string> cid_all) {
  sort_unique(mq_all);
  sort_unique(cid_all);
  const auto me = std::find(cid_all.begin(), cid_all.end(), current_cid);
  if (me == cid_all.end() || mq_all.empty()) return {};
  const size_t index = static_cast<size_t>(me - cid_all.begin());
  const size_t queues = mq_all.size();
  const size_t consumers = cid_all.size();
  const size_t mod = queues % consumers;
  // Java's arithmetic, kept term for term so both sides agree on every split.
  const size_t average = queues <= consumers ? 1 : (mod > 0 && index < mod ? queues / consumers + 1 : queues / consumers);
  const size_t start = (mod > 0 && index < mod) ? index * average : index * average + mod;
  const size_t range = start >= queues ? 0 : std::min(average, queues - start);
  std::vector<MessageQueue> mine;
  mine.reserve(range);
  for (size_t i = 0; i < range; ++i) mine.push_back(mq_all[start + i]);
  MQ_ASSERT(mine.size() <= queues / consumers + 1);
  return mine;
}

}  // namespace mqlab::client
