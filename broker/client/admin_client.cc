#include "broker/client/admin_client.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "broker/client/countdown.h"
#include "broker/client/mix_all.h"
#include "broker/remoting/request_code.h"

namespace mqlab::client {

using remoting::RemotingCommand;

namespace {

template <typename T, typename Done>
void post_result(env::Env& env, Done done, Result<T> result) {
  env.executor().post([done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

// Queues of a route: per broker group, ids 0..count-1 where count is picked
// from the queueData (read, or the larger of read and write).
template <typename Count>
std::vector<MessageQueue> route_queues(const std::string& topic, const remoting::TopicRouteData& route, Count count) {
  std::vector<MessageQueue> queues;
  for (const remoting::QueueData& queue_data : route.queueDatas) {
    for (int32_t id = 0; id < count(queue_data); ++id) queues.push_back({topic, queue_data.brokerName, id});
  }
  std::sort(queues.begin(), queues.end());
  return queues;
}

}  // namespace

int64_t ConsumerProgress::total_lag() const {
  int64_t total = 0;
  for (const QueueProgress& queue : queues) total += queue.lag();
  return total;
}

void AdminClient::cluster_list(std::function<void(Result<api::ClusterInfo>)> done) {
  instance_.invoke_namesrv(api::build_get_broker_cluster_info(), instance_.api_timeout(),
                           [done = std::move(done)](Result<RemotingCommand> response) {
                             if (!response.ok()) return done(response.status().with_context("GET_BROKER_CLUSTER_INFO"));
                             done(api::parse_broker_cluster_info(*response));
                           });
}

void AdminClient::create_topic(const std::string& cluster, remoting::TopicConfig config, StatusCallback done) {
  cluster_list(lifetime_.guard([this, cluster, config = std::move(config),
                                done = std::move(done)](Result<api::ClusterInfo> info) mutable {
    if (!info.ok()) return done(info.status());
    create_topic_on_masters(*info, cluster, config, std::move(done));
  }));
}

void AdminClient::create_topic_on_masters(const api::ClusterInfo& info, const std::string& cluster,
                                          const remoting::TopicConfig& config, StatusCallback done) {
  std::vector<std::string> masters;
  if (const auto names = info.clusterAddrTable.find(cluster); names != info.clusterAddrTable.end()) {
    for (const std::string& name : names->second) {
      const auto broker = info.brokerAddrTable.find(name);
      if (broker == info.brokerAddrTable.end()) continue;
      const auto master = broker->second.brokerAddrs.find(kMasterId);
      if (master != broker->second.brokerAddrs.end()) masters.push_back(master->second);
    }
  }
  if (masters.empty()) {
    instance_.env().executor().post([done = std::move(done), cluster] {
      done(Status::NotFound("cluster " + cluster + " has no master broker"));
    });
    return;
  }
  auto first_error = std::make_shared<Status>();
  auto arrive = make_countdown(masters.size(), [done = std::move(done), first_error] { done(*first_error); });
  for (const std::string& master : masters) {
    instance_.remoting().invoke(master, api::build_update_and_create_topic(config), instance_.api_timeout(),
                                [arrive, first_error, master](Result<RemotingCommand> response) {
                                  Status status = response.ok()
                                                      ? api::response_status(*response, "UPDATE_AND_CREATE_TOPIC")
                                                      : response.status();
                                  if (!status.ok() && first_error->ok()) *first_error = status.with_context(master);
                                  arrive();
                                });
  }
}

void AdminClient::with_fresh_route(const std::string& topic,
                                   std::function<void(Result<const remoting::TopicRouteData*>)> done) {
  instance_.update_topic_route(topic, lifetime_.guard([this, topic, done = std::move(done)](Status status) {
    if (!status.ok()) return done(status);
    const remoting::TopicRouteData* route = instance_.find_route(topic);
    MQ_ASSERT(route != nullptr);  // an ok update caches the route
    done(route);
  }));
}

void AdminClient::topic_status(const std::string& topic,
                               std::function<void(Result<std::vector<QueueOffsetRange>>)> done) {
  with_fresh_route(topic, lifetime_.guard([this, topic, done = std::move(done)](
                                              Result<const remoting::TopicRouteData*> route) mutable {
    if (!route.ok()) return done(route.status());
    std::vector<MessageQueue> queues = route_queues(topic, **route, [](const remoting::QueueData& queue_data) {
      return std::max(queue_data.readQueueNums, queue_data.writeQueueNums);
    });
    query_queue_pairs(
        std::move(queues), [](const MessageQueue& q) { return api::build_get_min_offset(q.topic, q.queueId); },
        [](const MessageQueue& q) { return api::build_get_max_offset(q.topic, q.queueId); }, false,
        // By reference: gcc 12 at -O3 warned (-Wmaybe-uninitialized, falsely)
        // on the by-value Result's destruction inlined here.
        [done = std::move(done)](const Result<std::vector<OffsetPair>>& pairs) {
          if (!pairs.ok()) return done(pairs.status());
          std::vector<QueueOffsetRange> ranges;
          for (const OffsetPair& pair : *pairs) ranges.push_back({pair.queue, pair.first, pair.second});
          done(std::move(ranges));
        });
  }));
}

void AdminClient::consumer_progress(const std::string& group, const std::string& topic,
                                    std::function<void(Result<ConsumerProgress>)> done) {
  with_fresh_route(topic, lifetime_.guard([this, group, topic, done = std::move(done)](
                                              Result<const remoting::TopicRouteData*> route) mutable {
    if (!route.ok()) return done(route.status());
    std::vector<MessageQueue> queues = route_queues(
        topic, **route, [](const remoting::QueueData& queue_data) { return queue_data.readQueueNums; });
    query_queue_pairs(
        std::move(queues), [](const MessageQueue& q) { return api::build_get_max_offset(q.topic, q.queueId); },
        [group](const MessageQueue& q) { return api::build_query_consumer_offset(group, q.topic, q.queueId); }, true,
        // By reference: gcc 12 at -O3 warned (-Wmaybe-uninitialized, falsely)
        // on the by-value Result's destruction inlined here.
        [done = std::move(done)](const Result<std::vector<OffsetPair>>& pairs) {
          if (!pairs.ok()) return done(pairs.status());
          ConsumerProgress progress;
          for (const OffsetPair& pair : *pairs) {
            progress.queues.push_back({pair.queue, pair.first, std::max<int64_t>(0, pair.second)});
          }
          done(std::move(progress));
        });
  }));
}

void AdminClient::query_queue_pairs(std::vector<MessageQueue> queues, RequestMaker first, RequestMaker second,
                                    bool second_may_be_missing,
                                    std::function<void(Result<std::vector<OffsetPair>>)> done) {
  if (queues.empty()) return post_result(instance_.env(), std::move(done), Result<std::vector<OffsetPair>>(std::vector<OffsetPair>{}));
  auto pairs = std::make_shared<std::vector<OffsetPair>>();
  for (const MessageQueue& queue : queues) pairs->push_back({queue, 0, 0});
  auto first_error = std::make_shared<Status>();
  auto arrive = make_countdown(2 * queues.size(), [done = std::move(done), pairs, first_error] {
    if (!first_error->ok()) return done(*first_error);
    done(std::move(*pairs));
  });
  for (size_t i = 0; i < queues.size(); ++i) {
    const MessageQueue& queue = queues[i];
    const auto broker = instance_.find_broker_address_in_subscribe(queue.brokerName, kMasterId, false);
    for (int which = 0; which < 2; ++which) {
      if (!broker) {
        if (first_error->ok()) *first_error = Status::Unavailable("The broker[" + queue.brokerName + "] not exist");
        arrive();
        continue;
      }
      RemotingCommand request = which == 0 ? first(queue) : second(queue);
      const std::string what = remoting::describe_request_code(request.code) + " " + queue.to_string();
      const bool may_be_missing = which == 1 && second_may_be_missing;
      instance_.remoting().invoke(
          broker->address, std::move(request), instance_.api_timeout(),
          [arrive, first_error, pairs, i, which, what, may_be_missing](Result<RemotingCommand> response) {
            Result<int64_t> offset = response.ok() ? api::parse_offset(*response, what) : Result<int64_t>(response.status());
            if (!offset.ok() && response.ok() && may_be_missing) offset = int64_t{-1};  // no committed offset
            if (offset.ok()) {
              (which == 0 ? (*pairs)[i].first : (*pairs)[i].second) = *offset;
            } else if (first_error->ok()) {
              *first_error = offset.status();
            }
            arrive();
          });
    }
  }
}

}  // namespace mqlab::client
