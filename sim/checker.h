// The checker: turns a run's History into the figures mqlab exists to
// measure (architecture.md, "What a run measures"):
//   lost        acknowledged (SEND_OK) messages a consumer group never received
//               and retention did not delete first
//   expired     acknowledged messages CommitLog retention deleted before a
//               group read them (sim/retention_expiry.h): the configured
//               retention working, counted apart and not as unreadable
//   unknown     sends whose outcome the producer never learned, never received
//   duplicates  receipts of a message a group had already received, by
//               cause: the same stored copy read again (at-least-once
//               redelivery: consume offsets rolled back to the last commit
//               after a consumer or broker restart, or a rebalance), a
//               consumer retry (RECONSUME_LATER, via the retry topic), or
//               another stored copy (the producer's retry stored it twice)
//   reordered   receipts whose queue offset is below one the group already
//               received from that queue (redeliveries excluded)
//   corrupted   receipts whose body differs from what was sent
//   unavailable windows in which sends to a broker group failed, and in which
//               its acknowledged messages could not be read (one waited
//               unread past a threshold, or every broker of the group was
//               down while it held acknowledged messages)
//   latency     send round trip and end to end (send to first receipt)
// and attributes each lost message to the fault that destroyed it.
//
// It reads only the History and the fault schedule, so real runs get the
// same figures from the same code: `mqsim check` loads the history files
// that mqadmin perf --history writes (sim/history_file.h) and calls
// check_history as mqsim run does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "sim/checker_latency.h"
#include "sim/history.h"
#include "sim/retention_expiry.h"

namespace mqlab::sim {


struct Window {
  Nanos from = 0;
  Nanos to = 0;
  std::string broker_name;  // "" for windows about the whole cluster
  Nanos length() const { return to - from; }
};

struct LostMessage {
  uint64_t seq = 0;
  std::string group;        // the consumer group that never received it
  std::string broker_name;  // where it was stored
  Nanos acked_at = 0;
  int fault_index = -1;     // into the schedule; -1: no fault explains it
  std::string fault;        // the fault's description, or "no fault"
  bool within_bound = true; // among the messages the run's loss bound foresaw (sim/loss_bound.h)
};

struct CheckerOptions {
  std::vector<std::string> consumer_groups;  // every group expected to receive every message
  Nanos run_end = 0;
  // An acknowledged message unread for longer than this counts as unreadable.
  Nanos read_unavailable_threshold = seconds(1);
  faults::FaultSchedule schedule;
  // Which broker group each machine or process name belongs to
  // ("broker-a-0" -> "broker-a"), to attribute faults.
  std::map<std::string, std::string> broker_group_of;
  size_t max_listed_lost = 1000;
  // The acknowledged messages the run's faults may destroy by design, each
  // with the fault that may (LossBound::at_risk). A lost message in it is
  // attributed to that fault; one outside it is counted apart.
  std::optional<std::map<uint64_t, int>> loss_at_risk;
  // Per broker group, where retention left its CommitLog's head (and why):
  // an unreceived acknowledged message stored below it expired, unless the
  // loss bound foresaw a fault destroying it (that stays a loss).
  std::map<std::string, RetentionHead> retention;
  // Repeated (seq, group) receipts whose causes one pass over the receipts
  // finds (sim/checker_duplicates.h): the checker's memory for them. Tests
  // make it small to force several passes; the figures do not change.
  size_t duplicates_per_pass = size_t{1} << 16;
};

// Why a group received a message again (CheckerReport::duplicates_by_cause).
struct DuplicateCauses {
  int64_t redelivered = 0;   // the same stored copy again: offsets rolled back (restart, rebalance)
  int64_t retried = 0;       // reconsumeTimes > 0: the handler asked RECONSUME_LATER
  int64_t stored_twice = 0;  // another stored copy: a producer retry after an unanswered send
  int64_t total() const { return redelivered + retried + stored_twice; }
};

struct CheckerReport {
  int64_t sent = 0;
  int64_t acknowledged = 0;
  int64_t stored_unconfirmed = 0;  // FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE
  int64_t failed = 0;
  int64_t unknown_outcome = 0;     // UNKNOWN or still pending
  int64_t lost = 0;                // distinct acknowledged messages missing from some group
  std::map<std::string, int64_t> lost_by_group;
  int64_t lost_unconfirmed = 0;    // stored-unconfirmed messages never received (not loss of an ack)
  int64_t unknown = 0;             // unknown outcome and never received
  int64_t unknown_delivered = 0;   // unknown outcome, received after all
  int64_t failed_delivered = 0;    // FAILED yet received: a client or broker bug
  int64_t duplicates = 0;
  DuplicateCauses duplicates_by_cause;             // sums to duplicates
  std::map<std::string, int64_t> stored_twice_by_broker;  // "broker-a" -> receipts of a second stored copy there
  int64_t messages_stored_twice = 0;               // distinct messages some group received from two stored copies
  int64_t expired_by_retention = 0;                // distinct acknowledged messages retention deleted unread
  std::map<std::string, int64_t> expired_by_group;
  std::map<std::string, int64_t> expired_by_rule;  // the rule (RetentionHead::rule) -> distinct messages
  int64_t reordered = 0;
  std::map<std::string, int64_t> reordered_by_queue;  // "broker-a:3" -> reordered receipts from that queue
  int64_t corrupted = 0;
  std::vector<Window> write_unavailable;
  std::vector<Window> read_unavailable;
  double write_unavailable_s = 0;
  double read_unavailable_s = 0;
  LatencySummary send_latency;
  LatencySummary e2e_latency;
  double throughput_msgs_per_s = 0;  // acknowledged per second of the run
  std::vector<LostMessage> lost_messages;  // at most max_listed_lost
  std::map<int, int64_t> lost_by_fault;    // fault index (-1: none) -> lost messages
  int64_t lost_outside_bound = 0;          // distinct lost messages not in options.loss_at_risk
};

CheckerReport check_history(const History& history, const CheckerOptions& options);

}  // namespace mqlab::sim
