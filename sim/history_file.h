// History files: what real runs record (mqadmin perf produce|consume
// --history, and mqrealrun's fault and process events), read back into one
// History so the checker (sim/checker.h) judges a real run with the very
// code that judges a simulated one. The format, JSON lines of records named
// as sim/history.h names them, is specified once, in
// broker/admin_cli/perf_history.h (the writer; broker/ cannot include sim/).
//
// Producers and consumers are separate processes with files of their own.
// A message is named by (producer, seq) in all of them; loading merges every
// file, gives each send a History seq (sends ordered by invocation time,
// then producer, then seq) and maps every receipt to it. Timestamps are wall
// clock ns; they become ns since the run's origin: a "run_start" event when
// one is given, else the earliest timestamp of any file.
//
// Bad input is an InvalidArgument naming file:line and what was expected;
// nothing is guessed. Cross-file facts (a send_result whose send no file
// holds, a send recorded twice) name both places.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "broker/common/status.h"
#include "sim/history.h"

namespace mqlab::sim {

struct LoadedHistory {
  History history;
  std::vector<std::string> files;
  Nanos origin_wall_ns = 0;  // wall-clock instant of time 0
  Nanos end = 0;             // the run's end since origin: a "run_end" event, else the last timestamp
  std::vector<std::string> consumer_groups;  // every group with a receipt, sorted
  std::vector<std::string> producers;        // every producer with a send, sorted
  std::vector<uint64_t> producer_seqs;       // by History seq: the seq its producer gave it
  int64_t receipts_without_send = 0;  // naming a (producer, seq) no file sent: its producer's file is missing
  int64_t completions_before_invocation = 0;  // the wall clock stepped back mid-send; clamped to the send
};

// name_and_text: (a name for messages, usually the path; the file's text).
Result<LoadedHistory> parse_history_files(const std::vector<std::pair<std::string, std::string>>& name_and_text);
// Reads each path, then parse_history_files.
Result<LoadedHistory> load_history_files(const std::vector<std::string>& paths);

}  // namespace mqlab::sim
