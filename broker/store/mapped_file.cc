#include "broker/store/mapped_file.h"

#include <algorithm>
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
  if (max_pending_bytes_ > 0) {
    if (pending_.size() + bytes.size() > max_pending_bytes_) MQ_RETURN_IF_ERROR(commit());
    if (bytes.size() < max_pending_bytes_) {
      pending_.insert(pending_.end(), bytes.begin(), bytes.end());
      wrote_position_ += static_cast<int64_t>(bytes.size());
      MQ_ASSERT(committed_position() >= flushed_position_);
      return Status::Ok();
    }
    MQ_ASSERT(pending_.empty());  // too big to buffer: written at once, below
    last_commit_.clear();         // it would no longer end at the committed position
  }
  MQ_RETURN_IF_ERROR(write_at(wrote_position_, bytes));
  wrote_position_ += static_cast<int64_t>(bytes.size());
  MQ_ASSERT(flushed_position_ <= wrote_position_);
  return Status::Ok();
}

Status MappedFile::write_at(int64_t position, std::span<const uint8_t> bytes, std::vector<uint8_t>* scratch) {
  const int64_t end = position + static_cast<int64_t>(bytes.size());
  MQ_ASSERT(end <= file_size_);
  MQ_ASSERT(scratch == nullptr || (bytes.data() == scratch->data() && bytes.size() == scratch->size()));
  if (!end_marker_ || file_size_ - end < static_cast<int64_t>(kEndMarkerBytes)) {
    return file_->pwrite(static_cast<uint64_t>(position), bytes);
  }
  if (scratch != nullptr) {
    // The buffer's own bytes: the marker rides in the same pwrite, and is
    // taken off again (the buffer's capacity usually has room for it).
    scratch->resize(scratch->size() + kEndMarkerBytes, 0);
    Status status = file_->pwrite(static_cast<uint64_t>(position), *scratch);
    scratch->resize(scratch->size() - kEndMarkerBytes);
    return status;
  }
  MQ_RETURN_IF_ERROR(file_->pwrite(static_cast<uint64_t>(position), bytes));
  constexpr uint8_t kZeros[kEndMarkerBytes] = {};
  return file_->pwrite(static_cast<uint64_t>(end), std::span<const uint8_t>(kZeros, kEndMarkerBytes));
}

Result<std::span<uint8_t>> MappedFile::extend_pending(size_t size) {
  MQ_ASSERT(size > 0 && size < max_pending_bytes_);
  MQ_ASSERT(static_cast<int64_t>(size) <= free_bytes());
  if (pending_.size() + size > max_pending_bytes_) MQ_RETURN_IF_ERROR(commit());
  const size_t at = pending_.size();
  // The zeros resize writes are overwritten at once; the buffer's capacity
  // is kept across commits (it trades places with the kept copy), so this
  // allocates only while the buffer first grows.
  pending_.resize(at + size);
  wrote_position_ += static_cast<int64_t>(size);
  MQ_ASSERT(committed_position() >= flushed_position_);
  MQ_ASSERT(pending_.size() <= max_pending_bytes_);
  return std::span<uint8_t>(pending_.data() + at, size);
}

void MappedFile::enable_write_behind(size_t max_pending_bytes, bool keep_last_commit) {
  MQ_ASSERT(max_pending_bytes > 0);
  MQ_ASSERT(pending_.empty());
  max_pending_bytes_ = max_pending_bytes;  // the buffer grows on first use: most files are full and idle
  keep_last_commit_ = keep_last_commit;
}

Status MappedFile::commit() {
  if (pending_.empty()) return Status::Ok();
  const int64_t at = committed_position();
  MQ_ASSERT(at >= flushed_position_);
  MQ_RETURN_IF_ERROR(write_at(at, pending_, &pending_));
  // The committed bytes become the kept copy; the old copy's storage
  // becomes the next write buffer.
  if (keep_last_commit_) last_commit_.swap(pending_);
  pending_.clear();
  if (is_full()) {  // no more appends here: give the buffers back
    pending_.shrink_to_fit();
    last_commit_.clear();
    last_commit_.shrink_to_fit();
  }
  MQ_ASSERT(committed_position() == wrote_position_);
  MQ_ASSERT(memory_from() >= at);
  return Status::Ok();
}

Result<size_t> MappedFile::read(int64_t position, std::span<uint8_t> out) const {
  MQ_ASSERT(position >= 0);
  MQ_ASSERT(position + static_cast<int64_t>(out.size()) <= file_size_);
  const int64_t committed = committed_position();
  const int64_t in_memory_from = memory_from();
  const int64_t end = position + static_cast<int64_t>(out.size());
  if (in_memory_from == wrote_position_ || end <= in_memory_from) {
    return file_->pread(static_cast<uint64_t>(position), out);
  }
  // The kept last commit and the part still buffered come from memory; past
  // wrote_position the file reads as zeros (nothing was appended there), and
  // so does this.
  size_t got = 0;
  if (position < in_memory_from) {
    const size_t from_file = static_cast<size_t>(in_memory_from - position);
    MQ_ASSIGN_OR_RETURN(got, file_->pread(static_cast<uint64_t>(position), out.first(from_file)));
    if (got < from_file) return got;
  }
  auto copy_from = [&](const std::vector<uint8_t>& bytes, int64_t bytes_from) {
    const int64_t from = std::max(position, bytes_from);
    const int64_t to = std::min(end, bytes_from + static_cast<int64_t>(bytes.size()));
    if (to <= from) return;
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(from - bytes_from), static_cast<size_t>(to - from),
                out.begin() + static_cast<std::ptrdiff_t>(from - position));
    got += static_cast<size_t>(to - from);
  };
  copy_from(last_commit_, in_memory_from);
  copy_from(pending_, committed);
  if (end > wrote_position_) {
    const int64_t zeros_from = std::max(position, wrote_position_);
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(zeros_from - position), out.end(), uint8_t{0});
    got += static_cast<size_t>(end - zeros_from);
  }
  MQ_ASSERT(got == out.size());
  return got;
}

void MappedFile::set_wrote_position(int64_t position) {
  MQ_ASSERT(position >= 0 && position <= file_size_);
  // Buffered bytes past the new end go; those before it stay for the next
  // commit (a truncation cuts the file itself separately).
  if (!pending_.empty()) {
    pending_.resize(static_cast<size_t>(std::max<int64_t>(0, position - committed_position())));
  }
  // The kept copy must end at the committed position: a truncation, a
  // dropped batch or the padding after a BLANK moves it. Rare: readers go to
  // the file until the next commit.
  last_commit_.clear();
  wrote_position_ = position;
  MQ_ASSERT(committed_position() <= wrote_position_);
  if (flushed_position_ > wrote_position_) flushed_position_ = wrote_position_;
}

void MappedFile::set_flushed_position(int64_t position) {
  MQ_ASSERT(position >= 0 && position <= wrote_position_);
  flushed_position_ = position;
}

void MappedFile::flush(std::function<void(Status)> done) {
  // A failed commit leaves bytes only in memory: the sync still runs (done
  // must come from the executor) but covers, and reports, only what the
  // file holds, with the commit's error.
  const Status committed = commit_on_flush_ ? commit() : Status::Ok();
  const int64_t target = committed_position();
  const bool was_forced = needs_sync_;
  needs_sync_ = false;
  // The MappedFile may be deleted by retention or truncation while the sync
  // is in flight: hold it weakly, and let the caller hear the result anyway.
  file_->sync([weak = weak_from_this(), target, was_forced, committed, done = std::move(done)](Status status) {
    if (status.ok() && !committed.ok()) status = committed;
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
