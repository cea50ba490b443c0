// assign_text: a string set to a view's bytes, in the room it has.
//
// std::string::assign(const char*, size_t) (and operator= from a view) goes
// to _M_replace, a general replace that first works out whether the source
// lies inside the string: about 85 instructions a call before the copy.
// A message's path sets a dozen short texts this way (a topic, a message
// id, a properties text), most into strings that keep their room from the
// message before. clear() then append() is a length store and a copy when
// the text fits; a text inside the string itself takes assign's path.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mqlab {

inline void assign_text(std::string& to, std::string_view text) {
  // std::less: a total order even for pointers into different objects.
  const std::less<const char*> before;
  const bool inside = !before(text.data(), to.data()) && before(text.data(), to.data() + to.size() + 1);
  if (inside) {
    to.assign(text.data(), text.size());
    return;
  }
  to.clear();
  to.append(text.data(), text.size());
}

}  // namespace mqlab
