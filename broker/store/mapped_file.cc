#include "broker/store/mapped_file.h"

#include <cstdio>

namespace mqlab::store {

std::string MappedFile::file_name(int64_t file_from_offset) {
  MQ_ASSERT(file_from_offset >= 0);
  char name[32];
  std::snprintf(name, sizeof(name), "%020lld", static_cast<long long>(file_from_offset));
  return name;
}

std::optional<int64_t> MappedFile::parse_file_name(std::string_view name) {
  if (name.size() != 20) return std::nullopt;
  int64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (INT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

MappedFile::MappedFile(std::shared_ptr<env::File> file, int64_t file_from_offset, int64_t file_size)
    : file_(std::move(file)), file_from_offset_(file_from_offset), file_size_(file_size) {
  MQ_ASSERT(file_ != nullptr);
  MQ_ASSERT(file_from_offset_ >= 0);
  MQ_ASSERT(file_size_ > 0);
}

Status MappedFile::append(std::span<const uint8_t> bytes) {
  MQ_ASSERT(static_cast<int64_t>(bytes.size()) <= free_bytes());
  MQ_RETURN_IF_ERROR(file_->pwrite(static_cast<uint64_t>(wrote_position_), bytes));
  wrote_position_ += static_cast<int64_t>(bytes.size());
  MQ_ASSERT(flushed_position_ <= wrote_position_);
  return Status::Ok();
}

Result<size_t> MappedFile::read(int64_t position, std::span<uint8_t> out) const {
  MQ_ASSERT(position >= 0);
  MQ_ASSERT(position + static_cast<int64_t>(out.size()) <= file_size_);
  return file_->pread(static_cast<uint64_t>(position), out);
}

void MappedFile::set_wrote_position(int64_t position) {
  MQ_ASSERT(position >= 0 && position <= file_size_);
  wrote_position_ = position;
  if (flushed_position_ > wrote_position_) flushed_position_ = wrote_position_;
}

void MappedFile::set_flushed_position(int64_t position) {
  MQ_ASSERT(position >= 0 && position <= wrote_position_);
  flushed_position_ = position;
}

void MappedFile::flush(std::function<void(Status)> done) {
  const int64_t target = wrote_position_;
  const bool was_forced = needs_sync_;
  needs_sync_ = false;
  // The MappedFile may be deleted by retention or truncation while the sync
  // is in flight: hold it weakly, and let the caller hear the result anyway.
  file_->sync([weak = weak_from_this(), target, was_forced, done = std::move(done)](Status status) {
    if (auto self = weak.lock()) {
      if (status.ok() && target > self->flushed_position_ && target <= self->wrote_position_) {
        self->flushed_position_ = target;
      }
      if (!status.ok() && was_forced) self->needs_sync_ = true;  // try again next time
    }
    done(std::move(status));
  });
}

}  // namespace mqlab::store
