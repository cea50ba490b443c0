// Topic administration: updateTopic, topicList, topicRoute, topicStatus
// (RocketMQ's tools/command/topic/*SubCommand.java, same options, same
// output layout).
#include <algorithm>
#include <memory>
#include <ostream>

#include <nlohmann/json.hpp>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"
#include "broker/client/mix_all.h"

namespace mqlab::admin_cli {
namespace {

// PermName.perm2String: "RW-", "R--", ...
std::string perm_text(int32_t perm) {
  std::string text = "---";
  if ((perm & client::kPermRead) != 0) text[0] = 'R';
  if ((perm & client::kPermWrite) != 0) text[1] = 'W';
  if ((perm & client::kPermInherit) != 0) text[2] = 'X';
  return text;
}

// TopicConfig.toString(), which updateTopic prints after creating.
std::string topic_config_text(const remoting::TopicConfig& config) {
  return strprintf(
      "TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=%s, "
      "topicSysFlag=%d, order=%s]",
      config.topicName.c_str(), config.readQueueNums, config.writeQueueNums, perm_text(config.perm).c_str(),
      config.topicFilterType.c_str(), config.topicSysFlag, config.order ? "true" : "false");
}

Result<remoting::TopicConfig> topic_config_from(const ParsedOptions& options) {
  remoting::TopicConfig config;
  config.topicName = options.value_or("topic", "");
  // UpdateTopicSubCommand's defaults: 8 and 8, perm RW.
  MQ_ASSIGN_OR_RETURN(const int64_t read, options.integer("readQueueNums", 8, 1, 1024));
  MQ_ASSIGN_OR_RETURN(const int64_t write, options.integer("writeQueueNums", 8, 1, 1024));
  MQ_ASSIGN_OR_RETURN(const int64_t perm, options.integer("perm", 6, 0, 7));
  MQ_ASSIGN_OR_RETURN(config.order, options.boolean("order", false));
  if (config.topicName.empty()) return Status::InvalidArgument("-t,--topic is empty");
  config.readQueueNums = static_cast<int32_t>(read);
  config.writeQueueNums = static_cast<int32_t>(write);
  config.perm = static_cast<int32_t>(perm);
  return config;
}

// The master of every broker group of cluster, sorted by group name.
std::vector<std::string> master_addresses(const client::api::ClusterInfo& info, const std::string& cluster) {
  std::vector<std::string> masters;
  const auto names = info.clusterAddrTable.find(cluster);
  if (names == info.clusterAddrTable.end()) return masters;
  for (const std::string& name : names->second) {  // a std::set: sorted
    const auto broker = info.brokerAddrTable.find(name);
    if (broker == info.brokerAddrTable.end()) continue;
    const auto master = broker->second.brokerAddrs.find(client::kMasterId);
    if (master != broker->second.brokerAddrs.end()) masters.push_back(master->second);
  }
  return masters;
}

void create_on(Invocation& inv, std::vector<std::string> addresses, const remoting::TopicConfig& config) {
  std::vector<std::pair<std::string, RemotingCommand>> requests;
  for (const std::string& address : addresses) {
    requests.emplace_back(address, client::api::build_update_and_create_topic(config));
  }
  fan_out(inv.instance(), std::move(requests), inv.guard([&inv, addresses, config](Answers answers) {
    Status first_error;
    for (size_t i = 0; i < answers.size(); ++i) {
      Status status = answers[i].ok() ? client::api::response_status(*answers[i], "UPDATE_AND_CREATE_TOPIC")
                                      : answers[i].status();
      if (status.ok()) {
        inv.out() << "create topic to " << addresses[i] << " success.\n";
      } else if (first_error.ok()) {
        first_error = status.with_context("create topic " + config.topicName + " on " + addresses[i]);
      }
    }
    if (!first_error.ok()) return inv.fail(first_error);
    inv.out() << topic_config_text(config) << "\n";
    inv.succeed();
  }));
}

void execute_update_topic(Invocation& inv) {
  const ParsedOptions& options = inv.options();
  Result<remoting::TopicConfig> config = topic_config_from(options);
  if (!config.ok()) return inv.usage_error(config.status().message());
  if (options.has("brokerAddr") == options.has("clusterName")) {
    return inv.usage_error("give exactly one of -b brokerAddr and -c clusterName");
  }
  if (options.has("brokerAddr")) return create_on(inv, {*options.value("brokerAddr")}, *config);
  const std::string cluster = *options.value("clusterName");
  fetch_cluster_info(inv.instance(), inv.guard([&inv, cluster, config = *config](Result<client::api::ClusterInfo> info) {
    if (!info.ok()) return inv.fail(info.status());
    std::vector<std::string> masters = master_addresses(*info, cluster);
    if (masters.empty()) return inv.fail(Status::NotFound("cluster " + cluster + " has no master broker"));
    create_on(inv, std::move(masters), config);
  }));
}

// One line of `topicList -c`: a topic, its cluster, one consuming group.
struct TopicClusterRow {
  std::string topic;
  std::string cluster;
  std::vector<std::string> groups;  // empty: printed as one line with no group
};

// The cluster whose broker groups include brokerName ("" when none does).
std::string cluster_of(const client::api::ClusterInfo& info, const std::string& broker_name) {
  for (const auto& [cluster, names] : info.clusterAddrTable) {
    if (names.contains(broker_name)) return cluster;
  }
  return "";
}

void print_cluster_rows(Invocation& inv, const std::vector<TopicClusterRow>& rows) {
  constexpr const char* kFormat = "%-20s  %-48s  %-48s\n";
  inv.out() << strprintf(kFormat, "#Cluster Name", "#Topic", "#Consumer Group");
  for (const TopicClusterRow& row : rows) {
    if (row.groups.empty()) inv.out() << strprintf(kFormat, row.cluster.c_str(), row.topic.c_str(), "");
    for (const std::string& group : row.groups) {
      inv.out() << strprintf(kFormat, row.cluster.c_str(), row.topic.c_str(), group.c_str());
    }
  }
}

// Fills rows[index] (its cluster from the topic's route, its groups from
// QUERY_TOPIC_CONSUME_BY_WHO to the route's first broker group), then the
// next. As RocketMQ's TopicListSubCommand, a topic whose route or groups
// cannot be read still gets its line, with those columns empty.
void examine_topic(Invocation& inv, std::shared_ptr<std::vector<TopicClusterRow>> rows, size_t index,
                   std::shared_ptr<const client::api::ClusterInfo> cluster) {
  if (index == rows->size()) {
    print_cluster_rows(inv, *rows);
    return inv.succeed();
  }
  const std::string topic = (*rows)[index].topic;
  fetch_topic_route(inv.instance(), topic,
                    inv.guard([&inv, rows, index, cluster, topic](Result<remoting::TopicRouteData> route) {
    std::vector<std::pair<std::string, RemotingCommand>> requests;
    if (route.ok() && !route->brokerDatas.empty()) {
      const remoting::BrokerData& first = route->brokerDatas.front();
      (*rows)[index].cluster = first.cluster.empty() ? cluster_of(*cluster, first.brokerName) : first.cluster;
      const std::string address = select_broker_addr(first);
      if (!address.empty()) requests.emplace_back(address, build_query_topic_consume_by_who(topic));
    }
    fan_out(inv.instance(), std::move(requests), inv.guard([&inv, rows, index, cluster](Answers answers) {
      if (!answers.empty() && answers.front().ok()) {
        Result<std::vector<std::string>> groups = parse_group_list(*answers.front());
        if (groups.ok()) (*rows)[index].groups = std::move(*groups);
      }
      examine_topic(inv, rows, index + 1, cluster);
    }));
  }));
}

void execute_topic_list(Invocation& inv) {
  const bool cluster_model = inv.options().has("clusterModel");
  inv.instance().invoke_namesrv(
      build_get_all_topic_list(), inv.instance().api_timeout(),
      inv.guard([&inv, cluster_model](Result<RemotingCommand> response) {
        if (!response.ok()) return inv.fail(response.status());
        Result<std::vector<std::string>> topics = parse_topic_list(*response);
        if (!topics.ok()) return inv.fail(topics.status());
        if (!cluster_model) {
          for (const std::string& topic : *topics) inv.out() << topic << "\n";
          return inv.succeed();
        }
        // Retry and dead-letter topics belong to groups, not to users: RocketMQ skips them here.
        auto rows = std::make_shared<std::vector<TopicClusterRow>>();
        std::vector<std::string> sorted = std::move(*topics);
        std::sort(sorted.begin(), sorted.end());
        for (std::string& topic : sorted) {
          if (topic.starts_with(client::kRetryGroupTopicPrefix) || topic.starts_with(client::kDlqGroupTopicPrefix)) {
            continue;
          }
          rows->push_back({.topic = std::move(topic)});
        }
        fetch_cluster_info(inv.instance(), inv.guard([&inv, rows](Result<client::api::ClusterInfo> info) {
          if (!info.ok()) return inv.fail(info.status());
          examine_topic(inv, rows, 0, std::make_shared<const client::api::ClusterInfo>(std::move(*info)));
        }));
      }));
}

void execute_topic_route(Invocation& inv) {
  const std::string topic = *inv.options().value("topic");
  fetch_topic_route(inv.instance(), topic, inv.guard([&inv](Result<remoting::TopicRouteData> route) {
    if (!route.ok()) return inv.fail(route.status());
    // TopicRouteData.toJson(true): fastjson's pretty form, tab-indented.
    inv.out() << nlohmann::json::parse(route->to_json()).dump(1, '\t') << "\n";
    inv.succeed();
  }));
}

void print_topic_status(Invocation& inv, std::vector<TopicOffset> offsets) {
  std::sort(offsets.begin(), offsets.end(), [](const TopicOffset& a, const TopicOffset& b) {
    return std::tie(a.brokerName, a.queueId) < std::tie(b.brokerName, b.queueId);
  });
  inv.out() << strprintf("%-32s  %-4s  %-20s  %-20s    %s\n", "#Broker Name", "#QID", "#Min Offset", "#Max Offset",
                         "#Last Updated");
  for (const TopicOffset& offset : offsets) {
    const std::string updated = offset.lastUpdateTimestamp > 0 ? human_time_ms(offset.lastUpdateTimestamp) : "";
    inv.out() << strprintf("%-32s  %-4d  %-20lld  %-20lld    %s\n", offset.brokerName.c_str(), offset.queueId,
                           static_cast<long long>(offset.minOffset), static_cast<long long>(offset.maxOffset),
                           updated.c_str());
  }
}

void execute_topic_status(Invocation& inv) {
  const std::string topic = *inv.options().value("topic");
  fetch_topic_route(inv.instance(), topic, inv.guard([&inv, topic](Result<remoting::TopicRouteData> route) {
    if (!route.ok()) return inv.fail(route.status());
    std::vector<std::pair<std::string, RemotingCommand>> requests;
    for (const remoting::BrokerData& broker : route->brokerDatas) {
      const std::string address = select_broker_addr(broker);
      if (!address.empty()) requests.emplace_back(address, build_get_topic_stats_info(topic));
    }
    fan_out(inv.instance(), std::move(requests), inv.guard([&inv](Answers answers) {
      std::vector<TopicOffset> offsets;
      for (Result<RemotingCommand>& answer : answers) {
        Result<std::vector<TopicOffset>> parsed = answer.ok() ? parse_topic_stats(*answer) : answer.status();
        if (!parsed.ok()) return inv.fail(parsed.status());
        offsets.insert(offsets.end(), parsed->begin(), parsed->end());
      }
      print_topic_status(inv, std::move(offsets));
      inv.succeed();
    }));
  }));
}

OptionSpec topic_option(std::string description = "topic name") {
  return {'t', "topic", "topic", std::move(description), true};
}

}  // namespace

Command update_topic_command() {
  return {"updateTopic",
          "Update or create topic",
          {
              {'b', "brokerAddr", "brokerAddr", "create topic to which broker"},
              {'c', "clusterName", "clusterName", "create topic to which cluster"},
              topic_option(),
              {'r', "readQueueNums", "readQueueNums", "set read queue nums (default 8)"},
              {'w', "writeQueueNums", "writeQueueNums", "set write queue nums (default 8)"},
              {'p', "perm", "perm", "set topic's permission(2|4|6), intro[2:W 4:R; 6:RW] (default 6)"},
              {'o', "order", "true|false", "set topic's order (default false)"},
          },
          execute_update_topic,
          default_time_limit};
}

Command topic_list_command() {
  return {"topicList",
          "Fetch all topic list from name server",
          {{'c', "clusterModel", "", "one line per topic and consumer group, with the topic's cluster"}},
          execute_topic_list,
          default_time_limit};
}

Command topic_route_command() {
  return {"topicRoute", "Examine topic route info", {topic_option()}, execute_topic_route, default_time_limit};
}

Command topic_status_command() {
  return {"topicStatus", "Examine topic Status info", {topic_option()}, execute_topic_status, default_time_limit};
}

}  // namespace mqlab::admin_cli
