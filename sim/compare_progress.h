// CompareProgress: how a compare tells a person how far it got. On a
// terminal (stderr is a tty) one line is redrawn as each run finishes: runs
// done of the total, failures, elapsed and ETA; into a log (CI, make's
// output piped) a plain line at each tenth of the runs instead, so the log
// shows progress without a carriage-return mess. Progress goes to stderr so
// stdout keeps only the summary.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "sim/forked_runs.h"

namespace mqlab::sim {

class CompareProgress {
 public:
  // interactive: redraw a line (a terminal); else print a line per 10%.
  CompareProgress(size_t total, bool interactive, std::FILE* out = stderr);

  void finished(const TaskOutcome& outcome);
  // Clears the redrawn line (interactive only), before the summary.
  void erase();

 private:
  size_t total_;
  bool interactive_;
  std::FILE* out_;
  double started_;
  size_t done_ = 0;
  size_t failures_ = 0;
  size_t next_tenth_ = 1;  // the next tenth of total_ to report, non-interactive
};

// "1:05" or "2:03:05".
std::string wall_clock_text(double seconds);

}  // namespace mqlab::sim
