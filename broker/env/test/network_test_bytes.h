// What the Network implementations' tests (AsioNetwork, LoopbackNetwork,
// SimNet) send and compare: text as bytes, a test pattern, and a read-only
// in-memory File for send_file_region().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/common/assert.h"
#include "broker/env/env.h"

namespace mqlab::env::nettest {

inline std::vector<uint8_t> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

// Byte i of a test pattern: not periodic in any power of two, so a shifted,
// dropped or repeated chunk shows.
inline std::vector<uint8_t> pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + seed) % 251);
  return bytes;
}

// A file in memory, enough for send_file_region(). It is not a PosixFile, so
// AsioNetwork sends its regions through the pread fallback.
class BytesFile final : public File {
 public:
  explicit BytesFile(std::vector<uint8_t> data) : data_(std::move(data)) {}
  const std::string& path() const override { return path_; }
  Status pwrite(uint64_t, std::span<const uint8_t>) override { return Status::IoError("read-only"); }
  Result<size_t> pread(uint64_t offset, std::span<uint8_t> out) override {
    if (offset >= data_.size()) return size_t{0};
    const size_t size = std::min<size_t>(out.size(), data_.size() - offset);
    std::copy_n(data_.begin() + static_cast<ptrdiff_t>(offset), size, out.begin());
    return size;
  }
  Status truncate(uint64_t) override { return Status::IoError("read-only"); }
  Result<uint64_t> size() override { return static_cast<uint64_t>(data_.size()); }
  Status allocate(uint64_t) override { return Status::IoError("read-only"); }
  void sync(SyncCallback) override { MQ_UNREACHABLE("not synced in these tests"); }

 private:
  const std::string path_ = "/memory/commitlog";
  std::vector<uint8_t> data_;
};

}  // namespace mqlab::env::nettest
