// MappedFile: one fixed-size segment of a CommitLog or ConsumeQueue, named by
// the 20-digit zero-padded offset of its first byte (RocketMQ's MappedFile;
// we use pwrite/pread through the Env instead of mmap).
//
// Invariants: 0 <= flushed_position <= wrote_position <= file_size.
//   wrote_position   bytes appended (visible to readers)
//   flushed_position bytes known durable (a sync covering them completed)
// Appends only go at wrote_position; the file's blocks are allocated to
// file_size at creation, so unwritten bytes read as zeros.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

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
  int64_t free_bytes() const { return file_size_ - wrote_position_; }
  bool is_full() const { return wrote_position_ == file_size_; }
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<env::File>& file() const { return file_; }

  // Appends at wrote_position. Requires: bytes fit in the file. On error
  // nothing is appended (the Env's pwrite is all-or-nothing).
  Status append(std::span<const uint8_t> bytes);
  // Reads at a position inside the file; only [0, wrote_position) holds data.
  Result<size_t> read(int64_t position, std::span<uint8_t> out) const;

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
  bool needs_sync() const { return needs_sync_ || flushed_position_ < wrote_position_; }

  // Makes everything written so far durable; on ok, flushed_position covers
  // the wrote_position seen at the call. done runs on the executor.
  void flush(std::function<void(Status)> done);

 private:
  std::shared_ptr<env::File> file_;
  int64_t file_from_offset_;
  int64_t file_size_;
  int64_t wrote_position_ = 0;
  int64_t flushed_position_ = 0;
  int64_t max_store_timestamp_ms_ = 0;
  bool needs_sync_ = false;
};

}  // namespace mqlab::store
