// The simulator's heap in transparent huge pages (2 MiB).
//
// A simulated run grows its heap to tens of MiB (the simulated disks'
// bytes, the History's records, the brokers' tables), and every 4 KiB page
// of it faults when first touched. On a shadow-paging VM (this machine,
// 2026-12-06) a first touch costs about 10 us a page, half of it hidden in
// the touching instruction's user time: 9,300 faults, about a tenth of the
// standard scenario's second. Huge pages fault once per 2 MiB (0.3 us a
// 4 KiB page measured here once the kernel has them to give).
//
// How: tcmalloc (every program links it, CMakeLists.txt) takes its memory
// from the system through a pluggable SysAllocator; this one hands out
// 2 MiB-aligned 64 MiB arenas of address space (MAP_NORESERVE: nothing is
// backed until touched) marked MADV_HUGEPAGE, so the kernel backs them with
// huge pages where THP is "always" or "madvise". With THP "never", without
// tcmalloc (a sanitizer build) or when a reservation fails, memory comes as
// before. Addresses change, nothing else: the simulator never orders by an
// address (same trace digests).
//
// Process-wide and for programs' main() only (mqsim, sim_bench), before
// the work starts. The price: the peak RSS counts whole huge pages (45 ->
// 48 MiB for the standard scenario).
#pragma once

#include <cstddef>

namespace mqlab::sim {

// Installs the huge-page system allocator; returns whether it did (false
// without tcmalloc). Calling again does nothing more.
bool use_huge_pages_for_the_heap();

// Address space reserved in arenas so far (tests).
size_t huge_page_heap_reserved_bytes();

}  // namespace mqlab::sim
