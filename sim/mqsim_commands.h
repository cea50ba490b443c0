// The mqsim command line (sim/app/mqsim.cc is its thin main): run, replay,
// compare (a matrix into a report folder, sim/compare.h),
// sweep (sharded, parallel by process), merge and shrink.
#pragma once

namespace mqlab::sim {

int mqsim_main(int argc, char** argv);

}  // namespace mqlab::sim
