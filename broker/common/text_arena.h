// TextArena: append-only storage for short-lived text that string_views
// point into, such as a decoded command's extFields (remoting/ext_fields.h).
//
// Text handed out stays where it is until clear() or destruction, whatever
// is allocated after it, and moving the arena moves none of it: views taken
// before a move still see their bytes afterwards. That is what lets a
// decoder copy a header once and keep every field as a view into the copy,
// instead of building a string per field.
//
// Freed blocks of up to kReusedBlockBytes are kept, a few per thread, for
// the next arena that needs one (a ReuseShelf): every frame that arrives is
// decoded into an arena of about a kilobyte (its header's copy and its
// fields), which lives until the frame is handled, four a simulated message;
// a block handed from one to the next skips the allocator's bookkeeping
// both ways. Blocks are interchangeable memory from operator new, so which
// thread frees one does not matter.
//
// Invariants: blocks form a chain from the newest (top_) to the oldest; in
// each, used <= capacity. The shelf holds at most kReusedBlocks blocks, each
// of at most kReusedBlockBytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "broker/common/assert.h"
#include "broker/common/reuse_shelf.h"

namespace mqlab {

class TextArena {
 public:
  TextArena() = default;
  TextArena(TextArena&& other) noexcept : top_(std::exchange(other.top_, nullptr)) {}
  TextArena& operator=(TextArena&& other) noexcept {
    if (this != &other) {
      clear();
      top_ = std::exchange(other.top_, nullptr);
    }
    return *this;
  }
  TextArena(const TextArena&) = delete;
  TextArena& operator=(const TextArena&) = delete;
  ~TextArena() { clear(); }

  // size bytes of storage (uninitialised) that stay put until clear().
  char* allocate(size_t size) {
    if (top_ == nullptr || top_->capacity - top_->used < size) push_block(size);
    char* const bytes = bytes_of(top_) + top_->used;
    top_->used += size;
    MQ_ASSERT(top_->used <= top_->capacity);
    return bytes;
  }

  // size bytes at a multiple of alignment (a power of two, at most 8: a
  // table of views kept with the text it views).
  char* allocate_aligned(size_t size, size_t alignment) {
    MQ_ASSERT(alignment > 0 && alignment <= alignof(Block) && (alignment & (alignment - 1)) == 0);
    const auto padding = [&] { return (alignment - top_->used % alignment) % alignment; };
    if (top_ == nullptr || top_->capacity - top_->used < size + padding()) push_block(size);
    top_->used += padding();
    char* const bytes = allocate(size);
    MQ_ASSERT(reinterpret_cast<uintptr_t>(bytes) % alignment == 0);
    return bytes;
  }

  // Room for size more bytes in the newest block, so that allocations
  // adding up to it (aligned ones counted with their padding) take one
  // block: a decoder's table and header copy in one allocation.
  void reserve(size_t size) {
    if (top_ == nullptr || top_->capacity - top_->used < size) push_block(size);
  }

  // A copy of text, here.
  std::string_view copy(std::string_view text) {
    if (text.empty()) return {};
    char* const bytes = allocate(text.size());
    std::memcpy(bytes, text.data(), text.size());
    return {bytes, text.size()};
  }

  // Frees every block: views into them dangle from here on.
  void clear() {
    while (top_ != nullptr) {
      Block* const previous = top_->previous;
      release(top_);
      top_ = previous;
    }
  }

  bool empty() const { return top_ == nullptr; }

  // None under AddressSanitizer (reuse_shelf.h).
  static constexpr size_t kReusedBlocks = kReuseFreedMemory ? 8 : 0;

 private:
  struct Block {
    Block* previous;
    size_t capacity;
    size_t used;
  };
  // Blocks come from operator new (aligned for any scalar) and their bytes
  // follow the header, so a block's first byte is 8-aligned.
  static_assert(sizeof(Block) % alignof(Block) == 0 && alignof(Block) == 8);
  // The smallest block: a built command's handful of short fields in one.
  static constexpr size_t kMinimumBlockBytes = 256;

  static char* bytes_of(Block* block) { return reinterpret_cast<char*>(block + 1); }

  // A block with room for size bytes and at least twice the last block, so
  // a map filled field by field allocates O(log n) times; a decoder's copy
  // of a header (a few hundred bytes) takes one.
  void push_block(size_t size) {
    const size_t grown = top_ == nullptr ? kMinimumBlockBytes : 2 * top_->capacity;
    const size_t capacity = std::max(size, grown);
    OwnedBlock reused;
    if (block_shelf().take([capacity](const OwnedBlock& kept) { return kept->capacity >= capacity; }, reused)) {
      Block* const block = reused.release();
      top_ = new (block) Block{top_, block->capacity, 0};
      return;
    }
    void* const memory = ::operator new(sizeof(Block) + capacity);
    top_ = new (memory) Block{top_, capacity, 0};
  }

  static constexpr size_t kReusedBlockBytes = 4096;

  // Blocks kept for reuse on this thread: freed by their owner's deleter
  // when the thread ends with them on the shelf.
  struct FreeBlock {
    void operator()(Block* block) const { ::operator delete(block); }
  };
  using OwnedBlock = std::unique_ptr<Block, FreeBlock>;
  static ReuseShelf<OwnedBlock, kReusedBlocks>& block_shelf() {
    thread_local ReuseShelf<OwnedBlock, kReusedBlocks> shelf;
    return shelf;
  }
  // Kept when small and the shelf has room; freed otherwise.
  static void release(Block* block) {
    OwnedBlock owned(block);
    if (owned->capacity <= kReusedBlockBytes) block_shelf().put(owned);
  }

  Block* top_ = nullptr;
};

}  // namespace mqlab
