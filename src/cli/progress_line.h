// One progress line on a terminal's stderr for work that streams bytes (cudnn inspect /
// install): "  reading: 312.4 MiB of 1.2 GiB, 14 of 42 files, 85.3 MiB/s, 11 s left",
// redrawn in place at most every 200 ms, first drawn 200 ms into a pass, and cleared when
// the pass ends (SourceProgress::done). Off (draws nothing) when output is not a terminal
// and with --json: the caller says so (as verify's step line, cli.cc).
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "actions/cudnn_source.h"

namespace dlenv {

// Back to the start of the line and erase it: how a progress or step line is redrawn.
inline constexpr const char* kEraseLine = "\r\033[K";

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(std::ostream& err, std::string label, bool enabled,
               std::function<Clock::time_point()> now = Clock::now);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const SourceProgress& p);
  // The function reporting_progress() and source_sha256() take, drawing on this line.
  SourceProgressReport reporter() {
    return [this](const SourceProgress& p) { update(p); };
  }
  void clear();  // erases a drawn line (again at destruction)
  bool enabled() const { return enabled_; }

  // The text of the line (no escapes): what update() draws.
  static std::string text(const std::string& label, const SourceProgress& p, double seconds);

 private:
  std::ostream& err_;
  std::string label_;
  bool enabled_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_{};
  Clock::time_point last_draw_{};
  bool started_ = false;
  bool drawn_ = false;
};

}  // namespace dlenv
