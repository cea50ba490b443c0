// LocalFileOffsetStore: where a broadcasting consumer keeps its offsets
// between runs (RocketMQ's LocalFileOffsetStore): every consumer of a
// broadcasting group reads every queue, so the broker keeps no offset for it.
//
// File: <localOffsetStoreDir>/<clientId>/<group>/offsets.json, through the
// Env's files with meta::ConfigFile's recipe (write .tmp, fsync, copy the
// current file to .bak, rename, directory sync), so a crash or power loss at
// any instant leaves the previous or the new table. Load reads the file and
// falls back to offsets.json.bak when it is missing, empty or does not parse,
// logging at WARN which copy it used and why (RocketMQ's readLocalOffsetBak);
// when both hold garbage the consumer does not start (Corruption naming both
// files) rather than reconsume or skip everything.
//
// Format (deviation: Java's fastjson writes MessageQueue objects as map keys,
// {"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:12}}, which is
// not JSON; ours is, and nests the same key):
//   {"offsetTable":{"T":{"broker-a":{"0":12,"1":7}}}}
//
// Invariants: offsets are >= 0; the table only grows by record(); what the
// file holds is a table record() saw (a persist writes the table as it is
// when called; a newer persist supersedes an older one in flight).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "broker/client/message_queue.h"
#include "broker/common/status.h"
#include "broker/env/env.h"
#include "broker/meta/config_file.h"

namespace mqlab::client {

class LocalFileOffsetStore {
 public:
  static constexpr const char* kFileName = "offsets.json";

  // Requires: dir, client_id and group non-empty.
  LocalFileOffsetStore(env::Env& env, const std::string& dir, const std::string& client_id, const std::string& group);

  // Reads offsets.json (else its .bak) into the table. Call once, before
  // the first persist.
  Result<meta::LoadSource> load();

  std::optional<int64_t> offset(const MessageQueue& queue) const;
  // Sets queue's offset in the table (persist writes it).
  void record(const MessageQueue& queue, int64_t offset);
  // Writes the whole table; done(status) once durable or failed.
  void persist(std::function<void(Status)> done);

  const std::map<MessageQueue, int64_t>& table() const { return table_; }
  const std::string& path() const { return file_.path(); }

 private:
  Status decode(const std::string& content);
  std::string encode() const;

  meta::ConfigFile file_;
  std::map<MessageQueue, int64_t> table_;
};

}  // namespace mqlab::client
