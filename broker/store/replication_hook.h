// ReplicationHook: how a master's MessageStore reaches replication without
// depending on it (broker/ha implements it; the store only knows this
// interface). RocketMQ's CommitLog calls HAService directly; we invert the
// dependency so store/ stays below ha/ in the module graph.
//
// Contract:
//   - notify_appended(max) runs after every append on a master (ASYNC or
//     SYNC): new CommitLog bytes up to max may be pushed to slaves now.
//   - is_slave_ok(end) answers at once (RocketMQ's isSlaveOK): a slave is
//     connected and not too far behind to confirm end in time.
//   - wait_for_slave(end, done) completes exactly once, on the executor and
//     never inline: done(true) when some slave acknowledged >= end,
//     done(false) when slaveTimeout passed first or replication stopped.
// The store calls these only while the hook is installed; whoever installs
// it uninstalls it (set_replication_hook(nullptr)) before destroying it.
#pragma once

#include <functional>

#include "broker/common/types.h"

namespace mqlab::store {

class ReplicationHook {
 public:
  virtual ~ReplicationHook() = default;
  virtual void notify_appended(PhyOffset max_offset) = 0;
  virtual bool is_slave_ok(PhyOffset end_offset) const = 0;
  virtual void wait_for_slave(PhyOffset end_offset, std::function<void(bool acked)> done) = 0;
};

}  // namespace mqlab::store
