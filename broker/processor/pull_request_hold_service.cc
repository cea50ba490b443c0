#include "broker/processor/pull_request_hold_service.h"

#include <algorithm>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/log.h"

namespace mqlab::broker {

PullRequestHoldService::PullRequestHoldService(env::Env& env, Wakeup wakeup, MaxOffset max_offset)
    : env_(env), wakeup_(std::move(wakeup)), max_offset_(std::move(max_offset)) {
  MQ_ASSERT(wakeup_ != nullptr);
  MQ_ASSERT(max_offset_ != nullptr);
}

PullRequestHoldService::~PullRequestHoldService() { shutdown(); }

void PullRequestHoldService::start(Nanos check_interval) {
  MQ_ASSERT(check_interval > 0);
  MQ_ASSERT(!running_);
  check_interval_ = check_interval;
  running_ = true;
  schedule_check();
}

void PullRequestHoldService::shutdown() {
  running_ = false;
  if (check_timer_ != env::kNoTimer) env_.executor().cancel(check_timer_);
  check_timer_ = env::kNoTimer;
  for (auto& [key, parked] : table_) {
    for (auto& [id, entry] : parked) env_.executor().cancel(entry.timer);
  }
  table_.clear();
}

void PullRequestHoldService::schedule_check() {
  check_timer_ = env_.executor().run_after(check_interval_, lifetime_.guard([this] {
    check_timer_ = env::kNoTimer;
    if (!running_) return;
    check_hold_requests();
    schedule_check();
  }));
}

void PullRequestHoldService::suspend_pull_request(std::unique_ptr<PullRequest> pull, Nanos hold) {
  MQ_ASSERT(pull != nullptr);
  MQ_ASSERT(hold > 0 && hold <= kMaxSuspendTimeout);
  MQ_ASSERT(!pull->channel.answered());
  MQ_ASSERT(pull->pull_from_offset == QueueOffset(pull->header.queueOffset));
  if (!running_) return;  // shutting down: the connection is closing anyway
  const uint64_t id = next_id_++;
  pull->deadline_ns = env_.clock().now_ns() + hold;
  auto queue = table_.find(std::pair<std::string_view, int32_t>(pull->header.topic, pull->header.queueId));
  if (queue == table_.end()) queue = table_.try_emplace(Key{pull->header.topic, pull->header.queueId}).first;
  const Key* key = &queue->first;  // the timer's capture: a pointer keeps the task inline
  ParkedQueue& parked = queue->second;
  MQ_ASSERT(parked.empty() || parked.back().first < id);  // ids ascend: appending keeps park order
  parked.emplace_back(id, Parked{std::move(pull), env::kNoTimer});
  Parked& entry = parked.back().second;
  entry.timer = env_.executor().run_after(hold, lifetime_.guard([this, key, id] { on_deadline(key, id); }));
  MQ_ASSERT(entry.timer != env::kNoTimer);
}

PullRequestHoldService::ParkedQueue::iterator PullRequestHoldService::find_parked(ParkedQueue& queue, uint64_t id) {
  const auto found = std::lower_bound(queue.begin(), queue.end(), id,
                                      [](const auto& entry, uint64_t key) { return entry.first < key; });
  return found != queue.end() && found->first == id ? found : queue.end();
}

void PullRequestHoldService::notify_message_arriving(const std::string& topic, int32_t queue_id, QueueOffset max_offset,
                                                     int64_t tags_code) {
  auto it = table_.find(std::pair<std::string_view, int32_t>(topic, queue_id));
  if (it == table_.end() || it->second.empty()) return;
  // wake() only posts, so nothing reaches here again before the list is done.
  MQ_ASSERT(ready_.empty());
  for (const auto& [id, parked] : it->second) {
    if (max_offset > parked.pull->pull_from_offset && parked.pull->filter.matches(tags_code)) ready_.push_back(id);
  }
  for (uint64_t id : ready_) wake(it->first, id);  // the entry stays: the key is not copied
  ready_.clear();
}

void PullRequestHoldService::check_hold_requests() {
  std::vector<std::pair<const Key*, uint64_t>> ready;  // keys stay put: entries are never erased
  for (const auto& [key, parked] : table_) {
    if (parked.empty()) continue;
    const QueueOffset max_offset = max_offset_(key.first, key.second);
    for (const auto& [id, entry] : parked) {
      if (max_offset > entry.pull->pull_from_offset || !entry.pull->channel.connection_open()) {
        ready.emplace_back(&key, id);
      }
    }
  }
  for (const auto& [key, id] : ready) wake(*key, id);
}

void PullRequestHoldService::on_deadline(const Key* key, uint64_t id) {
  MQ_ASSERT(key != nullptr);
  auto it = table_.find(*key);
  MQ_ASSERT(it != table_.end() && &it->first == key);  // the pull is still parked (its timer was not cancelled)
  auto entry = find_parked(it->second, id);
  MQ_ASSERT(entry != it->second.end());
  entry->second.timer = env::kNoTimer;  // it is running now
  wake(*key, id);
}

void PullRequestHoldService::wake(const Key& key, uint64_t id) {
  auto queue = table_.find(key);
  MQ_ASSERT(queue != table_.end());
  auto entry = find_parked(queue->second, id);
  MQ_ASSERT(entry != queue->second.end());
  Parked parked = std::move(entry->second);
  queue->second.erase(entry);  // the queue's entry stays, empty or not (table_)
  if (parked.timer != env::kNoTimer) env_.executor().cancel(parked.timer);
  MQ_ASSERT(parked.pull != nullptr);
  if (!parked.pull->channel.connection_open()) {
    MQ_LOG(kDebug, "broker",
           "dropped a parked pull of " << key.first << ":" << key.second << ": its connection closed");
    return;
  }
  env_.executor().post(lifetime_.guard([this, pull = std::move(parked.pull)] { wakeup_(*pull); }));
}

size_t PullRequestHoldService::parked_count() const {
  size_t count = 0;
  for (const auto& [key, parked] : table_) count += parked.size();
  return count;
}

}  // namespace mqlab::broker
