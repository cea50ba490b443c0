#include "broker/common/byte_buffer_pool.h"

#include <array>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab {
namespace {

constexpr size_t kSmallestByteBuffer = 1024;

// This thread's kept vectors, each empty, with room; the last given back
// is last (a take moves the last into the hole it leaves).
struct KeptByteBuffers {
  std::array<std::vector<uint8_t>, kKeptByteBuffers> buffers;
  size_t count = 0;
};

KeptByteBuffers& kept_byte_buffers() {
  thread_local KeptByteBuffers kept;
  return kept;
}

}  // namespace

std::vector<uint8_t> take_byte_buffer(size_t capacity) {
  KeptByteBuffers& kept = kept_byte_buffers();
  for (size_t i = kept.count; i-- > 0;) {
    if (kept.buffers[i].capacity() < capacity) continue;
    std::vector<uint8_t> buffer = std::move(kept.buffers[i]);
    // The last kept one fills the hole: order among the rest barely matters.
    if (i != kept.count - 1) kept.buffers[i] = std::move(kept.buffers[kept.count - 1]);
    --kept.count;
    MQ_ASSERT(buffer.empty());
    return buffer;
  }
  // New ones get room in powers of two from kSmallestByteBuffer: the
  // frames of a message's path (a few hundred bytes to a kilobyte or two)
  // then come back in a few sizes, each fitting the next of its kind and
  // most fitting any.
  size_t room = kSmallestByteBuffer;
  while (room < capacity) room *= 2;
  std::vector<uint8_t> buffer;
  buffer.reserve(room);
  return buffer;
}

void give_back_byte_buffer(std::vector<uint8_t>&& buffer) {
  KeptByteBuffers& kept = kept_byte_buffers();
  if (buffer.capacity() == 0 || buffer.capacity() > kKeptByteBufferBytes || kept.count == kKeptByteBuffers) {
    std::vector<uint8_t>().swap(buffer);
    return;
  }
  buffer.clear();
  kept.buffers[kept.count++] = std::move(buffer);
  buffer.clear();  // moved from: empty, as the header says, whatever the library leaves
}

}  // namespace mqlab
