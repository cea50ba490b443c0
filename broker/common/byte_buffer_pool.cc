#include "broker/common/byte_buffer_pool.h"

namespace mqlab::byte_buffer_pool_detail {
namespace {

constexpr size_t kSmallestByteBuffer = 1024;

}  // namespace

std::vector<uint8_t> new_byte_buffer(size_t capacity) {
  std::vector<uint8_t> buffer;
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

}  // namespace mqlab::byte_buffer_pool_detail
