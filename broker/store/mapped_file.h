// MappedFile: one fixed-size segment of a CommitLog or ConsumeQueue, named by
// the 20-digit zero-padded offset of its first byte (RocketMQ's MappedFile;
// we use pwrite/pread through the Env instead of mmap, and the real Env
// serves the active CommitLog segment's pwrites through a mapping when
// asked: MappedFileQueue::enable_mapped_appends).
//
// Invariants: 0 <= flushed_position <= wrote_position <= file_size, and
// committed_position <= wrote_position.
//   wrote_position     bytes appended (visible to readers)
//   committed_position bytes handed to the file (pwrite); the rest, with
//                      write-behind on, waits in memory for commit()
//   flushed_position   bytes known durable (a sync covering them completed)
// Appends only go at wrote_position; the file's blocks are allocated to
// file_size at creation, so unwritten bytes read as zeros, except in a
// recycled CommitLog segment (recycleExpiredCommitLogEnable), which holds an
// expired segment's old records: there every write to the file is followed
// by an 8-byte zero record header (set_end_marker), so that a recovery
// after a crash finds the log's end where a fresh file's zeros would show it.
//
// Write-behind (ConsumeQueues only, RocketMQ's writeBuffer + commit): an
// append is a memcpy, and the buffered bytes reach the file in one pwrite
// when the buffer fills, on flush(), or on commit(). Readers see them at
// once. A process crash loses what was not committed, as a power loss loses
// what was not flushed: only for data recovery rebuilds (a ConsumeQueue is
// re-dispatched from the CommitLog). The CommitLog's last segment buffers
// one turn's records (group write, commit_log.h), written there in place
// (append_in_place), and commits them before any is acknowledged.
//
// Commit on flush (the default): flush() commits the buffered bytes first.
// The CommitLog with transientStorePoolEnable turns it off: its bytes reach
// the file only through commit() on CommitRealTimeService's schedule, and a
// flush syncs what was committed (RocketMQ's flush covers the committed
// position), so committed_position() is the one place the write-behind
// window ends.
//
// Last commit kept (the CommitLog's last segment): commit() keeps the bytes
// it just wrote, [committed_position() - last_commit_.size(),
// committed_position()), and read() serves them from memory. The dispatcher
// reads each record right after the group write that committed it: a
// memcpy instead of a pread. Its buffer trades places with the write buffer,
// so keeping it costs no allocation per commit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::store {

class MappedFile : public std::enable_shared_from_this<MappedFile> {
 public:
  // "00000000001073741824" for 1 GiB.
  static std::string file_name(int64_t file_from_offset);
  // The offset a 20-digit name stands for; nullopt for any other name.
  static std::optional<int64_t> parse_file_name(std::string_view name);

  MappedFile(std::shared_ptr<env::File> file, int64_t file_from_offset, int64_t file_size);

  int64_t file_from_offset() const { return file_from_offset_; }
  int64_t file_size() const { return file_size_; }
  int64_t wrote_position() const { return wrote_position_; }
  int64_t flushed_position() const { return flushed_position_; }
  int64_t committed_position() const { return wrote_position_ - static_cast<int64_t>(pending_.size()); }
  int64_t free_bytes() const { return file_size_ - wrote_position_; }
  bool is_full() const { return wrote_position_ == file_size_; }
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<env::File>& file() const { return file_; }

  // Appends at wrote_position. Requires: bytes fit in the file. On error
  // nothing is appended (the Env's pwrite is all-or-nothing). With
  // write-behind, an error is the failed commit of earlier bytes the new
  // ones would not fit beside; those stay buffered.
  Status append(std::span<const uint8_t> bytes);
  // Appends size bytes that fill(std::span<uint8_t>) writes in place: with
  // write-behind, straight into the write buffer, so a record is written
  // once and never copied before its pwrite; otherwise (or when it is too
  // big to buffer) into a scratch buffer and one pwrite. fill must write
  // every byte and cannot fail. Errors as append(); fill may have run.
  template <typename Fill>
  Status append_in_place(size_t size, Fill&& fill) {
    MQ_ASSERT(static_cast<int64_t>(size) <= free_bytes());
    if (max_pending_bytes_ > 0 && size < max_pending_bytes_) {
      MQ_ASSIGN_OR_RETURN(std::span<uint8_t> out, extend_pending(size));
      fill(out);
      return Status::Ok();
    }
    std::vector<uint8_t> bytes(size);
    fill(std::span<uint8_t>(bytes));
    return append(bytes);
  }
  // Buffer appends in memory, up to max_pending_bytes, from now on, and
  // with keep_last_commit keep the last commit's bytes for readers (above).
  // Requires: max_pending_bytes > 0.
  void enable_write_behind(size_t max_pending_bytes, bool keep_last_commit = false);
  // Writes the buffered bytes to the file (one pwrite). On error they stay
  // buffered for the next try.
  Status commit();
  bool has_pending() const { return !pending_.empty(); }
  // Whether flush() commits first (see above); on by default.
  void set_commit_on_flush(bool commit_on_flush) { commit_on_flush_ = commit_on_flush; }
  bool commit_on_flush() const { return commit_on_flush_; }
  // Reads at a position inside the file; only [0, wrote_position) holds data.
  Result<size_t> read(int64_t position, std::span<uint8_t> out) const;

  // From now on every write to the file (a commit, an unbuffered append)
  // is followed by kEndMarkerBytes zero bytes when the file has room for
  // them past the written bytes: the record header a recovery reads as the
  // end of the log (a TOTALSIZE and MAGICCODE of 0). For files whose bytes
  // past wrote_position are not zeros (recycled segments).
  static constexpr size_t kEndMarkerBytes = 8;
  void set_end_marker(bool on) { end_marker_ = on; }
  bool end_marker() const { return end_marker_; }

  // Recovery and truncation set the positions directly.
  void set_wrote_position(int64_t position);
  void set_flushed_position(int64_t position);

  // Newest store timestamp of a record in this file (retention's clock).
  int64_t max_store_timestamp_ms() const { return max_store_timestamp_ms_; }
  void note_store_timestamp(int64_t ms) {
    if (ms > max_store_timestamp_ms_) max_store_timestamp_ms_ = ms;
  }

  // A change the positions do not show (a truncation) must reach the disk:
  // the next flush syncs this file even if flushed_position == wrote_position.
  void mark_needs_sync() { needs_sync_ = true; }
  bool needs_sync() const {
    return needs_sync_ || flushed_position_ < (commit_on_flush_ ? wrote_position_ : committed_position());
  }

  // Commits (unless commit on flush is off), then makes everything
  // committed so far durable; on ok, flushed_position covers the
  // committed_position seen at the call. done runs on the executor.
  void flush(std::function<void(Status)> done);

 private:
  // pwrite of bytes at position, followed by the end marker when it is on
  // and fits in the file. scratch, when given, is the buffer bytes views:
  // the marker rides past its end in the same pwrite.
  Status write_at(int64_t position, std::span<const uint8_t> bytes, std::vector<uint8_t>* scratch = nullptr);

  // Write-behind: makes room for size more buffered bytes (committing the
  // buffer first when they would not fit) and returns them, appended.
  // Requires: 0 < size < max_pending_bytes_.
  Result<std::span<uint8_t>> extend_pending(size_t size);

  std::shared_ptr<env::File> file_;
  int64_t file_from_offset_;
  int64_t file_size_;
  int64_t wrote_position_ = 0;
  int64_t flushed_position_ = 0;
  int64_t max_store_timestamp_ms_ = 0;
  bool needs_sync_ = false;
  bool commit_on_flush_ = true;
  bool end_marker_ = false;
  // Write-behind: the bytes [committed_position(), wrote_position_).
  std::vector<uint8_t> pending_;
  size_t max_pending_bytes_ = 0;  // 0: off, every append is a pwrite
  // The last commit's bytes, ending at committed_position() (empty when
  // off, or after a truncation below them).
  std::vector<uint8_t> last_commit_;
  bool keep_last_commit_ = false;
  // Where the bytes readers get from memory begin: the last commit's first
  // byte, or the committed position when none is kept.
  int64_t memory_from() const { return committed_position() - static_cast<int64_t>(last_commit_.size()); }
};

}  // namespace mqlab::store
