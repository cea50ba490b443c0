// Merging sweep reports (`mqsim merge OUT IN...`): the shards of one sweep,
// spread over machines by a job runner, become the report one unsharded
// sweep would have written (sim/sweep_report.h).
//
// The merged report covers the whole of its inputs' seed ranges (it is no
// shard): seeds that no input ran, say a shard whose job died, are listed as
// missing, and the merge does not pass.
//
// Only reports of one scenario file (equal scenario hashes) and one mqlab
// version merge: anything else would mix answers to different questions. A
// seed found in several inputs must have the same verdict and digests in
// each (the same scenario and seed always run the same way; a difference is
// nondeterminism) and then counts once, so merging two sweeps of the same
// seeds doubles as a determinism check.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::sim {

// inputs: (file name, parsed report) pairs, named in errors. InvalidArgument
// when one is not a sweep report, or they must not be merged (see above).
Result<nlohmann::json> merge_sweep_reports(const std::vector<std::pair<std::string, nlohmann::json>>& inputs);

}  // namespace mqlab::sim
