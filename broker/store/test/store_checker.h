// StoreChecker: reads a recovered MessageStore back and checks it against
// itself and against a model of what was written.
//   - scan_log(): every record of the CommitLog, in order, by a full scan;
//   - check_consume_queues_agree(): every ConsumeQueue holds exactly the
//     entries the log implies, and no queue holds more;
//   - check_index_agrees(): every key in the log is found by query_message,
//     at exactly the offsets the log has for it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "broker/store/message_store.h"
#include "broker/store/schedule_message_service.h"

namespace mqlab::store::testing {

struct LoggedRecord {
  PhyOffset offset;
  std::vector<uint8_t> bytes;
  std::string topic;
  int32_t queue_id = 0;
  QueueOffset queue_offset;
  int64_t tags_code = 0;
  bool consumable = true;  // not a prepared or rolled-back transaction message
  std::vector<std::string> keys;
  std::string body;
};

// The whole CommitLog, verified record by record (CRC included).
inline std::vector<LoggedRecord> scan_log(MessageStore& store) {
  std::vector<LoggedRecord> records;
  CommitLogScanner scanner(store.commit_log(), store.min_phy_offset(), store.max_phy_offset(), /*check_crc=*/true);
  while (auto scanned = scanner.next()) {
    const DecodedMessage& m = scanned->record.message;
    LoggedRecord record;
    record.offset = scanned->offset;
    record.topic = std::string(m.topic);
    record.queue_id = m.queue_id;
    record.queue_offset = m.queue_offset;
    record.consumable = !is_prepared_or_rollback(m.sysflag);
    const MessageProperties properties = m.properties();
    if (auto it = properties.find(std::string(kPropertyTags)); it != properties.end()) record.tags_code = tags_code(it->second);
    if (auto it = properties.find(std::string(kPropertyKeys)); it != properties.end()) {
      MessageToStore parse;
      parse.properties = properties;
      record.keys = parse.keys();
    }
    record.body.assign(m.body.begin(), m.body.end());
    auto raw = store.commit_log().read(scanned->offset, scanned->record.total_size);
    if (raw.ok()) record.bytes = std::move(raw).value();
    records.push_back(std::move(record));
  }
  EXPECT_FALSE(scanner.stopped_on_corruption()) << "corrupt record visible in a recovered log: " << scanner.stop_reason();
  EXPECT_EQ(scanner.position(), store.max_phy_offset()) << "scan ended before the log's end: " << scanner.stop_reason();
  return records;
}

// ::testing::AssertionResult so RapidCheck properties can RC_ASSERT on it.
inline ::testing::AssertionResult consume_queues_agree(MessageStore& store, const std::vector<LoggedRecord>& log) {
  std::map<std::pair<std::string, int32_t>, std::vector<const LoggedRecord*>> expected;
  for (const LoggedRecord& record : log) {
    // A prepared or rolled-back transaction message has no ConsumeQueue
    // entry (the dispatcher skips it; its queue offset is 0).
    if (record.consumable) expected[{record.topic, record.queue_id}].push_back(&record);
  }
  for (const auto& [key, records] : expected) {
    ConsumeQueue* queue = store.find_consume_queue(key.first, key.second);
    if (!queue) return ::testing::AssertionFailure() << "no consume queue for " << key.first << "-" << key.second;
    for (const LoggedRecord* record : records) {
      auto entry = queue->get(record->queue_offset);
      if (!entry.ok() || !entry->has_value()) {
        return ::testing::AssertionFailure() << key.first << "-" << key.second << ": no entry at queue offset "
                                             << record->queue_offset.to_string();
      }
      const ConsumeQueueEntry& e = **entry;
      // The schedule topic's tags code is a deliver time, from the store's
      // delay levels, which the record's TAGS do not give: not compared here.
      const bool tags_code_known = key.first != kScheduleTopic;
      if (e.offset != record->offset || e.size != static_cast<int32_t>(record->bytes.size()) ||
          (tags_code_known && e.tags_code != record->tags_code)) {
        return ::testing::AssertionFailure() << key.first << "-" << key.second << " offset "
                                             << record->queue_offset.to_string() << ": entry (" << e.offset.to_string()
                                             << ", " << e.size << ", tags code " << e.tags_code
                                             << ") but the log has (" << record->offset.to_string() << ", "
                                             << record->bytes.size() << ", tags code " << record->tags_code << ")";
      }
    }
    const QueueOffset expected_max = records.back()->queue_offset + 1;
    if (queue->max_offset() != expected_max) {
      return ::testing::AssertionFailure() << key.first << "-" << key.second << ": max offset "
                                           << queue->max_offset().to_string() << ", log implies "
                                           << expected_max.to_string();
    }
  }
  for (const auto& [topic, queue_id] : store.queues()) {
    ConsumeQueue* queue = store.find_consume_queue(topic, queue_id);
    if (expected.count({topic, queue_id}) == 0 && queue->max_offset() > queue->min_offset()) {
      return ::testing::AssertionFailure() << topic << "-" << queue_id << " holds entries the log does not have";
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult index_agrees(MessageStore& store, const std::vector<LoggedRecord>& log,
                                               const std::set<std::pair<std::string, std::string>>& extra_keys = {}) {
  std::map<std::pair<std::string, std::string>, std::set<int64_t>> expected;
  for (const LoggedRecord& record : log) {
    for (const std::string& key : record.keys) expected[{record.topic, key}].insert(record.offset.value());
  }
  for (const auto& key : extra_keys) expected.try_emplace(key);
  for (const auto& [key, offsets] : expected) {
    auto found = store.query_message(key.first, key.second, 1000, 0, INT64_MAX);
    if (!found.ok()) return ::testing::AssertionFailure() << "query failed: " << found.status().to_string();
    std::set<int64_t> got;
    for (const auto& bytes : *found) {
      auto decoded = decode_record(bytes);
      if (!decoded.ok()) return ::testing::AssertionFailure() << "query returned a corrupt record";
      got.insert(decoded->message.physical_offset.value());
    }
    if (got != offsets) {
      return ::testing::AssertionFailure() << "index for " << key.first << "#" << key.second << " finds "
                                           << got.size() << " records, the log has " << offsets.size();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace mqlab::store::testing
