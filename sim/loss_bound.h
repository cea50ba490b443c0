// LossBound: how many acknowledged messages a run was allowed to lose, by
// design, given its configuration and what its own brokers held at each
// fault's instant. A run that loses more than its bound found a bug (or a
// fault the design does not cover); loss within the bound is the design
// working, however large.
//
// The rules (the broker's promises, rocketmq-reference.md sections 3 and 4):
//   kill_process, pause, partition, slow or stalled disk, clock skew
//                       nothing: the page cache survives a process crash;
//                       except kill_process of a master running
//                       transientStorePoolEnable (an ASYNC_FLUSH master,
//                       a promoted slave included: it restarts with the
//                       master role): every message of its group it
//                       acknowledged since it last became ready, at or past
//                       the CommitLog's committed offset at that instant
//                       (the write buffer dies with the process: about
//                       commitIntervalCommitLog of traffic; messages an
//                       earlier incarnation of the log acknowledged past
//                       that offset were never in this buffer)
//   crash_machine, power_loss_all on a master (or on a slave holding the
//   group's only copy)
//                       SYNC_FLUSH: nothing, it acknowledges once durable
//                       (but with dispatchFlushedOnly=false consumers may
//                       have read records the cut took: the offset-reuse
//                       rule below applies, as in RocketMQ 4.x);
//                       ASYNC_FLUSH: every acknowledged message of its group
//                       at or past the CommitLog's flushed offset at that
//                       instant (about flushIntervalCommitLog of traffic,
//                       less what kernel writeback saved)
//   destroy_machine of a master
//                       with a live slave: SYNC_MASTER nothing; ASYNC_MASTER
//                       the acknowledged messages at or past the slave's
//                       last complete replicated record at that instant (the
//                       measured replication lag). Consumers read the rest
//                       from the slave, promoted or not (the client moves to
//                       it once the master times out, or the route drops
//                       the master). Without a live slave, everything the
//                       group acknowledged.
//   a failed plain disk of a master
//                       as destroy_machine: at the disk's replacement the
//                       master is rebuilt from its slave's store
//                       (SimWorld::rebuild_from_slave), so it serves what
//                       the slave held.
//   both members of a RAID10 mirror of a master
//                       as destroy_machine when a promote_slave of its group
//                       follows. Otherwise everything the group acknowledged:
//                       the master comes back without the data as brokerId
//                       0, consumers follow it, and the slave (which refuses
//                       to follow the shorter log) is not read.
//   fail_disk of one RAID10 member whose mirror partner is healthy: nothing
//   promote_slave       SYNC_MASTER nothing; ASYNC_MASTER the old master's
//                       unreplicated tail, measured as for destroy_machine
//                       (with transientStorePoolEnable its write buffer is
//                       part of it: the slave only receives committed bytes)
//   a slave's loss      nothing while its group's master still holds the log
// Where a rule allows loss, the group's queues restart shorter than what
// consumers had already read, and new messages reuse those queue offsets: a
// consumer group whose committed offset is past them skips them (RocketMQ
// 4.x does the same). So the bound adds the messages acknowledged after the
// fault at a queue offset at or below the highest one any group had received
// from that queue before it.
//
// Messages are placed by the CommitLog offset in their offsetMsgId: a slave's
// log holds the master's bytes at the same offsets, so one offset names one
// place in a group's log across a failover.
//
// Everything here reads the History and the states SimWorld recorded at each
// fault's start (before the fault acted), so it is deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "faults/fault_schedule.h"
#include "sim/history.h"
#include "sim/scenario.h"

namespace mqlab::broker {
class BrokerController;
}

namespace mqlab::sim {

// One broker machine's store as it stood at a fault's instant.
struct BrokerStoreState {
  std::string machine;       // "broker-a-0"
  std::string broker_group;  // "broker-a"
  int broker_id = 0;         // at that instant (a promote_slave swaps ids)
  bool running = false;      // its broker was up and serving: the offsets below are read from it
  bool powered = true;
  bool destroyed = false;
  bool disks_survive = true;
  // RAID10 only: whether each member was healthy (not failed, not rebuilding).
  std::array<bool, 4> raid_member_healthy{true, true, true, true};
  int64_t max_phy_offset = -1;      // the CommitLog's committed offset: what its files hold
  int64_t flushed_phy_offset = -1;  // the CommitLog's last completed flush
  // A SLAVE: the end of its last complete replicated record, and the offset
  // its HAClient confirmed (reported) to the master.
  int64_t replica_complete_end = -1;
  int64_t confirmed_offset = -1;
  // A master: push2SlaveMaxOffset, the highest offset a slave acknowledged.
  int64_t push2slave_max_offset = -1;
};

// Reads a running broker's offsets into state (the identity fields are the caller's).
void read_broker_offsets(broker::BrokerController& broker, BrokerStoreState& state);

// Every broker machine's state at the start of one fault.
struct FaultInstant {
  int fault_index = -1;  // into the run's schedule
  Nanos at = 0;
  std::vector<BrokerStoreState> brokers;  // in machine order
};

// What one fault may destroy.
struct FaultLossBound {
  int fault_index = -1;
  std::string fault;     // the fault's description
  int64_t messages = 0;  // destroyed + skipped
  int64_t destroyed = 0; // acknowledged messages whose bytes the fault may take
  int64_t skipped = 0;   // acknowledged later at reused queue offsets
  std::string reason;
  // Replication, for the loss of an ASYNC_MASTER's log (-1: not applicable):
  // the master's max offset and the slave's confirmed offset at the instant,
  // their difference, and the acknowledged messages past the slave's last
  // complete record with the age of the oldest.
  int64_t master_max_offset = -1;
  int64_t slave_confirmed_offset = -1;
  int64_t slave_complete_end = -1;
  int64_t lag_bytes = -1;
  int64_t lag_messages = -1;
  double lag_ms = -1;
};

struct LossBound {
  int64_t messages = 0;  // distinct acknowledged messages the run may lose
  std::string reason;    // one line
  std::vector<FaultLossBound> faults;  // the data-destroying faults, in schedule order
  std::map<uint64_t, int> at_risk;     // their seqs -> the first fault (index) that may destroy each
};

LossBound compute_loss_bound(const Scenario& scenario, const faults::FaultSchedule& schedule,
                             const std::vector<FaultInstant>& instants, const History& history);

}  // namespace mqlab::sim
