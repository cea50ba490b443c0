// libFuzzer target: the broker.conf parser (broker/config/properties_file.h)
// and mqbroker's config loading (broker/config/broker_startup.h). Any text
// must give a config or errors naming file and line, never crash, and a
// loaded config must print (-p) to text that loads back into a config that
// prints the same: what the header of broker_startup.h promises.
// Seeds: fuzz/corpus/broker_conf/ (conf/**/*.conf).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "broker/common/assert.h"
#include "broker/common/log.h"
#include "broker/config/broker_startup.h"
#include "broker/config/properties_file.h"

namespace {

const mqlab::config::BrokerStartupEnvironment kEnvironment{
    .home_dir = "/home/mq", .working_dir = "/srv/mq", .namesrv_addr = ""};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mqlab::set_log_sink([](mqlab::LogLevel, std::string_view, std::string_view) {});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::set<std::string> keys = mqlab::config::broker_config_keys();
  (void)mqlab::config::parse_properties(text, "broker.conf", keys);

  mqlab::Result<mqlab::config::LoadedBrokerConfig> loaded =
      mqlab::config::load_broker_config(text, "broker.conf", kEnvironment, std::nullopt);
  if (!loaded.ok()) return 0;
  const std::string printed = mqlab::config::print_broker_config(loaded->config);
  mqlab::Result<mqlab::config::LoadedBrokerConfig> reloaded =
      mqlab::config::load_broker_config(printed, "printed.conf", kEnvironment, std::nullopt);
  MQ_ASSERT_MSG(reloaded.ok(), reloaded.status().to_string() + "\nprinted:\n" + printed);
  MQ_ASSERT_MSG(mqlab::config::print_broker_config(reloaded->config) == printed, printed);
  return 0;
}
