#include "sim/loss_bound.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "broker/ha/ha_client.h"
#include "broker/ha/ha_service.h"
#include "broker/processor/broker_controller.h"
#include "broker/store/message_codec.h"

namespace mqlab::sim {
namespace {

using faults::FaultKind;

// An acknowledged message, placed in its group's log.
// One per acknowledged message, alive while the History is: kept small (an
// interned group name, not a std::string: 56 bytes instead of 88), and, as
// the History's records, in a spill file past the newest (a vector of them
// was the peak of a long run's memory: 400 MiB at 600 simulated minutes).
struct Acked {
  uint64_t seq = 0;
  InternedName group;
  int64_t phy_offset = -1;  // -1: the msgId did not decode; at risk wherever its group loses bytes
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  Nanos invoked_at = 0;
  Nanos completed_at = 0;
};

SpilledRecords<Acked> acknowledged(const History& history) {
  SpilledRecords<Acked> acked;
  for (const SendRecord& s : history.sends()) {
    if (s.outcome != SendOutcome::kOk) continue;
    Acked a{s.seq, s.broker_name, -1, s.queue_id, s.queue_offset, s.invoked_at, s.completed_at};
    if (const std::optional<PhyOffset> offset = store::offset_of_offset_message_id(s.msg_id)) {
      a.phy_offset = offset->value();
    }
    acked.push_back(a);
  }
  return acked;
}

// What a block of acknowledged messages holds of one group, so a walk for
// that group can skip the block without reading it back from the spill file:
// the walks run once per fault, and a long run has a fault every few minutes
// over millions of messages (skipping took 600 simulated minutes of the
// standard scenario from 96.7 to 82.7 s).
struct AckedBlockGroup {
  InternedName group;
  int64_t max_phy_offset = -1;
  bool any_unknown_offset = false;  // a phy_offset of -1: matches any bound
  Nanos min_invoked_at = 0;
  Nanos max_completed_at = 0;
};

// Acknowledged messages per block of the index: SpilledRecords' own block,
// so a block visited is one read of the file.
constexpr size_t kAckedIndexBlock = SpilledRecords<Acked>::kBlockRecords;

// Per block of kAckedIndexBlock acknowledged messages, one entry per group in it.
std::vector<std::vector<AckedBlockGroup>> index_acked(const SpilledRecords<Acked>& acked) {
  std::vector<std::vector<AckedBlockGroup>> blocks((acked.size() + kAckedIndexBlock - 1) / kAckedIndexBlock);
  size_t i = 0;
  for (const Acked& a : acked) {
    std::vector<AckedBlockGroup>& groups = blocks[i++ / kAckedIndexBlock];
    auto it = std::find_if(groups.begin(), groups.end(), [&a](const AckedBlockGroup& g) { return g.group == a.group; });
    if (it == groups.end()) {
      groups.push_back({a.group, a.phy_offset, a.phy_offset < 0, a.invoked_at, a.completed_at});
      continue;
    }
    it->max_phy_offset = std::max(it->max_phy_offset, a.phy_offset);
    it->any_unknown_offset = it->any_unknown_offset || a.phy_offset < 0;
    it->min_invoked_at = std::min(it->min_invoked_at, a.invoked_at);
    it->max_completed_at = std::max(it->max_completed_at, a.completed_at);
  }
  MQ_ASSERT(i == acked.size());
  return blocks;
}

std::string mib_text(int64_t bytes) {
  std::ostringstream text;
  text.precision(3);
  text << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return text.str();
}

// One fault's verdict before the offset-reuse pass.
struct Verdict {
  std::set<uint64_t> destroyed;
  std::set<std::string> truncated_groups;  // groups whose log may restart shorter
  std::vector<std::string> reasons;
  FaultLossBound lag;  // only the replication fields are used
};

class Bounder {
 public:
  Bounder(const Scenario& scenario, const faults::FaultSchedule& schedule, const History& history)
      : scenario_(scenario),
        schedule_(schedule),
        history_(history),
        acked_(acknowledged(history)),
        acked_index_(index_acked(acked_)),
        async_flush_(scenario.broker.store.flushDiskType == store::FlushDiskType::ASYNC_FLUSH),
        sync_master_(scenario.broker.store.brokerRole == store::BrokerRole::SYNC_MASTER),
        dispatch_flushed_only_(scenario.broker.store.dispatchFlushedOnly),
        transient_store_pool_(scenario.broker.store.is_transient_store_pool_enable()),
        receipts_in_time_order_(history.receipts_in_time_order()),
        next_receipt_(history.receipts().begin()) {}

  FaultLossBound bound(const FaultInstant& instant) {
    MQ_ASSERT(instant.fault_index >= 0 && static_cast<size_t>(instant.fault_index) < schedule_.events.size());
    instant_ = &instant;
    for (const BrokerStoreState& state : instant.brokers) {
      if (state.running) last_running_[state.machine] = state;
    }
    const faults::FaultEvent& event = schedule_.events[static_cast<size_t>(instant.fault_index)];
    Verdict verdict = judge(event);
    FaultLossBound result = verdict.lag;
    result.fault_index = instant.fault_index;
    result.fault = event.describe();
    result.destroyed = static_cast<int64_t>(verdict.destroyed.size());
    std::set<uint64_t> at_risk = verdict.destroyed;
    for (const std::string& group : verdict.truncated_groups) {
      for (uint64_t seq : skipped_after(group, instant.at, verdict.destroyed)) {
        at_risk.insert(seq);
        ++result.skipped;
      }
    }
    result.messages = static_cast<int64_t>(at_risk.size());
    MQ_ASSERT(result.messages == result.destroyed + result.skipped);
    std::string reason;
    for (const std::string& r : verdict.reasons) reason += (reason.empty() ? "" : "; ") + r;
    if (result.skipped > 0) {
      reason += "; " + std::to_string(result.skipped) +
                " acknowledged after it at queue offsets a consumer had already passed (offsets reused)";
    }
    result.reason = reason;
    for (uint64_t seq : at_risk) at_risk_.emplace(seq, instant.fault_index);  // the first fault keeps it
    return result;
  }

  const std::map<uint64_t, int>& at_risk() const { return at_risk_; }

 private:
  Verdict judge(const faults::FaultEvent& event) {
    Verdict verdict;
    switch (event.kind) {
      case FaultKind::kCrashMachine:
        lose_page_cache(event.target, verdict);
        break;
      case FaultKind::kPowerLossAll:
        for (const BrokerStoreState& state : instant_->brokers) lose_page_cache(state.machine, verdict);
        break;
      case FaultKind::kDestroyMachine:
        lose_store(event.target, verdict, /*returns_empty=*/false);
        break;
      case FaultKind::kFailDisk:
        fail_disk(event, verdict);
        break;
      case FaultKind::kPromoteSlave:
        promote(event.target, verdict);
        break;
      case FaultKind::kKillProcess:
        if (transient_store_pool_) {
          lose_write_buffer(event.target, verdict);
        } else {
          verdict.reasons.push_back("0: a process crash keeps the page cache");
        }
        break;
      default:
        verdict.reasons.push_back("0: destroys no stored data");
        break;
    }
    if (verdict.reasons.empty()) verdict.reasons.push_back("0: hits no broker holding data");
    return verdict;
  }

  const BrokerStoreState* now(const std::string& machine) const {
    for (const BrokerStoreState& state : instant_->brokers) {
      if (state.machine == machine) return &state;
    }
    return nullptr;
  }
  // The state to read offsets from: now if running, else the last one seen running.
  const BrokerStoreState* offsets_of(const std::string& machine) const {
    const BrokerStoreState* state = now(machine);
    if (state && state->running) return state;
    auto it = last_running_.find(machine);
    return it == last_running_.end() ? nullptr : &it->second;
  }
  bool master_alive(const std::string& group, const std::string& except) const {
    for (const BrokerStoreState& s : instant_->brokers) {
      if (s.broker_group == group && s.machine != except && s.broker_id == 0 && !s.destroyed && s.disks_survive) {
        return true;
      }
    }
    return false;
  }
  // The slave a promote_slave picks (sim_world_failover.cc), or that serves
  // reads once its master is gone: the group's first live slave.
  const BrokerStoreState* first_live_slave(const std::string& group, const std::string& except) const {
    for (const BrokerStoreState& s : instant_->brokers) {
      if (s.broker_group != group || s.machine == except || s.broker_id == 0) continue;
      if (!s.destroyed && s.powered && s.disks_survive) return &s;
    }
    return nullptr;
  }
  bool promotion_follows(const std::string& group) const {
    for (const faults::FaultEvent& e : schedule_.events) {
      if (e.kind == FaultKind::kPromoteSlave && e.target == group && e.at >= instant_->at) return true;
    }
    return false;
  }

  // Acknowledged messages of group sent by now whose bytes lie at or past
  // from; with acknowledged_since, only those whose acknowledgement came at
  // or after it.
  std::set<uint64_t> stored_from(const std::string& group, int64_t from, Nanos acknowledged_since = 0) const {
    std::set<uint64_t> seqs;
    for_each_acked_of(group, from, acknowledged_since, [&](const Acked& a) {
      if (a.invoked_at <= instant_->at && (a.phy_offset < 0 || a.phy_offset >= from) &&
          a.completed_at >= acknowledged_since) {
        seqs.insert(a.seq);
      }
    });
    return seqs;
  }

  // Calls visit, in order, for every acknowledged message of group in a
  // block that may hold one stored at or past from, acknowledged at or after
  // since and (with sent_by_now) sent by the fault's instant (acked_index_);
  // visit applies the exact test.
  template <typename Visit>
  void for_each_acked_of(const std::string& group, int64_t from, Nanos since, Visit visit,
                         bool sent_by_now = true) const {
    const InternedName name(group);  // every comparison below is of indexes
    for (size_t block = 0; block < acked_index_.size(); ++block) {
      const std::vector<AckedBlockGroup>& groups = acked_index_[block];
      const auto it = std::find_if(groups.begin(), groups.end(), [&name](const AckedBlockGroup& g) { return g.group == name; });
      if (it == groups.end() || (sent_by_now && it->min_invoked_at > instant_->at) || it->max_completed_at < since ||
          (!it->any_unknown_offset && it->max_phy_offset < from)) {
        continue;
      }
      const size_t end = std::min(acked_.size(), (block + 1) * kAckedIndexBlock);
      for (size_t i = block * kAckedIndexBlock; i < end; ++i) {
        const Acked a = acked_[i];
        if (a.group == name) visit(a);
      }
    }
  }

  void take(Verdict& verdict, const std::string& group, const std::set<uint64_t>& seqs, std::string reason) {
    verdict.destroyed.insert(seqs.begin(), seqs.end());
    verdict.truncated_groups.insert(group);
    verdict.reasons.push_back(std::move(reason));
  }

  // A power cut: the page cache of machine is gone.
  void lose_page_cache(const std::string& machine, Verdict& verdict) {
    const BrokerStoreState* state = now(machine);
    if (!state || state->destroyed || !state->disks_survive) return;
    const bool primary = state->broker_id == 0 || !master_alive(state->broker_group, machine);
    if (!primary) {
      verdict.reasons.push_back("0 on " + machine + ": a slave's power loss; its master holds the log");
      return;
    }
    // A SLAVE flushes on its own schedule whatever flushDiskType says.
    if (!async_flush_ && state->broker_id == 0) {
      if (dispatch_flushed_only_) {
        verdict.reasons.push_back("0 on " + machine + ": SYNC_FLUSH acknowledges only what is durable");
        return;
      }
      // RocketMQ 4.x (dispatchFlushedOnly=false): consumers may have read
      // records the cut took before their flush completed; none of them was
      // acknowledged, but the queues restart shorter than what was read, and
      // the acknowledged puts that reuse those offsets are skipped
      // (apache/rocketmq#8239). Nothing acknowledged is destroyed; the skip
      // pass in bound() counts the rest.
      verdict.truncated_groups.insert(state->broker_group);
      verdict.reasons.push_back("0 destroyed on " + machine +
                                ": SYNC_FLUSH acknowledges only what is durable, but dispatchFlushedOnly=false "
                                "let consumers read records the cut took");
      return;
    }
    const BrokerStoreState* offsets = offsets_of(machine);
    if (!offsets) return;  // never served: holds nothing acknowledged
    const std::set<uint64_t> seqs = stored_from(state->broker_group, offsets->flushed_phy_offset);
    take(verdict, state->broker_group, seqs,
         std::to_string(seqs.size()) + " on " + machine + ": acknowledged past its last completed flush (" +
             mib_text(offsets->max_phy_offset - offsets->flushed_phy_offset) + " unflushed)");
  }

  // kill -9 of a broker process (named as its machine) whose master
  // acknowledges from the CommitLog's write buffer (transientStorePoolEnable):
  // the page cache keeps what was committed, the buffer is gone.
  void lose_write_buffer(const std::string& process, Verdict& verdict) {
    const BrokerStoreState* state = now(process);
    if (!state || !state->running) {
      verdict.reasons.push_back("0: a process crash keeps the page cache");
      return;
    }
    if (state->broker_id != 0) {
      verdict.reasons.push_back("0 on " + process + ": a slave never buffers its log; the page cache keeps it");
      return;
    }
    // max_phy_offset is the committed offset (MessageStore::max_phy_offset).
    MQ_ASSERT(state->flushed_phy_offset <= state->max_phy_offset);
    // Only this process's buffer dies, and it holds only what this process
    // acknowledged. Past the committed offset there may also lie messages an
    // earlier incarnation of the group's log acknowledged and a fault
    // already took (a promoted slave starts at its replica's end, a
    // restarted master at its recovered end), whose offsets this log has
    // not reached again: they are not in this buffer.
    const Nanos serving_since = ready_at(process);
    MQ_ASSERT(serving_since >= 0 && serving_since <= instant_->at);  // state->running says it served
    const std::set<uint64_t> seqs = stored_from(state->broker_group, state->max_phy_offset, serving_since);
    take(verdict, state->broker_group, seqs,
         std::to_string(seqs.size()) + " on " + process +
             ": transientStorePoolEnable acknowledged them from the write buffer, not yet committed");
  }

  // When process last became ready to serve (its broker_up), at or before
  // the instant; -1 if it never did.
  Nanos ready_at(const std::string& process) const {
    Nanos ready = -1;
    for (const WorldEvent& event : history_.events()) {
      if (event.what == "broker_up" && event.detail == process && event.at <= instant_->at) {
        ready = std::max(ready, event.at);
      }
    }
    return ready;
  }

  // The machine's store is gone for good. returns_empty: the broker comes
  // back on a new, empty disk under its own brokerId (a replaced disk).
  void lose_store(const std::string& machine, Verdict& verdict, bool returns_empty) {
    const BrokerStoreState* state = now(machine);
    if (!state || state->destroyed) return;
    const std::string& group = state->broker_group;
    if (state->broker_id != 0) {
      if (master_alive(group, machine)) {
        verdict.reasons.push_back("0 on " + machine + ": a slave's store; its master holds the log");
      } else {
        take(verdict, group, stored_from(group, 0), "all of " + group + ": its last copy, on a slave, is gone");
      }
      return;
    }
    const BrokerStoreState* slave = first_live_slave(group, machine);
    const BrokerStoreState* slave_offsets = slave ? offsets_of(slave->machine) : nullptr;
    if (!slave_offsets) {
      const std::set<uint64_t> seqs = stored_from(group, 0);
      take(verdict, group, seqs,
           std::to_string(seqs.size()) + " on " + machine + ": everything " + group +
               " acknowledged; no slave holds a copy");
      return;
    }
    // A master lost for good leaves its slave as the group's only broker:
    // consumers read from it (findBrokerAddressInSubscribe once the route
    // drops the master, or at once after a pull to the master timed out),
    // with or without a promotion. A master whose plain disk is replaced is
    // rebuilt from its slave's store (SimWorld::rebuild_from_slave). A RAID10
    // volume that lost a whole mirror is not: the master returns without
    // the data under brokerId 0, takes the reads back, and its slave's copy
    // goes unread (its HAClient refuses the shorter log), unless a
    // promotion swapped the roles first.
    if (returns_empty && !promotion_follows(group)) {
      const std::set<uint64_t> seqs = stored_from(group, 0);
      take(verdict, group, seqs,
           std::to_string(seqs.size()) + " on " + machine + ": everything " + group +
               " acknowledged; the master comes back without its data as brokerId 0, so " + slave->machine +
               "'s copy is not read");
      return;
    }
    if (sync_master_) {
      verdict.reasons.push_back("0 on " + machine + ": SYNC_MASTER acknowledged only what " + slave->machine +
                                " had, and it serves the reads");
      return;
    }
    lose_unreplicated(machine, *slave_offsets, verdict);
  }

  // An ASYNC_MASTER's log gives way to its slave's: what the slave lacked is gone.
  void lose_unreplicated(const std::string& master, const BrokerStoreState& slave, Verdict& verdict) {
    const std::string& group = slave.broker_group;
    const int64_t complete_end =
        slave.replica_complete_end >= 0 ? slave.replica_complete_end : slave.max_phy_offset;
    const std::set<uint64_t> seqs = stored_from(group, complete_end);
    FaultLossBound& lag = verdict.lag;
    if (const BrokerStoreState* m = offsets_of(master)) lag.master_max_offset = m->max_phy_offset;
    lag.slave_confirmed_offset = slave.confirmed_offset >= 0 ? slave.confirmed_offset : complete_end;
    lag.slave_complete_end = complete_end;
    lag.lag_bytes = lag.master_max_offset >= 0 ? std::max<int64_t>(0, lag.master_max_offset - complete_end) : -1;
    lag.lag_messages = static_cast<int64_t>(seqs.size());
    Nanos oldest = instant_->at;
    // seqs came from stored_from(group, complete_end): the same blocks hold them.
    for_each_acked_of(group, complete_end, 0, [&](const Acked& a) {
      if (seqs.count(a.seq)) oldest = std::min(oldest, a.completed_at);
    });
    lag.lag_ms = static_cast<double>(instant_->at - oldest) / kNanosPerMilli;
    std::ostringstream reason;
    reason << seqs.size() << " on " << master << ": ASYNC_MASTER acknowledged past what " << slave.machine
           << " held (replication lag " << lag.lag_bytes << " bytes, " << lag.lag_messages << " messages, "
           << lag.lag_ms << " ms)";
    take(verdict, group, seqs, reason.str());
  }

  void fail_disk(const faults::FaultEvent& event, Verdict& verdict) {
    const BrokerStoreState* state = now(event.target);
    if (!state) return;
    if (scenario_.topology.raid10) {
      const int partner = event.disk_index ^ 1;
      MQ_ASSERT(partner >= 0 && partner < 4);
      if (state->raid_member_healthy[static_cast<size_t>(partner)]) {
        verdict.reasons.push_back("0 on " + event.target + ": RAID10, the mirror partner holds every byte");
        return;
      }
    }
    // The store is gone. A new plain disk is rebuilt from the slave; a RAID10
    // volume comes back without the data.
    lose_store(event.target, verdict, /*returns_empty=*/scenario_.topology.raid10);
  }

  void promote(const std::string& group, Verdict& verdict) {
    const BrokerStoreState* slave = first_live_slave(group, "");
    if (!slave) {
      verdict.reasons.push_back("0: no live slave, nothing promoted");
      return;
    }
    if (sync_master_) {
      verdict.reasons.push_back("0: SYNC_MASTER acknowledged only what " + slave->machine + " had");
      return;
    }
    const BrokerStoreState* offsets = offsets_of(slave->machine);
    if (!offsets) return;
    std::string master;
    for (const BrokerStoreState& s : instant_->brokers) {
      if (s.broker_group == group && s.broker_id == 0) master = s.machine;
    }
    lose_unreplicated(master, *offsets, verdict);
  }

  // Acknowledged after at, in group, at a queue offset at or below the
  // highest one received from that queue before at.
  std::vector<uint64_t> skipped_after(const std::string& group, Nanos at, const std::set<uint64_t>& destroyed) {
    const std::map<int32_t, int64_t> passed = received_before(group, at);
    std::vector<uint64_t> seqs;
    constexpr int64_t kAnyOffset = std::numeric_limits<int64_t>::min();
    for_each_acked_of(
        group, kAnyOffset, at,
        [&](const Acked& a) {
          if (a.completed_at < at || destroyed.count(a.seq)) return;
          auto it = passed.find(a.queue_id);
          if (it != passed.end() && a.queue_offset <= it->second) seqs.push_back(a.seq);
        },
        /*sent_by_now=*/false);
    return seqs;
  }

  // Queue id -> the highest queue offset group's consumers received from it
  // before at. A run records receipts in time order and its faults come in
  // time order, so the receipts are read once for all faults, on from where
  // the last fault stopped: read from the start for each power cut, they
  // were 9% of a 600-minute run (60 power cuts, 14 million receipts). A
  // hand-made History out of order, or an earlier at, reads them all again.
  std::map<int32_t, int64_t> received_before(const std::string& group, Nanos at) {
    if (!receipts_in_time_order_ || at < receipts_read_before_) {
      std::map<int32_t, int64_t> passed;
      for (const ReceiptRecord& r : history_.receipts()) {
        if (r.broker_name == group && r.at < at) raise_passed(passed, r);
      }
      return passed;
    }
    receipts_read_before_ = at;
    for (; next_receipt_ != history_.receipts().end() && next_receipt_->at < at; ++next_receipt_) {
      const ReceiptRecord& r = *next_receipt_;
      auto found = std::find_if(passed_by_group_.begin(), passed_by_group_.end(),
                                [&](const auto& entry) { return entry.first == r.broker_name; });  // index comparisons
      if (found == passed_by_group_.end()) found = passed_by_group_.insert(passed_by_group_.end(), {r.broker_name, {}});
      raise_passed(found->second, r);
    }
    for (const auto& [name, passed] : passed_by_group_) {
      if (name == group) return passed;
    }
    return {};
  }

  static void raise_passed(std::map<int32_t, int64_t>& passed, const ReceiptRecord& r) {
    auto [it, inserted] = passed.emplace(r.queue_id, r.queue_offset);
    if (!inserted) it->second = std::max(it->second, r.queue_offset);
  }

  const Scenario& scenario_;
  const faults::FaultSchedule& schedule_;
  const History& history_;
  const SpilledRecords<Acked> acked_;
  const std::vector<std::vector<AckedBlockGroup>> acked_index_;  // after acked_: built from it
  const bool async_flush_;
  const bool sync_master_;
  const bool dispatch_flushed_only_;
  const bool transient_store_pool_;  // masters acknowledge from the CommitLog's write buffer
  const FaultInstant* instant_ = nullptr;
  std::map<std::string, BrokerStoreState> last_running_;
  std::map<uint64_t, int> at_risk_;  // seq -> the first fault that may destroy it
  // received_before's reading: receipts before receipts_read_before_ are
  // folded into passed_by_group_ (per group: queue id -> highest offset).
  const bool receipts_in_time_order_;
  SpilledRecords<ReceiptRecord>::const_iterator next_receipt_;
  Nanos receipts_read_before_ = std::numeric_limits<Nanos>::min();
  std::vector<std::pair<InternedName, std::map<int32_t, int64_t>>> passed_by_group_;
};

}  // namespace

void read_broker_offsets(broker::BrokerController& broker, BrokerStoreState& state) {
  store::MessageStore& store = broker.message_store();
  state.running = true;
  state.max_phy_offset = store.max_phy_offset().value();
  state.flushed_phy_offset = store.flushed_phy_offset().value();
  MQ_ASSERT(state.flushed_phy_offset <= state.max_phy_offset);
  if (ha::HAClient* client = broker.ha_client()) {
    state.replica_complete_end = store.replica_complete_end().value();
    state.confirmed_offset = client->confirmed_offset().value();
    MQ_ASSERT(state.replica_complete_end <= state.max_phy_offset);
  }
  if (ha::HAService* service = broker.ha_service()) {
    state.push2slave_max_offset = service->push2slave_max_offset().value();
  }
}

LossBound compute_loss_bound(const Scenario& scenario, const faults::FaultSchedule& schedule,
                             const std::vector<FaultInstant>& instants, const History& history) {
  LossBound bound;
  Bounder bounder(scenario, schedule, history);
  for (const FaultInstant& instant : instants) {
    MQ_ASSERT(bound.faults.empty() || bound.faults.back().fault_index != instant.fault_index);
    bound.faults.push_back(bounder.bound(instant));
  }
  bound.at_risk = bounder.at_risk();
  bound.messages = static_cast<int64_t>(bound.at_risk.size());
  for (const FaultLossBound& f : bound.faults) {
    MQ_ASSERT(f.messages <= bound.messages);
    bound.reason += (bound.reason.empty() ? "" : " | ") + f.fault + ": " + f.reason;
  }
  if (bound.faults.empty()) bound.reason = "no faults: nothing may be lost";
  return bound;
}

}  // namespace mqlab::sim
