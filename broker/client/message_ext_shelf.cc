#include "broker/client/message_ext_shelf.h"

#include <atomic>
#include <string>
#include <utility>

#include "broker/common/assert.h"

namespace mqlab::client {

void clear_keeping_room(MessageExt& message) {
  std::vector<uint8_t> body = std::move(message.body);
  std::string properties_text = std::move(message.properties_text);
  std::string msg_id = std::move(message.msgId);
  body.clear();
  properties_text.clear();
  msg_id.clear();
  message = MessageExt{};
  message.body = std::move(body);
  message.properties_text = std::move(properties_text);
  message.msgId = std::move(msg_id);
}

std::shared_ptr<MessageExt> MessageExtShelf::take() {
  MQ_ASSERT(kept_.size() <= kMaxKept);
  MQ_ASSERT(kept_.empty() ? oldest_ == 0 : oldest_ < kept_.size());
  if (!kept_.empty() && kept_[oldest_].use_count() == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);  // the file comment
    std::shared_ptr<MessageExt> again = kept_[oldest_];
    clear_keeping_room(*again);
    oldest_ = (oldest_ + 1) % kept_.size();  // it is the newest now
    return again;
  }
  auto made = std::make_shared<MessageExt>();
  if (kept_.size() < kMaxKept) {
    // The newest goes just before the oldest, which moves up one.
    kept_.insert(kept_.begin() + static_cast<std::ptrdiff_t>(oldest_), made);
    oldest_ = (oldest_ + 1) % kept_.size();
  } else {
    kept_[oldest_] = made;  // the oldest, still held, leaves the shelf
    oldest_ = (oldest_ + 1) % kMaxKept;
  }
  return made;
}

}  // namespace mqlab::client
