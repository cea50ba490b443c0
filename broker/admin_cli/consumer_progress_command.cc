// consumerProgress: how far consumer groups are behind (RocketMQ's
// ConsumerProgressSubCommand).
//
// With -g group: per queue. GET_CONSUME_STATS goes to every broker group of
// every cluster (its master, or a slave when the master is gone), since a
// group may have offsets anywhere; the rows are merged and sorted by topic,
// broker and queue. #Diff is the broker's max offset minus the group's
// committed offset; "Diff Total" sums it. RocketMQ's #Client IP needs the
// consumers' running info, which mqlab's clients do not serve, so it shows
// NA, as RocketMQ does for a queue no live client holds.
//
// Without -g: one line per group, the groups being those with a retry topic
// (%RETRY%G, created by the first heartbeat), as RocketMQ finds them: live
// client count, the oldest client's version ("OFFLINE" without clients),
// PUSH/PULL, the message model, TPS and the group's Diff Total. Sorted by
// client count, then diff, both descending (GroupConsumeInfo.compareTo).
#include <algorithm>
#include <memory>
#include <tuple>
#include <ostream>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"
#include "broker/client/mix_all.h"
#include "broker/remoting/remoting_command.h"

namespace mqlab::admin_cli {
namespace {

void print_progress(Invocation& inv, std::vector<OffsetWrapper> rows) {
  std::sort(rows.begin(), rows.end(), [](const OffsetWrapper& a, const OffsetWrapper& b) {
    return std::tie(a.topic, a.brokerName, a.queueId) < std::tie(b.topic, b.brokerName, b.queueId);
  });
  inv.out() << strprintf("%-32s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s  %s\n", "#Topic", "#Broker Name", "#QID",
                         "#Broker Offset", "#Consumer Offset", "#Client IP", "#Diff", "#LastTime");
  int64_t diff_total = 0;
  for (const OffsetWrapper& row : rows) {
    const int64_t diff = row.brokerOffset - row.consumerOffset;
    diff_total += diff;
    const std::string last = row.lastTimestamp > 0 ? human_time_ms(row.lastTimestamp) : "";
    inv.out() << strprintf("%-32s  %-32s  %-4d  %-20lld  %-20lld  %-20s %-20lld  %s\n", row.topic.c_str(),
                           row.brokerName.c_str(), row.queueId, static_cast<long long>(row.brokerOffset),
                           static_cast<long long>(row.consumerOffset), "NA", static_cast<long long>(diff),
                           last.c_str());
  }
  inv.out() << "\n" << strprintf("Diff Total: %lld\n", static_cast<long long>(diff_total));
}

// GET_CONSUME_STATS for group to every broker group of the cluster info.
std::vector<std::pair<std::string, RemotingCommand>> consume_stats_requests(const client::api::ClusterInfo& info,
                                                                            const std::string& group,
                                                                            const std::string& topic) {
  std::vector<std::pair<std::string, RemotingCommand>> requests;
  for (const auto& [name, broker] : info.brokerAddrTable) {  // a std::map: sorted
    const std::string address = select_broker_addr(broker);
    if (!address.empty()) requests.emplace_back(address, build_get_consume_stats(group, topic));
  }
  return requests;
}

// One line of the all-groups form (RocketMQ's GroupConsumeInfo).
struct GroupConsumeInfo {
  std::string group;
  size_t count = 0;
  int32_t version = 0;
  std::string consume_type;
  std::string message_model;
  int64_t diff_total = 0;
};

// MQVersion.getVersionDesc for the release mqlab speaks; other ordinals as numbers.
std::string version_desc(int32_t ordinal) {
  return ordinal == remoting::kDefaultVersion ? "V4_9_7" : "ordinal " + std::to_string(ordinal);
}

void print_groups(Invocation& inv, std::vector<GroupConsumeInfo> groups) {
  std::sort(groups.begin(), groups.end(), [](const GroupConsumeInfo& a, const GroupConsumeInfo& b) {
    return std::tie(b.count, b.diff_total, a.group) < std::tie(a.count, a.diff_total, b.group);
  });
  inv.out() << strprintf("%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s\n", "#Group", "#Count", "#Version", "#Type",
                         "#Model", "#TPS", "#Diff Total");
  for (const GroupConsumeInfo& info : groups) {
    const bool online = info.count > 0;
    const bool push = info.consume_type == "CONSUME_PASSIVELY";
    const std::string type = !online ? "" : (push ? "PUSH" : "PULL");
    const std::string model = online && push ? info.message_model : "";
    inv.out() << strprintf("%-64s  %-6zu  %-24s %-5s  %-14s  %-7d  %lld\n", info.group.c_str(), info.count,
                           online ? version_desc(info.version).c_str() : "OFFLINE", type.c_str(), model.c_str(), 0,
                           static_cast<long long>(info.diff_total));
  }
}

// Fills groups[index] and goes on with the next; prints when all are done.
// One group at a time keeps the requests in flight few, as RocketMQ's loop does.
void examine_group(Invocation& inv, std::shared_ptr<std::vector<GroupConsumeInfo>> groups, size_t index,
                   std::shared_ptr<const client::api::ClusterInfo> cluster) {
  if (index == groups->size()) {
    print_groups(inv, std::move(*groups));
    return inv.succeed();
  }
  const std::string group = (*groups)[index].group;
  fan_out(inv.instance(), consume_stats_requests(*cluster, group, ""),
          inv.guard([&inv, groups, index, cluster, group](Answers answers) {
            for (Result<RemotingCommand>& answer : answers) {
              // As RocketMQ: a broker that cannot answer leaves the group's line without its share.
              Result<std::vector<OffsetWrapper>> rows = answer.ok() ? parse_consume_stats(*answer) : answer.status();
              if (!rows.ok()) continue;
              for (const OffsetWrapper& row : *rows) (*groups)[index].diff_total += row.brokerOffset - row.consumerOffset;
            }
            fetch_topic_route(inv.instance(), client::retry_topic(group),
                              inv.guard([&inv, groups, index, cluster](Result<remoting::TopicRouteData> route) {
              std::string address;
              if (route.ok() && !route->brokerDatas.empty()) address = select_broker_addr(route->brokerDatas.front());
              std::vector<std::pair<std::string, RemotingCommand>> requests;
              if (!address.empty()) {
                requests.emplace_back(address, build_get_consumer_connection_list((*groups)[index].group));
              }
              fan_out(inv.instance(), std::move(requests),
                      inv.guard([&inv, groups, index, cluster](Answers connection) {
                        GroupConsumeInfo& info = (*groups)[index];
                        if (!connection.empty() && connection.front().ok()) {
                          Result<ConsumerConnection> parsed = parse_consumer_connection(*connection.front());
                          if (parsed.ok()) {
                            info.count = parsed->connections;
                            info.version = parsed->min_version;
                            info.consume_type = parsed->consumeType;
                            info.message_model = parsed->messageModel;
                          }
                        }
                        examine_group(inv, groups, index + 1, cluster);
                      }));
            }));
          }));
}

void execute_all_groups_progress(Invocation& inv) {
  inv.instance().invoke_namesrv(
      build_get_all_topic_list(), inv.instance().api_timeout(), inv.guard([&inv](Result<RemotingCommand> response) {
        if (!response.ok()) return inv.fail(response.status());
        Result<std::vector<std::string>> topics = parse_topic_list(*response);
        if (!topics.ok()) return inv.fail(topics.status());
        auto groups = std::make_shared<std::vector<GroupConsumeInfo>>();
        for (const std::string& topic : *topics) {
          if (!client::is_retry_topic(topic)) continue;
          groups->push_back({.group = topic.substr(client::kRetryGroupTopicPrefix.size())});
        }
        fetch_cluster_info(inv.instance(), inv.guard([&inv, groups](Result<client::api::ClusterInfo> info) {
          if (!info.ok()) return inv.fail(info.status());
          examine_group(inv, groups, 0, std::make_shared<const client::api::ClusterInfo>(std::move(*info)));
        }));
      }));
}

void execute_consumer_progress(Invocation& inv) {
  if (!inv.options().has("groupName")) {
    if (inv.options().has("topic")) return inv.usage_error("-t,--topic needs -g,--groupName");
    return execute_all_groups_progress(inv);
  }
  const std::string group = *inv.options().value("groupName");
  const std::string topic = inv.options().value_or("topic", "");
  fetch_cluster_info(inv.instance(), inv.guard([&inv, group, topic](Result<client::api::ClusterInfo> info) {
    if (!info.ok()) return inv.fail(info.status());
    fan_out(inv.instance(), consume_stats_requests(*info, group, topic), inv.guard([&inv, group](Answers answers) {
      std::vector<OffsetWrapper> rows;
      for (Result<RemotingCommand>& answer : answers) {
        Result<std::vector<OffsetWrapper>> parsed = answer.ok() ? parse_consume_stats(*answer) : answer.status();
        if (!parsed.ok()) return inv.fail(parsed.status());
        rows.insert(rows.end(), parsed->begin(), parsed->end());
      }
      if (rows.empty()) {
        return inv.fail(Status::NotFound("no consume stats for group " + group +
                                         ": it has committed no offset on any broker (or subscribes to nothing)"));
      }
      print_progress(inv, std::move(rows));
      inv.succeed();
    }));
  }));
}

}  // namespace

Command consumer_progress_command() {
  return {"consumerProgress",
          "Query consumers's progress, speed",
          {
              {'g', "groupName", "groupName", "consumer group name (all groups when absent)"},
              {'t', "topic", "topic", "only this topic"},
          },
          execute_consumer_progress,
          default_time_limit};
}

}  // namespace mqlab::admin_cli
