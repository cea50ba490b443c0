// mqsim: runs scenario files on the deterministic simulator.
//   mqsim run FILE [--cell CELL] [--seed N] [--json OUT] [--trace OUT]
//   mqsim replay FILE [--cell CELL] --seed N --trace OUT
//   mqsim sweep FILE --seeds A-B [--jobs J] [--shard i/n] [--json OUT]
//   mqsim compare [FILE] [--seeds A-B] [--jobs J] [--shard i/n] [--out DIR] [--no-render]
//   mqsim merge OUT IN...   (sweep reports; or compare report.json files, OUT a folder)
//   mqsim shrink FILE --seed N
//   mqsim check HISTORY... [--scenario FILE] [--group G]... [--json OUT]
// Exit status: 0 when every run passed (converged, expectations held), 1 when
// one failed, 2 for bad arguments or a bad scenario file.
#include "sim/huge_page_heap.h"
#include "sim/mqsim_commands.h"

int main(int argc, char** argv) {
  mqlab::sim::use_huge_pages_for_the_heap();  // fewer page faults (sim/huge_page_heap.h)
  return mqlab::sim::mqsim_main(argc, argv);
}
