#include "sim/huge_page_heap.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>

#include "broker/common/assert.h"

#if MQLAB_TCMALLOC
#include <gperftools/malloc_extension.h>
#endif

namespace mqlab::sim {
namespace {

std::atomic<size_t> reserved_bytes{0};

#if MQLAB_TCMALLOC

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kArena = size_t{64} << 20;

uintptr_t align_up(uintptr_t value, size_t alignment) {
  return (value + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
}

// tcmalloc calls Alloc under its page heap's lock, one call at a time; it
// must not allocate (malloc would take that lock again).
class HugePageSysAllocator final : public SysAllocator {
 public:
  explicit HugePageSysAllocator(SysAllocator* fallback) : fallback_(fallback) {}

  void* Alloc(size_t size, size_t* actual_size, size_t alignment) override {
    if (alignment < 4096) alignment = 4096;
    MQ_ASSERT((alignment & (alignment - 1)) == 0);
    uintptr_t at = align_up(next_, alignment);
    if (next_ == 0 || at + size > end_) {
      // A new arena; what is left of the last stays unused address space.
      const size_t length = size + alignment > kArena ? align_up(size + alignment, kHugePage) : kArena;
      void* const raw =
          ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (raw == MAP_FAILED) return fallback_ != nullptr ? fallback_->Alloc(size, actual_size, alignment) : nullptr;
      const uintptr_t base = align_up(reinterpret_cast<uintptr_t>(raw), kHugePage);
      // EINVAL without THP in the kernel: small pages, as before.
      (void)::madvise(reinterpret_cast<void*>(base), length, MADV_HUGEPAGE);
      next_ = base;
      end_ = base + length;
      reserved_bytes.fetch_add(length, std::memory_order_relaxed);
      at = align_up(next_, alignment);
      MQ_ASSERT(at + size <= end_);
    }
    next_ = at + size;
    if (actual_size != nullptr) *actual_size = size;
    return reinterpret_cast<void*>(at);
  }

 private:
  SysAllocator* const fallback_;
  uintptr_t next_ = 0;  // the current arena's first free byte, or 0 before the first
  uintptr_t end_ = 0;
};

#endif

}  // namespace

bool use_huge_pages_for_the_heap() {
#if MQLAB_TCMALLOC
  static const bool installed = [] {
    MallocExtension* const extension = MallocExtension::instance();
    // Never destroyed: tcmalloc keeps calling it until the process ends.
    static auto* const allocator = new HugePageSysAllocator(extension->GetSystemAllocator());
    extension->SetSystemAllocator(allocator);
    return true;
  }();
  return installed;
#else
  return false;
#endif
}

size_t huge_page_heap_reserved_bytes() { return reserved_bytes.load(std::memory_order_relaxed); }

}  // namespace mqlab::sim
