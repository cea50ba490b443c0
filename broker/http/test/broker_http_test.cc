// The observability pages' content on the simulator: a BrokerSnapshot of a
// broker that stored messages and has a committed consumer offset (counters,
// latencies, offsets, consumer lag), the status JSON, the route table (200,
// 404, 405), a master/slave pair's replication view and the NameServer's
// cluster JSON. No socket: handlers are called directly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "broker/ha/test/ha_sim_world.h"
#include "broker/http/broker_metrics.h"
#include "broker/http/broker_snapshot.h"
#include "broker/http/broker_status_json.h"
#include "broker/http/http_routes.h"
#include "broker/http/namesrv_status_json.h"
#include "broker/processor/test/broker_sim_world.h"

namespace mqlab::http::broker_http_test {
namespace {

// std::string::contains is C++23.
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

using broker::testing::BrokerSimWorld;
using broker::testing::request_with;
using broker::testing::send_v2;
using remoting::RequestCode;
using remoting::ResponseCode;

void commit_offset(BrokerSimWorld& world, const std::string& group, const std::string& topic, int32_t queue_id,
                   int64_t offset) {
  const remoting::RemotingCommand response = world.must_call(
      request_with(RequestCode::UPDATE_CONSUMER_OFFSET, {{"consumerGroup", group},
                                                        {"topic", topic},
                                                        {"queueId", std::to_string(queue_id)},
                                                        {"commitOffset", std::to_string(offset)}}));
  ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
}

// 5 messages to TopicA queue 0, 2 to queue 1 (4 queues, auto-created); G
// committed 3 on queue 0.
void store_some(BrokerSimWorld& world) {
  ASSERT_TRUE(world.start_broker().ok());
  for (int i = 0; i < 7; ++i) {
    const remoting::RemotingCommand response =
        world.must_call(send_v2("TopicA", "body-" + std::to_string(i), i < 5 ? 0 : 1));
    ASSERT_EQ(response.code, ResponseCode::SUCCESS) << response.remark;
  }
  commit_offset(world, "G", "TopicA", 0, 3);
}

const BrokerSnapshot::ConsumerQueue* find_consumer_queue(const BrokerSnapshot& s, const std::string& group,
                                                         int32_t queue_id) {
  for (const auto& queue : s.consumer_queues) {
    if (queue.group == group && queue.topic == "TopicA" && queue.queue_id == queue_id) return &queue;
  }
  return nullptr;
}

TEST(BrokerSnapshot, CountsPutsLatenciesOffsetsAndConsumerLag) {
  BrokerSimWorld world;
  store_some(world);
  const BrokerSnapshot s = collect_broker_snapshot(world.broker());
  EXPECT_EQ(s.broker_name, "broker-a");
  EXPECT_EQ(s.broker_role, "ASYNC_MASTER");
  EXPECT_EQ(s.flush_disk_type, "SYNC_FLUSH");
  EXPECT_TRUE(s.running);
  EXPECT_TRUE(s.writable);
  EXPECT_EQ(s.counters.msg_put_total, 7u);
  EXPECT_EQ(s.counters.msg_put_failed, 0u);
  // Every put was timed, and SYNC_FLUSH puts wait for a simulated fsync.
  EXPECT_EQ(s.put_latency.count(), 7u);
  EXPECT_GT(s.put_latency.sum_ns(), 0);
  EXPECT_GE(s.flush_latency.count(), 1u);
  EXPECT_GT(s.flush_latency.sum_ns(), 0);
  // SYNC_FLUSH acknowledged them all, so nothing is dirty.
  EXPECT_GT(s.commit_log_max_offset, 0);
  EXPECT_EQ(s.commit_log_flushed_offset, s.commit_log_max_offset);
  EXPECT_EQ(s.dirty_bytes, 0);
  EXPECT_EQ(s.commit_log_segments, 1u);
  EXPECT_TRUE(s.slaves.empty());  // a master without slaves
  EXPECT_FALSE(s.master.has_value());

  int64_t stored = 0;
  for (const auto& queue : s.queues) {
    if (queue.topic != "TopicA") continue;
    EXPECT_EQ(queue.max_offset, queue.queue_id == 0 ? 5 : 2) << queue.queue_id;
    stored += queue.max_offset;
  }
  EXPECT_EQ(stored, 7);
  auto topic = std::find_if(s.topics.begin(), s.topics.end(), [](const auto& t) { return t.name == "TopicA"; });
  ASSERT_NE(topic, s.topics.end());
  EXPECT_EQ(topic->messages, 7);
  EXPECT_EQ(topic->read_queue_nums, 4);

  // Lag: every read queue of the topic, from 0 where G never committed.
  const auto* q0 = find_consumer_queue(s, "G", 0);
  const auto* q1 = find_consumer_queue(s, "G", 1);
  const auto* q3 = find_consumer_queue(s, "G", 3);
  ASSERT_TRUE(q0 && q1 && q3);
  EXPECT_EQ(q0->consumer_offset, 3);
  EXPECT_EQ(q0->broker_offset, 5);
  EXPECT_EQ(q0->lag, 2);
  EXPECT_EQ(q1->consumer_offset, 0);
  EXPECT_EQ(q1->lag, 2);
  EXPECT_EQ(q3->lag, 0);
  ASSERT_EQ(s.consumer_groups.size(), 1u);
  EXPECT_EQ(s.consumer_groups[0].group, "G");
  EXPECT_EQ(s.consumer_groups[0].total_lag, 4);
  EXPECT_EQ(s.consumer_groups[0].online_clients, 0u);  // no heartbeat came
}

TEST(BrokerSnapshot, StatusJsonCarriesTheSnapshot) {
  BrokerSimWorld world;
  store_some(world);
  const BrokerSnapshot s = collect_broker_snapshot(world.broker());
  const nlohmann::json status = nlohmann::json::parse(dump_json_lenient(broker_status_json(s)));
  EXPECT_EQ(status.at("broker").at("broker_name"), "broker-a");
  EXPECT_EQ(status.at("broker").at("broker_role"), "ASYNC_MASTER");
  EXPECT_EQ(status.at("broker").at("running"), true);
  EXPECT_EQ(status.at("broker").at("now_ms"), s.now_ms);
  EXPECT_EQ(status.at("counters").at("msg_put_total"), 7);
  EXPECT_EQ(status.at("commit_log").at("max_offset"), s.commit_log_max_offset);
  EXPECT_EQ(status.at("commit_log").at("dirty_bytes"), 0);
  const nlohmann::json& put = status.at("put_latency");
  EXPECT_EQ(put.at("count"), 7);
  EXPECT_EQ(put.at("counts").size(), put.at("bounds_ms").size() + 1);
  uint64_t in_buckets = 0;
  for (const auto& count : put.at("counts")) in_buckets += count.get<uint64_t>();
  EXPECT_EQ(in_buckets, 7u);
  EXPECT_DOUBLE_EQ(put.at("bounds_ms").at(0).get<double>(), 0.01);
  EXPECT_TRUE(status.at("replication").at("master").is_null());
  EXPECT_TRUE(status.at("replication").at("slaves").empty());
  EXPECT_EQ(status.at("consumer_groups").at(0).at("total_lag"), 4);
  EXPECT_EQ(status.at("consumer_queues").size(), 4u);
  EXPECT_FALSE(status.at("topics").empty());
  EXPECT_FALSE(status.at("queues").empty());
  // Same state, same bytes.
  EXPECT_EQ(dump_json_lenient(broker_status_json(collect_broker_snapshot(world.broker()))),
            dump_json_lenient(broker_status_json(s)));
}

TEST(BrokerHttpRoutes, ServeMetricsStatusAndConsoleAndRefuseTheRest) {
  BrokerSimWorld world;
  store_some(world);
  const HttpHandler handler = broker_http_handler(world.broker());

  const HttpResponse metrics = handler({"GET", "/metrics"});
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(has(metrics.body, "\nmqlab_put_messages_total{result=\"stored\"} 7\n"));
  EXPECT_TRUE(has(metrics.body, "\nmqlab_put_latency_seconds_count 7\n"));
  EXPECT_TRUE(has(metrics.body, "\nmqlab_consumer_lag_messages{group=\"G\",topic=\"TopicA\",queue_id=\"0\"} 2\n"));

  const HttpResponse status = handler({"GET", "/api/status?since=1"});  // a query is ignored
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(status.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(status.body).at("counters").at("msg_put_total"), 7);

  const HttpResponse page = handler({"HEAD", "/"});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(page.body.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(has(page.body, "fetch(url"));
  EXPECT_TRUE(has(page.body, "'/api/status'"));
  // Self-contained: no external script, style or image; names as text only.
  EXPECT_FALSE(has(page.body, "src="));
  EXPECT_FALSE(has(page.body, "<link"));
  EXPECT_FALSE(has(page.body, "innerHTML"));
  EXPECT_FALSE(has(page.body, "https://"));

  const HttpResponse missing = handler({"GET", "/nope"});
  EXPECT_EQ(missing.status, 404);
  const HttpResponse post = handler({"POST", "/metrics"});
  EXPECT_EQ(post.status, 405);
  ASSERT_EQ(post.headers.size(), 1u);
  EXPECT_EQ(post.headers[0].first, "Allow");
  for (const HttpResponse* response : {&metrics, &status, &page}) {
    ASSERT_FALSE(response->headers.empty());
    EXPECT_EQ(response->headers.back(), (std::pair<std::string, std::string>{"Cache-Control", "no-store"}));
  }
}

TEST(BrokerSnapshot, ReplicationLagOnTheMasterAndTheLinkOnTheSlave) {
  ha::testing::HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.ha_client().state() == ha::HAClientState::kTransfer; }, seconds(5));
  for (int i = 0; i < 20; ++i) ASSERT_EQ(world.send("TopicR", 500).code, ResponseCode::SUCCESS);
  ASSERT_TRUE(world.wait_caught_up());
  world.run_until([&] { return world.ha_service().push2slave_max_offset() == world.master_store().max_phy_offset(); });

  const BrokerSnapshot master = collect_broker_snapshot(world.master());
  ASSERT_EQ(master.slaves.size(), 1u);
  EXPECT_TRUE(master.slaves[0].transferring);
  EXPECT_EQ(master.slaves[0].ack_offset, master.commit_log_max_offset);
  EXPECT_EQ(master.slaves[0].lag_bytes, 0);
  EXPECT_TRUE(master.slaves[0].remote_address.starts_with(ha::testing::kSlaveHost));
  EXPECT_EQ(master.push2slave_max_offset, master.commit_log_max_offset);
  EXPECT_FALSE(master.master.has_value());

  const BrokerSnapshot slave = collect_broker_snapshot(world.slave());
  EXPECT_EQ(slave.broker_role, "SLAVE");
  EXPECT_EQ(slave.broker_id, 1);
  ASSERT_TRUE(slave.master.has_value());
  EXPECT_EQ(slave.master->state, "TRANSFER");
  EXPECT_EQ(slave.master->master_address, ha::testing::kMasterHaAddr);
  EXPECT_EQ(slave.master->confirmed_offset, master.commit_log_max_offset);
  EXPECT_TRUE(slave.slaves.empty());
  EXPECT_GT(slave.counters.replica_bytes_appended, 0u);

  // The lag is what the slave has not acknowledged: pause it (SIGSTOP: its
  // connection stays open, it acks nothing), send more.
  world.scheduler().pause_owner(world.slave_process().env().owner());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(world.send("TopicR", 500).code, ResponseCode::SUCCESS);
  const BrokerSnapshot behind = collect_broker_snapshot(world.master());
  ASSERT_EQ(behind.slaves.size(), 1u);
  EXPECT_EQ(behind.slaves[0].ack_offset, master.commit_log_max_offset);
  EXPECT_EQ(behind.slaves[0].lag_bytes, behind.commit_log_max_offset - master.commit_log_max_offset);
  EXPECT_GT(behind.slaves[0].lag_bytes, 3 * 500);
  const std::string metrics = render_broker_metrics(behind);
  EXPECT_TRUE(has(metrics, "mqlab_ha_slave_lag_bytes{slave=\"" + behind.slaves[0].remote_address + "\"} " +
                               std::to_string(behind.slaves[0].lag_bytes) + "\n"));
  world.scheduler().resume_owner(world.slave_process().env().owner());
}

TEST(NamesrvHttp, ClusterJsonListsBrokersWithTheirConsoleLinks) {
  ha::testing::HASimWorld world;
  ASSERT_TRUE(world.start_master().ok());
  ASSERT_TRUE(world.start_slave().ok());
  world.run_until([&] { return world.namesrv().status().brokers.size() == 2; }, seconds(5));
  const HttpHandler handler = namesrv_http_handler(world.namesrv());
  const HttpResponse cluster = handler({"GET", "/api/cluster"});
  ASSERT_EQ(cluster.status, 200);
  const nlohmann::json data = nlohmann::json::parse(cluster.body);
  ASSERT_EQ(data.at("brokers").size(), 2u);
  const nlohmann::json& master = data.at("brokers").at(0);
  EXPECT_EQ(master.at("broker_name"), "broker-a");
  EXPECT_EQ(master.at("role"), "MASTER");
  EXPECT_EQ(master.at("broker_addr"), ha::testing::kMasterAddr);
  EXPECT_EQ(master.at("console_url"), "http://10.0.0.1:10913/");
  EXPECT_EQ(data.at("brokers").at(1).at("role"), "SLAVE");
  EXPECT_EQ(data.at("brokers").at(1).at("console_url"), "http://10.0.0.2:10913/");
  ASSERT_EQ(data.at("clusters").size(), 1u);
  EXPECT_EQ(data.at("clusters").at(0).at("broker_names"), nlohmann::json::array({"broker-a"}));

  const HttpResponse metrics = handler({"GET", "/metrics"});
  EXPECT_EQ(metrics.content_type, kContentTypePrometheus);
  EXPECT_TRUE(has(metrics.body, "mqlab_namesrv_brokers{cluster=\"DefaultCluster\",role=\"MASTER\"} 1\n"));
  EXPECT_TRUE(has(metrics.body, "mqlab_namesrv_brokers{cluster=\"DefaultCluster\",role=\"SLAVE\"} 1\n"));
  const HttpResponse page = handler({"GET", "/"});
  EXPECT_TRUE(has(page.body, "'/api/cluster'"));
  EXPECT_EQ(handler({"GET", "/metrics/"}).status, 404);
}

TEST(NamesrvHttp, ConsoleUrlFollowsTheListenPortPlusTwoConvention) {
  EXPECT_EQ(broker_console_url("10.0.0.1:10911"), "http://10.0.0.1:10913/");
  EXPECT_EQ(broker_console_url("[::1]:10911"), "http://[::1]:10913/");
  EXPECT_EQ(broker_console_url("10.0.0.1"), std::nullopt);
  EXPECT_EQ(broker_console_url("10.0.0.1:65535"), std::nullopt);
  EXPECT_EQ(broker_console_url("10.0.0.1:x"), std::nullopt);
  EXPECT_EQ(broker_console_url(":10911"), std::nullopt);
}

}  // namespace
}  // namespace mqlab::http::broker_http_test
