// Bounded memory over simulated time: with retention deleting old segments,
// what a broker's simulated disk holds stays under a bound however much the
// run writes, because a deleted file frees its simulated blocks (SimDisk
// drops an inode once nothing names or holds it). A CI-sized run: one group,
// 256 KiB CommitLog segments that roll every two simulated seconds, a
// deletion check every second, two simulated minutes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/scenario.h"
#include "sim/sim_disk.h"
#include "sim/sim_machine.h"
#include "sim/sim_world.h"

namespace mqlab::sim::retention_memory_test {
namespace {

const char* const kRetention = R"(
name: retention-bounded
duration: 120s
topology: {preset: single_master, disk: sata_ssd}
broker:
  flushDiskType: ASYNC_FLUSH
  maxMessageSize: 65536
  mappedFileSizeCommitLog: 262144
  mappedFileSizeConsumeQueue: 6000
  maxHashSlotNum: 1000
  maxIndexNum: 4000
  cleanResourceInterval: 1000
  fileReservedTime: 0
  deleteWhen: "00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;15;16;17;18;19;20;21;22;23"
workload:
  producers: {count: 1, rate: 300/s, message_size: 256B}
  consumer_groups: [{name: cg, consumers: 1}]
)";

// The store's files at any instant: the active CommitLog segment, the next
// one pre-allocated, a few not yet deleted (one deletion check a second),
// the ConsumeQueue and index files over them, config and checkpoint.
constexpr uint64_t kLiveBound = 4ull << 20;

struct DiskSamples {
  uint64_t max_used = 0;
  uint64_t samples = 0;
};

// Samples the broker's disk every simulated second; reads state only.
void sample_every_second(SimWorld& world, DiskSamples& samples) {
  world.scheduler().schedule_after(seconds(1), [&world, &samples] {
    SimMachine* broker = world.find_machine("broker-a-0");
    MQ_ASSERT(broker != nullptr && broker->data_disk() != nullptr);
    samples.max_used = std::max(samples.max_used, broker->data_disk()->used_bytes());
    ++samples.samples;
    sample_every_second(world, samples);
  });
}

TEST(RetentionMemory, DeletedSegmentsFreeTheirSimulatedBlocksSoTheDiskStaysBounded) {
  Result<Scenario> scenario = parse_scenario(kRetention, "retention.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().to_string();
  SimWorld world(*scenario, 1);
  DiskSamples samples;
  sample_every_second(world, samples);
  const RunResult result = world.run();

  SimDisk* disk = world.find_machine("broker-a-0")->data_disk();
  ASSERT_NE(disk, nullptr);
  std::printf("broker-a-0 disk: %llu bytes written, peak live %llu, live at the end %llu\n",
              static_cast<unsigned long long>(disk->counters().bytes_written),
              static_cast<unsigned long long>(samples.max_used),
              static_cast<unsigned long long>(disk->used_bytes()));
  // The run wrote far more than the bound: without retention freeing
  // blocks, the disk would hold it all.
  EXPECT_GT(disk->counters().bytes_written, 3 * kLiveBound) << disk->counters().bytes_written;
  EXPECT_GE(samples.samples, 120u);
  EXPECT_LE(samples.max_used, kLiveBound) << "peak live bytes " << samples.max_used;
  EXPECT_LE(disk->used_bytes(), kLiveBound);
  // Retention deleted messages before the audit group (reading from the
  // start at the end) got to them: expired, not lost.
  EXPECT_TRUE(result.converged) << result.liveness_failure;
  EXPECT_EQ(result.report.lost, 0);
  EXPECT_GT(result.report.expired_by_retention, 0);
  EXPECT_GT(result.report.acknowledged, 30'000);
}

}  // namespace
}  // namespace mqlab::sim::retention_memory_test
