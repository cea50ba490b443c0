#include "sim/telemetry.h"

#include <nlohmann/json.hpp>

namespace mqlab::sim {
namespace {
// Parameter names and flags as the sample device reports them.
struct Parameter {
  const char* name;
  const char* flag;
  const char* id;
};
constexpr Parameter kParameters[] = {
    {"电池状态", "s_247055", "3161740"},
    {"PCS失联", "s_247053", "3161738"},
    {"BMS失联", "s_247054", "3161739"},
    {"SOC", "s_247060", "3161745"},
};
}  // namespace

TelemetryDevice telemetry_device(int index) {
  TelemetryDevice device;
  device.device_id = std::to_string(51782 + index);
  device.device_name = "EMS-从-重庆乾岷光学" + std::to_string(2 + index);
  device.region_id = std::to_string(5726 + index % 7);
  device.project_id = std::to_string(5441 + index % 3);
  return device;
}

std::string telemetry_body(env::Random& random, const TelemetryDevice& device, int64_t seq, int64_t timestamp_ms) {
  nlohmann::json params = nlohmann::json::array();
  for (const Parameter& p : kParameters) {
    const double value = static_cast<double>(random.uniform(1000)) / 10.0;
    params.push_back({{"qs", 0},
                      {"realValue", value},
                      {"flag", p.flag},
                      {"unitName", ""},
                      {"realQs", 0},
                      {"dataType", "AI"},
                      {"isString", false},
                      {"newProtocol", true},
                      {"id", p.id},
                      {"paramName", p.name},
                      {"value", value}});
  }
  nlohmann::json report = {
      {"deviceType", {{"id", 9091}, {"name", "EMS-从-pf"}}},
      {"errorParamNum", 0},
      {"controllerId", "ECS000" + device.device_id},
      {"modifyStatus", 0},
      {"regionName", "重庆乾岷光学"},
      {"jsonParams", params},
      {"oldOffline", false},
      {"deviceId", device.device_id},
      {"deviceName", device.device_name},
      {"errorTimeSum", 0},
      {"runTimeSum", 44309707476 + seq * 1000},
      {"offline", false},
      {"warnEventSum", static_cast<int>(random.uniform(3))},
      {"regionId", device.region_id},
      {"warnParamNum", 0},
      {"errorEventSum", 0},
      {"projectId", device.project_id},
      {"status", 0},
      {"seq", seq},
      {"timestamp", timestamp_ms},
  };
  return report.dump();
}

}  // namespace mqlab::sim
