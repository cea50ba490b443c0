// MessageExtShelf: the MessageExts one consumer queue has handed out, taken
// back for their room once nobody else holds them.
//
// A pulled message is decoded into a shared MessageExt that the process
// queue, the posted handler call and the handler's report share until the
// message is consumed; then the last of them lets go. Made anew for each
// message, it cost four allocations (the MessageExt with its count, its
// body, its properties and its msgId: 32 hex digits, past std::string's
// inline room) and as many frees: a consumer does little else per message,
// and the simulator's standard scenario has two consumer groups.
//
// The shelf keeps the last few it handed out, oldest first. When asked for
// one it looks at the oldest: if the shelf's is the only reference left
// (use_count() == 1), nobody can reach the message any more (no weak_ptr
// to a MessageExt is ever made), so it is handed out again, emptied to a
// default MessageExt but for the room of its body, properties and msgId.
// Otherwise a new one is made and the oldest, still in use, leaves the
// shelf when it is full: its holders free it as before. Messages are
// consumed about in pull order, so the oldest is the one most likely free.
//
// Thread safety: one thread takes (the consumer's); other threads may
// still hold and release handed-out messages. A use count of one read
// here is final (only an owner can copy a shared_ptr, and the shelf is
// the only owner left); the acquire fence after reading it orders the
// other threads' last reads of the message before our writes.
//
// Invariant: kept_ holds at most kMaxKept messages, in the order they were
// last handed out starting at oldest_ and wrapping around (a ring).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "broker/client/message.h"

namespace mqlab::client {

class MessageExtShelf {
 public:
  // Enough for a pull of 32 (pullBatchSize's default) and its successor.
  static constexpr size_t kMaxKept = 64;

  // A default MessageExt, maybe one handed out before and let go since.
  std::shared_ptr<MessageExt> take();

  size_t kept() const { return kept_.size(); }

 private:
  std::vector<std::shared_ptr<MessageExt>> kept_;
  size_t oldest_ = 0;
};

// Puts message back to a default MessageExt, keeping the room its body,
// properties and msgId hold (the fields that outgrow a string's own).
void clear_keeping_room(MessageExt& message);

}  // namespace mqlab::client
