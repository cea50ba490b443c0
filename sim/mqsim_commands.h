// The mqsim command line (sim/app/mqsim.cc is its thin main): run, replay,
// compare (a matrix into a report folder, sim/compare.h),
// sweep (sharded, parallel by process), merge, shrink, and check (a real
// run's history files, sim/history_check.h).
#pragma once

namespace mqlab::sim {

int mqsim_main(int argc, char** argv);

}  // namespace mqlab::sim
