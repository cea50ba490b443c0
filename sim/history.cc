#include "sim/history.h"

#include <algorithm>
#include <iterator>

#include "broker/common/assert.h"
#include "broker/common/same_bytes.h"

namespace mqlab::sim {

const char* send_outcome_name(SendOutcome outcome) {
  switch (outcome) {
    case SendOutcome::kPending: return "PENDING";
    case SendOutcome::kOk: return "SEND_OK";
    case SendOutcome::kFlushDiskTimeout: return "FLUSH_DISK_TIMEOUT";
    case SendOutcome::kFlushSlaveTimeout: return "FLUSH_SLAVE_TIMEOUT";
    case SendOutcome::kSlaveNotAvailable: return "SLAVE_NOT_AVAILABLE";
    case SendOutcome::kFailed: return "FAILED";
    case SendOutcome::kUnknown: return "UNKNOWN";
  }
  return "?";
}

std::optional<SendOutcome> parse_send_outcome(std::string_view name) {
  for (SendOutcome outcome : {SendOutcome::kPending, SendOutcome::kOk, SendOutcome::kFlushDiskTimeout,
                              SendOutcome::kFlushSlaveTimeout, SendOutcome::kSlaveNotAvailable, SendOutcome::kFailed,
                              SendOutcome::kUnknown}) {
    if (name == send_outcome_name(outcome)) return outcome;
  }
  return std::nullopt;
}

void MessageIdText::assign(std::string_view text) {
  if (text.size() > kInlineBytes) {
    long_ = InternedName(text);
    size_ = 0;
    return;
  }
  long_ = InternedName();
  std::fill(std::begin(inline_), std::end(inline_), '\0');
  std::copy(text.begin(), text.end(), inline_);
  size_ = static_cast<uint8_t>(text.size());
  MQ_ASSERT(same_text(view(), text));
}

uint64_t History::begin_send(const std::string& producer, Nanos at, const std::string& key, uint32_t body_crc) {
  SendRecord record;
  record.seq = sends_.size();
  record.producer = std::string_view(producer);
  record.invoked_at = at;
  record.key = std::string_view(key);
  record.body_crc = body_crc;
  const uint64_t seq = record.seq;
  sends_.push_back(record);
  first_receipt_at_.push_back(-1);
  earliest_receipt_at_.push_back(-1);
  MQ_ASSERT(sends_.size() == seq + 1);
  return seq;
}

void History::complete_send(uint64_t seq, Nanos at, SendOutcome outcome, const std::string& broker_name,
                            int32_t queue_id, int64_t queue_offset, const std::string& msg_id, int32_t attempts) {
  MQ_ASSERT(seq < sends_.size());
  SendRecord record = sends_[seq];
  MQ_ASSERT(record.seq == seq);
  MQ_ASSERT(record.outcome == SendOutcome::kPending);  // a send completes once
  MQ_ASSERT(outcome != SendOutcome::kPending);
  MQ_ASSERT(at >= record.invoked_at);
  record.completed_at = at;
  record.outcome = outcome;
  record.broker_name = std::string_view(broker_name);
  record.queue_id = queue_id;
  record.queue_offset = queue_offset;
  record.msg_id = msg_id;
  record.attempts = attempts;
  sends_.set(seq, record);
}

void History::receive(ReceiptRecord receipt) {
  const std::string& group = receipt.group.str();
  // A seq beyond the sends is no send of ours (the checker counts it); it
  // must not size the table.
  if (receipt.seq < sends_.size()) {
    if (last_received_ == nullptr || receipt.group != last_receiving_group_) {
      last_received_ = &received_by_group_[group];
      last_receiving_group_ = receipt.group;
    }
    std::vector<bool>& received = *last_received_;
    // Grown by half again at least: receipts mostly name the newest send,
    // and growing to the sends alone made nearly every receipt a resize.
    // Bits past the sends read as not received, as no bit at all would.
    if (received.size() <= receipt.seq) received.resize(std::max(sends_.size(), received.size() * 3 / 2), false);
    const bool groups_first = !received[receipt.seq];
    received[receipt.seq] = true;
    // Strays are checked too: a test or a file may name a seq before its send.
    receipt.first_of_group = groups_first && !received_as_stray(group, receipt.seq);
    // Receipts name recent sends, so these are updates in memory but for
    // the audit group's at the end of a run.
    const Nanos earliest = earliest_receipt_at_[receipt.seq];
    if (earliest < 0 || receipt.at < earliest) earliest_receipt_at_.set(receipt.seq, receipt.at);
    if (groups_first) {
      const Nanos first = first_receipt_at_[receipt.seq];
      if (first < 0 || receipt.at < first) first_receipt_at_.set(receipt.seq, receipt.at);
    }
  } else {
    receipt.first_of_group = stray_received_[group].insert(receipt.seq).second;
  }
  if (!receipts_.empty() && receipt.at < receipts_.back().at) receipts_in_time_order_ = false;  // in the tail: no read
  receipts_.push_back(receipt);
}

bool History::received(std::string_view group, uint64_t seq) const {
  if (const auto it = received_by_group_.find(group); it != received_by_group_.end()) {
    if (seq < it->second.size() && it->second[seq]) return true;
  }
  return received_as_stray(group, seq);
}

History::GroupReceived::GroupReceived(const History& history, std::string_view group)
    : history_(&history), group_(group) {
  if (const auto it = history.received_by_group_.find(group); it != history.received_by_group_.end()) {
    seqs_ = &it->second;
  }
}

bool History::received_as_stray(std::string_view group, uint64_t seq) const {
  if (stray_received_.empty()) return false;  // always, in a simulated run
  const auto it = stray_received_.find(group);
  return it != stray_received_.end() && it->second.count(seq) > 0;
}

size_t History::memory_bytes() const {
  size_t bytes = sends_.memory_bytes() + receipts_.memory_bytes() + first_receipt_at_.memory_bytes() +
                 earliest_receipt_at_.memory_bytes();
  for (const auto& [group, received] : received_by_group_) bytes += received.capacity() / 8;
  constexpr size_t kSetNodeBytes = 48;  // a std::set<uint64_t> node with its allocation's overhead
  for (const auto& [group, seqs] : stray_received_) bytes += seqs.size() * kSetNodeBytes;
  return bytes + unsettled_pending_.capacity() * sizeof(uint64_t);
}

bool History::all_acknowledged_received_by(const std::vector<std::string>& groups) const {
  if (groups != settled_groups_) {
    settled_groups_ = groups;
    settled_sends_ = 0;
    unsettled_pending_.clear();
  }
  std::vector<const std::vector<bool>*> received;
  received.reserve(groups.size());
  for (const std::string& group : groups) {
    const auto it = received_by_group_.find(group);
    received.push_back(it == received_by_group_.end() ? nullptr : &it->second);
  }
  // Whether send needs nothing more: final, and received everywhere if acknowledged.
  const auto satisfied = [&received](const SendRecord& send) {
    if (send.outcome != SendOutcome::kOk) return true;
    for (const std::vector<bool>* seqs : received) {
      if (seqs == nullptr || send.seq >= seqs->size() || !(*seqs)[send.seq]) return false;
    }
    return true;
  };
  // Sends that were pending when passed: they may have been acknowledged since.
  bool all = true;
  std::erase_if(unsettled_pending_, [&](uint64_t seq) {
    const SendRecord send = sends_[seq];
    if (!satisfied(send)) all = false;
    return send.outcome != SendOutcome::kPending && satisfied(send);
  });
  if (!all) return false;
  for (; settled_sends_ < sends_.size(); ++settled_sends_) {
    const SendRecord send = sends_[settled_sends_];
    if (send.outcome == SendOutcome::kPending) {
      unsettled_pending_.push_back(send.seq);  // ignored until acknowledged, as any non-OK send
      continue;
    }
    if (!satisfied(send)) return false;  // asked again next time, from here
  }
  MQ_ASSERT(settled_sends_ == sends_.size());
  return true;
}

}  // namespace mqlab::sim
