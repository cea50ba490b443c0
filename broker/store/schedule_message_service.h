// ScheduleMessageService: delayed delivery by level (RocketMQ 4.x's
// store/schedule/ScheduleMessageService). Owned by the MessageStore; only a
// master runs it (a SLAVE's log receives the delivered copies from its
// master; a slave promoted to master is restarted as one and starts it).
//
// How a delayed message travels:
//   1. put: a message whose DELAY property is a level > 0 (and that is not a
//      prepared or rolled-back transaction half) is stored under topic
//      SCHEDULE_TOPIC_XXXX, queue level - 1, its destination kept in the
//      REAL_TOPIC / REAL_QID properties; a level above the last is clamped
//      to it (transform_delay_level_message, RocketMQ's CommitLog.putMessage).
//   2. dispatch: that queue's ConsumeQueue entry carries the delivery time
//      (store timestamp + the level's delay, compute_deliver_timestamp) where
//      other queues carry a tag hash.
//   3. delivery: per level, entries are taken in queue order; an entry whose
//      time has come is read back, restored to its real topic and queue
//      without DELAY (message_time_up), and put again; then the level's
//      offset moves past it. The first entry not yet due arms the level's
//      timer for its time. A level with nothing left waits for the
//      dispatcher's next entry in its queue (on_dispatched), so an idle
//      broker has no timers running (RocketMQ polls every 100 ms).
//
// delayOffset.json ({storePathRootDir}/config/, RocketMQ's shape
// {"offsetTable":{"1":0,"2":5}}: level -> next ConsumeQueue offset to
// deliver; fastjson's unquoted keys are read too) is written through
// meta::ConfigFile (tmp, fsync, .bak, rename, dir sync) every
// flushDelayOffsetInterval when it changed, and at the store's shutdown.
// Each persist first flushes the CommitLog and writes the offsets as they
// were before that flush, so the file never claims a delivery whose copy a
// power loss could still take: after any crash every scheduled message is
// delivered at least once; the ones delivered since the last persist are
// delivered again (at-least-once, as RocketMQ).
//
// Invariants: a level has at most one put in flight and at most one timer;
// its offset only grows while the service runs (start() may lower it to
// the queue's max offset when recovery truncated the queue, and raise it to
// the min offset when retention removed entries); nothing is delivered
// before its entry's time (as corrected, see deliver_due).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/lifetime.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/config_file.h"
#include "broker/store/consume_queue.h"
#include "broker/store/message_codec.h"
#include "broker/store/message_store_config.h"
#include "broker/store/store_types.h"

namespace mqlab::store {

class MessageStore;

// TopicValidator.RMQ_SYS_SCHEDULE_TOPIC.
inline constexpr std::string_view kScheduleTopic = "SCHEDULE_TOPIC_XXXX";

struct ScheduleStats {
  uint64_t delivered = 0;         // copies put back to their real topic
  uint64_t skipped = 0;           // entries that could not be delivered (logged at ERROR)
  uint64_t put_failures = 0;      // puts refused; the entry is retried later
  uint64_t offsets_persisted = 0; // delayOffset.json writes that completed ok
};

class ScheduleMessageService {
 public:
  static constexpr const char* kFileName = "delayOffset.json";

  // Requires: store and config outlive the service.
  ScheduleMessageService(env::Env& env, MessageStore& store, const MessageStoreConfig& config);
  // No I/O: cancels timers only.
  ~ScheduleMessageService();
  ScheduleMessageService(const ScheduleMessageService&) = delete;
  ScheduleMessageService& operator=(const ScheduleMessageService&) = delete;

  // Parses messageDelayLevel and loads delayOffset.json (else its .bak).
  // Corruption naming both files when neither parses: the store does not
  // start rather than redeliver (or skip) every scheduled message.
  // Requires: the config validated; called once, before start().
  Status load();
  // Starts delivering every level. Requires: load() ok, the store running.
  void start();
  // Stops timers; deliveries in flight complete without moving on. No I/O.
  void stop();
  bool started() const { return started_; }
  // Flushes the CommitLog, then persists the offsets as they were before
  // the flush; done(status) on the executor.
  void persist(std::function<void(Status)> done);

  // The dispatcher wrote an entry into SCHEDULE_TOPIC_XXXX's queue queue_id.
  void on_dispatched(int32_t queue_id);

  int32_t max_delay_level() const { return static_cast<int32_t>(delay_ms_.size()); }
  // Requires: load() ok; 1 <= level <= max_delay_level().
  int64_t delay_ms(int32_t level) const;
  // When a message stored at store_timestamp_ms with this level is due; a
  // level above the last counts as the last (the table may have shrunk
  // since the put). Requires: load() ok; level >= 1.
  int64_t compute_deliver_timestamp(int32_t level, int64_t store_timestamp_ms) const;
  // The ConsumeQueue tag code of a SCHEDULE_TOPIC_XXXX record, from its DELAY
  // property; a record without a usable level is due at once (the put path
  // never writes one).
  int64_t deliver_timestamp_of(const MessageProperties& properties, int64_t store_timestamp_ms) const;

  // Level -> next ConsumeQueue offset to deliver (levels never started are absent).
  const std::map<int32_t, int64_t>& offset_table() const { return offsets_; }
  // delayOffset.json's content (GET_ALL_DELAY_OFFSET's body).
  std::string offsets_json() const;
  const ScheduleStats& stats() const { return stats_; }
  const std::string& path() const { return file_.path(); }

 private:
  struct Level {
    env::TimerId timer = env::kNoTimer;
    bool put_in_flight = false;
  };
  enum class Step { kDelivering, kWaiting, kIdle };

  Status decode(const std::string& content);
  void deliver_later(int32_t level, Nanos delay);
  void deliver(int32_t level);
  // Handles the entry at the level's offset; kDelivering once a put is in
  // flight (its completion continues), kWaiting when a timer is armed, and
  // kIdle when the caller may go on with the next entry.
  Step deliver_due(int32_t level, const ConsumeQueueEntry& entry);
  void on_put_done(int32_t level, int64_t next_offset, const std::string& what, const PutMessageResult& result);
  void advance(int32_t level, int64_t next_offset);
  std::optional<int64_t> clamp_offset(int32_t level, const ConsumeQueue& queue);
  void schedule_persist();
  void warn_about_stranded_queues() const;

  env::Env& env_;
  MessageStore& store_;
  const MessageStoreConfig& config_;
  meta::ConfigFile file_;
  std::vector<int64_t> delay_ms_;  // level 1 first; empty until load()
  std::map<int32_t, int64_t> offsets_;
  std::map<int32_t, Level> levels_;
  std::string last_persisted_;  // the content of the last persist that completed ok
  env::TimerId persist_timer_ = env::kNoTimer;
  bool loaded_ = false;
  bool started_ = false;
  ScheduleStats stats_;
  LifetimeToken lifetime_;
};

// Put path (CommitLog.putMessage in 4.x): a DELAY level > 0 moves message to
// SCHEDULE_TOPIC_XXXX queue level - 1 (clamped to max_delay_level) with
// REAL_TOPIC / REAL_QID; anything else is left alone. InvalidArgument when
// DELAY is not an integer (RocketMQ's Integer.parseInt throws).
Status transform_delay_level_message(MessageToStore& message, int32_t max_delay_level);

// What a due SCHEDULE_TOPIC_XXXX record becomes (messageTimeup): the same
// body, flag, properties (without DELAY; REAL_TOPIC / REAL_QID stay, as in
// RocketMQ), sysflag, born time and host and reconsume times, for its real
// topic and queue, WAIT=false. InvalidArgument when REAL_TOPIC or REAL_QID is
// missing or unusable.
Result<MessageToStore> message_time_up(const DecodedMessage& scheduled);

}  // namespace mqlab::store
