// The plan of a real run: what tools/mqrealrun.py needs to carry out a
// scenario on real processes, computed by the same code mqsim runs it with
// (the scenario loader, its machine naming, and the fault schedule of a
// seed: the fixed list plus that seed's nemesis draw), printed by `mqsim
// plan FILE --seed N` as JSON. So one scenario file drives both worlds and
// the driver parses no YAML.
//
// {"scenario", "seed", "duration_s", "liveness_bound_s",
//  "machines": [{"name", "role": broker|namesrv|client, "broker_group", "broker_id", "processes"}],
//  "broker_conf": {broker.conf key: value}   the masters' keys; slaves get brokerRole SLAVE
//  "client": {"default", ClientConfig key: value}   the scenario's client: section (for mqadmin perf's
//            --clientConfig); "default" when it sets nothing away from ClientConfig's defaults
//  "network": {"default", "latency_ms", "jitter_ms", "bandwidth_bytes_per_sec",
//              "default_bandwidth_bytes_per_sec", "loss_probability", "retransmission_timeout_ms",
//              "tcp_user_timeout_ms"}   the scenario's links (sim/scenario.h NetworkSpec)
//  "workload": {"topic", "queues_per_broker", "producers": {"count", "rate_per_sec", "message_size_bytes",
//               "send_timeout_ms", "retries"}, "consumer_groups": [{"name", "consumers"}]},
//  "faults": [{"index", "kind", "target", "at_s", "duration_s", "side_a", "side_b", "one_way", "describe"}],
//  "timeline": [{"at_s", "start", "fault_index"}]}   faults::timeline(): ends before starts at one instant
#pragma once

#include <nlohmann/json.hpp>

#include "faults/fault_schedule.h"
#include "sim/scenario.h"

namespace mqlab::sim {

nlohmann::json real_run_plan(const Scenario& scenario, uint64_t seed, const faults::FaultSchedule& schedule);
// The faults a run of scenario with seed injects (as SimWorld draws them).
faults::FaultSchedule seed_schedule(const Scenario& scenario, uint64_t seed);

}  // namespace mqlab::sim
