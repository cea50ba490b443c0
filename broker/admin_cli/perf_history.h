// PerfHistory: the history file of `mqadmin perf produce|consume --history
// FILE`: every send invocation and outcome, every receipt, with wall-clock
// timestamps, so `mqsim check` judges a real run with the simulator's own
// checker (sim/checker.h). The record vocabulary is sim/history.h's; the
// reader is sim/history_file.h (broker/ cannot include sim/, so the format is
// this table, the contract of both).
//
// JSON lines, one object per line (keys in the order below, "type" first),
// told apart by "type":
// | type        | fields                                                                 | meaning                        |
// |-------------|------------------------------------------------------------------------|--------------------------------|
// | history     | format "mqlab-history", version 1, process, role, clock "wall_ns"      | the first line of every file   |
// | send        | producer, seq, at, key, body_crc, topic                                | a send invoked                 |
// | send_result | producer, seq, at, outcome, broker_name, queue_id, queue_offset,      | how it ended                   |
// |             | msg_id, attempts                                                       |                                |
// | receipt     | producer, seq, at, group, consumer, broker_name, queue_id,            | a message handed to a consumer |
// |             | queue_offset, body_crc, reconsume_times                                 | (and acknowledged by it)       |
// | event       | at, what, target, detail, fault_index                                  | a fault, a process start/stop  |
// at: nanoseconds since the Unix epoch (env.clock().wall_ns()), so files of
// processes on one host merge. outcome: SEND_OK, FLUSH_DISK_TIMEOUT,
// FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, FAILED, UNKNOWN (a send with no
// send_result line is pending: its process died first). body_crc: CRC-32
// (IEEE) of the body as sent, or as received; a receipt whose CRC differs
// from its send's is corrupted. (producer, seq) names a message in every
// file: the producer puts both in the message's properties (kPropertyProducer,
// kPropertySeq) and a consumer reads them back.
//
// Lines are buffered and written (pwrite, to the page cache) at least once
// a second and when the buffer passes 64 KiB, so a killed producer loses at
// most its last second of history; a clean end writes everything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "broker/common/status.h"
#include "broker/env/env.h"

namespace mqlab::admin_cli {

// The message properties a history-writing producer sets.
inline constexpr char kPropertyProducer[] = "PRODUCER";
inline constexpr char kPropertySeq[] = "SEQ";  // as mqsim's producers (sim/sim_apps.cc)

struct SendResultLine {
  std::string_view producer;
  uint64_t seq = 0;
  Nanos at = 0;
  std::string_view outcome;  // client::send_status_name
  std::string_view broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  std::string_view msg_id;
  int32_t attempts = 0;
};

struct ReceiptLine {
  std::string_view producer;
  uint64_t seq = 0;
  Nanos at = 0;
  std::string_view group;
  std::string_view consumer;
  std::string_view broker_name;
  int32_t queue_id = -1;
  int64_t queue_offset = -1;
  uint32_t body_crc = 0;
  int32_t reconsume_times = 0;
};

class PerfHistory {
 public:
  // Creates (or empties) path and writes the history line. role: "producer"
  // or "consumer"; process names the writer.
  static Result<std::unique_ptr<PerfHistory>> open(env::Env& env, const std::string& path, std::string_view process,
                                                   std::string_view role);
  ~PerfHistory();
  PerfHistory(const PerfHistory&) = delete;
  PerfHistory& operator=(const PerfHistory&) = delete;

  void send(std::string_view producer, uint64_t seq, Nanos at, std::string_view key, uint32_t body_crc,
            std::string_view topic);
  void send_result(const SendResultLine& line);
  void receipt(const ReceiptLine& line);
  // Writes what is buffered. A failed write (disk full) is reported once
  // and the history is then incomplete: the caller stops the run.
  Status flush();
  uint64_t lines() const { return lines_; }

 private:
  PerfHistory(std::shared_ptr<env::File> file) : file_(std::move(file)) {}
  void append(const std::string& line);

  std::shared_ptr<env::File> file_;
  std::string buffer_;
  uint64_t written_bytes_ = 0;
  uint64_t lines_ = 0;
  Status failed_;
};

}  // namespace mqlab::admin_cli
