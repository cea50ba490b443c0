// consumerProgress -g group: how far a consumer group is behind, per queue
// (RocketMQ's ConsumerProgressSubCommand with -g). GET_CONSUME_STATS goes to
// every broker group of every cluster (its master, or a slave when the master
// is gone), since a group may have offsets anywhere; the rows are merged and
// sorted by topic, broker and queue. #Diff is the broker's max offset minus
// the group's committed offset; "Diff Total" sums it. RocketMQ's #Client IP
// needs the consumers' running info, which mqlab's clients do not serve, so
// it shows NA, as RocketMQ does for a queue no live client holds.
#include <algorithm>
#include <memory>
#include <ostream>

#include "broker/admin_cli/admin_requests.h"
#include "broker/admin_cli/command.h"
#include "broker/admin_cli/text_format.h"

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

void execute_consumer_progress(Invocation& inv) {
  const std::string group = *inv.options().value("groupName");
  const std::string topic = inv.options().value_or("topic", "");
  fetch_cluster_info(inv.instance(), inv.guard([&inv, group, topic](Result<client::api::ClusterInfo> info) {
    if (!info.ok()) return inv.fail(info.status());
    std::vector<std::pair<std::string, RemotingCommand>> requests;
    for (const auto& [name, broker] : info->brokerAddrTable) {
      const std::string address = select_broker_addr(broker);
      if (!address.empty()) requests.emplace_back(address, build_get_consume_stats(group, topic));
    }
    fan_out(inv.instance(), std::move(requests), inv.guard([&inv, group](Answers answers) {
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
              {'g', "groupName", "groupName", "consumer group name", true},
              {'t', "topic", "topic", "only this topic"},
          },
          execute_consumer_progress,
          default_time_limit};
}

}  // namespace mqlab::admin_cli
