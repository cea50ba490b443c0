// The huge-page heap: installed where tcmalloc is linked; large blocks come
// from its arenas, which the kernel sees as advised for huge pages
// (/proc/self/smaps' THPeligible), and hold what is written to them.
#include "sim/huge_page_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#if MQLAB_TCMALLOC
#include <gperftools/malloc_extension.h>
#endif

namespace mqlab::sim {
namespace {

// The mode /sys/kernel/mm/transparent_hugepage/enabled selects ("always",
// "madvise", "never"), or empty when the kernel has no THP.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = text.find('['), close = text.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : text.substr(open + 1, close - open - 1);
}

// The THPeligible value of the /proc/self/smaps mapping holding address, or -1.
int thp_eligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

TEST(HugePageHeap, LargeBlocksComeFromArenasAdvisedForHugePages) {
  if (!MQLAB_TCMALLOC) GTEST_SKIP() << "no tcmalloc in this build (a sanitizer's allocator)";
  ASSERT_TRUE(use_huge_pages_for_the_heap());
  EXPECT_TRUE(use_huge_pages_for_the_heap());  // again: nothing more
  // 16 MiB more than tcmalloc holds free or returned to the system, so it
  // must ask the system: the tests before this one in the same process
  // (the whole sim_test binary run at once, not ctest's process a test)
  // may have freed large blocks, which a fixed 16 MiB came from.
  size_t held = 0;
#if MQLAB_TCMALLOC
  for (const char* property : {"tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes"}) {
    size_t bytes = 0;
    if (MallocExtension::instance()->GetNumericProperty(property, &bytes)) held += bytes;
  }
#endif
  const size_t size = held + (size_t{16} << 20);
  const size_t reserved = huge_page_heap_reserved_bytes();
  auto block = std::make_unique<uint8_t[]>(size);
  for (size_t i = 0; i < size; i += 4096) block[i] = static_cast<uint8_t>(i >> 12);
  for (size_t i = 0; i < size; i += 4096) ASSERT_EQ(block[i], static_cast<uint8_t>(i >> 12));
  EXPECT_GT(huge_page_heap_reserved_bytes(), reserved);
  const std::string mode = thp_mode();
  if (mode == "always" || mode == "madvise") {
    EXPECT_EQ(thp_eligible(block.get()), 1) << "THP " << mode;
  }
}

}  // namespace
}  // namespace mqlab::sim
