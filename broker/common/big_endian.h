// Big-endian integer encoding: every RocketMQ on-disk and wire integer is
// big-endian (Java ByteBuffer's default).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/append_text.h"
#include "broker/common/assert.h"

namespace mqlab {

inline void put_u16_be(uint8_t* out, uint16_t v) {
  out[0] = static_cast<uint8_t>(v >> 8);
  out[1] = static_cast<uint8_t>(v);
}
inline void put_u32_be(uint8_t* out, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
inline void put_u64_be(uint8_t* out, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
inline uint16_t get_u16_be(const uint8_t* in) { return static_cast<uint16_t>((in[0] << 8) | in[1]); }
inline uint32_t get_u32_be(const uint8_t* in) {
  return (uint32_t{in[0]} << 24) | (uint32_t{in[1]} << 16) | (uint32_t{in[2]} << 8) | uint32_t{in[3]};
}
inline uint64_t get_u64_be(const uint8_t* in) {
  return (uint64_t{get_u32_be(in)} << 32) | uint64_t{get_u32_be(in + 4)};
}
inline int32_t get_i32_be(const uint8_t* in) { return static_cast<int32_t>(get_u32_be(in)); }
inline int64_t get_i64_be(const uint8_t* in) { return static_cast<int64_t>(get_u64_be(in)); }

// Appends big-endian fields to a growing byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { grow(2, [&](uint8_t* p) { put_u16_be(p, v); }); }
  void u32(uint32_t v) { grow(4, [&](uint8_t* p) { put_u32_be(p, v); }); }
  void u64(uint64_t v) { grow(8, [&](uint8_t* p) { put_u64_be(p, v); }); }
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void bytes(std::string_view s) { append_text(s, out_); }

 private:
  template <typename F>
  void grow(size_t n, F&& f) {
    const size_t at = out_.size();
    out_.resize(at + n);
    f(out_.data() + at);
  }
  std::vector<uint8_t>& out_;
};

// Reads big-endian fields with bounds checks; a read past the end sets failed()
// instead of asserting, because the bytes come from outside.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}
  bool failed() const { return failed_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return failed_ ? 0 : in_.size() - pos_; }
  uint8_t u8() { return take(1) ? in_[pos_ - 1] : 0; }
  uint16_t u16() { return take(2) ? get_u16_be(&in_[pos_ - 2]) : 0; }
  uint32_t u32() { return take(4) ? get_u32_be(&in_[pos_ - 4]) : 0; }
  uint64_t u64() { return take(8) ? get_u64_be(&in_[pos_ - 8]) : 0; }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::span<const uint8_t> bytes(size_t n) {
    if (!take(n)) return {};
    return in_.subspan(pos_ - n, n);
  }

 private:
  bool take(size_t n) {
    if (failed_ || in_.size() - pos_ < n) {
      failed_ = true;
      return false;
    }
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace mqlab
