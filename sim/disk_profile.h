// DiskProfile: the timing and kernel-writeback parameters of one simulated
// disk, as plain fields so a scenario file can set any of them.
//
// A sync costs sync_base_latency_ns (the cache flush / FUA round trip) plus
// dirty bytes / write bandwidth plus seek_latency_ns per discontiguous run of
// pages (an HDD head move; on SSDs a small random-write penalty). The device
// serves one request at a time, so requests queue behind its busy time.
// The dirty_* fields are Linux's vm.dirty_* knobs, which decide when dirty
// page-cache data reaches the medium without anyone asking.
//
// Invariants (validate()): sector size is 512 or 4096; bandwidths > 0;
// latencies, intervals and thresholds >= 0; writeback interval > 0.
#pragma once

#include <cstdint>
#include <string>

#include "broker/common/status.h"
#include "broker/common/types.h"

namespace mqlab::sim {

struct DiskProfile {
  std::string name = "custom";
  // The unit a power cut tears at: a sector is written entirely or not at all.
  uint32_t sector_size_bytes = 4096;
  Nanos sync_base_latency_ns = 0;
  uint64_t write_bandwidth_bytes_per_sec = 0;
  uint64_t read_bandwidth_bytes_per_sec = 0;
  // Cost of each jump of the write position (HDD seek + rotation).
  Nanos seek_latency_ns = 0;
  // vm.dirty_expire_centisecs (3000 = 30 s): dirty data older than this is
  // written back by the flusher.
  Nanos dirty_expire_ns = seconds(30);
  // vm.dirty_writeback_centisecs (500 = 5 s): how often the flusher wakes.
  Nanos dirty_writeback_interval_ns = seconds(5);
  // vm.dirty_background_bytes: above this much dirty data the flusher starts
  // at once. Linux's default is 10% of RAM; 256 MiB stands for a small box.
  uint64_t dirty_background_bytes = 256ull << 20;
  // The file system's metadata journal commit (ext4 commit=5 makes directory
  // entries durable within 5 s on its own). 0 = never: directory entries are
  // durable only after sync_dir, the strictest reading of the Env contract.
  Nanos journal_commit_interval_ns = 0;

  // ~600 MB/s sequential, flush ~0.7 ms, random writes noticeably slower.
  static DiskProfile sata_ssd();
  // ~2.5 GB/s, flush ~80 us.
  static DiskProfile nvme();
  // ~150 MB/s, ~8 ms per seek, flush ~9 ms (a rotation plus a seek).
  static DiskProfile hdd();
  // Zero latency and effectively infinite bandwidth, for unit tests.
  static DiskProfile instant();

  Status validate() const;
  // Device time to write bytes_written in seek_count discontiguous runs,
  // plus the flush when with_flush. Before any slowdown.
  Nanos service_time_ns(uint64_t bytes_written, uint64_t seek_count, bool with_flush) const;
};

}  // namespace mqlab::sim
