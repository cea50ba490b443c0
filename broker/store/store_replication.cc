// MessageStore's replication side (RocketMQ's CommitLog.handleHA /
// submitReplicaRequest on a master, CommitLog.appendData on a slave):
//   - a SYNC_MASTER put waits for its group commit and for a slave's ack side
//     by side, then combines the two statuses as RocketMQ 4.9.x does;
//   - the master hands out CommitLog bytes as file regions for the HA stream;
//   - a SLAVE appends the master's bytes at exactly its max offset. Chunks
//     are not record aligned, so the slave tracks the end of the last
//     complete record and dispatch never passes it.
#include <algorithm>
#include <memory>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/store/message_store.h"

namespace mqlab::store {
namespace {

// One SYNC_MASTER put waiting for its flush and/or its slave ack.
struct PendingPut {
  AppendMessageResult appended;
  int remaining = 1;  // one held by complete_put_waiting itself until it returns
  PutMessageStatus flush_status = PutMessageStatus::PUT_OK;
  PutMessageStatus replica_status = PutMessageStatus::PUT_OK;
  std::string flush_remark;
  std::string replica_remark;
  PutCallback done;
};

constexpr int64_t kPhysicalOffsetEnd = static_cast<int64_t>(kPhysicalOffsetPosition) + 8;

}  // namespace

void MessageStore::complete_put_waiting(const AppendMessageResult& appended, bool wait_flush, bool wait_slave,
                                        PutCallback done) {
  MQ_ASSERT(wait_flush || wait_slave);
  MQ_ASSERT(appended.end_offset() <= commit_log_.max_offset());
  auto pending = std::make_shared<PendingPut>();
  pending->appended = appended;
  pending->done = std::move(done);
  auto finish_one = [this, pending] {
    MQ_ASSERT(pending->remaining > 0);
    if (--pending->remaining > 0) return;
    // RocketMQ 4.9.x: the append's PUT_OK, overridden by a non-OK flush
    // status, overridden in turn by a non-OK replication status.
    PutMessageResult result;
    result.append = pending->appended;
    result.status = PutMessageStatus::PUT_OK;
    if (pending->flush_status != PutMessageStatus::PUT_OK) {
      result.status = pending->flush_status;
      result.remark = pending->flush_remark;
    }
    if (pending->replica_status != PutMessageStatus::PUT_OK) {
      result.status = pending->replica_status;
      result.remark = pending->replica_remark;
    }
    if (result.status == PutMessageStatus::PUT_OK) ++stats_.puts_ok;
    pending->done(result);
  };
  const PhyOffset end = appended.end_offset();
  if (wait_slave) {
    if (replication_hook_ == nullptr || !replication_hook_->is_slave_ok(end)) {
      pending->replica_status = PutMessageStatus::SLAVE_NOT_AVAILABLE;
      pending->replica_remark = "no slave connected, or the slave is more than haSlaveFallbehindMax behind";
      ++stats_.slave_not_available;
    } else {
      ++pending->remaining;
      replication_hook_->wait_for_slave(end, lifetime_.guard([this, pending, finish_one](bool acked) {
        if (!acked) {
          pending->replica_status = PutMessageStatus::FLUSH_SLAVE_TIMEOUT;
          pending->replica_remark = "no slave acknowledged the message within slaveTimeout";
          ++stats_.slave_timeouts;
        }
        finish_one();
      }));
    }
  }
  if (wait_flush) {
    ++pending->remaining;
    group_commit_->submit(end, [this, pending, finish_one](FlushOutcome outcome) {
      if (outcome != FlushOutcome::kFlushed) {
        pending->flush_status = PutMessageStatus::FLUSH_DISK_TIMEOUT;
        pending->flush_remark = outcome == FlushOutcome::kTimeout
                                    ? "flush did not complete within syncFlushTimeout"
                                    : "flush failed: stored in the page cache, not confirmed durable";
        ++stats_.flush_timeouts;
      }
      finish_one();
    });
  }
  // Release our own hold from a later task: a reply never runs inline.
  env_.executor().post(lifetime_.guard([finish_one] { finish_one(); }));
}

Result<FileRegion> MessageStore::commit_log_region(PhyOffset from, int32_t max_bytes) const {
  MQ_ASSERT(max_bytes > 0);
  // Only what the files hold: records still in the write buffer are not
  // acknowledged yet, and a region is read from the file (sendfile).
  const PhyOffset max = commit_log_.committed_offset();
  if (from > max) {
    return Status::NotFound("commitlog offset " + from.to_string() + " is past the max offset " + max.to_string());
  }
  if (from == max) return FileRegion{nullptr, 0, 0, from};
  std::shared_ptr<MappedFile> file = commit_log_.file_at(from);
  if (!file) return Status::NotFound("no commitlog segment holds offset " + from.to_string());
  const int64_t position = from.value() - file->file_from_offset();
  const int64_t written = std::min(file->wrote_position(), max.value() - file->file_from_offset()) - position;
  MQ_ASSERT(written > 0);  // from < max, and only the last segment is partly written
  const int64_t length = std::min<int64_t>(max_bytes, written);
  FileRegion region{file->file(), static_cast<uint64_t>(position), static_cast<uint32_t>(length), from};
  MQ_ASSERT(from + length <= max);
  return region;
}

Status MessageStore::append_replica(PhyOffset at, std::span<const uint8_t> bytes) {
  MQ_ASSERT(config_.brokerRole == BrokerRole::SLAVE);
  if (!running_) return Status::Unavailable("message store is not running");
  if (bytes.empty()) return Status::Ok();
  const int64_t segment = config_.mappedFileSizeCommitLog;
  const bool empty = commit_log_.file_queue().empty();
  if (empty && at.value() % segment != 0) {
    return Status::InvalidArgument("an empty slave store can only start at a segment boundary, not at " +
                                   at.to_string());
  }
  if (!empty && at != commit_log_.max_offset()) {
    return Status::InvalidArgument("chunk for offset " + at.to_string() + " but the slave's log ends at " +
                                   commit_log_.max_offset().to_string());
  }
  if (!replica_partial_tail_) replica_complete_end_ = commit_log_.max_offset();
  MQ_ASSIGN_OR_RETURN(MappedFile* file, commit_log_.file_queue().last_file_or_create(at.value()));
  MQ_ASSERT(file->file_from_offset() + file->wrote_position() == at.value());
  if (static_cast<int64_t>(bytes.size()) > file->free_bytes()) {
    return Status::InvalidArgument("chunk of " + std::to_string(bytes.size()) + " bytes at " + at.to_string() +
                                   " crosses the end of segment " + file->path());
  }
  if (empty) {
    // A fresh slave's log starts at the master's newest segment, not at 0:
    // so does its dispatch.
    replica_complete_end_ = at;
    reput_from_ = at;
  }
  MQ_RETURN_IF_ERROR(file->append(bytes));
  replica_partial_tail_ = true;
  if (Status walked = advance_replica_complete_end(); !walked.ok()) {
    const int64_t dropped = commit_log_.max_offset() - replica_complete_end_;
    MQ_LOG(kError, "ha", "slave drops " << dropped << " replicated bytes from offset "
                                        << replica_complete_end_.to_string() << ": " << walked.to_string());
    stats_.replica_bytes_dropped += static_cast<uint64_t>(dropped);
    MQ_ASSERT(handed_over_.empty());  // a slave takes no puts
    MQ_RETURN_IF_ERROR(commit_log_.truncate(replica_complete_end_));
    replica_partial_tail_ = false;
    reput_soon();
    return walked;
  }
  replica_partial_tail_ = replica_complete_end_ < commit_log_.max_offset();
  stats_.replica_bytes_appended += bytes.size();
  stats_.bytes_appended += bytes.size();
  reput_soon();
  MQ_ASSERT(replica_complete_end() <= commit_log_.max_offset());
  return Status::Ok();
}

// Walks record headers from the last complete record's end: a BLANK must
// fill its segment, a message must fit in its segment (plus the 8 bytes the
// append rule keeps free) and carry its own position as PHYSICALOFFSET.
// The last check is what notices a master whose log does not line up with
// ours: its bytes at our resume point are not a record that starts there.
Status MessageStore::advance_replica_complete_end() {
  const PhyOffset max = commit_log_.max_offset();
  PhyOffset at = replica_complete_end_;
  while (at < max) {
    std::shared_ptr<MappedFile> file = commit_log_.file_at(at);
    MQ_ASSERT(file != nullptr);  // our own segments are contiguous up to max
    const int64_t left = file->file_size() - (at.value() - file->file_from_offset());
    const int64_t available = max - at;
    const std::string where = "record at offset " + at.to_string();
    if (left < kEndFileMinBlankLength) return Status::Corruption(where + ": fewer than 8 bytes left in its segment");
    if (available < kEndFileMinBlankLength) break;
    MQ_ASSIGN_OR_RETURN(std::vector<uint8_t> head, commit_log_.read(at, kEndFileMinBlankLength));
    const int64_t total = get_i32_be(head.data());
    const uint32_t magic = get_u32_be(head.data() + 4);
    if (magic == kBlankMagicCode) {
      if (total != left) {
        return Status::Corruption(where + ": BLANK of " + std::to_string(total) + " bytes, but " +
                                  std::to_string(left) + " are left in the segment");
      }
    } else if (magic != kMessageMagicCode) {
      return Status::Corruption(where + ": magic code " + std::to_string(magic) + " is neither a message nor a BLANK");
    } else if (total < kMessageFixedSizeIpv4 || total > left - kEndFileMinBlankLength) {
      return Status::Corruption(where + ": TOTALSIZE " + std::to_string(total) + " does not fit its segment");
    } else {
      if (available < kPhysicalOffsetEnd) break;
      MQ_ASSIGN_OR_RETURN(std::vector<uint8_t> phy, commit_log_.read(at + kPhysicalOffsetPosition, 8));
      const int64_t physical_offset = get_i64_be(phy.data());
      if (physical_offset != at.value()) {
        return Status::Corruption(where + ": PHYSICALOFFSET " + std::to_string(physical_offset) +
                                  ": the master's log does not line up with this slave's");
      }
    }
    if (total > available) break;  // the rest is still on its way
    at += total;
  }
  MQ_ASSERT(at <= max);
  replica_complete_end_ = at;
  return Status::Ok();
}

Status MessageStore::truncate_replica_tail() {
  MQ_ASSERT(config_.brokerRole == BrokerRole::SLAVE);
  if (!replica_partial_tail_) return Status::Ok();
  const int64_t dropped = commit_log_.max_offset() - replica_complete_end_;
  MQ_ASSERT(dropped > 0);
  MQ_LOG(kInfo, "ha", "slave drops a partial record of " << dropped << " bytes at offset "
                                                         << replica_complete_end_.to_string() << " before resuming");
  MQ_RETURN_IF_ERROR(commit_log_.truncate(replica_complete_end_));
  replica_partial_tail_ = false;
  stats_.replica_bytes_dropped += static_cast<uint64_t>(dropped);
  MQ_ASSERT(commit_log_.max_offset() == replica_complete_end_);
  return Status::Ok();
}

}  // namespace mqlab::store
