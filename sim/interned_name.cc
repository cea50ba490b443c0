#include "sim/interned_name.h"

#include <array>
#include <cstring>
#include <deque>
#include <limits>
#include <unordered_map>
#include <vector>

#include "broker/common/assert.h"
#include "broker/common/same_bytes.h"

namespace mqlab::sim {
namespace {

// The names, in first-seen order; a deque so a name's text never moves. The
// map is for lookup only (never iterated), keyed by views into the deque.
// by_index points into the deque too: a name is read far more often than
// one is added, and a vector's index is one load where a deque's is a
// division into its map of blocks.
// cache: names interned before, each in a slot chosen by a hash of its
// text, looked at before the map. A run interns the same names (its
// producers, brokers, groups, device keys) two or three times a message,
// and the map's hash and compare cost about 70 instructions an intern; a
// slot is two loads, two multiplies and a short compare. A name whose slot
// holds another goes to the map, and takes the slot.
struct NameTable {
  struct CachedName {
    std::string_view text;  // into texts; empty: an unused slot ("" is interned without a lookup)
    uint32_t index = 0;
  };
  static constexpr int kCacheBits = 10;  // a run's few dozen names rarely share a slot

  std::deque<std::string> texts{std::string()};
  std::unordered_map<std::string_view, uint32_t> index_of{{std::string_view(texts.front()), 0}};
  std::vector<const std::string*> by_index{&texts.front()};
  std::array<CachedName, size_t{1} << kCacheBits> cache{};

  // text's slot in cache: its first and last eight bytes (overlapping when
  // shorter than 16; a byte fold under 8) and its length, mixed.
  static size_t cache_slot(std::string_view text) {
    uint64_t head = 0;
    uint64_t tail = 0;
    if (text.size() >= sizeof(head)) {
      std::memcpy(&head, text.data(), sizeof(head));
      std::memcpy(&tail, text.data() + text.size() - sizeof(tail), sizeof(tail));
    } else {
      for (const char c : text) head = head * 131 + static_cast<unsigned char>(c);
    }
    const uint64_t mixed = (head ^ (tail * 0x9E3779B97F4A7C15ull) ^ text.size()) * 0xFF51AFD7ED558CCDull;
    return static_cast<size_t>(mixed >> (64 - kCacheBits));
  }

  void remember(size_t slot, uint32_t index) { cache[slot] = CachedName{*by_index[index], index}; }
};

[[gnu::always_inline]] inline NameTable& table() {
  static NameTable* names = new NameTable();  // never destroyed: names may be read during static teardown
  return *names;
}

}  // namespace

uint32_t InternedName::intern(std::string_view text) {
  if (text.empty()) return 0;
  NameTable& names = table();
  const size_t slot = NameTable::cache_slot(text);
  const NameTable::CachedName& cached = names.cache[slot];
  if (cached.text.size() == text.size() && same_bytes(cached.text.data(), text.data(), text.size())) {
    // The slot's view is its name's own text (so equal to text, just compared).
    MQ_ASSERT(cached.index < names.by_index.size() && names.by_index[cached.index]->data() == cached.text.data());
    return cached.index;
  }
  if (const auto it = names.index_of.find(text); it != names.index_of.end()) {
    names.remember(slot, it->second);
    return it->second;
  }
  MQ_ASSERT(names.texts.size() < std::numeric_limits<uint32_t>::max());
  const auto index = static_cast<uint32_t>(names.texts.size());
  names.texts.emplace_back(text);
  names.index_of.emplace(std::string_view(names.texts.back()), index);
  names.by_index.push_back(&names.texts.back());
  MQ_ASSERT(names.by_index.size() == names.texts.size());
  MQ_ASSERT(*names.by_index[index] == text);
  names.remember(slot, index);
  return index;
}

const std::string& InternedName::text_of(uint32_t index) {
  const NameTable& names = table();
  MQ_ASSERT(index < names.by_index.size());
  return *names.by_index[index];
}

}  // namespace mqlab::sim
