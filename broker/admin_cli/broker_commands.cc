// Cluster and broker state: clusterList and brokerStatus (RocketMQ's
// ClusterListSubCommand and BrokerStatusSubCommand), both built on
// GET_BROKER_RUNTIME_INFO.
//
// clusterList keeps RocketMQ's first five columns. RocketMQ then prints
// per-minute TPS figures a broker keeps in its stats manager; mqlab's broker
// reports totals since boot instead (msgPutTotalTodayNow and
// msgGetTotalTodayNow), so the columns say #InTotal/#OutTotal, and #Role
// shows whether each address is a master or a slave. A broker that does not
// answer still gets its row (blank figures), the reason goes to stderr, and
// the exit code is 1, so a health-check script notices.
#include <cstdlib>
#include <memory>
#include <ostream>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"

namespace mqlab::admin_cli {
namespace {

struct BrokerAddress {
  std::string cluster;
  std::string broker_name;
  int64_t broker_id = 0;
  std::string address;
};

// Every address of every broker group, by cluster, group name, then id.
std::vector<BrokerAddress> all_addresses(const client::api::ClusterInfo& info, const std::string& only_cluster) {
  std::vector<BrokerAddress> out;
  for (const auto& [cluster, names] : info.clusterAddrTable) {
    if (!only_cluster.empty() && cluster != only_cluster) continue;
    for (const std::string& name : names) {
      const auto broker = info.brokerAddrTable.find(name);
      if (broker == info.brokerAddrTable.end()) continue;
      for (const auto& [id, address] : broker->second.brokerAddrs) out.push_back({cluster, name, id, address});
    }
  }
  return out;
}

std::vector<std::pair<std::string, RemotingCommand>> runtime_info_requests(const std::vector<BrokerAddress>& brokers) {
  std::vector<std::pair<std::string, RemotingCommand>> requests;
  for (const BrokerAddress& broker : brokers) requests.emplace_back(broker.address, build_get_broker_runtime_info());
  return requests;
}

std::string lookup(const std::map<std::string, std::string>& table, const std::string& key) {
  const auto found = table.find(key);
  return found == table.end() ? "" : found->second;
}

std::string space_text(const std::string& ratio) {
  if (ratio.empty()) return "";
  char* end = nullptr;
  const double value = std::strtod(ratio.c_str(), &end);
  return end == ratio.c_str() ? ratio : strprintf("%.4f", value);
}

void print_cluster_list(Invocation& inv, const std::vector<BrokerAddress>& brokers, Answers& answers) {
  inv.out() << strprintf("%-16s  %-22s  %-4s  %-22s %-16s %-12s %14s %14s %6s\n", "#Cluster Name", "#Broker Name",
                         "#BID", "#Addr", "#Version", "#Role", "#InTotal", "#OutTotal", "#SPACE");
  Status first_error;
  for (size_t i = 0; i < brokers.size(); ++i) {
    const BrokerAddress& broker = brokers[i];
    Result<std::map<std::string, std::string>> table =
        answers[i].ok() ? parse_kv_table(*answers[i]) : Result<std::map<std::string, std::string>>(answers[i].status());
    std::map<std::string, std::string> values;
    if (table.ok()) {
      values = std::move(table).value();
    } else {
      inv.err() << "mqadmin clusterList: " << broker.address << ": " << table.status().message() << "\n";
      if (first_error.ok()) first_error = table.status().with_context(broker.address);
    }
    inv.out() << strprintf("%-16s  %-22s  %-4lld  %-22s %-16s %-12s %14s %14s %6s\n", broker.cluster.c_str(),
                           broker.broker_name.c_str(), static_cast<long long>(broker.broker_id),
                           broker.address.c_str(), lookup(values, "brokerVersionDesc").c_str(),
                           lookup(values, "brokerRole").c_str(), lookup(values, "msgPutTotalTodayNow").c_str(),
                           lookup(values, "msgGetTotalTodayNow").c_str(),
                           space_text(lookup(values, "commitLogDiskRatio")).c_str());
  }
  first_error.ok() ? inv.succeed() : inv.finish(kExitFailed);
}

void execute_cluster_list(Invocation& inv) {
  fetch_cluster_info(inv.instance(), inv.guard([&inv](Result<client::api::ClusterInfo> info) {
    if (!info.ok()) return inv.fail(info.status());
    auto brokers = std::make_shared<std::vector<BrokerAddress>>(all_addresses(*info, ""));
    fan_out(inv.instance(), runtime_info_requests(*brokers),
            inv.guard([&inv, brokers](Answers answers) { print_cluster_list(inv, *brokers, answers); }));
  }));
}

// BrokerStatusSubCommand's layouts: "%-32s: %s" for one broker, the address
// in front for a whole cluster.
void print_broker_status(Invocation& inv, const std::vector<BrokerAddress>& brokers, Answers& answers, bool prefixed) {
  Status first_error;
  for (size_t i = 0; i < brokers.size(); ++i) {
    Result<std::map<std::string, std::string>> table =
        answers[i].ok() ? parse_kv_table(*answers[i]) : Result<std::map<std::string, std::string>>(answers[i].status());
    if (!table.ok()) {
      if (first_error.ok()) first_error = table.status().with_context(brokers[i].address);
      continue;
    }
    for (const auto& [key, value] : *table) {
      inv.out() << (prefixed ? strprintf("%-24s %-32s: %s\n", brokers[i].address.c_str(), key.c_str(), value.c_str())
                             : strprintf("%-32s: %s\n", key.c_str(), value.c_str()));
    }
  }
  first_error.ok() ? inv.succeed() : inv.fail(first_error);
}

void broker_status_of(Invocation& inv, std::vector<BrokerAddress> brokers, bool prefixed) {
  auto shared = std::make_shared<std::vector<BrokerAddress>>(std::move(brokers));
  fan_out(inv.instance(), runtime_info_requests(*shared), inv.guard([&inv, shared, prefixed](Answers answers) {
            print_broker_status(inv, *shared, answers, prefixed);
          }));
}

void execute_broker_status(Invocation& inv) {
  const ParsedOptions& options = inv.options();
  if (options.has("brokerAddr") == options.has("clusterName")) {
    return inv.usage_error("give exactly one of -b brokerAddr and -c clusterName");
  }
  if (options.has("brokerAddr")) {
    return broker_status_of(inv, {BrokerAddress{"", "", 0, *options.value("brokerAddr")}}, false);
  }
  const std::string cluster = *options.value("clusterName");
  fetch_cluster_info(inv.instance(), inv.guard([&inv, cluster](Result<client::api::ClusterInfo> info) {
    if (!info.ok()) return inv.fail(info.status());
    std::vector<BrokerAddress> brokers = all_addresses(*info, cluster);
    if (brokers.empty()) return inv.fail(Status::NotFound("cluster " + cluster + " has no broker"));
    broker_status_of(inv, std::move(brokers), true);
  }));
}

}  // namespace

Command cluster_list_command() {
  return {"clusterList", "List all of clusters", {}, execute_cluster_list, default_time_limit};
}

Command broker_status_command() {
  Command command{"brokerStatus",
                  "Fetch broker runtime status data",
                  {
                      {'b', "brokerAddr", "brokerAddr", "Broker address"},
                      {'c', "clusterName", "clusterName", "which cluster"},
                  },
                  execute_broker_status,
                  default_time_limit};
  command.needs_namesrv = false;  // -b alone asks the broker directly
  return command;
}

}  // namespace mqlab::admin_cli
