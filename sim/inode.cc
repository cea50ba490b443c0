#include "sim/inode.h"

#include <algorithm>
#include <cstring>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

const PageData kZeroPage{};

// Copy-on-write: a page shared with the durable image or an in-flight
// snapshot is cloned before it changes, so what they hold never moves.
PageData& own(Page& page) {
  MQ_ASSERT(page.data != nullptr);
  if (page.data.use_count() > 1) page.data = std::make_shared<PageData>(*page.data);
  return *page.data;
}

Page zero_page(uint64_t version) { return Page{std::make_shared<PageData>(), version}; }

// Cache pages with index in [first, last].
uint64_t count_pages_in(const std::map<uint64_t, Page>& pages, uint64_t first, uint64_t last) {
  uint64_t count = 0;
  for (auto it = pages.lower_bound(first); it != pages.end() && it->first <= last; ++it) ++count;
  return count;
}

// Drops pages past size and zeroes the tail of the last one, keeping the
// "bytes past the size are zero" invariant. Returns the dropped indexes.
// A page's entry, looked for at the last page first: the reads after a
// write (the reput, a pull) are of the file's newest bytes.
std::map<uint64_t, Page>::const_iterator find_near_last(const std::map<uint64_t, Page>& pages, uint64_t index) {
  if (!pages.empty()) {
    const auto last = std::prev(pages.end());
    if (last->first == index) return last;
    if (last->first < index) return pages.end();
  }
  return pages.find(index);
}

// try_emplace(index) hinted at the last page.
std::pair<std::map<uint64_t, Page>::iterator, bool> try_emplace_near_last(std::map<uint64_t, Page>& pages,
                                                                          uint64_t index) {
  const size_t before = pages.size();
  const auto it = pages.try_emplace(pages.empty() ? pages.end() : std::prev(pages.end()), index);
  MQ_ASSERT(it->first == index);
  return {it, pages.size() != before};
}

std::vector<uint64_t> cut_pages(std::map<uint64_t, Page>& pages, uint64_t size) {
  const uint64_t keep = (size + kPageSizeBytes - 1) / kPageSizeBytes;
  std::vector<uint64_t> dropped;
  for (auto it = pages.lower_bound(keep); it != pages.end(); it = pages.erase(it)) dropped.push_back(it->first);
  const uint64_t tail = size % kPageSizeBytes;
  if (tail != 0) {
    if (auto it = pages.find(keep - 1); it != pages.end()) {
      PageData& bytes = own(it->second);
      std::fill(bytes.begin() + static_cast<ptrdiff_t>(tail), bytes.end(), uint8_t{0});
    }
  }
  return dropped;
}

}  // namespace

Nanos Inode::dirtied_at() const {
  MQ_ASSERT(dirty());
  return dirtied_at_;
}

uint64_t Inode::new_blocks_for_write(uint64_t offset, uint64_t length) const {
  if (length == 0) return 0;
  MQ_ASSERT(offset + length <= kMaxFileSizeBytes);
  const uint64_t first = std::max(offset / kPageSizeBytes, reserved_pages_);
  const uint64_t last = (offset + length - 1) / kPageSizeBytes;
  if (first > last) return 0;  // entirely inside the reservation
  const uint64_t present = count_pages_in(cache_, first, last);
  MQ_ASSERT(present <= last - first + 1);
  return (last - first + 1) - present;
}

uint64_t Inode::new_blocks_for_allocate(uint64_t size) const {
  MQ_ASSERT(size <= kMaxFileSizeBytes);
  const uint64_t target = page_count(size);
  if (target <= reserved_pages_) return 0;
  const uint64_t present = count_pages_in(cache_, reserved_pages_, target - 1);
  return (target - reserved_pages_) - present;
}

void Inode::write(uint64_t offset, std::span<const uint8_t> data, uint64_t version, Nanos now) {
  MQ_ASSERT(offset + data.size() <= kMaxFileSizeBytes);
  if (data.empty()) return;
  const bool was_dirty = dirty();
  uint64_t done = 0;
  while (done < data.size()) {
    const uint64_t position = offset + done;
    const uint64_t index = position / kPageSizeBytes;
    const uint64_t in_page = position % kPageSizeBytes;
    const uint64_t length = std::min<uint64_t>(kPageSizeBytes - in_page, data.size() - done);
    // Hinted at the last page: appends write it or the one after it, found
    // or placed without a search (the map checks the hint first).
    auto [it, inserted] = try_emplace_near_last(cache_, index);
    if (inserted) {
      it->second = zero_page(version);
      if (index >= reserved_pages_) ++block_count_;
    }
    MQ_ASSERT_MSG(it->second.version <= version, "write versions must grow");
    std::memcpy(own(it->second).data() + in_page, data.data() + done, length);
    it->second.version = version;
    dirty_.insert(dirty_.empty() ? dirty_.end() : std::prev(dirty_.end()), index);
    done += length;
  }
  size_ = std::max(size_, offset + data.size());
  if (!was_dirty) dirtied_at_ = now;
  check_invariants();
}

size_t Inode::read(uint64_t offset, std::span<uint8_t> out) const {
  if (offset >= size_) return 0;
  const uint64_t length = std::min<uint64_t>(out.size(), size_ - offset);
  uint64_t done = 0;
  while (done < length) {
    const uint64_t position = offset + done;
    const uint64_t in_page = position % kPageSizeBytes;
    const uint64_t chunk = std::min<uint64_t>(kPageSizeBytes - in_page, length - done);
    const auto it = find_near_last(cache_, position / kPageSizeBytes);
    const PageData& bytes = it == cache_.end() ? kZeroPage : *it->second.data;
    std::memcpy(out.data() + done, bytes.data() + in_page, chunk);
    done += chunk;
  }
  MQ_ASSERT(done == length);
  return static_cast<size_t>(length);
}

std::vector<uint64_t> Inode::cached_page_indexes() const {
  std::vector<uint64_t> indexes;
  indexes.reserve(cache_.size());
  for (const auto& [index, page] : cache_) indexes.push_back(index);
  return indexes;
}

void Inode::truncate(uint64_t size, uint64_t version, Nanos now) {
  MQ_ASSERT(size <= kMaxFileSizeBytes);
  const bool was_dirty = dirty();
  if (size < size_) {
    for (uint64_t index : cut_pages(cache_, size)) dirty_.erase(index);
    // The zeroed tail is a change the medium has not seen yet.
    if (size % kPageSizeBytes != 0) {
      if (auto it = cache_.find(size / kPageSizeBytes); it != cache_.end()) {
        MQ_ASSERT(it->second.version <= version);
        it->second.version = version;
        dirty_.insert(it->first);
      }
    }
  }
  size_ = size;
  truncated_to_ = std::min(truncated_to_, size);
  reserved_pages_ = std::min(reserved_pages_, page_count(size));  // ftruncate frees the blocks past the end
  recount_blocks();
  note_metadata_change(was_dirty, now);
  check_invariants();
}

void Inode::allocate(uint64_t size, Nanos now) {
  MQ_ASSERT(size <= kMaxFileSizeBytes);
  const bool was_dirty = dirty();
  const uint64_t added = new_blocks_for_allocate(size);
  const uint64_t target = page_count(size);
  if (target > reserved_pages_) reserved_pages_ = target;
  block_count_ += added;
  size_ = std::max(size_, size);
  note_metadata_change(was_dirty, now);
  check_invariants();
}

InodeSnapshot Inode::snapshot(Nanos now) {
  MQ_ASSERT(dirty());
  InodeSnapshot snapshot;
  snapshot.size_bytes = size_;
  snapshot.truncated_to_bytes = truncated_to_;
  snapshot.taken_at = now;
  snapshot.pages.reserve(dirty_.size());
  for (uint64_t index : dirty_) snapshot.pages.emplace_back(index, cache_.at(index));
  // The snapshot now carries the truncate; the next one starts afresh.
  truncated_to_ = size_;
  ++in_flight_;
  MQ_ASSERT(snapshot.truncated_to_bytes <= snapshot.size_bytes);
  return snapshot;
}

void Inode::apply(const InodeSnapshot& snapshot) {
  MQ_ASSERT(snapshot.truncated_to_bytes <= snapshot.size_bytes);
  MQ_ASSERT(in_flight_ > 0);
  --in_flight_;
  // Truncate first: pages the snapshot carries are newer than the cut.
  if (snapshot.truncated_to_bytes < durable_size_) cut_pages(durable_, snapshot.truncated_to_bytes);
  for (const auto& [index, page] : snapshot.pages) {
    MQ_ASSERT(index < page_count(snapshot.size_bytes));
    Page& slot = durable_[index];
    // Flushes complete in the order they were asked for, so the medium never
    // holds a newer version than a later snapshot carries.
    MQ_ASSERT(slot.data == nullptr || slot.version <= page.version);
    slot = page;
    const auto cached = cache_.find(index);
    if (cached != cache_.end() && cached->second.version == page.version) dirty_.erase(index);
  }
  durable_size_ = snapshot.size_bytes;
  if (dirty()) dirtied_at_ = std::max(dirtied_at_, snapshot.taken_at);
  check_invariants();
}

TearResult Inode::lose_power(uint32_t sector_size, double torn_probability, env::Random& random) {
  MQ_ASSERT(sector_size > 0);
  MQ_ASSERT(kPageSizeBytes % sector_size == 0);
  TearResult result;
  for (uint64_t index : dirty_) {
    const PageData& cached = *cache_.at(index).data;
    auto on_medium = durable_.find(index);
    for (uint64_t begin = 0; begin < kPageSizeBytes; begin += sector_size) {
      const PageData& medium = on_medium == durable_.end() ? kZeroPage : *on_medium->second.data;
      if (std::memcmp(cached.data() + begin, medium.data() + begin, sector_size) == 0) continue;
      // A sector past the durable size is invisible even if it landed: the
      // size that would expose it never reached the medium.
      const bool visible = index * kPageSizeBytes + begin < durable_size_;
      if (!visible || !random.chance(torn_probability)) {
        result.lost_bytes += sector_size;
        continue;
      }
      if (on_medium == durable_.end()) on_medium = durable_.emplace(index, zero_page(0)).first;
      std::memcpy(own(on_medium->second).data() + begin, cached.data() + begin, sector_size);
      ++result.torn_sectors;
    }
  }
  in_flight_ = 0;
  cut_pages(durable_, durable_size_);  // a torn sector may straddle the size
  cache_ = durable_;
  size_ = durable_size_;
  dirty_.clear();
  truncated_to_ = size_;
  reserved_pages_ = std::min(reserved_pages_, page_count(size_));
  recount_blocks();
  MQ_ASSERT(!dirty());
  check_invariants();
  return result;
}

void Inode::note_metadata_change(bool was_dirty, Nanos now) {
  if (!was_dirty && dirty()) dirtied_at_ = now;
}

void Inode::recount_blocks() {
  block_count_ = reserved_pages_ + count_pages_in(cache_, reserved_pages_, UINT64_MAX);
}

void Inode::check_invariants() const {
  MQ_ASSERT(cache_.empty() || cache_.rbegin()->first < page_count(size_));
  MQ_ASSERT(durable_.empty() || durable_.rbegin()->first < page_count(durable_size_));
  // The newest dirty page is cached; it is mostly the last page (an append),
  // found without a search.
  MQ_ASSERT(dirty_.empty() || find_near_last(cache_, *dirty_.rbegin()) != cache_.end());
  MQ_ASSERT(truncated_to_ <= size_);
  MQ_ASSERT(block_count_ >= reserved_pages_);
  MQ_ASSERT(block_count_ <= reserved_pages_ + cache_.size());
}

}  // namespace mqlab::sim
