// PullRequestHoldService: long polling (RocketMQ's PullRequestHoldService).
// A PULL_MESSAGE that found nothing new (PULL_NOT_FOUND) and carries the
// SUSPEND flag is not answered; it is parked here per (topic, queueId) and
// re-run, without suspension, when
//   - the dispatcher adds a message to that queue (notify_message_arriving,
//     from the store's message arriving listener) at or past the offset it
//     waits for and whose tag code its subscription accepts;
//   - the periodic check (every 5 s with longPollingEnable, else every
//     shortPollingTimeMills) sees the queue's max offset past that offset
//     (tags unknown there, so any message wakes it, as in RocketMQ);
//   - its hold time passes: then the re-run answers whatever the store says,
//     usually PULL_NOT_FOUND.
// RocketMQ notices an expired hold only at the next periodic check (up to 5 s
// late); we also arm a timer per parked pull, so it is answered when its
// suspendTimeoutMillis is up, a bound a client can rely on.
//
// The hold time is suspendTimeoutMillis (shortPollingTimeMills when
// longPollingEnable is off), capped at kMaxSuspendTimeout: ali-ons and the
// Java client give up on a pull after 30 s, so holding longer would only
// produce answers nobody waits for.
//
// A parked pull whose connection closed is dropped when next looked at.
// Re-runs are posted to the executor, never run inside the store's dispatch.
//
// Invariants: every parked pull has exactly one pending timer; a pull leaves
// the table exactly once (woken, expired, dropped or shut down).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/name_order.h"
#include "broker/common/types.h"
#include "broker/env/env.h"
#include "broker/processor/pull_message_request_header.h"
#include "broker/processor/subscription_filter.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {

// Below the 30 s pull timeout of ali-ons (consumerTimeoutMillisWhenSuspend)
// and the Java client, with room for the answer's trip.
inline constexpr Nanos kMaxSuspendTimeout = seconds(25);
// PullRequestHoldService's wait between checks with long polling on.
inline constexpr Nanos kLongPollingCheckInterval = seconds(5);

// What a re-run needs of a parked pull. Not the request: its answer is built
// afresh and the channel knows the request's opaque and serialize type.
struct PullRequest {
  remoting::ResponseChannel channel;
  QueueOffset pull_from_offset;
  SubscriptionFilter filter;
  Nanos deadline_ns = 0;
  // Parsed from request at its first run, kept for the re-run: re-parsing
  // a woken pull's ext fields was a quarter of answering it.
  PullMessageRequestHeader header;
};

class PullRequestHoldService {
 public:
  // Re-runs a woken pull without suspension (PullMessageProcessor).
  using Wakeup = std::function<void(PullRequest& pull)>;
  // The queue's max offset now (MessageStore::max_offset_in_queue).
  using MaxOffset = std::function<QueueOffset(const std::string& topic, int32_t queue_id)>;

  PullRequestHoldService(env::Env& env, Wakeup wakeup, MaxOffset max_offset);
  ~PullRequestHoldService();  // cancels timers; parked pulls are dropped unanswered
  PullRequestHoldService(const PullRequestHoldService&) = delete;
  PullRequestHoldService& operator=(const PullRequestHoldService&) = delete;

  void start(Nanos check_interval);
  // Drops every parked pull unanswered (the server is closing their
  // connections) and stops the periodic check.
  void shutdown();

  // Parks a pull on its header's (topic, queueId) for hold (> 0, at most
  // kMaxSuspendTimeout). Built on the heap by the caller, where it stays
  // while parked (moving a PullRequest moves a header, a filter and a
  // channel). Requires: pull is not null.
  void suspend_pull_request(std::unique_ptr<PullRequest> pull, Nanos hold);
  // A message with tags_code was added; max_offset is the queue's new max.
  void notify_message_arriving(const std::string& topic, int32_t queue_id, QueueOffset max_offset, int64_t tags_code);

  size_t parked_count() const;

 private:
  using Key = std::pair<std::string, int32_t>;
  // Key's order, and a lookup by (topic view, queueId) without copying the
  // topic: each stored message asks for its queue's parked pulls.
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const int order = compare_names(a.first, b.first);  // std::string's order, inline
      return order != 0 ? order < 0 : a.second < b.second;
    }
  };
  // The pull is boxed: it moves from here into its re-run's task as one
  // pointer (a Task keeps that inline), where moving the PullRequest itself
  // (a channel, a filter and a header) three times cost a third of a wake.
  struct Parked {
    std::unique_ptr<PullRequest> pull;
    env::TimerId timer = env::kNoTimer;
  };

  void check_hold_requests();
  // key points at the table's own key: entries are never erased (below),
  // and the timer that calls this is cancelled when the pull leaves.
  void on_deadline(const Key* key, uint64_t id);
  // Removes the pull (cancelling its timer) and posts its re-run, unless its
  // connection is gone.
  void wake(const Key& key, uint64_t id);
  void schedule_check();

  env::Env& env_;
  Wakeup wakeup_;
  MaxOffset max_offset_;
  Nanos check_interval_ = kLongPollingCheckInterval;
  bool running_ = false;
  env::TimerId check_timer_ = env::kNoTimer;
  uint64_t next_id_ = 1;
  // A queue's parked pulls in park order (ids ascend), as RocketMQ's
  // ManyPullRequest keeps them in a list: a vector keeps its room when its
  // pulls leave, where a map node cost an allocation per parked pull, and a
  // queue seldom has more than its one consumer's pull waiting.
  using ParkedQueue = std::vector<std::pair<uint64_t, Parked>>;
  static ParkedQueue::iterator find_parked(ParkedQueue& queue, uint64_t id);

  // By queue. A queue's entry stays when its last pull leaves: the next
  // park (most pulls park, one after another) found it gone and built it
  // again, key and node, for every message. At most one entry per queue a
  // consumer ever long-polled on this broker.
  std::map<Key, ParkedQueue, KeyLess> table_;
  // notify_message_arriving's list of the pulls to wake, kept for its room
  // (it ran once per stored message, allocating each time).
  std::vector<uint64_t> ready_;
  LifetimeToken lifetime_;
};

}  // namespace mqlab::broker
