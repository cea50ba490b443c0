// PullMessageProcessor: PULL_MESSAGE (11), a consumer reading one queue
// (RocketMQ's PullMessageProcessor.processRequest, 4.9.7).
//
// Request ext (all required but subscription and expressionType):
//   consumerGroup topic queueId queueOffset maxMsgNums sysFlag commitOffset
//   suspendTimeoutMillis subscription subVersion expressionType
// sysFlag bits: COMMIT_OFFSET 1, SUSPEND 2, SUBSCRIPTION 4.
//
// Checks, in order: broker readable (NO_PERMISSION); subscription group
// found or auto-created (SUBSCRIPTION_GROUP_NOT_EXIST) and consumeEnable
// (NO_PERMISSION); topic exists (TOPIC_NOT_EXIST) and is readable
// (NO_PERMISSION); 0 <= queueId < readQueueNums (SYSTEM_ERROR); the filter
// from `subscription` with the SUBSCRIPTION flag (SUBSCRIPTION_PARSE_FAILED),
// else from the group's heartbeat (SUBSCRIPTION_NOT_EXIST,
// SUBSCRIPTION_NOT_LATEST, NO_PERMISSION for a broadcast group that may
// not); only TAG expressions (SYSTEM_ERROR otherwise).
//
// Store result -> code (nextBeginOffset as the store computed it):
//   FOUND                          SUCCESS, body = the records, concatenated
//   NO_MATCHED_MESSAGE             PULL_RETRY_IMMEDIATELY
//   MESSAGE_WAS_REMOVING           PULL_RETRY_IMMEDIATELY
//   OFFSET_FOUND_NULL              PULL_NOT_FOUND
//   OFFSET_OVERFLOW_ONE            PULL_NOT_FOUND
//   NO_MESSAGE_IN_QUEUE, no queue  PULL_NOT_FOUND at offset 0, else PULL_OFFSET_MOVED
//   OFFSET_TOO_SMALL               PULL_OFFSET_MOVED
//   OFFSET_OVERFLOW_BADLY          PULL_OFFSET_MOVED
// On a SLAVE (without offsetCheckInSlave) PULL_OFFSET_MOVED becomes
// PULL_RETRY_IMMEDIATELY with nextBeginOffset = the requested offset.
// Every store-backed answer carries nextBeginOffset, minOffset, maxOffset and
// suggestWhichBrokerId as strings, and its remark is the store status name.
// A SUCCESS body is the records as they lie in the CommitLog, sent as file
// regions straight from the segment files (sendfile: zero copy, as RocketMQ
// with transferMsgByHeap=false), adjacent records merged into one region.
// The records are read and copied instead with transferMsgByHeap=true, when
// one cannot go as a region (its region past its file's end), or when the
// regions average under zeroCopyMinRegionBytes (records of one queue
// interleaved with others': a sendfile per small record costs more CPU than
// the copy). A copied body is never empty: if no record can
// be read the answer is SYSTEM_ERROR (the client retries after 3 s); if only
// a prefix can, that prefix goes and nextBeginOffset follows its last record.
// A region that fails when sent breaks the connection (the client
// reconnects and pulls again from its offset).
//
// PULL_NOT_FOUND with the SUSPEND flag (on the first run) is parked in the
// PullRequestHoldService instead of answered; its re-run may not suspend.
// With the COMMIT_OFFSET flag, on the first run and not on a SLAVE,
// commitOffset (when >= 0) is stored for the group.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/status.h"
#include "broker/meta/subscription_group.h"
#include "broker/processor/pull_message_request_header.h"
#include "broker/processor/pull_request_hold_service.h"
#include "broker/processor/subscription_filter.h"
#include "broker/remoting/lineage_memo.h"
#include "broker/remoting/remoting_command.h"
#include "broker/remoting/remoting_server.h"
#include "broker/store/store_types.h"

namespace mqlab::broker {

class BrokerController;

// InvalidArgument naming the field for a missing or malformed one.
Result<PullMessageRequestHeader> parse_pull_message_header(const remoting::RemotingCommand& request);
// The same read into header (default-constructed), for the processor: a
// Result moved the header in and out again, two moves of its four strings.
Status read_pull_message_header(const remoting::RemotingCommand& request, PullMessageRequestHeader& header);

// read_pull_message_header for the requests of many connections: a request
// that follows one read before in its lineage (remoting/lineage_memo.h) has
// only its changed values read. The same header, or the same error, as the
// full read.
class PullMessageHeaderReader {
 public:
  // As read_pull_message_header.
  Status read(const remoting::RemotingCommand& request, PullMessageRequestHeader& header);
  // As read, without copying the memo's header out: the header read is the
  // memo's (valid until the next read) or storage, filled then (as
  // default-constructed). Most pulls follow their lineage, and the copy of
  // a header's strings out of the memo was most of reading one.
  Result<const PullMessageRequestHeader*> read_in_place(const remoting::RemotingCommand& request,
                                                        PullMessageRequestHeader& storage);

 private:
  // What a lineage's last request read as, and which field each place of
  // its table holds.
  struct Memo {
    PullMessageRequestHeader header;
    std::array<uint8_t, remoting::ExtFieldsLineage::kMaxFields> field_at{};  // a PullField
  };
  remoting::LineageMemo<Memo> memo_;
};

class PullMessageProcessor {
 public:
  explicit PullMessageProcessor(BrokerController& controller) : controller_(controller) {}

  // The registered entry point: may suspend.
  void process(const remoting::RemotingCommand& request, remoting::ResponseChannel channel) {
    process_request(request, std::move(channel), /*broker_allow_suspend=*/true);
  }
  // Parses the request's header, then runs it (below).
  void process_request(const remoting::RemotingCommand& request, remoting::ResponseChannel channel,
                       bool broker_allow_suspend);
  // A parked pull woken by the hold service: answered whatever happens. Its
  // header was parsed at its first run (the request has not changed since).
  // Taken by reference: a PullRequest costs more to move than to parse.
  void process_woken(PullRequest& pull);

 private:
  struct Refusal {
    int32_t code;
    std::string remark;
  };
  // header is copied into the PullRequest when the pull is parked (it may
  // be the header reader's memo, which the next request changes); read
  // where it lies otherwise.
  void process_parsed(const PullMessageRequestHeader& header, remoting::ResponseChannel channel,
                      bool broker_allow_suspend);
  // Sets group to the pull's subscription group (found or auto-created)
  // unless it refuses.
  std::optional<Refusal> check_access(const PullMessageRequestHeader& header,
                                      const meta::SubscriptionGroupConfig*& group);
  // Requires: filter as default-constructed (it passes everything), which
  // a subscription to every tag leaves it.
  std::optional<Refusal> resolve_filter(const PullMessageRequestHeader& header,
                                        const meta::SubscriptionGroupConfig& group, SubscriptionFilter& filter);
  // Refuses any expression type but TAG, as RocketMQ's broker without its
  // filter server (enablePropertyFilter false).
  static std::optional<Refusal> check_expression_type(std::string_view expression_type);
  // The response code for a store result, before suspension and slave rules.
  static int32_t code_for(store::GetMessageStatus status, int64_t requested_offset);
  // What a pull answers besides its header's fields and its body: a code
  // and a remark, always a literal (a status name, or copy_body's failure).
  // A JSON answer is written from it; building a RemotingCommand to carry
  // the two cost its construction, a string and its destruction a pull.
  struct PullAnswer {
    int32_t code = 0;
    std::string_view remark;
  };
  // The body of a FOUND answer: file regions to send after the response
  // (zero copy), or, with transferMsgByHeap or when a region cannot be sent
  // as one, nothing, the records having been copied into body (empty).
  // next_begin is the result's, moved back by copy_body.
  std::vector<remoting::BodyFileRegion> fill_body(const store::GetMessageResult& result, PullAnswer& answer,
                                                  std::vector<uint8_t>& body, QueueOffset& next_begin);
  // The result's records as regions, adjacent ones merged; nullopt when one
  // of them cannot be sent from its file.
  static std::optional<std::vector<remoting::BodyFileRegion>> sendable_regions(const store::GetMessageResult& result);
  // Copies the records into body (empty); false (the answer turned into
  // SYSTEM_ERROR) when not one record could be read. A record it cannot
  // read ends the body, and next_begin becomes the queue offset after the
  // last record copied: the consumer asks for the rest again instead of
  // skipping it.
  bool copy_body(const store::GetMessageResult& result, PullAnswer& answer, std::vector<uint8_t>& body,
                 QueueOffset& next_begin);
  void commit_offset_if_asked(const PullMessageRequestHeader& header, bool broker_allow_suspend);

  // The store's answer to a pull, borrowed from home (left empty meanwhile,
  // so a nested pull would use a result of its own) and put back emptied.
  struct KeptGetMessageResult {
    explicit KeptGetMessageResult(store::GetMessageResult& home) : home(home), result(std::move(home)) {}
    KeptGetMessageResult(const KeptGetMessageResult&) = delete;
    KeptGetMessageResult& operator=(const KeptGetMessageResult&) = delete;
    ~KeptGetMessageResult() {
      result.messages.clear();  // the files go; the room stays
      home = std::move(result);
    }
    store::GetMessageResult& home;
    store::GetMessageResult result;
  };

  BrokerController& controller_;
  PullMessageHeaderReader header_reader_;
  store::GetMessageResult got_;  // KeptGetMessageResult's home
  // The copied body of an answer: a JSON one goes into the frame from here,
  // and the buffer is kept for its room (a pull's answer allocated a body
  // and then a frame), up to kKeptBodyBytes; a command takes it whole.
  std::vector<uint8_t> copied_body_;
  static constexpr size_t kKeptBodyBytes = 1 << 20;
};

}  // namespace mqlab::broker
