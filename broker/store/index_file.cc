#include "broker/store/index_file.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "broker/common/big_endian.h"
#include "broker/store/message_codec.h"

namespace mqlab::store {

namespace {

using HeaderBytes = std::array<uint8_t, kIndexHeaderSize>;
using EntryBytes = std::array<uint8_t, kIndexEntrySize>;
constexpr int64_t kMillisPerDay = 86'400'000;

HeaderBytes encode_header(const IndexHeader& header) {
  HeaderBytes bytes{};
  put_u64_be(bytes.data(), static_cast<uint64_t>(header.begin_timestamp_ms));
  put_u64_be(bytes.data() + 8, static_cast<uint64_t>(header.end_timestamp_ms));
  put_u64_be(bytes.data() + 16, static_cast<uint64_t>(header.begin_phy_offset.value()));
  put_u64_be(bytes.data() + 24, static_cast<uint64_t>(header.end_phy_offset.value()));
  put_u32_be(bytes.data() + 32, static_cast<uint32_t>(header.hash_slot_count));
  put_u32_be(bytes.data() + 36, static_cast<uint32_t>(header.index_count));
  return bytes;
}

IndexHeader decode_header(const HeaderBytes& bytes) {
  IndexHeader header{.begin_timestamp_ms = get_i64_be(bytes.data()),
                     .end_timestamp_ms = get_i64_be(bytes.data() + 8),
                     .begin_phy_offset = PhyOffset(get_i64_be(bytes.data() + 16)),
                     .end_phy_offset = PhyOffset(get_i64_be(bytes.data() + 24)),
                     .hash_slot_count = get_i32_be(bytes.data() + 32),
                     .index_count = get_i32_be(bytes.data() + 36)};
  // IndexHeader.load: a header never written (a crash right after creation)
  // reads as zeros, and entry 0 is never used.
  if (header.index_count <= 0) header.index_count = 1;
  return header;
}

// Whole seconds since the file's first entry, clamped as RocketMQ does.
int32_t time_diff_seconds(int64_t store_timestamp_ms, int64_t begin_timestamp_ms) {
  if (begin_timestamp_ms <= 0 || store_timestamp_ms <= begin_timestamp_ms) return 0;
  const int64_t seconds = (store_timestamp_ms - begin_timestamp_ms) / 1000;
  return static_cast<int32_t>(std::min<int64_t>(seconds, INT32_MAX));
}

// beginTimestamp + timeDiff x 1000, saturating: both come from disk.
int64_t entry_time_ms(int64_t begin_timestamp_ms, int32_t time_diff) {
  const int64_t diff_ms = int64_t{time_diff} * 1000;
  if (begin_timestamp_ms > INT64_MAX - diff_ms) return INT64_MAX;
  return begin_timestamp_ms + diff_ms;
}

// Howard Hinnant's civil-from-days and days-from-civil (proleptic Gregorian).
struct CivilDate {
  int64_t year;
  unsigned month;
  unsigned day;
};

CivilDate civil_from_days(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return CivilDate{static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0), month, doy - (153 * mp + 2) / 5 + 1};
}

int64_t days_from_civil(int64_t year, unsigned month, unsigned day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto yoe = static_cast<unsigned>(year - era * 400);
  const unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

int32_t index_key_hash(std::string_view key) {
  const int32_t hash = java_string_hash(key);
  // Math.abs(Integer.MIN_VALUE) stays negative in Java; RocketMQ maps it to 0.
  return hash == INT32_MIN ? 0 : (hash < 0 ? -hash : hash);
}

int64_t IndexFile::file_size_bytes(int32_t hash_slot_num, int32_t index_num) {
  MQ_ASSERT(hash_slot_num > 0);
  MQ_ASSERT(index_num > 0);
  return kIndexHeaderSize + int64_t{hash_slot_num} * kIndexSlotSize + int64_t{index_num} * kIndexEntrySize;
}

std::string IndexFile::file_name(int64_t wall_ms) {
  MQ_ASSERT(wall_ms >= 0);
  const CivilDate date = civil_from_days(wall_ms / kMillisPerDay);
  MQ_ASSERT(date.year <= 9999);  // the name has four year digits
  const int64_t in_day = wall_ms % kMillisPerDay;
  char name[32];
  std::snprintf(name, sizeof(name), "%04lld%02u%02u%02lld%02lld%02lld%03lld", static_cast<long long>(date.year),
                date.month, date.day, static_cast<long long>(in_day / 3'600'000),
                static_cast<long long>(in_day / 60'000 % 60), static_cast<long long>(in_day / 1000 % 60),
                static_cast<long long>(in_day % 1000));
  return name;
}

std::optional<int64_t> IndexFile::parse_file_name(std::string_view name) {
  if (name.size() != 17) return std::nullopt;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  auto number = [&](size_t at, size_t length) {
    int64_t value = 0;
    for (size_t i = at; i < at + length; ++i) value = value * 10 + (name[i] - '0');
    return value;
  };
  const int64_t month = number(4, 2);
  const int64_t day = number(6, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  const int64_t days = days_from_civil(number(0, 4), static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t ms = days * kMillisPerDay + number(8, 2) * 3'600'000 + number(10, 2) * 60'000 +
                     number(12, 2) * 1000 + number(14, 3);
  // Rejects 31 February, hour 25 and the like: the name must round-trip.
  if (ms < 0 || file_name(ms) != name) return std::nullopt;
  return ms;
}

Result<std::shared_ptr<IndexFile>> IndexFile::create(env::Env& env, std::string path, int32_t hash_slot_num,
                                                     int32_t index_num, PhyOffset end_phy_offset,
                                                     int64_t end_timestamp_ms) {
  MQ_ASSERT(end_phy_offset >= PhyOffset(0));
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file,
                      env.files().open(path, env::OpenOptions{.create = true, .exclusive = true}));
  const IndexHeader header{.begin_timestamp_ms = end_timestamp_ms,
                           .end_timestamp_ms = end_timestamp_ms,
                           .begin_phy_offset = end_phy_offset,
                           .end_phy_offset = end_phy_offset};
  // Sized with holes, as RocketMQ's FileChannel.map sizes it: at the
  // default layout the file is 420 MB, and the slots a few keys touch are a
  // few pages. It is written with pwrite, so a full disk is a write's NoSpace.
  Status status = file->truncate(static_cast<uint64_t>(file_size_bytes(hash_slot_num, index_num)));
  if (status.ok()) status = file->pwrite(0, encode_header(header));
  if (!status.ok()) {
    (void)env.files().remove(path);  // leave no half-made index file behind
    return status;
  }
  auto index = std::make_shared<IndexFile>(std::move(file), hash_slot_num, index_num, header);
  index->writes_ = 1;
  index->slots_start_zero_ = true;  // a new file reads as zeros
  return index;
}

Result<std::shared_ptr<IndexFile>> IndexFile::open(env::Env& env, std::string path, int32_t hash_slot_num,
                                                   int32_t index_num) {
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, env.files().open(path, env::OpenOptions{}));
  MQ_ASSIGN_OR_RETURN(uint64_t size, file->size());
  const auto expected = static_cast<uint64_t>(file_size_bytes(hash_slot_num, index_num));
  HeaderBytes bytes{};
  MQ_ASSIGN_OR_RETURN(size_t got, file->pread(0, bytes));
  (void)got;  // a header cut short reads as zeros: an empty file
  const IndexHeader header = decode_header(bytes);
  const std::string layout = " (maxHashSlotNum " + std::to_string(hash_slot_num) + ", maxIndexNum " +
                             std::to_string(index_num) + " expect " + std::to_string(expected) + " bytes)";
  if (size > expected) return Status::Corruption(path + ": size " + std::to_string(size) + " too large" + layout);
  if (size < expected) {
    // A crash while the file was being created leaves it short and empty;
    // a short file with entries was written with another layout.
    if (header.index_count > 1) {
      return Status::Corruption(path + ": size " + std::to_string(size) + " too small" + layout);
    }
    MQ_RETURN_IF_ERROR(file->truncate(expected));  // with holes, as create sizes it
  }
  if (header.index_count > index_num) {
    return Status::Corruption(path + ": indexCount " + std::to_string(header.index_count) + " exceeds" + layout);
  }
  return std::make_shared<IndexFile>(std::move(file), hash_slot_num, index_num, header);
}

IndexFile::IndexFile(std::shared_ptr<env::File> file, int32_t hash_slot_num, int32_t index_num, IndexHeader header)
    : file_(std::move(file)),
      hash_slot_num_(hash_slot_num),
      index_num_(index_num),
      header_(header),
      written_header_(header),
      pending_first_entry_(header.index_count) {
  MQ_ASSERT(file_ != nullptr);
  MQ_ASSERT(hash_slot_num_ > 0 && index_num_ > 0);
  MQ_ASSERT(header_.index_count >= 1 && header_.index_count <= index_num_);
}

int64_t IndexFile::slot_position(int32_t key_hash) const {
  MQ_ASSERT(key_hash >= 0);
  return kIndexHeaderSize + int64_t{key_hash % hash_slot_num_} * kIndexSlotSize;
}

int64_t IndexFile::entry_position(int32_t entry_number) const {
  MQ_ASSERT(entry_number >= 1 && entry_number < index_num_);
  return kIndexHeaderSize + int64_t{hash_slot_num_} * kIndexSlotSize + int64_t{entry_number} * kIndexEntrySize;
}

const IndexFile::SlotPage* IndexFile::cached_slot_page(int64_t position) const {
  const auto page = static_cast<size_t>(position / kIndexPageSize);
  return page < slot_pages_.size() ? slot_pages_[page].get() : nullptr;
}

Result<IndexFile::SlotPage*> IndexFile::slot_page_for_write(int64_t position) {
  MQ_ASSERT(position >= kIndexHeaderSize && position < slots_end());
  if (slot_pages_.empty()) slot_pages_.resize(static_cast<size_t>((slots_end() - 1) / kIndexPageSize + 1));
  const auto page = static_cast<size_t>(position / kIndexPageSize);
  MQ_ASSERT(page < slot_pages_.size());
  if (slot_pages_[page]) return slot_pages_[page].get();
  auto loaded = std::make_unique<SlotPage>();
  if (!slots_start_zero_) {
    // Only the slot bytes of the page: its head may be the header, its tail
    // the first entries, and both are kept elsewhere.
    const int64_t page_at = static_cast<int64_t>(page) * kIndexPageSize;
    const int64_t from = std::max(page_at, kIndexHeaderSize);
    const int64_t to = std::min(page_at + kIndexPageSize, slots_end());
    const std::span<uint8_t> slots(loaded->bytes.data() + (from - page_at), static_cast<size_t>(to - from));
    MQ_ASSIGN_OR_RETURN(size_t got, file_->pread(static_cast<uint64_t>(from), slots));
    if (got != slots.size()) {
      return Status::Corruption(path() + ": short read of the slot page at " + std::to_string(from));
    }
  }
  slot_pages_[page] = std::move(loaded);
  ++cached_pages_;
  return slot_pages_[page].get();
}

Result<int32_t> IndexFile::read_slot(int64_t position) const {
  if (const SlotPage* page = cached_slot_page(position)) {
    return get_i32_be(page->bytes.data() + position % kIndexPageSize);
  }
  std::array<uint8_t, kIndexSlotSize> bytes{};
  MQ_ASSIGN_OR_RETURN(size_t got, file_->pread(static_cast<uint64_t>(position), bytes));
  if (got != bytes.size()) return Status::Corruption(path() + ": short read of slot at " + std::to_string(position));
  return get_i32_be(bytes.data());
}

Status IndexFile::read_entry(int32_t entry_number, std::span<uint8_t> out) const {
  MQ_ASSERT(out.size() == static_cast<size_t>(kIndexEntrySize));
  MQ_ASSERT(entry_number >= 1 && entry_number < header_.index_count);
  if (entry_number >= pending_first_entry_) {
    const auto at = static_cast<size_t>(entry_number - pending_first_entry_) * kIndexEntrySize;
    MQ_ASSERT(at + out.size() <= pending_entries_.size());
    std::copy_n(pending_entries_.data() + at, out.size(), out.data());
    return Status::Ok();
  }
  MQ_ASSIGN_OR_RETURN(size_t got, file_->pread(static_cast<uint64_t>(entry_position(entry_number)), out));
  if (got != out.size()) return Status::Corruption(path() + ": short read of entry " + std::to_string(entry_number));
  return Status::Ok();
}

Status IndexFile::put_key(std::string_view key, PhyOffset phy_offset, int64_t store_timestamp_ms) {
  MQ_ASSERT(!is_full());
  MQ_ASSERT(phy_offset >= PhyOffset(0));
  MQ_ASSERT(header_.index_count - pending_first_entry_ ==
            static_cast<int64_t>(pending_entries_.size() / kIndexEntrySize));
  if (pending_entries_.size() >= kMaxPendingEntryBytes) {
    // The disk has refused every run for a while: one more try, then refuse
    // the key rather than hold ever more memory.
    if (Status status = write_entries(); !status.ok()) {
      return status.with_context(path() + ": " + std::to_string(pending_entries_.size() / kIndexEntrySize) +
                                 " index entries wait for the disk");
    }
  }
  const int32_t key_hash = index_key_hash(key);
  const int64_t slot_at = slot_position(key_hash);
  MQ_ASSIGN_OR_RETURN(SlotPage * page, slot_page_for_write(slot_at));
  uint8_t* slot = page->bytes.data() + slot_at % kIndexPageSize;
  int32_t previous = get_i32_be(slot);
  // 0, a number from an unfinished put, or garbage: the chain starts here.
  if (previous <= 0 || previous >= header_.index_count) previous = 0;
  IndexHeader next = header_;
  if (next.index_count == 1) {
    // Set before computing timeDiff: RocketMQ computes the first entry's
    // diff against the previous file's end, skewing its time.
    next.begin_phy_offset = phy_offset;
    next.begin_timestamp_ms = store_timestamp_ms;
  }
  EntryBytes entry{};
  put_u32_be(entry.data(), static_cast<uint32_t>(key_hash));
  put_u64_be(entry.data() + 4, static_cast<uint64_t>(phy_offset.value()));
  put_u32_be(entry.data() + 12,
             static_cast<uint32_t>(time_diff_seconds(store_timestamp_ms, next.begin_timestamp_ms)));
  put_u32_be(entry.data() + 16, static_cast<uint32_t>(previous));
  pending_entries_.insert(pending_entries_.end(), entry.begin(), entry.end());
  put_u32_be(slot, static_cast<uint32_t>(next.index_count));
  if (!page->dirty) ++dirty_pages_;
  page->dirty = true;
  if (previous == 0) ++next.hash_slot_count;
  ++next.index_count;
  next.end_phy_offset = phy_offset;
  next.end_timestamp_ms = store_timestamp_ms;
  header_ = next;
  MQ_ASSERT(header_.index_count <= index_num_);
  MQ_ASSERT(get_i32_be(slot) == header_.index_count - 1);
  // A page's worth of entries goes to the file now: entries only ever
  // append, and an entry the header does not count yet is ignored by
  // readers. A failure is kept in write_error_ and retried with the next
  // run; the entry itself is indexed either way.
  if (pending_entries_.size() >= static_cast<size_t>(kIndexPageSize / kIndexEntrySize * kIndexEntrySize)) {
    (void)write_entries();
  }
  return Status::Ok();
}

bool IndexFile::has_buffered_writes() const {
  return !pending_entries_.empty() || dirty_pages_ > 0 || !(header_ == written_header_);
}

size_t IndexFile::buffered_bytes() const {
  return cached_pages_ * sizeof(SlotPage) + pending_entries_.size() + slot_pages_.size() * sizeof(slot_pages_[0]);
}

void IndexFile::note_write_result(const Status& status) {
  if (!status.ok()) write_error_ = status;
}

Status IndexFile::pwrite(int64_t position, std::span<const uint8_t> bytes) {
  MQ_ASSERT(position >= 0);
  MQ_ASSERT(static_cast<uint64_t>(position) + bytes.size() <=
            static_cast<uint64_t>(file_size_bytes(hash_slot_num_, index_num_)));
  Status status = file_->pwrite(static_cast<uint64_t>(position), bytes);
  if (status.ok()) {
    ++writes_;
  } else {
    status = status.with_context(path() + ": writing " + std::to_string(bytes.size()) + " index bytes at " +
                                 std::to_string(position));
  }
  note_write_result(status);
  return status;
}

Status IndexFile::write_entries() {
  if (pending_entries_.empty()) return Status::Ok();
  MQ_RETURN_IF_ERROR(pwrite(entry_position(pending_first_entry_), pending_entries_));
  pending_first_entry_ += static_cast<int32_t>(pending_entries_.size() / kIndexEntrySize);
  pending_entries_.clear();
  MQ_ASSERT(pending_first_entry_ == header_.index_count);
  return Status::Ok();
}

Status IndexFile::write_slot_pages() {
  // Runs of adjacent dirty pages go out as one write of their slot bytes.
  constexpr size_t kMaxRunPages = 64;
  std::vector<uint8_t> run;
  size_t page = 0;
  while (dirty_pages_ > 0 && page < slot_pages_.size()) {
    if (!slot_pages_[page] || !slot_pages_[page]->dirty) {
      ++page;
      continue;
    }
    size_t end = page;
    while (end < slot_pages_.size() && end - page < kMaxRunPages && slot_pages_[end] && slot_pages_[end]->dirty) ++end;
    const int64_t from = std::max(static_cast<int64_t>(page) * kIndexPageSize, kIndexHeaderSize);
    const int64_t to = std::min(static_cast<int64_t>(end) * kIndexPageSize, slots_end());
    run.clear();
    for (size_t p = page; p < end; ++p) {
      const int64_t page_at = static_cast<int64_t>(p) * kIndexPageSize;
      const int64_t lo = std::max(page_at, from);
      const int64_t hi = std::min(page_at + kIndexPageSize, to);
      const auto& bytes = slot_pages_[p]->bytes;
      run.insert(run.end(), bytes.begin() + (lo - page_at), bytes.begin() + (hi - page_at));
    }
    MQ_ASSERT(run.size() == static_cast<size_t>(to - from));
    MQ_RETURN_IF_ERROR(pwrite(from, run));
    for (size_t p = page; p < end; ++p) slot_pages_[p]->dirty = false;
    MQ_ASSERT(dirty_pages_ >= end - page);
    dirty_pages_ -= end - page;
    page = end;
  }
  MQ_ASSERT(dirty_pages_ == 0);
  return Status::Ok();
}

Status IndexFile::write_header() {
  if (header_ == written_header_) return Status::Ok();
  MQ_RETURN_IF_ERROR(pwrite(0, encode_header(header_)));
  written_header_ = header_;
  return Status::Ok();
}

Status IndexFile::write_back() {
  // Entries, then slots, then the header: until the header counts an entry,
  // readers treat a slot naming it as empty, so no prefix of these writes
  // leaves a chain pointing at bytes that are not there.
  MQ_RETURN_IF_ERROR(write_entries());
  MQ_RETURN_IF_ERROR(write_slot_pages());
  MQ_RETURN_IF_ERROR(write_header());
  write_error_ = Status::Ok();
  MQ_ASSERT(!has_buffered_writes());
  if (is_full()) {
    // No put comes again: queries read a full file from disk, and memory
    // stays with the newest file only.
    slot_pages_.clear();
    slot_pages_.shrink_to_fit();
    cached_pages_ = 0;
    pending_entries_.shrink_to_fit();
  }
  return Status::Ok();
}

bool IndexFile::is_time_matched(int64_t begin_ms, int64_t end_ms) const {
  return begin_ms <= header_.end_timestamp_ms && end_ms >= header_.begin_timestamp_ms;
}

Status IndexFile::select_phy_offsets(std::string_view key, size_t max_num, int64_t begin_ms, int64_t end_ms,
                                     std::vector<PhyOffset>& out) const {
  if (out.size() >= max_num || header_.index_count <= 1) return Status::Ok();
  const int32_t key_hash = index_key_hash(key);
  MQ_ASSIGN_OR_RETURN(int32_t number, read_slot(slot_position(key_hash)));
  if (number <= 0 || number >= header_.index_count) return Status::Ok();
  while (out.size() < max_num) {
    EntryBytes entry{};
    MQ_RETURN_IF_ERROR(read_entry(number, entry));
    const int32_t time_diff = get_i32_be(entry.data() + 12);
    const int32_t previous = get_i32_be(entry.data() + 16);
    if (time_diff < 0) break;  // damaged: RocketMQ stops here too
    const int64_t time_ms = entry_time_ms(header_.begin_timestamp_ms, time_diff);
    const PhyOffset phy_offset(get_i64_be(entry.data() + 4));
    if (get_i32_be(entry.data()) == key_hash && begin_ms <= time_ms && time_ms <= end_ms &&
        std::find(out.begin(), out.end(), phy_offset) == out.end()) {
      out.push_back(phy_offset);
    }
    // Chains run from newer to older: a link that does not go down is
    // damage, and an entry older than the window ends the search.
    if (previous <= 0 || previous >= number || time_ms < begin_ms) break;
    number = previous;
  }
  return Status::Ok();
}

void IndexFile::flush(std::function<void(Status)> done) {
  MQ_ASSERT(!has_buffered_writes());
  const uint64_t target = writes_;
  file_->sync([weak = weak_from_this(), target, done = std::move(done)](Status status) {
    if (auto self = weak.lock(); self && status.ok()) self->flushed_writes_ = std::max(self->flushed_writes_, target);
    done(std::move(status));
  });
}

Status IndexFile::destroy(env::FileSystem& files) { return files.remove(path()); }

}  // namespace mqlab::store
