#include "sim/disk_profile.h"

#include <cstdint>
#include <limits>

#include "broker/common/assert.h"

namespace mqlab::sim {

// The numbers are typical datasheet / fio figures, not any one product's:
// what matters for the simulation is their ratios (an HDD flush is ~100x an
// NVMe flush) and that a jump costs an HDD far more than a byte does.

DiskProfile DiskProfile::sata_ssd() {
  DiskProfile profile;
  profile.name = "sata_ssd";
  profile.sector_size_bytes = 4096;
  profile.sync_base_latency_ns = 700 * kNanosPerMicro;
  profile.write_bandwidth_bytes_per_sec = 600'000'000;
  profile.read_bandwidth_bytes_per_sec = 550'000'000;
  profile.seek_latency_ns = 60 * kNanosPerMicro;  // 4 KiB random write ~ 15k IOPS
  return profile;
}

DiskProfile DiskProfile::nvme() {
  DiskProfile profile;
  profile.name = "nvme";
  profile.sector_size_bytes = 4096;
  profile.sync_base_latency_ns = 80 * kNanosPerMicro;
  profile.write_bandwidth_bytes_per_sec = 2'500'000'000;
  profile.read_bandwidth_bytes_per_sec = 3'000'000'000;
  profile.seek_latency_ns = 10 * kNanosPerMicro;
  return profile;
}

DiskProfile DiskProfile::hdd() {
  DiskProfile profile;
  profile.name = "hdd";
  profile.sector_size_bytes = 512;
  profile.sync_base_latency_ns = 9 * kNanosPerMilli;
  profile.write_bandwidth_bytes_per_sec = 150'000'000;
  profile.read_bandwidth_bytes_per_sec = 160'000'000;
  profile.seek_latency_ns = 8 * kNanosPerMilli;
  return profile;
}

DiskProfile DiskProfile::instant() {
  DiskProfile profile;
  profile.name = "instant";
  profile.sector_size_bytes = 512;
  profile.sync_base_latency_ns = 0;
  profile.write_bandwidth_bytes_per_sec = std::numeric_limits<uint64_t>::max();
  profile.read_bandwidth_bytes_per_sec = std::numeric_limits<uint64_t>::max();
  profile.seek_latency_ns = 0;
  return profile;
}

Status DiskProfile::validate() const {
  const std::string where = "disk profile " + name + ": ";
  if (sector_size_bytes != 512 && sector_size_bytes != 4096) {
    return Status::InvalidArgument(where + "sector_size_bytes must be 512 or 4096, not " +
                                   std::to_string(sector_size_bytes));
  }
  if (write_bandwidth_bytes_per_sec == 0) return Status::InvalidArgument(where + "write bandwidth is 0");
  if (read_bandwidth_bytes_per_sec == 0) return Status::InvalidArgument(where + "read bandwidth is 0");
  if (sync_base_latency_ns < 0 || seek_latency_ns < 0 || dirty_expire_ns < 0 || journal_commit_interval_ns < 0) {
    return Status::InvalidArgument(where + "latencies and intervals must be >= 0");
  }
  if (dirty_writeback_interval_ns <= 0) {
    return Status::InvalidArgument(where + "dirty_writeback_interval_ns must be > 0");
  }
  return Status::Ok();
}

Nanos DiskProfile::service_time_ns(uint64_t bytes_written, uint64_t seek_count, bool with_flush) const {
  MQ_ASSERT(write_bandwidth_bytes_per_sec > 0);
  MQ_ASSERT(seek_latency_ns >= 0);
  // Integer arithmetic in 128 bits: exact, and the same on every platform
  // (floating point would make the trace depend on the compiler's rounding).
  const unsigned __int128 transfer_ns = static_cast<unsigned __int128>(bytes_written) * kNanosPerSecond /
                                        write_bandwidth_bytes_per_sec;
  MQ_ASSERT(transfer_ns < static_cast<unsigned __int128>(INT64_MAX / 2));
  const Nanos transfer = static_cast<Nanos>(transfer_ns);
  const Nanos seeks = static_cast<Nanos>(seek_count) * seek_latency_ns;
  const Nanos total = transfer + seeks + (with_flush ? sync_base_latency_ns : 0);
  MQ_ASSERT(total >= 0);
  return total;
}

}  // namespace mqlab::sim
