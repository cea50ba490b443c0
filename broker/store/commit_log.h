// CommitLog: the one append-only log every message of every topic lands in,
// as fixed-size segment files (RocketMQ's CommitLog). The source of truth:
// ConsumeQueues and IndexFiles are derived from it and rebuilt from it.
//
// Invariants:
//   - A record never straddles two segments. When the tail of a segment is
//     too short for the next record (record + 8 bytes), an 8-byte BLANK record
//     (TOTALSIZE = bytes left, kBlankMagicCode) is written and the segment is
//     full, so recovery can hop to the next file without parsing padding.
//   - Each record's PHYSICALOFFSET equals where it starts; its QUEUEOFFSET is
//     the next offset of its (topic, queue) at append time.
//   - flushed offset <= max offset. Appends are all-or-nothing: when the
//     device refuses (disk full), nothing is appended and the offsets stay.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/store/mapped_file_queue.h"
#include "broker/store/message_codec.h"
#include "broker/store/message_store_config.h"

namespace mqlab::store {

struct AppendMessageResult {
  PhyOffset wrote_offset;  // where the record starts
  int32_t wrote_bytes = 0;
  QueueOffset queue_offset;
  int64_t store_timestamp_ms = 0;
  std::string msg_id;  // offset message id from the store host
  PhyOffset end_offset() const { return wrote_offset + wrote_bytes; }
};

// Where one record ended up and what it is, as scanned from the log.
struct ScannedRecord {
  PhyOffset offset;
  DecodedRecord record;  // spans point into the scanner's buffer
};

class CommitLog {
 public:
  CommitLog(env::Env& env, const MessageStoreConfig& config);

  Status load() { return queue_.load(); }
  MappedFileQueue& file_queue() { return queue_; }
  const MappedFileQueue& file_queue() const { return queue_; }

  // Appends one encoded record, patching its queue offset, physical offset and
  // store timestamp. Requires: the record was validated by encode_message.
  // Errors: NoSpace / IoError from the device, with nothing appended.
  Result<AppendMessageResult> append(EncodedMessage& message, const std::string& topic, int32_t queue_id,
                                     int32_t sysflag, const HostAddress& store_host);

  PhyOffset min_offset() const { return PhyOffset(queue_.min_offset()); }
  PhyOffset max_offset() const { return PhyOffset(queue_.max_offset()); }
  PhyOffset flushed_offset() const { return PhyOffset(queue_.flushed_where()); }
  int64_t last_append_timestamp_ms() const { return last_append_timestamp_ms_; }

  // Reads size bytes at offset, all within one segment and below max_offset.
  Result<std::vector<uint8_t>> read(PhyOffset offset, int32_t size) const;
  // The record starting at offset, decoded (CRC checked). Corruption names
  // the segment file and the position inside it.
  Result<std::vector<uint8_t>> read_record_bytes(PhyOffset offset) const;
  // Store timestamp of the message at offset (ConsumeQueue time search).
  Result<int64_t> store_timestamp_at(PhyOffset offset, int32_t size) const;
  // The segment file holding offset and the position inside it.
  std::shared_ptr<MappedFile> file_at(PhyOffset offset) const { return queue_.find_file(offset.value()); }

  // The next QUEUEOFFSET of each (topic, queue), rebuilt after recovery from
  // the ConsumeQueues. Key "topic-queueId" as in RocketMQ's topicQueueTable.
  void set_topic_queue_offset(const std::string& topic, int32_t queue_id, QueueOffset next);
  QueueOffset topic_queue_offset(const std::string& topic, int32_t queue_id) const;
  void clear_topic_queue_table() { topic_queue_table_.clear(); }

  // Drops every byte at and past offset (recovery's truncation).
  Status truncate(PhyOffset offset);

  // Makes everything appended so far durable. done(Status) on the executor.
  void flush(std::function<void(Status)> done) { queue_.flush(std::move(done)); }

 private:
  Status write_blank(MappedFile& file);

  env::Env& env_;
  const MessageStoreConfig& config_;
  MappedFileQueue queue_;
  std::map<std::string, int64_t> topic_queue_table_;
  int64_t last_append_timestamp_ms_ = 0;
};

// Reads the CommitLog record by record from an offset, hopping over BLANK
// records to the next segment; buffers whole chunks so a scan costs one read
// per chunk, not one per record. Stops (done()) at the first record that does
// not decode, at a zeroed tail, or at max_offset; error() then says why,
// naming file and position (empty at a clean end).
class CommitLogScanner {
 public:
  CommitLogScanner(const CommitLog& log, PhyOffset from, PhyOffset limit, bool check_crc);

  // The next valid message record, or nullopt at the end.
  std::optional<ScannedRecord> next();
  PhyOffset position() const { return position_; }  // end of the last valid record
  const std::string& stop_reason() const { return stop_reason_; }
  bool stopped_on_corruption() const { return corrupt_; }

 private:
  bool fill(int64_t need);

  const CommitLog& log_;
  PhyOffset position_;
  PhyOffset limit_;
  bool check_crc_;
  std::vector<uint8_t> buffer_;
  int64_t buffer_start_ = -1;  // physical offset of buffer_[0]
  std::string stop_reason_;
  bool corrupt_ = false;
};

}  // namespace mqlab::store
