// LineageMemo: what a processor parsed from the latest extFields table of
// each of a few lineages (ExtFieldsLineage, ext_fields.h), so that it parses
// only the values that changed in the next table of the same lineage.
//
// Why: a producer's SEND_MESSAGE_V2 headers differ from one to the next in
// a queue id, a timestamp and the properties; a consumer's PULL_MESSAGE
// headers in a queue id and two offsets. Parsing every field of every
// request (a walk over a dozen names, then a number parse each) cost about
// 1,200 instructions a send and 1,500 a pull, 3.7% of a simulator run.
//
// A memo is a hint, never a source of truth: a table of no lineage, of a
// lineage not kept, or not the very next of the one kept is parsed in full,
// and a reader that fails on a changed value forgets the entry and parses in
// full, so the error is the one the full parse gives. Entries are few
// (kSlots): a broker's connections each make their own lineages, and the
// least recently followed one makes room.
//
// Invariants: no two slots hold one lineage id; a slot whose id is 0 is
// free.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "broker/common/assert.h"
#include "broker/remoting/ext_fields.h"

namespace mqlab::remoting {

template <typename Entry, size_t kSlots = 8>
class LineageMemo {
 public:
  // The entry made from the table just before fields in its lineage, now
  // taken to stand for fields (the caller reads the changed values into it,
  // or forgets it); null when there is none.
  Entry* follow(const ExtFields& fields) {
    const ExtFieldsLineage& lineage = fields.lineage();
    if (lineage.id == 0) return nullptr;
    for (Slot& slot : slots_) {
      if (slot.id != lineage.id) continue;
      if (slot.index + 1 != lineage.index) {
        slot.id = 0;  // a table of the lineage went by unseen
        return nullptr;
      }
      slot.index = lineage.index;
      slot.used = ++uses_;
      return &slot.entry;
    }
    return nullptr;
  }

  // The entry to fill from fields, a table parsed in full, or null when it
  // has no lineage. The lineage's slot when it has one, else a free or the
  // least recently followed one.
  Entry* start(const ExtFields& fields) {
    const ExtFieldsLineage& lineage = fields.lineage();
    if (lineage.id == 0) return nullptr;
    // Whether a makes room before b: a free slot first, then the least
    // recently used.
    const auto sooner = [](const Slot& a, const Slot& b) {
      return (a.id == 0) != (b.id == 0) ? a.id == 0 : a.used < b.used;
    };
    Slot* chosen = nullptr;
    for (Slot& slot : slots_) {
      if (slot.id == lineage.id) {
        chosen = &slot;
        break;
      }
      if (chosen == nullptr || sooner(slot, *chosen)) chosen = &slot;
    }
    chosen->id = lineage.id;
    chosen->index = lineage.index;
    chosen->used = ++uses_;
    return &chosen->entry;
  }

  // Drops the entry of fields' lineage, if kept (a value would not parse).
  void forget(const ExtFields& fields) {
    const uint64_t id = fields.lineage().id;
    if (id == 0) return;
    for (Slot& slot : slots_) {
      if (slot.id == id) slot.id = 0;
    }
  }

  // Lineages kept now, for tests.
  size_t size() const {
    size_t count = 0;
    for (const Slot& slot : slots_) count += slot.id != 0 ? 1 : 0;
    return count;
  }

 private:
  struct Slot {
    uint64_t id = 0;
    uint64_t index = 0;
    uint64_t used = 0;  // uses_ when last started or followed
    Entry entry{};
  };

  std::array<Slot, kSlots> slots_{};
  uint64_t uses_ = 0;
};

// Calls visit(place) for each place whose bit is set in changed, lowest first.
template <typename Visit>
void for_each_changed_place(uint32_t changed, Visit&& visit) {
  while (changed != 0) {
    const int place = __builtin_ctz(changed);
    visit(static_cast<size_t>(place));
    changed &= changed - 1;
  }
}

}  // namespace mqlab::remoting
