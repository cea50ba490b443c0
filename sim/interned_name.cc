#include "sim/interned_name.h"

#include <deque>
#include <limits>
#include <unordered_map>
#include <vector>

#include "broker/common/assert.h"

namespace mqlab::sim {
namespace {

// The names, in first-seen order; a deque so a name's text never moves. The
// map is for lookup only (never iterated), keyed by views into the deque.
// by_index points into the deque too: a name is read far more often than
// one is added, and a vector's index is one load where a deque's is a
// division into its map of blocks.
struct NameTable {
  std::deque<std::string> texts{std::string()};
  std::unordered_map<std::string_view, uint32_t> index_of{{std::string_view(texts.front()), 0}};
  std::vector<const std::string*> by_index{&texts.front()};
};

NameTable& table() {
  static NameTable* names = new NameTable();  // never destroyed: names may be read during static teardown
  return *names;
}

}  // namespace

uint32_t InternedName::intern(std::string_view text) {
  if (text.empty()) return 0;
  NameTable& names = table();
  if (const auto it = names.index_of.find(text); it != names.index_of.end()) return it->second;
  MQ_ASSERT(names.texts.size() < std::numeric_limits<uint32_t>::max());
  const auto index = static_cast<uint32_t>(names.texts.size());
  names.texts.emplace_back(text);
  names.index_of.emplace(std::string_view(names.texts.back()), index);
  names.by_index.push_back(&names.texts.back());
  MQ_ASSERT(names.by_index.size() == names.texts.size());
  MQ_ASSERT(*names.by_index[index] == text);
  return index;
}

const std::string& InternedName::text_of(uint32_t index) {
  const NameTable& names = table();
  MQ_ASSERT(index < names.by_index.size());
  return *names.by_index[index];
}

}  // namespace mqlab::sim
