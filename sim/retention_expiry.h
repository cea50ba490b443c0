// Retention expiry: which acknowledged messages CommitLog retention
// (broker/store/clean_commit_log_service.h: fileReservedTime at deleteWhen,
// diskMaxUsedSpaceRatio, diskSpaceCleanForciblyRatio, or by hand) deleted
// before a consumer group read them. That is the configuration working as
// written, not loss: the checker (sim/checker.h) counts such messages apart
// as "expired by retention", with the rule, and not as unreadable.
//
// A broker group's RetentionHead is where its CommitLog starts at the end of
// the run (the serving broker's min offset; only retention moves it up) and
// the rule that last moved it. A message stored below the head of the group
// that acknowledged it was deleted by retention: its CommitLog offset is in
// the offset message id the broker returned (RocketMQ's offsetMsgId).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mqlab::sim {

class SimWorld;
}  // namespace mqlab::sim
namespace mqlab::store {
class MessageStore;
}  // namespace mqlab::store
namespace mqlab::sim {

struct RetentionHead {
  int64_t deleted_below = 0;  // CommitLog offset: every record below it was deleted
  uint64_t segments_deleted = 0;
  // The rule, in broker.conf terms ("fileReservedTime 1 h, at deleteWhen 04");
  // "" when the broker deleted nothing since its last restart.
  std::string rule;
};

// The CommitLog offset an offset message id (32 hex digits for IPv4, 56 for
// IPv6) names; nullopt for anything else (a real run's client may record
// another id form).
std::optional<int64_t> commit_log_offset_of(std::string_view offset_msg_id);

// One store's head now: where its CommitLog starts, and the deletions and
// rule since the store was opened.
RetentionHead retention_head_of(store::MessageStore& store);

// Per broker group with a running broker whose CommitLog head moved: the
// master's head, or, when the master is not running, a running slave's
// (a byte-for-byte copy of the same log). A broker restarted after its
// retention deleted segments, and that has deleted none since, keeps the
// rule it had when it stopped (SimWorld::retention_head_at_stop), as long as
// its log starts no later than it did then.
std::map<std::string, RetentionHead> retention_heads(SimWorld& world);

}  // namespace mqlab::sim
