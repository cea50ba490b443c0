// QueryMessageProcessor: looking messages up rather than consuming them
// (RocketMQ's QueryMessageProcessor); what mqadmin queryMsgByKey and
// queryMsgById send.
//
//   QUERY_MESSAGE (12)  ext topic*, key*, maxNum*, beginTimestamp*,
//     endTimestamp*, optional _UNIQUE_KEY_QUERY=true (key is a UNIQ_KEY;
//     maxNum forced to defaultQueryMaxNum 32). maxNum is capped at
//     maxMsgsNumBatch (64). SUCCESS with ext indexLastUpdateTimestamp and
//     indexLastUpdatePhyoffset and body = the matching records concatenated,
//     newest first; QUERY_NOT_FOUND "can not find message, maybe time range
//     not correct" when none.
//   VIEW_MESSAGE_BY_ID (33)  ext offset* (the CommitLog part of an offset
//     msgId). SUCCESS with body = that one record, else SYSTEM_ERROR
//     "can not find message by the offset, N".
//
// The index keeps no "last update" stamp we can read, so
// indexLastUpdatePhyoffset is the dispatcher's position (everything below it
// is indexed) and indexLastUpdateTimestamp the newest store time among the
// records returned (0 when none); clients use them only to merge answers of
// several brokers.
#pragma once

#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"

namespace mqlab::broker {

class BrokerController;

class QueryMessageProcessor {
 public:
  explicit QueryMessageProcessor(BrokerController& controller) : controller_(controller) {}

  void query_message(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);
  void view_message_by_id(const remoting::RemotingCommand& request, remoting::ResponseChannel channel);

 private:
  BrokerController& controller_;
};

}  // namespace mqlab::broker
