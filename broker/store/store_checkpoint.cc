#include "broker/store/store_checkpoint.h"

#include <algorithm>
#include <utility>

#include "broker/common/big_endian.h"
#include "broker/common/log.h"
#include "broker/env/path.h"

namespace mqlab::store {
namespace {

constexpr const char* kStoreCheckpointLog = "checkpoint";
// RocketMQ's margin in getMinTimestamp: 1000 * 3.
constexpr int64_t kMinTimestampMarginMs = 3000;

static_assert(StoreCheckpoint::kUsedBytes == 8 + 8 + 8);  // physic, logics, index
static_assert(StoreCheckpoint::kUsedBytes <= 512);        // inside one sector: written atomically

bool plausible(int64_t ms) { return ms >= 0 && ms <= StoreCheckpoint::kMaxPlausibleTimestampMs; }

}  // namespace

StoreCheckpoint::StoreCheckpoint(env::Env& env, std::string path)
    : env_(env), path_(std::move(path)), dir_(env::parent_dir(path_)) {
  MQ_ASSERT(!path_.empty());
  MQ_ASSERT_MSG(!dir_.empty(), "checkpoint path needs a directory: " + path_);
}

Status StoreCheckpoint::load() {
  physic_msg_timestamp_ = 0;
  logics_msg_timestamp_ = 0;
  index_msg_timestamp_ = 0;
  if (!env_.files().exists(path_)) {
    MQ_LOG(kInfo, kStoreCheckpointLog, path_ << " missing: timestamps start at 0");
    return Status::Ok();
  }
  Result<std::shared_ptr<env::File>> opened = env_.files().open(path_, env::OpenOptions{});
  if (!opened.ok()) return opened.status().with_context("opening checkpoint " + path_);
  file_ = std::move(opened).value();
  std::array<uint8_t, kUsedBytes> bytes{};
  Result<size_t> read = file_->pread(0, bytes);
  if (!read.ok()) return read.status().with_context("reading checkpoint " + path_);
  if (*read < kUsedBytes) {
    MQ_LOG(kWarn, kStoreCheckpointLog, path_ << " holds " << *read << " bytes, fewer than " << kUsedBytes
                             << ": ignored, timestamps start at 0");
    return Status::Ok();
  }
  ByteReader reader(bytes);
  const int64_t physic = reader.i64();
  const int64_t logics = reader.i64();
  const int64_t index = reader.i64();
  MQ_ASSERT(!reader.failed());  // 24 bytes were read
  if (!plausible(physic) || !plausible(logics) || !plausible(index)) {
    MQ_LOG(kWarn, kStoreCheckpointLog, path_ << " is torn or not a checkpoint (physic " << physic << ", logics " << logics
                             << ", index " << index << "; each must be in [0, " << kMaxPlausibleTimestampMs
                             << "]): ignored, timestamps start at 0");
    return Status::Ok();
  }
  physic_msg_timestamp_ = physic;
  logics_msg_timestamp_ = logics;
  index_msg_timestamp_ = index;
  MQ_LOG(kInfo, kStoreCheckpointLog, "loaded " << path_ << ": physic " << physic << ", logics " << logics << ", index " << index);
  return Status::Ok();
}

int64_t StoreCheckpoint::min_timestamp() const {
  const int64_t min = std::min(physic_msg_timestamp_, logics_msg_timestamp_) - kMinTimestampMarginMs;
  return std::max<int64_t>(min, 0);
}

int64_t StoreCheckpoint::min_timestamp_index() const {
  const int64_t min = std::min(min_timestamp(), index_msg_timestamp_);
  MQ_ASSERT(min <= min_timestamp());
  return min;
}

std::array<uint8_t, StoreCheckpoint::kUsedBytes> StoreCheckpoint::encode() const {
  std::array<uint8_t, kUsedBytes> header{};
  put_u64_be(header.data(), static_cast<uint64_t>(physic_msg_timestamp_));
  put_u64_be(header.data() + 8, static_cast<uint64_t>(logics_msg_timestamp_));
  put_u64_be(header.data() + 16, static_cast<uint64_t>(index_msg_timestamp_));
  MQ_ASSERT(get_i64_be(header.data() + 16) == index_msg_timestamp_);
  return header;
}

Status StoreCheckpoint::write(const std::array<uint8_t, kUsedBytes>& header) {
  if (!file_) {
    env::OpenOptions options;
    options.create = true;
    MQ_ASSIGN_OR_RETURN(file_, env_.files().open(path_, options));
  }
  if (page_written_) return file_->pwrite(0, header);
  // The first write of a process lays down the whole page, so a new (or a
  // short, garbage) file becomes the 4 KiB file 4.x expects, zeros after 24.
  std::vector<uint8_t> page(kFileSize, 0);
  std::copy(header.begin(), header.end(), page.begin());
  MQ_RETURN_IF_ERROR(file_->pwrite(0, page));
  page_written_ = true;
  return Status::Ok();
}

void StoreCheckpoint::flush(std::function<void(Status)> done) {
  if (!done) done = [](Status) {};
  if (Status status = write(encode()); !status.ok()) {
    return fail_later(std::move(done), status.with_context("writing checkpoint " + path_));
  }
  MQ_ASSERT(file_ != nullptr);
  MQ_ASSERT(page_written_);
  file_->sync(lifetime_.guard([this, done = std::move(done)](Status status) mutable {
    after_file_sync(std::move(status), std::move(done));
  }));
}

void StoreCheckpoint::after_file_sync(Status status, std::function<void(Status)> done) {
  if (!status.ok()) return done(status.with_context("syncing checkpoint " + path_));
  if (entry_durable_) return done(Status::Ok());
  // Any sync_dir issued from here on covers the file's entry: the file was
  // created before this flush's sync was.
  waiting_for_dir_.push_back(std::move(done));
  if (dir_sync_in_flight_) return;
  dir_sync_in_flight_ = true;
  env_.files().sync_dir(dir_, lifetime_.guard([this](Status synced) { after_dir_sync(std::move(synced)); }));
}

void StoreCheckpoint::after_dir_sync(Status status) {
  MQ_ASSERT(dir_sync_in_flight_);
  MQ_ASSERT(!waiting_for_dir_.empty());
  dir_sync_in_flight_ = false;
  if (status.ok()) {
    entry_durable_ = true;
  } else {
    status = status.with_context("syncing directory " + dir_ + " of checkpoint");
  }
  std::vector<std::function<void(Status)>> waiting = std::move(waiting_for_dir_);
  waiting_for_dir_.clear();
  for (auto& done : waiting) done(status);
}

void StoreCheckpoint::fail_later(std::function<void(Status)> done, Status status) {
  MQ_ASSERT(!status.ok());
  // Completions never run inside the call that started them.
  env_.executor().post(lifetime_.guard([done = std::move(done), status = std::move(status)]() mutable {
    done(std::move(status));
  }));
}

}  // namespace mqlab::store
