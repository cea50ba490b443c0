#include "broker/admin_cli/perf_history.h"

#include <nlohmann/json.hpp>
#include <span>

#include "broker/common/assert.h"

namespace mqlab::admin_cli {
namespace {

// Past this many buffered bytes a line is written at once, not at the next flush.
constexpr size_t kFlushBytes = 64 * 1024;

}  // namespace

Result<std::unique_ptr<PerfHistory>> PerfHistory::open(env::Env& env, const std::string& path,
                                                       std::string_view process, std::string_view role) {
  MQ_ASSERT(role == "producer" || role == "consumer");
  MQ_ASSIGN_OR_RETURN(std::shared_ptr<env::File> file, env.files().open(path, {.create = true, .truncate = true}));
  std::unique_ptr<PerfHistory> history(new PerfHistory(std::move(file)));
  history->append(nlohmann::ordered_json{{"type", "history"},
                                 {"format", "mqlab-history"},
                                 {"version", 1},
                                 {"process", process},
                                 {"role", role},
                                 {"clock", "wall_ns"}}
                      .dump());
  MQ_RETURN_IF_ERROR(history->flush().with_context("writing the history file " + path));
  return history;
}

PerfHistory::~PerfHistory() {
  // The owner flushes at the end of its run and reports a failure; this
  // only catches a path that forgot to (a killed process never gets here).
  (void)flush();
}

void PerfHistory::send(std::string_view producer, uint64_t seq, Nanos at, std::string_view key, uint32_t body_crc,
                       std::string_view topic) {
  MQ_ASSERT(!producer.empty());
  append(nlohmann::ordered_json{{"type", "send"},   {"producer", producer}, {"seq", seq},
                        {"at", at},         {"key", key},           {"body_crc", body_crc},
                        {"topic", topic}}
             .dump());
}

void PerfHistory::send_result(const SendResultLine& line) {
  MQ_ASSERT(!line.producer.empty());
  MQ_ASSERT(!line.outcome.empty());
  append(nlohmann::ordered_json{{"type", "send_result"},
                        {"producer", line.producer},
                        {"seq", line.seq},
                        {"at", line.at},
                        {"outcome", line.outcome},
                        {"broker_name", line.broker_name},
                        {"queue_id", line.queue_id},
                        {"queue_offset", line.queue_offset},
                        {"msg_id", line.msg_id},
                        {"attempts", line.attempts}}
             .dump());
}

void PerfHistory::receipt(const ReceiptLine& line) {
  MQ_ASSERT(!line.producer.empty());
  MQ_ASSERT(!line.group.empty());
  append(nlohmann::ordered_json{{"type", "receipt"},
                        {"producer", line.producer},
                        {"seq", line.seq},
                        {"at", line.at},
                        {"group", line.group},
                        {"consumer", line.consumer},
                        {"broker_name", line.broker_name},
                        {"queue_id", line.queue_id},
                        {"queue_offset", line.queue_offset},
                        {"body_crc", line.body_crc},
                        {"reconsume_times", line.reconsume_times}}
             .dump());
}

void PerfHistory::append(const std::string& line) {
  MQ_ASSERT(line.find('\n') == std::string::npos);  // nlohmann escapes newlines inside strings
  buffer_ += line;
  buffer_ += '\n';
  ++lines_;
  if (buffer_.size() >= kFlushBytes) (void)flush();
}

Status PerfHistory::flush() {
  if (!failed_.ok()) return failed_;
  if (buffer_.empty()) return Status::Ok();
  const Status written = file_->pwrite(
      written_bytes_, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size()));
  if (!written.ok()) {
    failed_ = written.with_context("writing the history file " + file_->path());
    return failed_;
  }
  written_bytes_ += buffer_.size();
  buffer_.clear();
  return Status::Ok();
}

}  // namespace mqlab::admin_cli
