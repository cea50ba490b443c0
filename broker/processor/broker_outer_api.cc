#include "broker/processor/broker_outer_api.h"

#include <memory>
#include <utility>

#include "broker/common/crc32.h"
#include "broker/common/log.h"
#include "broker/remoting/request_code.h"
#include "broker/remoting/response_code.h"

namespace mqlab::broker {
namespace {

constexpr const char* kBrokerOuterApiLog = "broker";

// UtilAll.crc32: java.util.zip.CRC32 masked to a non-negative int.
int32_t masked_crc32(const std::vector<uint8_t>& body) {
  return static_cast<int32_t>(crc32_ieee(0, body) & 0x7FFFFFFF);
}

}  // namespace

remoting::TopicConfig to_wire_topic_config(const meta::TopicConfig& config) {
  remoting::TopicConfig wire;
  wire.topicName = config.topicName;
  wire.readQueueNums = config.readQueueNums;
  wire.writeQueueNums = config.writeQueueNums;
  wire.perm = config.perm;
  wire.topicFilterType = config.topicFilterType;
  wire.topicSysFlag = config.topicSysFlag;
  wire.order = config.order;
  return wire;
}

remoting::TopicConfigSerializeWrapper topic_config_wrapper(const meta::TopicConfigManager& topics,
                                                           int32_t broker_permission) {
  remoting::TopicConfigSerializeWrapper wrapper;
  const bool restricted =
      !meta::PermName::is_readable(broker_permission) || !meta::PermName::is_writeable(broker_permission);
  for (const auto& [name, config] : topics.all()) {
    remoting::TopicConfig wire = to_wire_topic_config(config);
    if (restricted) wire.perm &= broker_permission;
    wrapper.topicConfigTable.emplace(name, std::move(wire));
  }
  wrapper.dataVersion.timestamp = topics.data_version().timestamp;
  wrapper.dataVersion.counter = topics.data_version().counter;
  MQ_ASSERT(wrapper.topicConfigTable.size() == topics.all().size());
  return wrapper;
}

BrokerOuterAPI::BrokerOuterAPI(env::Env& env, const BrokerConfig& config) : env_(env), config_(config), client_(env) {}

void BrokerOuterAPI::register_broker_all(const remoting::TopicConfigSerializeWrapper& wrapper, Done done) {
  remoting::RemotingCommand request = remoting::RemotingCommand::make_request(remoting::RequestCode::REGISTER_BROKER);
  remoting::RegisterBrokerBody body;
  body.topicConfigSerializeWrapper = wrapper;
  const std::string json = body.to_json();
  request.body.assign(json.begin(), json.end());
  request.set_ext_string("brokerName", config_.brokerName);
  request.set_ext_string("brokerAddr", config_.broker_addr());
  request.set_ext_string("clusterName", config_.brokerClusterName);
  request.set_ext_string("haServerAddr", config_.ha_server_addr());
  request.set_ext_int("brokerId", config_.brokerId);
  request.set_ext_bool("compressed", false);
  request.set_ext_int("bodyCrc32", masked_crc32(request.body));
  MQ_ASSERT(request.version >= 37);  // V3_0_11: the NameServer reads RegisterBrokerBody
  invoke_all(request, "REGISTER_BROKER", std::move(done));
}

void BrokerOuterAPI::unregister_broker_all(Done done) {
  remoting::RemotingCommand request = remoting::RemotingCommand::make_request(remoting::RequestCode::UNREGISTER_BROKER);
  request.set_ext_string("brokerName", config_.brokerName);
  request.set_ext_string("brokerAddr", config_.broker_addr());
  request.set_ext_string("clusterName", config_.brokerClusterName);
  request.set_ext_int("brokerId", config_.brokerId);
  invoke_all(request, "UNREGISTER_BROKER", std::move(done));
}

// The outcomes of one call to every NameServer, collected as they come.
struct BrokerOuterAPI::Pending {
  std::vector<RegistrationOutcome> outcomes;
  size_t remaining = 0;
  bool registering = false;
  const char* what = "";
  Done done;
};

void BrokerOuterAPI::invoke_all(const remoting::RemotingCommand& request, const char* what, Done done) {
  const std::vector<std::string> addrs = config_.namesrv_addrs();
  auto pending = std::make_shared<Pending>();
  pending->outcomes.resize(addrs.size());
  pending->remaining = addrs.size();
  pending->registering = request.code == remoting::RequestCode::REGISTER_BROKER;
  pending->what = what;
  pending->done = std::move(done);
  if (addrs.empty()) {
    if (pending->done) env_.executor().post([pending] { pending->done({}); });
    return;
  }
  const Nanos timeout = millis(config_.registerBrokerTimeoutMills);
  for (size_t i = 0; i < addrs.size(); ++i) {
    pending->outcomes[i].namesrv_addr = addrs[i];
    if (pending->registering) ++stats_.registrations_sent;
    client_.invoke(addrs[i], request, timeout,
                   lifetime_.guard([this, pending, i](Result<remoting::RemotingCommand> response) {
                     on_response(*pending, i, std::move(response));
                   }));
  }
}

void BrokerOuterAPI::on_response(Pending& pending, size_t index, Result<remoting::RemotingCommand> response) {
  MQ_ASSERT(index < pending.outcomes.size());
  MQ_ASSERT(pending.remaining > 0);
  Status status = response.status();
  if (response.ok() && response->code != remoting::ResponseCode::SUCCESS) {
    status = Status::Unavailable(remoting::describe_response_code(response->code) + " " + response->remark);
  }
  RegistrationOutcome& outcome = pending.outcomes[index];
  if (!status.ok()) {
    MQ_LOG(kWarn, kBrokerOuterApiLog, pending.what << " to " << outcome.namesrv_addr << " failed: " << status.to_string());
  }
  if (pending.registering) ++(status.ok() ? stats_.registrations_ok : stats_.registrations_failed);
  if (pending.registering && status.ok()) {
    outcome.master_addr = response->optional_ext_string("masterAddr").value_or("");
    outcome.ha_server_addr = response->optional_ext_string("haServerAddr").value_or("");
  }
  outcome.status = std::move(status);
  if (--pending.remaining == 0 && pending.done) pending.done(std::move(pending.outcomes));
}

}  // namespace mqlab::broker
