#include "sim/sim_disk.h"

#include <algorithm>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::sim {

// One open file: an inode of one disk generation, answering to the process
// that opened it.
class SimDisk::SimFile final : public env::File {
 public:
  SimFile(SimDisk& disk, std::shared_ptr<Inode> inode, uint64_t generation, std::string path, OwnerId owner)
      : disk_(disk), inode_(std::move(inode)), generation_(generation), path_(std::move(path)), owner_(owner) {
    MQ_ASSERT(inode_ != nullptr);
  }

  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t offset, std::span<const uint8_t> data) override {
    return disk_.file_write(*this, offset, data);
  }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override { return disk_.file_read(*this, offset, out); }
  Status truncate(uint64_t size) override { return disk_.file_truncate(*this, size); }
  Result<uint64_t> size() override {
    MQ_RETURN_IF_ERROR(disk_.check_handle(*this));
    return inode_->size_bytes();
  }
  Status allocate(uint64_t size) override { return disk_.file_allocate(*this, size); }
  void sync(env::SyncCallback done) override { disk_.file_sync(*this, std::move(done)); }

 private:
  friend class SimDisk;
  SimDisk& disk_;
  const std::shared_ptr<Inode> inode_;
  const uint64_t generation_;
  const std::string path_;
  const OwnerId owner_;
};

SimDisk::SimDisk(Scheduler& scheduler, DiskProfile profile, SimDiskOptions options, env::Random random,
                 OwnerId owner)
    : scheduler_(scheduler),
      profile_(std::move(profile)),
      options_(std::move(options)),
      random_(random),
      owner_(owner),
      queue_(scheduler, owner) {
  const Status valid = profile_.validate();
  MQ_ASSERT_MSG(valid.ok(), valid.to_string());  // loaders validate user input before building disks
  set_torn_sector_probability(options_.torn_sector_probability);
  set_bit_rot_probability(options_.bit_rot_probability);
}

SimDisk::~SimDisk() { cancel_timers(); }

// ---------------------------------------------------------------------------
// The file system

Result<std::shared_ptr<env::File>> SimDisk::open(const std::string& path, env::OpenOptions options, OwnerId caller,
                                                 const std::string& shown_path) {
  MQ_ASSERT(is_normal_path(path));
  if (failed_) return failed_status();
  std::shared_ptr<Inode> inode;
  if (const DirEntry* entry = tree_.find(path); entry != nullptr) {
    if (entry->is_directory) return Status::InvalidArgument("open " + shown_path + ": is a directory");
    if (options.create && options.exclusive) return Status::AlreadyExists("open " + shown_path + ": file exists");
    inode = entry->inode;
    if (options.truncate && inode->size_bytes() > 0) {
      const Usage before = usage_of(*inode);
      inode->truncate(0, ++write_version_, scheduler_.now());
      track(*inode, before);
      arm_writeback();
    }
  } else {
    if (!options.create) return Status::NotFound("open " + shown_path + ": no such file");
    inode = std::make_shared<Inode>(next_inode_id_++);
    MQ_RETURN_IF_ERROR(tree_.add_file(path, inode).with_context("open " + shown_path));
    inodes_.emplace(inode->id(), inode);
    arm_journal();
  }
  MQ_ASSERT(inodes_.contains(inode->id()));
  return std::shared_ptr<env::File>(std::make_shared<SimFile>(*this, inode, generation_, shown_path, caller));
}

Status SimDisk::remove(const std::string& path) {
  if (failed_) return failed_status();
  MQ_RETURN_IF_ERROR(tree_.remove(path));
  arm_journal();
  sweep_inodes();
  return Status::Ok();
}

Status SimDisk::rename(const std::string& from, const std::string& to) {
  if (failed_) return failed_status();
  MQ_RETURN_IF_ERROR(tree_.rename(from, to));
  arm_journal();
  sweep_inodes();
  return Status::Ok();
}

Result<std::vector<std::string>> SimDisk::list(const std::string& dir) const {
  if (failed_) return failed_status();
  return tree_.list(dir);
}

Status SimDisk::mkdirs(const std::string& dir) {
  if (failed_) return failed_status();
  MQ_RETURN_IF_ERROR(tree_.mkdirs(dir));
  arm_journal();
  return Status::Ok();
}

bool SimDisk::exists(const std::string& path) const { return !failed_ && tree_.find(path) != nullptr; }

bool SimDisk::is_directory(const std::string& path) const { return !failed_ && tree_.is_directory(path); }

void SimDisk::sync_dir(const std::string& dir, OwnerId caller, env::SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  if (failed_) return deliver(caller, std::move(done), failed_status());
  Result<DirectoryTree::Children> children = tree_.snapshot_dir(dir);
  if (!children.ok()) return deliver(caller, std::move(done), children.status());
  // A directory sync is a journal commit: the flush, no data pages.
  const Nanos service = scaled(profile_.service_time_ns(0, 0, true));
  queue_.submit(service, [this, dir, children = std::move(children).value(), caller, done](Status status) {
    if (status.ok()) {
      tree_.apply_dir(dir, children);
      ++counters_.dir_syncs_completed;
      sweep_inodes();
    }
    deliver(caller, done, status);
  });
}

Result<env::SpaceInfo> SimDisk::space() {
  if (failed_) return failed_status();
  sweep_inodes();  // files removed while open and since closed free their blocks now
  const uint64_t used = std::min(used_bytes_, options_.capacity_bytes);  // a shrunk capacity may be overfull
  return env::SpaceInfo{options_.capacity_bytes, options_.capacity_bytes - used};
}

// ---------------------------------------------------------------------------
// Open files

Status SimDisk::check_handle(const SimFile& file) const {
  if (failed_) return failed_status();
  if (file.generation_ != generation_) {
    return Status::IoError(file.path_ + ": stale handle (disk " + options_.name + " lost power or was replaced)");
  }
  return Status::Ok();
}

Status SimDisk::file_write(SimFile& file, uint64_t offset, std::span<const uint8_t> data) {
  MQ_RETURN_IF_ERROR(check_handle(file));
  if (data.empty()) return Status::Ok();
  if (offset > kMaxFileSizeBytes || data.size() > kMaxFileSizeBytes - offset) {
    return Status::InvalidArgument(file.path_ + ": pwrite at " + std::to_string(offset) + " past the file size limit");
  }
  Inode& inode = *file.inode_;
  MQ_RETURN_IF_ERROR(reserve_blocks(inode.new_blocks_for_write(offset, data.size()), file.path_, "pwrite", offset));
  const Usage before = usage_of(inode);
  inode.write(offset, data, ++write_version_, scheduler_.now());
  track(inode, before);
  MQ_ASSERT(inode.size_bytes() >= offset + data.size());
  counters_.bytes_written += data.size();
  arm_writeback();
  return Status::Ok();
}

Result<size_t> SimDisk::file_read(SimFile& file, uint64_t offset, std::span<uint8_t> out) {
  MQ_RETURN_IF_ERROR(check_handle(file));
  const size_t length = file.inode_->read(offset, out);
  MQ_ASSERT(length <= out.size());
  // Bit-rot is drawn only when enabled, so turning it on in one scenario does
  // not shift the draws of a run without it.
  if (length > 0 && options_.bit_rot_probability > 0 && random_.chance(options_.bit_rot_probability)) {
    const uint64_t bit = random_.uniform(length * 8);
    out[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    ++counters_.bit_flips;
  }
  return length;
}

Status SimDisk::file_truncate(SimFile& file, uint64_t size) {
  MQ_RETURN_IF_ERROR(check_handle(file));
  if (size > kMaxFileSizeBytes) {
    return Status::InvalidArgument(file.path_ + ": truncate to " + std::to_string(size) + " past the file size limit");
  }
  Inode& inode = *file.inode_;
  const Usage before = usage_of(inode);
  inode.truncate(size, ++write_version_, scheduler_.now());
  track(inode, before);
  MQ_ASSERT(inode.size_bytes() == size);
  arm_writeback();
  return Status::Ok();
}

Status SimDisk::file_allocate(SimFile& file, uint64_t size) {
  MQ_RETURN_IF_ERROR(check_handle(file));
  if (size > kMaxFileSizeBytes) {
    return Status::InvalidArgument(file.path_ + ": allocate " + std::to_string(size) + " past the file size limit");
  }
  Inode& inode = *file.inode_;
  MQ_RETURN_IF_ERROR(reserve_blocks(inode.new_blocks_for_allocate(size), file.path_, "allocate", size));
  const Usage before = usage_of(inode);
  inode.allocate(size, scheduler_.now());
  track(inode, before);
  MQ_ASSERT(inode.size_bytes() >= size);
  arm_writeback();
  return Status::Ok();
}

void SimDisk::file_sync(SimFile& file, env::SyncCallback done) {
  MQ_ASSERT(done != nullptr);
  ++counters_.syncs_requested;
  if (Status status = check_handle(file); !status.ok()) return deliver(file.owner_, std::move(done), status);
  std::shared_ptr<Inode> inode = file.inode_;
  if (!inode->dirty()) {
    ++counters_.syncs_completed;
    return deliver(file.owner_, std::move(done), Status::Ok());
  }
  InodeSnapshot snapshot = inode->snapshot(scheduler_.now());
  MQ_ASSERT(dirty_inodes_.contains(inode->id()));
  const uint64_t seeks = count_seeks(inode->id(), snapshot);
  const Nanos service = scaled(profile_.service_time_ns(snapshot.bytes(), seeks, true));
  queue_.submit(service, [this, inode, snapshot = std::move(snapshot), owner = file.owner_, done](Status status) {
    if (status.ok()) {
      apply_snapshot(*inode, snapshot);
      ++counters_.syncs_completed;
    }
    deliver(owner, done, status);
  });
}

// ---------------------------------------------------------------------------
// Accounting

void SimDisk::track(const Inode& inode, Usage before) {
  MQ_ASSERT(used_bytes_ >= before.blocks * kPageSizeBytes);
  MQ_ASSERT(dirty_pages_ >= before.dirty_pages);
  used_bytes_ = used_bytes_ - before.blocks * kPageSizeBytes + inode.block_count() * kPageSizeBytes;
  dirty_pages_ = dirty_pages_ - before.dirty_pages + inode.dirty_page_count();
  if (inode.dirty()) {
    dirty_inodes_.insert(inode.id());
  } else {
    dirty_inodes_.erase(inode.id());
  }
}

Status SimDisk::reserve_blocks(uint64_t blocks, const std::string& path, const char* operation, uint64_t offset) {
  if (blocks == 0) return Status::Ok();
  const uint64_t wanted = blocks * kPageSizeBytes;
  if (used_bytes_ + wanted > options_.capacity_bytes) sweep_inodes();  // closed orphans may free some
  if (used_bytes_ + wanted <= options_.capacity_bytes) return Status::Ok();
  ++counters_.no_space_errors;
  return Status::NoSpace(path + ": " + operation + " at " + std::to_string(offset) +
                         ": no space left on device (disk " + options_.name + ")");
}

void SimDisk::apply_snapshot(Inode& inode, const InodeSnapshot& snapshot) {
  const Usage before = usage_of(inode);
  inode.apply(snapshot);
  track(inode, before);
  counters_.bytes_flushed += snapshot.bytes();
}

// An inode lives while anything refers to it: a name in either view of the
// tree, an open handle, an in-flight flush. The registry's own reference is
// the last one when none is left.
void SimDisk::sweep_inodes() {
  for (auto it = inodes_.begin(); it != inodes_.end();) {
    if (it->second.use_count() > 1) {
      ++it;
      continue;
    }
    const Inode& inode = *it->second;
    used_bytes_ -= inode.block_count() * kPageSizeBytes;
    dirty_pages_ -= inode.dirty_page_count();
    dirty_inodes_.erase(inode.id());
    it = inodes_.erase(it);
  }
  check_invariants();  // the sweep walks every inode anyway; so can the check
}

void SimDisk::check_invariants() const {
  uint64_t blocks = 0;
  uint64_t dirty_pages = 0;
  size_t dirty_inodes = 0;
  for (const auto& [id, inode] : inodes_) {
    MQ_ASSERT(inode->id() == id);
    blocks += inode->block_count();
    dirty_pages += inode->dirty_page_count();
    if (inode->dirty()) {
      MQ_ASSERT(dirty_inodes_.contains(id));
      ++dirty_inodes;
    }
  }
  MQ_ASSERT(used_bytes_ == blocks * kPageSizeBytes);
  MQ_ASSERT(dirty_pages_ == dirty_pages);
  MQ_ASSERT(dirty_inodes_.size() == dirty_inodes);
  if (failed_) MQ_ASSERT(inodes_.empty());
}

void SimDisk::recount_usage() {
  used_bytes_ = 0;
  dirty_pages_ = 0;
  dirty_inodes_.clear();
  for (const auto& [id, inode] : inodes_) {
    used_bytes_ += inode->block_count() * kPageSizeBytes;
    dirty_pages_ += inode->dirty_page_count();
    if (inode->dirty()) dirty_inodes_.insert(id);
  }
}

void SimDisk::forget_contents() {
  tree_.clear();
  inodes_.clear();
  recount_usage();
  head_inode_ = 0;
  head_offset_ = 0;
  MQ_ASSERT(used_bytes_ == 0);
  check_invariants();
}

// ---------------------------------------------------------------------------
// Faults

void SimDisk::power_loss(env::Random& random) {
  ++counters_.power_losses;
  ++generation_;
  queue_.drop_all();
  cancel_timers();
  writeback_in_flight_ = false;
  counters_.bytes_lost_last_power_loss = 0;
  counters_.torn_sectors_last_power_loss = 0;
  if (failed_) return;
  // Inode order (creation order) fixes the order of the draws.
  for (const auto& [id, inode] : inodes_) {
    const TearResult torn = inode->lose_power(profile_.sector_size_bytes, options_.torn_sector_probability, random);
    counters_.bytes_lost_last_power_loss += torn.lost_bytes;
    counters_.torn_sectors_last_power_loss += torn.torn_sectors;
  }
  tree_.revert();
  recount_usage();  // every cache is now its durable image
  sweep_inodes();
  head_inode_ = 0;
  head_offset_ = 0;
  MQ_ASSERT(dirty_pages_ == 0);
  MQ_ASSERT(dirty_inodes_.empty());
}

void SimDisk::fail() {
  if (failed_) return;
  failed_ = true;
  ++generation_;
  ++counters_.failures;
  cancel_timers();
  // Waiting syncs hear about it (EIO), as fsync callers do on a real failure.
  queue_.fail_all(failed_status());
  writeback_in_flight_ = false;
  forget_contents();
}

void SimDisk::replace() {
  fail();  // a disk pulled while healthy loses its contents just the same
  failed_ = false;
  ++generation_;
  forget_contents();
  MQ_ASSERT(queue_.in_flight() == 0);
}

Status SimDisk::restore_from(const SimDisk& source) {
  MQ_ASSERT(!failed_ && !source.failed_);
  MQ_ASSERT(&source != this);
  MQ_ASSERT(tree_.entry_count() == 1 && inodes_.empty());  // just "/"
  const Nanos now = scheduler_.now();
  std::vector<std::string> pending = {"/"};
  while (!pending.empty()) {
    const std::string dir = pending.back();
    pending.pop_back();
    MQ_ASSIGN_OR_RETURN(std::vector<std::string> names, source.tree_.list(dir));
    for (const std::string& name : names) {
      const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
      const DirEntry* entry = source.tree_.find(path);
      MQ_ASSERT(entry != nullptr);
      if (entry->is_directory) {
        MQ_RETURN_IF_ERROR(tree_.mkdirs(path));
        pending.push_back(path);
        continue;
      }
      const Inode& from = *entry->inode;
      auto inode = std::make_shared<Inode>(next_inode_id_++);
      MQ_RETURN_IF_ERROR(tree_.add_file(path, inode));
      inodes_.emplace(inode->id(), inode);
      PageData page{};
      for (uint64_t index : from.cached_page_indexes()) {
        const uint64_t offset = index * kPageSizeBytes;
        const size_t length = from.read(offset, std::span<uint8_t>(page.data(), page.size()));
        const Usage before = usage_of(*inode);
        if (Status room = reserve_blocks(inode->new_blocks_for_write(offset, length), path, "restore", offset);
            !room.ok()) {
          forget_contents();
          return room;
        }
        inode->write(offset, std::span<const uint8_t>(page.data(), length), ++write_version_, now);
        track(*inode, before);
      }
      const Usage before = usage_of(*inode);
      if (inode->size_bytes() < from.size_bytes()) inode->truncate(from.size_bytes(), ++write_version_, now);
      // The operator's sync: the copy is on the medium.
      if (inode->dirty()) inode->apply(inode->snapshot(now));
      track(*inode, before);
    }
  }
  tree_.commit_all();
  check_invariants();
  return Status::Ok();
}

void SimDisk::stall(Nanos duration) {
  MQ_ASSERT(duration >= 0);
  queue_.stall(duration);
}

void SimDisk::set_slowdown(double factor) {
  MQ_ASSERT(factor > 0);
  slowdown_ = factor;
}

void SimDisk::set_torn_sector_probability(double probability) {
  MQ_ASSERT(probability >= 0 && probability <= 1);
  options_.torn_sector_probability = probability;
}

void SimDisk::set_bit_rot_probability(double probability) {
  MQ_ASSERT(probability >= 0 && probability <= 1);
  options_.bit_rot_probability = probability;
}

// ---------------------------------------------------------------------------
// The device and the kernel around it

// A flush run that does not start where the previous one ended moves the
// head. On an HDD, rewriting the page just written costs a rotation, about a
// seek, so it counts too; on SSDs the profile's small cost stands for the
// random-write penalty.
uint64_t SimDisk::count_seeks(uint64_t inode_id, const InodeSnapshot& snapshot) {
  uint64_t seeks = 0;
  const auto& pages = snapshot.pages;
  for (size_t first = 0; first < pages.size();) {
    size_t last = first;
    while (last + 1 < pages.size() && pages[last + 1].first == pages[last].first + 1) ++last;
    if (head_inode_ != inode_id || head_offset_ != pages[first].first * kPageSizeBytes) ++seeks;
    head_inode_ = inode_id;
    head_offset_ = (pages[last].first + 1) * kPageSizeBytes;
    first = last + 1;
  }
  MQ_ASSERT(seeks <= pages.size());
  return seeks;
}

Nanos SimDisk::scaled(Nanos service_ns) const {
  MQ_ASSERT(service_ns >= 0);
  if (slowdown_ == 1.0) return service_ns;
  return static_cast<Nanos>(static_cast<double>(service_ns) * slowdown_);
}

// Completions always go through the scheduler, never inline: the Env
// contract says done runs on the executor, after the call that started it.
void SimDisk::deliver(OwnerId caller, env::SyncCallback done, Status status) {
  MQ_ASSERT(done != nullptr);
  scheduler_.schedule_at(
      scheduler_.now(), [done = std::move(done), status = std::move(status)] { done(status); }, caller);
}

void SimDisk::arm_writeback() {
  if (failed_ || dirty_inodes_.empty()) return;
  const bool over_background = dirty_bytes() > profile_.dirty_background_bytes && !writeback_in_flight_;
  const Nanos due = scheduler_.now() + (over_background ? 0 : profile_.dirty_writeback_interval_ns);
  if (writeback_timer_ != kNoEvent) {
    if (writeback_due_ <= due) return;
    scheduler_.cancel(writeback_timer_);
  }
  writeback_due_ = due;
  writeback_timer_ = scheduler_.schedule_at(due, [this] { writeback_tick(); }, owner_);
}

void SimDisk::writeback_tick() {
  writeback_timer_ = kNoEvent;
  MQ_ASSERT(!failed_);
  if (!writeback_in_flight_) start_writeback();
  arm_writeback();
}

// Linux's flusher: inodes dirty for longer than dirty_expire, then, while
// dirty data exceeds the background threshold, the oldest dirty inodes.
void SimDisk::start_writeback() {
  MQ_ASSERT(!writeback_in_flight_);
  const Nanos now = scheduler_.now();
  std::vector<std::pair<Nanos, uint64_t>> oldest_first;
  for (uint64_t id : dirty_inodes_) oldest_first.emplace_back(inodes_.at(id)->dirtied_at(), id);
  std::sort(oldest_first.begin(), oldest_first.end());
  uint64_t remaining = dirty_bytes();
  Batch batch;
  uint64_t bytes = 0;
  uint64_t seeks = 0;
  for (const auto& [dirtied_at, id] : oldest_first) {
    const bool expired = dirtied_at + profile_.dirty_expire_ns <= now;
    if (!expired && remaining <= profile_.dirty_background_bytes) break;  // the rest are younger
    const std::shared_ptr<Inode>& inode = inodes_.at(id);
    remaining -= std::min(remaining, inode->dirty_page_count() * kPageSizeBytes);
    InodeSnapshot snapshot = inode->snapshot(now);
    bytes += snapshot.bytes();
    seeks += count_seeks(id, snapshot);
    batch.emplace_back(inode, std::move(snapshot));
  }
  if (batch.empty()) return;
  writeback_in_flight_ = true;
  // Writeback issues plain writes, no cache flush: no base latency.
  queue_.submit(scaled(profile_.service_time_ns(bytes, seeks, false)), [this, batch](Status status) {
    writeback_in_flight_ = false;
    if (!status.ok()) return;  // the disk failed; its contents are gone anyway
    for (const auto& [inode, snapshot] : batch) apply_snapshot(*inode, snapshot);
    ++counters_.writebacks;
    arm_writeback();
  });
}

void SimDisk::arm_journal() {
  if (profile_.journal_commit_interval_ns == 0 || journal_timer_ != kNoEvent || !tree_.uncommitted()) return;
  journal_timer_ = scheduler_.schedule_after(profile_.journal_commit_interval_ns, [this] { journal_tick(); }, owner_);
}

// The metadata journal commits the whole tree at once and, as ext4 does for
// metadata, without waiting for the data of the files it names.
void SimDisk::journal_tick() {
  journal_timer_ = kNoEvent;
  MQ_ASSERT(!failed_);
  tree_.commit_all();
  ++counters_.journal_commits;
  sweep_inodes();
}

void SimDisk::cancel_timers() {
  if (writeback_timer_ != kNoEvent) scheduler_.cancel(writeback_timer_);
  if (journal_timer_ != kNoEvent) scheduler_.cancel(journal_timer_);
  writeback_timer_ = kNoEvent;
  journal_timer_ = kNoEvent;
}

}  // namespace mqlab::sim
