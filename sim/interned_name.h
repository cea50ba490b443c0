// InternedName: a name from a small, fixed vocabulary (a producer, a consumer,
// a consumer group, a broker group, a device key) stored as a 4-byte index
// into a process-wide table of the distinct names seen so far. History keeps
// one per send and per receipt, millions in a long run: a std::string costs
// 32 bytes (plus a heap block past 15 characters) where this costs 4.
//
// It reads as the string it names: it converts to const std::string& and
// std::string_view, and compares and orders by the text, never by the
// index, so nothing that sorts or prints names can tell it from a string.
// The index depends on the order names were first seen in this process
// (several runs may share it), which is why it never leaves this class.
//
// Invariants: the table only grows; a name's text never moves (references
// stay valid for the life of the process); equal texts have equal indexes.
// Not thread-safe: the simulator is single-threaded (sweeps fork).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace mqlab::sim {

class InternedName {
 public:
  InternedName() = default;  // the empty name
  InternedName(const char* text) : InternedName(std::string_view(text)) {}  // NOLINT: literals read as names
  InternedName(std::string_view text) : index_(intern(text)) {}            // NOLINT: as a string would
  // Explicit: an implicit std::string -> InternedName would make
  // `some_string == name` ambiguous with the string_view comparison below.
  explicit InternedName(const std::string& text) : InternedName(std::string_view(text)) {}

  InternedName& operator=(std::string_view text) { return *this = InternedName(text); }
  InternedName& operator=(const std::string& text) { return *this = InternedName(std::string_view(text)); }
  InternedName& operator=(const char* text) { return *this = InternedName(std::string_view(text)); }

  const std::string& str() const { return text_of(index_); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as a string
  operator std::string_view() const { return str(); }    // NOLINT: reads as a string
  bool empty() const { return index_ == 0; }
  // The name's place in the table: equal names, equal ids. An order of its
  // own (first interned first), for a map that needs an order, not the text's.
  uint32_t id() const { return index_; }
  size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }

  friend bool operator==(const InternedName& a, const InternedName& b) { return a.index_ == b.index_; }
  friend bool operator==(const InternedName& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const InternedName& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const InternedName& a, const InternedName& b) {
    return a.index_ == b.index_ ? std::strong_ordering::equal : a.str().compare(b.str()) <=> 0;
  }

 private:
  static uint32_t intern(std::string_view text);
  static const std::string& text_of(uint32_t index);

  uint32_t index_ = 0;  // 0 is "", interned first
};

}  // namespace mqlab::sim
