// The --label of a benchmark (sim_bench, store_bench): the first word of its
// figures' names, which make bench sets to tell the profile-guided build's
// figures from the plain build's. A figure's name is the first word of its
// line (`name value unit [ratio=x.xx vs BASELINE]`), so a label is one word.
#pragma once

#include <string_view>

namespace mqlab::bench {

inline bool is_figure_label(std::string_view label) {
  return !label.empty() && label.find_first_of(" \t\n") == std::string_view::npos;
}

}  // namespace mqlab::bench
