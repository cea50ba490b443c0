// mqadmin end to end: usage and exit codes, then every subcommand against a
// real NameServer and two brokers (ClusterHarness, virtual time), with
// output checked column by column and against what the brokers store.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "broker/admin_cli/mqadmin.h"
#include "broker/admin_cli/test/mqadmin_fixture.h"

namespace mqlab::admin_cli::mqadmin_test {
namespace {

using testing::CliRun;
using testing::MqadminTest;

// The words of a line, split on spaces: the columns a script would cut.
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_F(MqadminTest, UsageHelpAndBadUsageExitCodes) {
  CliRun usage = run_bare({});
  EXPECT_EQ(usage.code, kExitOk);
  EXPECT_NE(usage.out.find("updateTopic"), std::string::npos);
  EXPECT_NE(usage.out.find("perf produce"), std::string::npos);

  CliRun help = run_bare({"help", "topicStatus"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("-t,--topic <topic>"), std::string::npos);
  EXPECT_EQ(run_bare({"help", "perf", "consume"}).code, kExitOk);
  EXPECT_EQ(run_bare({"sendMessage", "-h"}).code, kExitOk);  // help wins over the missing -t and -p

  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"nope"}, "'nope' is not a command"},
      {{"help", "nope"}, "'nope' is not a command"},
      {{"perf", "fly"}, "'perf fly' is not a command"},
      {{"perf"}, "'perf' needs a subcommand"},
      {{"topicStatus"}, "missing required option -t,--topic"},
      {{"topicStatus", "-t"}, "needs a value"},
      {{"topicList", "-n", "no-port"}, "expected host:port"},
      {{"updateTopic", "-n", testing::kNamesrv, "-t", "T"}, "give exactly one of -b brokerAddr and -c clusterName"},
      {{"updateTopic", "-n", testing::kNamesrv, "-t", "T", "-c", "C", "-w", "0"}, "expected an integer from 1"},
      {{"consumeMessage", "-n", testing::kNamesrv, "-t", "T", "-i", "1"}, "-i queueId needs -b brokerName"},
      {{"perf", "produce", "-n", testing::kNamesrv, "-k", "yes"}, "expected true or false"},
      {{"topicList"}, "no NameServer address"},
      {{"topicList", "-n", testing::kNamesrv, "--clientConfig", "slaveRead=false"},
       "--clientConfig: 'slaveRead' is no ClientConfig key to set"},
      {{"topicList", "-n", testing::kNamesrv, "--clientConfig", "mqClientApiTimeout=0"},
       "mqClientApiTimeout='0': expected milliseconds in [1, 86400000]"},
  };
  for (const auto& [args, expected] : bad) {
    CliRun result = run_bare(args);
    EXPECT_EQ(result.code, kExitUsage) << expected;
    EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

TEST_F(MqadminTest, NamesrvAddrComesFromTheEnvironmentWhenNotGiven) {
  namesrv_env_ = testing::kNamesrv;
  CliRun list = run_bare({"topicList"});
  EXPECT_EQ(list.code, kExitOk) << list.err;
}

TEST_F(MqadminTest, UpdateTopicOnAClusterThenListRouteAndStatus) {
  CliRun created = run({"updateTopic", "-c", "DefaultCluster", "-t", "Orders", "-r", "4", "-w", "4"});
  ASSERT_EQ(created.code, kExitOk) << created.err;
  EXPECT_NE(created.out.find("create topic to 10.0.0.1:10911 success."), std::string::npos);
  EXPECT_NE(created.out.find("create topic to 10.0.0.2:10911 success."), std::string::npos);
  EXPECT_NE(created.out.find("TopicConfig [topicName=Orders, readQueueNums=4, writeQueueNums=4, perm=RW-"),
            std::string::npos);
  wait_routed("Orders");

  CliRun list = run({"topicList"});
  ASSERT_EQ(list.code, kExitOk) << list.err;
  const std::vector<std::string> topics = lines(list.out);
  EXPECT_NE(std::find(topics.begin(), topics.end(), "Orders"), topics.end()) << list.out;

  CliRun route = run({"topicRoute", "-t", "Orders"});
  ASSERT_EQ(route.code, kExitOk) << route.err;
  EXPECT_NE(route.out.find("\"brokerName\": \"broker-a\""), std::string::npos) << route.out;
  EXPECT_NE(route.out.find("\"readQueueNums\": 4"), std::string::npos);

  for (int i = 0; i < 3; ++i) send("Orders", "body-" + std::to_string(i), "", "");
  CliRun status = run({"topicStatus", "-t", "Orders"});
  ASSERT_EQ(status.code, kExitOk) << status.err;
  const std::vector<std::string> rows = lines(status.out);
  ASSERT_EQ(rows.size(), 1u + 8);  // header, 4 queues on each of 2 brokers
  EXPECT_EQ(words(rows[0]), (std::vector<std::string>{"#Broker", "Name", "#QID", "#Min", "Offset", "#Max", "Offset",
                                                       "#Last", "Updated"}));
  // Fixed columns: the QID starts at 34, the min offset at 40, the max offset at 62.
  EXPECT_EQ(rows[1].substr(0, 8), "broker-a");
  EXPECT_EQ(rows[1].substr(34, 1), "0");
  EXPECT_EQ(rows[8].substr(0, 8), "broker-b");
  EXPECT_EQ(rows[8].substr(34, 1), "3");
  int64_t total = 0;
  for (size_t i = 1; i < rows.size(); ++i) total += std::stoll(rows[i].substr(62, 20));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(total, stored_count("Orders"));
}

TEST_F(MqadminTest, UpdateTopicOnOneBrokerAndErrorsExitOne) {
  CliRun created = run({"updateTopic", "-b", "10.0.0.2:10911", "-t", "Solo", "-w", "2", "-r", "2"});
  ASSERT_EQ(created.code, kExitOk) << created.err;
  EXPECT_NE(created.out.find("create topic to 10.0.0.2:10911 success."), std::string::npos);
  ASSERT_TRUE(harness_.run_until([&] { return harness_.routed_brokers("Solo") == 1; }, seconds(30)));

  CliRun missing = run({"topicStatus", "-t", "NoSuchTopic"});
  EXPECT_EQ(missing.code, kExitFailed);
  EXPECT_NE(missing.err.find("mqadmin topicStatus: "), std::string::npos);
  EXPECT_NE(missing.err.find("TOPIC_NOT_EXIST"), std::string::npos) << missing.err;

  CliRun no_cluster = run({"updateTopic", "-c", "NoCluster", "-t", "X"});
  EXPECT_EQ(no_cluster.code, kExitFailed);
  EXPECT_NE(no_cluster.err.find("cluster NoCluster has no master broker"), std::string::npos);

  CliRun refused = run({"updateTopic", "-b", "10.0.0.1:10911", "-t", "bad topic!"});
  EXPECT_EQ(refused.code, kExitFailed);
  EXPECT_NE(refused.err.find("10.0.0.1:10911"), std::string::npos) << refused.err;

  CliRun unreachable = run({"brokerStatus", "-b", "10.0.0.9:10911"});
  EXPECT_EQ(unreachable.code, kExitFailed);
  EXPECT_NE(unreachable.err.find("10.0.0.9:10911"), std::string::npos) << unreachable.err;
}

TEST_F(MqadminTest, ClusterListAndBrokerStatus) {
  send_after_creating("Orders", "x");
  CliRun clusters = run({"clusterList"});
  ASSERT_EQ(clusters.code, kExitOk) << clusters.err;
  const std::vector<std::string> rows = lines(clusters.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(words(rows[0])[0], "#Cluster");
  const std::vector<std::string> a = words(rows[1]);
  ASSERT_GE(a.size(), 8u);
  EXPECT_EQ(a[0], "DefaultCluster");
  EXPECT_EQ(a[1], "broker-a");
  EXPECT_EQ(a[2], "0");
  EXPECT_EQ(a[3], "10.0.0.1:10911");
  EXPECT_EQ(a[5], "ASYNC_MASTER");
  EXPECT_EQ(words(rows[2])[1], "broker-b");
  EXPECT_EQ(std::stoll(a[6]) + std::stoll(words(rows[2])[6]), 1);  // #InTotal: the one message

  CliRun one = run_bare({"brokerStatus", "-b", "10.0.0.1:10911"});  // no NameServer needed
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_TRUE(std::regex_search(one.out, std::regex(R"(\nbrokerRole {22}: ASYNC_MASTER\n)"))) << one.out;
  EXPECT_NE(one.out.find("commitLogMaxOffset"), std::string::npos);

  CliRun cluster = run({"brokerStatus", "-c", "DefaultCluster"});
  ASSERT_EQ(cluster.code, kExitOk) << cluster.err;
  EXPECT_TRUE(std::regex_search(cluster.out, std::regex(R"(\n10\.0\.0\.2:10911 {11}brokerRole {22}: ASYNC_MASTER\n)")))
      << cluster.out;
}

TEST_F(MqadminTest, SendMessageThenQueryByKeyAndById) {
  create_topic("Orders");
  CliRun sent = run({"sendMessage", "-t", "Orders", "-p", "hello world", "-k", "order-42 extra", "-c", "TagA"});
  ASSERT_EQ(sent.code, kExitOk) << sent.err;
  const std::vector<std::string> rows = lines(sent.out);
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<std::string> row = words(rows[1]);
  ASSERT_EQ(row.size(), 5u);
  EXPECT_EQ(row[2], "SEND_OK");
  const std::string msg_id = row[3];
  const std::string offset_msg_id = row[4];
  EXPECT_EQ(msg_id.size(), 32u);
  EXPECT_EQ(offset_msg_id.size(), 32u);

  // A client configured by --clientConfig (the binary header) sends as well.
  CliRun configured = run({"sendMessage", "-t", "Orders", "-p", "binary header", "--clientConfig",
                           "serializeType=ROCKETMQ;mqClientApiTimeout=2000"});
  ASSERT_EQ(configured.code, kExitOk) << configured.err;
  EXPECT_EQ(words(lines(configured.out).at(1)).at(2), "SEND_OK");

  CliRun by_key = run({"queryMsgByKey", "-t", "Orders", "-k", "order-42"});
  ASSERT_EQ(by_key.code, kExitOk) << by_key.err;
  const std::vector<std::string> found = lines(by_key.out);
  ASSERT_EQ(found.size(), 2u) << by_key.out;
  EXPECT_EQ(words(found[1])[0], msg_id);
  EXPECT_EQ(words(found[1])[1], row[1]);  // the queue id sendMessage reported

  CliRun no_key = run({"queryMsgByKey", "-t", "Orders", "-k", "order-43"});
  EXPECT_EQ(no_key.code, kExitFailed);
  EXPECT_NE(no_key.err.find("no message with key order-43"), std::string::npos) << no_key.err;

  CliRun by_offset_id = run_bare({"queryMsgById", "-i", offset_msg_id});  // the id names its broker
  ASSERT_EQ(by_offset_id.code, kExitOk) << by_offset_id.err;
  EXPECT_NE(by_offset_id.out.find("OffsetID:            " + offset_msg_id), std::string::npos) << by_offset_id.out;
  EXPECT_NE(by_offset_id.out.find("Tags:                [TagA]"), std::string::npos);
  EXPECT_NE(by_offset_id.out.find("Keys:                [order-42 extra]"), std::string::npos);
  EXPECT_NE(by_offset_id.out.find("Message Body:        hello world"), std::string::npos);

  CliRun by_uniq_key = run({"queryMsgById", "-i", msg_id, "-t", "Orders"});
  ASSERT_EQ(by_uniq_key.code, kExitOk) << by_uniq_key.err;
  EXPECT_NE(by_uniq_key.out.find("OffsetID:            " + offset_msg_id), std::string::npos) << by_uniq_key.out;

  CliRun not_an_id = run_bare({"queryMsgById", "-i", "xyz"});
  EXPECT_EQ(not_an_id.code, kExitUsage);
  EXPECT_NE(not_an_id.err.find("give its topic with -t"), std::string::npos) << not_an_id.err;
}

TEST_F(MqadminTest, ConsumeMessagePrintsStoredMessagesAndChangesNothing) {
  create_topic("Orders");
  for (int i = 0; i < 20; ++i) send("Orders", "m" + std::to_string(i), "", "");  // 2 or 3 in each of 8 queues
  CliRun all = run({"consumeMessage", "-t", "Orders"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_EQ(count_lines_starting(all.out, "MSGID: "), 20u) << all.out;

  CliRun limited = run({"consumeMessage", "-t", "Orders", "-c", "3"});
  ASSERT_EQ(limited.code, kExitOk) << limited.err;
  EXPECT_EQ(count_lines_starting(limited.out, "MSGID: "), 3u);

  // One queue from an offset: queue 0 of broker-a holds what round robin put there.
  const int64_t in_queue = harness_.broker(0).message_store().max_offset_in_queue("Orders", 0).value();
  ASSERT_GT(in_queue, 1);
  CliRun one_queue = run({"consumeMessage", "-t", "Orders", "-b", "broker-a", "-i", "0", "-o", "1"});
  ASSERT_EQ(one_queue.code, kExitOk) << one_queue.err;
  EXPECT_EQ(count_lines_starting(one_queue.out, "MSGID: "), static_cast<size_t>(in_queue - 1));
  EXPECT_NE(one_queue.out.find("queueId=0, queueOffset=1,"), std::string::npos) << one_queue.out;
  EXPECT_EQ(one_queue.out.find("queueOffset=0,"), std::string::npos);

  CliRun no_broker = run({"consumeMessage", "-t", "Orders", "-b", "broker-z"});
  EXPECT_EQ(no_broker.code, kExitFailed);
  EXPECT_NE(no_broker.err.find("the route of topic Orders has no readable queue on broker broker-z"), std::string::npos)
      << no_broker.err;
}

TEST_F(MqadminTest, ConsumerProgressShowsCommittedOffsetsAndDiff) {
  create_topic("Orders");
  for (int i = 0; i < 20; ++i) send("Orders", "m" + std::to_string(i), "", "");
  CliRun consumed = run({"perf", "consume", "-t", "Orders", "-g", "G1", "-p", "false", "--fromFirst", "-q", "20"});
  ASSERT_EQ(consumed.code, kExitOk) << consumed.err;
  for (int i = 0; i < 5; ++i) send("Orders", "late" + std::to_string(i), "", "");

  CliRun progress = run({"consumerProgress", "-g", "G1"});
  ASSERT_EQ(progress.code, kExitOk) << progress.err;
  const std::vector<std::string> rows = lines(progress.out);
  EXPECT_EQ(words(rows[0])[0], "#Topic");
  int64_t diff = 0;
  size_t queue_rows = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> row = words(rows[i]);
    if (row.empty() || row[0] != "Orders") continue;
    ++queue_rows;
    EXPECT_EQ(std::stoll(row[3]) - std::stoll(row[4]), std::stoll(row[6]));  // broker - consumer = diff
    diff += std::stoll(row[6]);
  }
  EXPECT_EQ(queue_rows, 8u);
  EXPECT_EQ(diff, 5);
  EXPECT_NE(progress.out.find("\nDiff Total: 5\n"), std::string::npos) << progress.out;

  CliRun unknown = run({"consumerProgress", "-g", "NoSuchGroup"});
  EXPECT_EQ(unknown.code, kExitFailed);
  EXPECT_NE(unknown.err.find("no consume stats for group NoSuchGroup"), std::string::npos) << unknown.err;
}

TEST_F(MqadminTest, ConsumerProgressWithoutGroupListsEveryGroupOnlineOrNot) {
  create_topic("Orders");
  for (int i = 0; i < 20; ++i) send("Orders", "m" + std::to_string(i), "", "");
  // G1 consumes everything, then leaves: OFFLINE, with the 5 later messages as its diff.
  CliRun consumed = run({"perf", "consume", "-t", "Orders", "-g", "G1", "-p", "false", "--fromFirst", "-q", "20"});
  ASSERT_EQ(consumed.code, kExitOk) << consumed.err;
  for (int i = 0; i < 5; ++i) send("Orders", "late" + std::to_string(i), "", "");
  // G2 stays: two live push consumers.
  for (int i = 0; i < 2; ++i) {
    client::testing::ClientNode& node = harness_.add_client("live" + std::to_string(i), "10.0.1.2" + std::to_string(i));
    node.start();
    client::PushConsumerConfig config;
    config.consumerGroup = "G2";
    client::PushConsumer& consumer = node.add_consumer(config);
    ASSERT_TRUE(consumer.subscribe("Orders", "*").ok());
    consumer.register_message_listener(
        [](const client::MessageExt&, client::ConsumeCallback done) { done(client::ConsumeResult::SUCCESS); });
    consumer.start([](Status) {});
  }
  harness_.run_for(seconds(30));

  CliRun all = run({"consumerProgress"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  const std::vector<std::string> rows = lines(all.out);
  ASSERT_EQ(rows.size(), 3u) << all.out;
  EXPECT_EQ(words(rows[0]), (std::vector<std::string>{"#Group", "#Count", "#Version", "#Type", "#Model", "#TPS",
                                                       "#Diff", "Total"}));
  // Sorted by live clients first: G2 (2 clients, caught up), then G1 (offline).
  EXPECT_EQ(words(rows[1]), (std::vector<std::string>{"G2", "2", "V4_9_7", "PUSH", "CLUSTERING", "0", "0"}))
      << all.out;
  EXPECT_EQ(words(rows[2]), (std::vector<std::string>{"G1", "0", "OFFLINE", "0", "5"})) << all.out;

  CliRun topic_alone = run({"consumerProgress", "-t", "Orders"});
  EXPECT_EQ(topic_alone.code, kExitUsage);
  EXPECT_NE(topic_alone.err.find("-t,--topic needs -g,--groupName"), std::string::npos) << topic_alone.err;

  // topicList -c: the topic's cluster and every group that consumed it, live or not.
  CliRun listed = run({"topicList", "-c"});
  ASSERT_EQ(listed.code, kExitOk) << listed.err;
  const std::vector<std::string> topics = lines(listed.out);
  EXPECT_EQ(words(topics[0]), (std::vector<std::string>{"#Cluster", "Name", "#Topic", "#Consumer", "Group"}));
  std::vector<std::vector<std::string>> orders;
  for (size_t i = 1; i < topics.size(); ++i) {
    EXPECT_FALSE(topics[i].find("%RETRY%") != std::string::npos) << "retry topics are not listed: " << listed.out;
    if (words(topics[i]).size() > 1 && words(topics[i])[1] == "Orders") orders.push_back(words(topics[i]));
  }
  EXPECT_EQ(orders, (std::vector<std::vector<std::string>>{{"DefaultCluster", "Orders", "G1"},
                                                          {"DefaultCluster", "Orders", "G2"}}))
      << listed.out;
}

TEST_F(MqadminTest, SendMessageToOneQueueWithBrokerAndQueueId) {
  create_topic("Orders");
  for (int round = 0; round < 3; ++round) {
    CliRun sent = run({"sendMessage", "-t", "Orders", "-p", "pinned", "-b", "broker-b", "-i", "2"});
    ASSERT_EQ(sent.code, kExitOk) << sent.err;
    const std::vector<std::string> row = words(lines(sent.out)[1]);
    EXPECT_EQ(row[0], "broker-b");
    EXPECT_EQ(row[1], "2");
  }
  EXPECT_EQ(harness_.broker(1).message_store().max_offset_in_queue("Orders", 2).value(), 3);
  EXPECT_EQ(stored_count("Orders"), 3);

  CliRun half = run({"sendMessage", "-t", "Orders", "-p", "x", "-b", "broker-b"});
  EXPECT_EQ(half.code, kExitUsage);
  EXPECT_NE(half.err.find("-b,--broker and -i,--qid go together"), std::string::npos) << half.err;
  CliRun no_such = run({"sendMessage", "-t", "Orders", "-p", "x", "-b", "broker-z", "-i", "0"});
  EXPECT_EQ(no_such.code, kExitFailed);
  EXPECT_NE(no_such.err.find("broker-z"), std::string::npos) << no_such.err;
}

TEST_F(MqadminTest, SendToATopicWithoutRouteFailsWithExitOne) {
  CliRun sent = run({"sendMessage", "-t", "Nowhere", "-p", "x"});
  EXPECT_EQ(sent.code, kExitFailed);
  EXPECT_NE(sent.out.find("FAILED"), std::string::npos) << sent.out;
  EXPECT_NE(sent.err.find("not stored: FAILED"), std::string::npos) << sent.err;
}

}  // namespace
}  // namespace mqlab::admin_cli::mqadmin_test
