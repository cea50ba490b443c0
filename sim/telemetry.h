// Device telemetry bodies: what this broker carries in the field. Modelled on
// shared/docs/sample-telemetry.json, an energy-storage device's status report
// (device id and name, region, project, parameters with flag, value and
// quality, run time, a millisecond timestamp), with values drawn from the
// run's seeded Random so key queries and compression see realistic data.
#pragma once

#include <cstdint>
#include <string>

#include "broker/env/random.h"

namespace mqlab::sim {

struct TelemetryDevice {
  std::string device_id;    // "51782": the message key
  std::string device_name;  // "EMS-从-重庆乾岷光学2"
  std::string region_id;
  std::string project_id;
};

// The index-th device of a fleet; the same index gives the same device.
TelemetryDevice telemetry_device(int index);

// One status report as JSON (UTF-8). seq is embedded so a checker can match
// a received body to the send that produced it.
std::string telemetry_body(env::Random& random, const TelemetryDevice& device, int64_t seq, int64_t timestamp_ms);

}  // namespace mqlab::sim
