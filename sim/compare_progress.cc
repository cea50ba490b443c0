#include "sim/compare_progress.h"

#include <string>

#include "broker/common/assert.h"
#include "sim/seed_run.h"

namespace mqlab::sim {

std::string wall_clock_text(double seconds) {
  const auto total = static_cast<long long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lld:%02lld", total / 60, total % 60);
  }
  return text;
}

CompareProgress::CompareProgress(size_t total, bool interactive, std::FILE* out)
    : total_(total), interactive_(interactive), out_(out), started_(wall_clock_seconds()) {
  MQ_ASSERT(out_ != nullptr);
}

void CompareProgress::finished(const TaskOutcome& outcome) {
  MQ_ASSERT(done_ < total_);
  ++done_;
  if (outcome.crashed || !outcome.run.value("passed", false)) ++failures_;
  const double elapsed = wall_clock_seconds() - started_;
  const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  if (interactive_) {
    std::fprintf(out_, "\r\033[K%zu/%zu runs done, %zu failed, %s elapsed, ETA %s", done_, total_, failures_,
                 wall_clock_text(elapsed).c_str(), wall_clock_text(eta).c_str());
    std::fflush(out_);
    return;
  }
  // A line each time done_ crosses the next tenth (several at once when total_ < 10).
  if (done_ * 10 < next_tenth_ * total_) return;
  while (next_tenth_ <= 10 && next_tenth_ * total_ <= done_ * 10) ++next_tenth_;
  std::fprintf(out_, "%zu/%zu runs done (%zu%%), %zu failed, %s elapsed, ETA %s\n", done_, total_,
               done_ * 100 / total_, failures_, wall_clock_text(elapsed).c_str(), wall_clock_text(eta).c_str());
  std::fflush(out_);
}

void CompareProgress::erase() {
  if (!interactive_ || done_ == 0) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace mqlab::sim
