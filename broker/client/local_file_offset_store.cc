#include "broker/client/local_file_offset_store.h"

#include <charconv>
#include <utility>

#include "broker/env/path.h"

namespace mqlab::client {
namespace {

std::string file_path(const std::string& dir, const std::string& client_id, const std::string& group) {
  MQ_ASSERT(!dir.empty());
  MQ_ASSERT(!client_id.empty());
  MQ_ASSERT(!group.empty());
  return env::join_path(env::join_path(env::join_path(dir, client_id), group), LocalFileOffsetStore::kFileName);
}

Status expect_object(const nlohmann::json& value, const std::string& where) {
  if (value.is_object()) return Status::Ok();
  return Status::Corruption(where + ": expected an object, found " + std::string(value.type_name()));
}

}  // namespace

LocalFileOffsetStore::LocalFileOffsetStore(env::Env& env, const std::string& dir, const std::string& client_id,
                                           const std::string& group)
    : file_(env, file_path(dir, client_id, group)) {}

Result<meta::LoadSource> LocalFileOffsetStore::load() {
  return file_.load([this](const std::string& content) { return decode(content); });
}

// The whole file or nothing: a table that fails anywhere is not installed,
// so the .bak gets its turn.
Status LocalFileOffsetStore::decode(const std::string& content) {
  MQ_ASSIGN_OR_RETURN(nlohmann::json root, meta::parse_json(content, path()));
  MQ_RETURN_IF_ERROR(expect_object(root, path()));
  std::map<MessageQueue, int64_t> table;
  const auto offsets = root.find("offsetTable");
  if (offsets != root.end() && !offsets->is_null()) {
    MQ_RETURN_IF_ERROR(expect_object(*offsets, path() + ": offsetTable"));
    for (const auto& [topic, brokers] : offsets->items()) {
      const std::string topic_where = path() + ": offsetTable: \"" + topic + "\"";
      MQ_RETURN_IF_ERROR(expect_object(brokers, topic_where));
      for (const auto& [broker, queues] : brokers.items()) {
        const std::string where = topic_where + ": \"" + broker + "\"";
        MQ_RETURN_IF_ERROR(expect_object(queues, where));
        for (const auto& item : queues.items()) {
          const std::string& key = item.key();
          int32_t queue_id = -1;
          const auto [stop, error] = std::from_chars(key.data(), key.data() + key.size(), queue_id);
          if (key.empty() || error != std::errc() || stop != key.data() + key.size() || queue_id < 0) {
            return Status::Corruption(where + ": queue id \"" + key + "\" is not an int >= 0");
          }
          int64_t offset = -1;
          MQ_RETURN_IF_ERROR(meta::read_json_field(queues, key.c_str(), &offset, where));
          if (offset < 0) return Status::Corruption(where + ": queue " + key + ": offset " + std::to_string(offset));
          table[MessageQueue{topic, broker, queue_id}] = offset;
        }
      }
    }
  }
  table_ = std::move(table);
  return Status::Ok();
}

std::string LocalFileOffsetStore::encode() const {
  nlohmann::json table = nlohmann::json::object();
  for (const auto& [queue, offset] : table_) {
    MQ_ASSERT(offset >= 0);
    table[queue.topic][queue.brokerName][std::to_string(queue.queueId)] = offset;
  }
  nlohmann::json root = nlohmann::json::object();
  root["offsetTable"] = std::move(table);
  return meta::dump_json(root);
}

std::optional<int64_t> LocalFileOffsetStore::offset(const MessageQueue& queue) const {
  const auto it = table_.find(queue);
  if (it == table_.end()) return std::nullopt;
  return it->second;
}

void LocalFileOffsetStore::record(const MessageQueue& queue, int64_t offset) {
  MQ_ASSERT(offset >= 0);
  table_[queue] = offset;
}

void LocalFileOffsetStore::persist(std::function<void(Status)> done) {
  std::string content = encode();
  MQ_ASSERT(!content.empty());
  file_.persist(std::move(content), std::move(done));
}

}  // namespace mqlab::client
