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
//   - flushed offset <= committed offset <= max offset.
//
// Group write (on a master): append() copies the record into the last
// segment's write buffer (MappedFile write-behind) and assigns its offsets
// at once; commit() hands every buffered record to the file in one pwrite.
// The MessageStore commits once per turn of the event loop, before it
// acknowledges any of the records, so a put acknowledged under ASYNC_FLUSH
// is in the page cache and survives kill -9 as before; N puts arriving in
// one turn cost one pwrite instead of N. A segment roll commits the filled
// segment (its records and the BLANK) before the next segment is taken, so
// only the last segment ever buffers. Every reader stops at
// committed_offset(): dispatch, pull regions, the HA stream, and
// CommitLog::read (lookups by offset, id or key), as RocketMQ reads up to
// MappedFile.getReadPosition().
//
// All-or-nothing: when the device refuses a commit (disk full, failed
// device), every uncommitted record is dropped: the write position, the
// queue offsets they took and the last store timestamp go back to where the
// commit started, so the next put gets the same offsets and nothing
// acknowledged can be lost (nothing uncommitted was acknowledged).
// A SLAVE never buffers: its bytes arrive through append_replica.
//
// Transient store pool (transientStorePoolEnable on an ASYNC_FLUSH master;
// commit_real_time_service.h): records are acknowledged while still
// buffered; CommitRealTimeService commits on its schedule, and a full
// buffer (1 MiB, commit_log.cc says why not a segment) or a roll commits at
// once. Then nothing buffered is ever dropped: a refused commit keeps every
// record for the next try (they were acknowledged), a put that needed the
// refused commit (a full buffer, a roll) is the only one refused, and a
// flush syncs only committed bytes (it does not commit).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/common/name_order.h"
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
  HostAddress store_host;  // the record's STOREHOST
  PhyOffset end_offset() const { return wrote_offset + wrote_bytes; }
  // The offset message id (store host and offset in hex). Made on demand:
  // a 32-character string per put was one of its allocations, and only a
  // producer's reply needs it.
  std::string msg_id() const { return create_offset_message_id(store_host, wrote_offset); }
  OffsetMessageIdText msg_id_text() const { return offset_message_id_text(store_host, wrote_offset); }
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

  // Appends one message, written in place (write_record) with its queue
  // offset, physical offset and store timestamp. Requires: plan is
  // plan_record(message)'s, without error. With group write the record is
  // buffered until commit(). Errors: NoSpace / IoError from the device (a
  // roll's commit, a full buffer's commit, or creating the next segment);
  // then every uncommitted record, this one included, is dropped
  // (max_offset() == committed_offset()).
  Result<AppendMessageResult> append(const MessageToStore& message, const RecordPlan& plan);

  // Whether appends are buffered until commit() (a master; see above).
  bool group_write() const { return group_write_; }
  // Whether buffered records are acknowledged before their commit
  // (transientStorePoolEnable in effect; see above).
  bool transient_store_pool() const { return transient_store_pool_; }
  // The 4 KiB pages the buffered bytes reach past the committed position,
  // counted by page index within the last segment (RocketMQ's
  // MappedFile.isAbleToCommit); 0 when nothing is buffered.
  int64_t uncommitted_pages() const;
  // The newest store timestamp a flush may claim for the checkpoint: of the
  // last committed record with a transient store pool (a flush covers only
  // those), of the last appended one otherwise (a flush commits first).
  int64_t flushable_timestamp_ms() const {
    return transient_store_pool_ && committed_offset() < max_offset() ? committed_timestamp_ms_
                                                                      : last_append_timestamp_ms_;
  }
  // Writes every buffered record to the file (one pwrite). On an error the
  // uncommitted records are dropped as append() describes, except with a
  // transient store pool: they stay buffered for the next try.
  Status commit();

  PhyOffset min_offset() const { return PhyOffset(queue_.min_offset()); }
  // The append position: where the next record goes (buffered bytes included).
  PhyOffset max_offset() const { return PhyOffset(queue_.max_offset()); }
  // The end of the bytes handed to the file: what the device holds.
  PhyOffset committed_offset() const;
  PhyOffset flushed_offset() const { return PhyOffset(queue_.flushed_where()); }
  int64_t last_append_timestamp_ms() const { return last_append_timestamp_ms_; }

  // Reads size bytes at offset, all within one segment and below
  // committed_offset(); NotFound for bytes past it (still buffered, or not
  // written at all).
  Result<std::vector<uint8_t>> read(PhyOffset offset, int32_t size) const;
  // The record starting at offset, decoded (CRC checked). Corruption names
  // the segment file and the position inside it.
  Result<std::vector<uint8_t>> read_record_bytes(PhyOffset offset) const;
  // Store timestamp of the message at offset (ConsumeQueue time search).
  Result<int64_t> store_timestamp_at(PhyOffset offset, int32_t size) const;
  // The segment file holding offset and the position inside it.
  std::shared_ptr<MappedFile> file_at(PhyOffset offset) const { return queue_.find_file(offset.value()); }

  // The next QUEUEOFFSET of each (topic, queue), rebuilt after recovery from
  // the ConsumeQueues (RocketMQ's topicQueueTable, keyed "topic-queueId").
  void set_topic_queue_offset(const std::string& topic, int32_t queue_id, QueueOffset next);
  QueueOffset topic_queue_offset(const std::string& topic, int32_t queue_id) const;
  void clear_topic_queue_table() {
    MQ_ASSERT(uncommitted_.empty());  // buffered records point into the table
    topic_queue_table_.clear();
  }

  // Drops every byte at and past offset (recovery's truncation).
  // Requires: nothing buffered.
  Status truncate(PhyOffset offset);

  // Makes everything appended so far durable, committing it first; a failed
  // commit keeps the records buffered (the next commit() drops them) and
  // fails the flush. done(Status) on the executor.
  void flush(std::function<void(Status)> done) { queue_.flush(std::move(done)); }

 private:
  // Ends a full segment: BLANK record, then (group write) the commit of the
  // segment's buffered records with it, so a batch never spans two files.
  Status write_blank(MappedFile& file);
  // After a failed commit: drops the buffered records, undoing the queue
  // offsets and the store timestamp they took. Returns status.
  Status drop_uncommitted(Status status);
  // Forgets the bookkeeping of records the file now holds.
  void forget_committed();
  // The segment appends go to; nullptr when there is none. Valid until the
  // list of segments changes.
  MappedFile* last_segment() const;

  // A buffered record's claims, undone if its commit fails. Pointers into
  // topic_queue_table_ stay valid: std::map never moves its nodes, and the
  // table is only cleared or reset while nothing is buffered (recovery).
  struct UncommittedRecord {
    PhyOffset wrote_offset;
    int64_t* next_queue_offset = nullptr;  // nullptr: it took no queue offset
    int64_t previous_timestamp_ms = 0;     // last_append_timestamp_ms_ before it
  };

  env::Env& env_;
  const MessageStoreConfig& config_;
  MappedFileQueue queue_;
  // By topic, then queue id: a put looks its entry up without building
  // RocketMQ's "topic-queueId" key string (an allocation per put). Names
  // by NameLess (std::string's order, compared inline).
  std::map<std::string, std::map<int32_t, int64_t>, NameLess> topic_queue_table_;
  int64_t last_append_timestamp_ms_ = 0;
  int64_t committed_timestamp_ms_ = 0;  // of the last record a commit wrote (transient store pool)
  bool group_write_ = false;
  bool transient_store_pool_ = false;
  // Buffered records, oldest first. Some may have reached the file since
  // (a full buffer or a flush commits too): forget_committed() prunes them.
  std::vector<UncommittedRecord> uncommitted_;
};

// Reads the CommitLog record by record from an offset, hopping over BLANK
// records to the next segment; buffers whole chunks so a scan costs one read
// per chunk, not one per record. Stops (done()) at the first record that does
// not decode, at a zeroed tail, or at max_offset; error() then says why,
// naming file and position (empty at a clean end).
class CommitLogScanner {
 public:
  // buffer: a chunk buffer kept across scans (the dispatcher's), or nullptr
  // for one of the scanner's own. Requires: it outlives the scanner.
  CommitLogScanner(const CommitLog& log, PhyOffset from, PhyOffset limit, bool check_crc,
                   std::vector<uint8_t>* buffer = nullptr);
  CommitLogScanner(const CommitLogScanner&) = delete;
  CommitLogScanner& operator=(const CommitLogScanner&) = delete;

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
  std::vector<uint8_t> own_buffer_;
  std::vector<uint8_t>& buffer_;
  int64_t buffer_start_ = -1;  // physical offset of buffer_[0]
  int64_t buffer_length_ = 0;  // valid bytes from buffer_[0]
  std::string stop_reason_;
  bool corrupt_ = false;
};

}  // namespace mqlab::store
