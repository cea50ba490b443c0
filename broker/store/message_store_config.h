// MessageStoreConfig: the store's settings, named as RocketMQ's broker.conf
// keys so our code, RocketMQ's docs and a broker.conf grep together. Defaults
// are RocketMQ 4.9.x's (rocketmq-reference.md sections 3, 5 and 6).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "broker/common/status.h"
#include "broker/store/message_delay_level.h"

namespace mqlab::store {

enum class FlushDiskType { ASYNC_FLUSH, SYNC_FLUSH };
enum class BrokerRole { ASYNC_MASTER, SYNC_MASTER, SLAVE };

const char* flush_disk_type_name(FlushDiskType type);
const char* broker_role_name(BrokerRole role);

struct MessageStoreConfig {
  std::string storePathRootDir = "/store";
  // Empty means {storePathRootDir}/commitlog, as in 4.9.x.
  std::string storePathCommitLog;

  int64_t mappedFileSizeCommitLog = 1024LL * 1024 * 1024;  // 1 GiB
  int64_t mappedFileSizeConsumeQueue = 300'000LL * 20;     // bytes; rounded up to 20
  int32_t maxMessageSize = 4 * 1024 * 1024;                // bytes of body

  FlushDiskType flushDiskType = FlushDiskType::ASYNC_FLUSH;
  BrokerRole brokerRole = BrokerRole::ASYNC_MASTER;
  int64_t flushIntervalCommitLog = 500;            // ms (ASYNC_FLUSH)
  int32_t flushCommitLogLeastPages = 4;            // 4 KiB pages
  int64_t flushCommitLogThoroughInterval = 10'000; // ms
  int64_t syncFlushTimeout = 5'000;                // ms (FLUSH_DISK_TIMEOUT)
  int64_t flushIntervalConsumeQueue = 1'000;       // ms
  int32_t flushConsumeQueueLeastPages = 2;
  int64_t flushConsumeQueueThoroughInterval = 60'000;  // ms
  // SYNC_FLUSH masters: the dispatcher (ReputMessageService) builds
  // ConsumeQueue and index entries only for records a flush has made
  // durable, so no consumer reads a record a power cut can still take away.
  // RocketMQ 4.x dispatches up to the written offset: a group that read an
  // unflushed record moves its consume offset past it, the cut rolls the
  // queue back, new puts reuse those queue offsets and the group never reads
  // them although they were acknowledged (apache/rocketmq #8239; 5.x fixed it
  // unconditionally in PR #8240). Default true, the safe side: a SYNC_FLUSH
  // user chose durability over latency, and the cost is small there (a
  // record becomes visible when its group commit completes, about when its
  // producer hears PUT_OK). false restores 4.x's behaviour.
  // Not applied with ASYNC_FLUSH (acknowledgement does not wait for the
  // flush, and holding visibility back for a flush interval would add up to
  // flushIntervalCommitLog to every message's end-to-end latency) nor on a
  // SLAVE (its tail is fetched again from the master at the same offsets
  // with the same bytes; the master's setting decides what is visible).
  bool dispatchFlushedOnly = true;

  bool checkCRCOnRecover = true;
  bool messageIndexEnable = true;
  bool messageIndexSafe = false;
  int32_t maxHashSlotNum = 5'000'000;
  int32_t maxIndexNum = 20'000'000;

  // Retention.
  int32_t fileReservedTime = 72;   // hours
  std::string deleteWhen = "04";   // hours of the day, ';'-separated
  int32_t diskMaxUsedSpaceRatio = 75;  // percent, clamped to [10, 95]
  int64_t cleanResourceInterval = 10'000;  // ms
  double diskSpaceWarningLevelRatio = 0.90;     // above: store not writable
  double diskSpaceCleanForciblyRatio = 0.85;    // above: delete regardless of age
  // false: a full disk never deletes segments younger than fileReservedTime
  // (puts are refused above diskSpaceWarningLevelRatio instead): a store
  // shared with other data keeps its messages whatever fills the disk.
  bool cleanFileForciblyEnable = true;

  // Replication (rocketmq-reference.md 4.2, 4.3; broker/ha/). A SLAVE
  // follows haMasterAddress when it is set (>= 6 characters, as RocketMQ's
  // check), else the master's haServerAddr the NameServer hands out.
  int64_t haSendHeartbeatInterval = 5'000;            // ms
  int64_t haHousekeepingInterval = 20'000;            // ms
  int32_t haTransferBatchSize = 32 * 1024;            // bytes per transfer chunk
  int64_t haSlaveFallbehindMax = 256LL * 1024 * 1024; // bytes; beyond: SLAVE_NOT_AVAILABLE
  int64_t slaveTimeout = 3'000;                       // ms (FLUSH_SLAVE_TIMEOUT)
  std::string haMasterAddress;

  // Delayed delivery (ScheduleMessageService, schedule_message_service.h):
  // the delay of each level (message_delay_level.h), and how often the
  // levels' delivery offsets are persisted to {config}/delayOffset.json.
  std::string messageDelayLevel{kDefaultMessageDelayLevel};
  int64_t flushDelayOffsetInterval = 10'000;  // ms

  // How often the dispatcher (ReputMessageService) checks for new CommitLog
  // bytes when it found none; RocketMQ's loop sleeps 1 ms.
  int64_t reputIntervalMs = 1;

  // Segment pre-allocation (allocate_mapped_file_service.h): the CommitLog's
  // next segment is created and allocated off the put path before it is
  // needed (RocketMQ always does this; off by default here so that the
  // simulator's traces and existing stores stay as they were). With
  // warmMapedFileEnable (RocketMQ's key and spelling) the segment is also
  // written once with zeros and synced: on a thin-provisioned disk that
  // makes filling it several times faster. Warming implies pre-allocation.
  bool allocateMappedFileEnable = false;
  bool warmMapedFileEnable = false;
  // mqlab's key (RocketMQ deletes expired segments): retention by time keeps
  // one expired CommitLog segment, renamed out of the log, and the next
  // segment is made from it instead of a new file (RocksDB's
  // recycle_log_file_num). Its blocks are written already, so it needs no
  // zeros: a warmed new segment writes every byte twice, and on a
  // thin-provisioned disk the first write is the slow kind. Deletion for
  // disk space never recycles. Implies pre-allocation. Recovery tells the old
  // records from new ones by PHYSICALOFFSET, and every write is followed by
  // an 8-byte zero end marker (mapped_file.h).
  bool recycleExpiredCommitLogEnable = false;

  // mqlab's key (RocketMQ always maps its segments): with ASYNC_FLUSH the
  // CommitLog's active segment is written through a shared mapping
  // (env::File::map_for_appends), as RocketMQ's MappedByteBuffer: a put's
  // bytes reach the page cache by a memcpy, not a pwrite system call each
  // (store_bench, 1 KiB at 1 in flight: 2.23 -> 0.99 us of CPU per put).
  // A group write of a page or more (several puts) is a pwrite all the
  // same: one system call for them all costs less than faulting each of
  // its pages in (env/posix_file_system.h). The pages ahead of the copies
  // are faulted in on a thread of the Env's (env/file_offloader.h), as
  // RocketMQ's warmMappedFile touches a segment's pages off the put path.
  // On by default; off, every group write is a pwrite. SYNC_FLUSH always
  // writes with pwrite: there every put is followed by an fdatasync, whose
  // writeback must write-protect the mapped pages again (and the next put
  // then faults), which cost each put 35-60 us more than a pwrite
  // (2026-12-03). Durability is the same either way (an acknowledged put is
  // in the page cache; flushes sync it). The simulator's Env ignores it.
  // Its price: a read error under a page being written kills the broker
  // (SIGBUS), where a pwrite would have failed the put; the pages written
  // are the segment's pre-touched or fallocated ones, rarely read.
  bool commitLogMappedWriteEnable = true;

  // mqlab's key (RocketMQ's GroupCommitService is a thread of its own): on a
  // master with SYNC_FLUSH the group commit's fdatasync runs on the thread
  // that serves the puts (env::File::sync_on_caller), in a task of its own
  // after the replies, pull responses and pushes to a slave already queued,
  // and the thread blocks while it runs, as the Java broker's send threads
  // once blocked on their flush. Handing each one to a flush thread and back
  // costs two thread wake-ups (2026-12-04, store_bench `--cases putthread`:
  // 1.00-1.21 / 1.12-1.42 / 1.05-1.13 / 1.02-1.10 times the puts per second
  // at 1 / 8 / 64 / 256 in flight; mqbroker with one sender at 1 in flight,
  // send p50 0.19 ms against 0.24; a consumer beside it got messages
  // 0.31-0.35 ms after birth against 0.36-0.37; a SYNC_MASTER with its
  // slave, p50 0.24-0.26 ms against 0.25-0.27). Pulls and other connections
  // wait while an fdatasync runs. Off, the CommitLog's syncs run on a flush
  // thread. ASYNC_FLUSH keeps its flush thread either way (its periodic
  // fdatasync of megabytes would hold up every connection), and so does a
  // SLAVE. The simulator's Env ignores it.
  bool groupCommitOnPutThreadEnable = true;

  // CommitLog write-behind (RocketMQ's TransientStorePool with
  // CommitRealTimeService; commit_real_time_service.h). On an ASYNC_FLUSH
  // master a put is acknowledged once it is in the CommitLog's write buffer;
  // every commitIntervalCommitLog ms the buffer is written to the file when
  // at least commitCommitLogLeastPages 4 KiB pages wait, or whatever waits
  // once commitCommitLogThoroughInterval ms passed since the last commit.
  // Readers (dispatch, pulls, replication) see only committed bytes, so a
  // message becomes consumable at its commit. The price: kill -9 loses what
  // was acknowledged and not yet committed (the page cache does not hold
  // it), on top of what a power cut takes.
  // RocketMQ silently runs without it with SYNC_FLUSH or on a SLAVE;
  // is_transient_store_pool_enable() says whether it applies and
  // transient_store_pool_warning() says why not.
  // transientStorePoolSize: RocketMQ keeps that many segment-sized buffers;
  // here one 1 MiB buffer is in use (commit_log.cc: a full one is committed
  // at once, which keeps it in the CPU cache and bounds memory), so the key
  // is validated (>= 1) and kept for broker.conf compatibility only.
  bool transientStorePoolEnable = false;
  int32_t transientStorePoolSize = 5;
  int64_t commitIntervalCommitLog = 200;          // ms
  int32_t commitCommitLogLeastPages = 4;          // 4 KiB pages
  int64_t commitCommitLogThoroughInterval = 200;  // ms
  // MessageStoreConfig.isTransientStorePoolEnable: asked for, ASYNC_FLUSH,
  // and not a SLAVE.
  bool is_transient_store_pool_enable() const {
    return transientStorePoolEnable && flushDiskType == FlushDiskType::ASYNC_FLUSH &&
           brokerRole != BrokerRole::SLAVE;
  }
  // Non-empty when transientStorePoolEnable=true is ignored, saying why.
  std::string transient_store_pool_warning() const;

  std::string commit_log_dir() const;
  std::string consume_queue_dir() const;
  std::string index_dir() const;
  std::string checkpoint_path() const;
  std::string abort_file_path() const;
  std::string config_dir() const;
  int64_t consume_queue_file_size() const;  // mappedFileSizeConsumeQueue rounded up to 20
  // messageDelayLevel in ms, level 1 first. Requires: validate() ok.
  std::vector<int64_t> delay_levels_ms() const;

  // Rejects values RocketMQ would not run with (a segment too small for one
  // maximum message, zero intervals), naming the key.
  Status validate() const;

  // Applies one broker.conf key and value (the key->field table is in
  // message_store_config.cc). Returns false for a key that is not a
  // MessageStoreConfig key (the caller tries BrokerConfig's); InvalidArgument
  // "key=value: what is allowed" when the value does not parse.
  // testOnlyAckBeforeSync is deliberately not a key: no config file can
  // switch a real broker into acknowledging before the fsync.
  Result<bool> set_property(std::string_view key, std::string_view value);
  // Every key with its effective value as text (storePathCommitLog derived
  // when empty), in the form set_property() accepts back.
  std::map<std::string, std::string> to_properties() const;

  // Test-only: acknowledge SYNC_FLUSH puts before their fsync completes. The
  // canary property test sets it to prove the harness sees the loss it causes.
  bool testOnlyAckBeforeSync = false;
};

}  // namespace mqlab::store
