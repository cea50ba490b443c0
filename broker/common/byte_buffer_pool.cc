#include "broker/common/byte_buffer_pool.h"

#include <utility>

#include "broker/common/assert.h"
#include "broker/common/reuse_shelf.h"

namespace mqlab {
namespace {

constexpr size_t kSmallestByteBuffer = 1024;

// This thread's kept vectors, each empty, with room.
ReuseShelf<std::vector<uint8_t>, kKeptByteBuffers>& kept_byte_buffers() {
  thread_local ReuseShelf<std::vector<uint8_t>, kKeptByteBuffers> kept;
  return kept;
}

}  // namespace

std::vector<uint8_t> take_byte_buffer(size_t capacity) {
  std::vector<uint8_t> buffer;
  if (kept_byte_buffers().take([capacity](const std::vector<uint8_t>& kept) { return kept.capacity() >= capacity; },
                               buffer)) {
    MQ_ASSERT(buffer.empty());
    return buffer;
  }
  // One the pool would not keep gets its own size: rounded up, a 4 MiB
  // message's body or a big pull's frame took twice its bytes, only to be
  // freed once read.
  if (capacity > kKeptByteBufferBytes) {
    buffer.reserve(capacity);
    return buffer;
  }
  // New ones get room in powers of two from kSmallestByteBuffer: the
  // frames of a message's path (a few hundred bytes to a kilobyte or two)
  // then come back in a few sizes, each fitting the next of its kind and
  // most fitting any.
  size_t room = kSmallestByteBuffer;
  while (room < capacity) room *= 2;
  buffer.reserve(room);
  return buffer;
}

void give_back_byte_buffer(std::vector<uint8_t>&& buffer) {
  buffer.clear();
  if (buffer.capacity() == 0 || buffer.capacity() > kKeptByteBufferBytes || !kept_byte_buffers().put(buffer)) {
    std::vector<uint8_t>().swap(buffer);  // not kept: freed now
    return;
  }
  buffer.clear();  // moved from: empty, as the header says, whatever the library leaves
}

}  // namespace mqlab
