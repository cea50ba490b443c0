// Merging compare reports (`mqsim merge OUT IN...` given report.json files of
// `mqsim compare --shard i/n`): the shards of one compare, spread over
// machines or processes, become the report one unsharded compare writes
// (sim/compare_report.h), which OUT then holds as a report folder.
//
// As with sweeps (sim/sweep_merge.h): only reports of one matrix file (equal
// scenario hashes and matrices) and one mqlab version merge; a (cell, seed)
// found in several inputs must have the same verdict and digests in each,
// and then counts once; runs that no input has are listed as missing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/status.h"

namespace mqlab::sim {

// Whether document is a compare report (its "report" key says so).
bool is_compare_report(const nlohmann::json& document);

// inputs: (file name, parsed report) pairs, named in errors. InvalidArgument
// when one is not a compare report, or they must not be merged.
Result<nlohmann::json> merge_compare_reports(const std::vector<std::pair<std::string, nlohmann::json>>& inputs);

}  // namespace mqlab::sim
