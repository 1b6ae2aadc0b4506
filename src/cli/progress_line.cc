#include "cli/progress_line.h"

#include <fmt/format.h>

#include <cmath>

#include "util/strings.h"

namespace dlenv {

namespace {

constexpr std::chrono::milliseconds kRedrawEvery{200};

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::ceil(seconds));
  if (s < 60) return fmt::format("{} s", s);
  return fmt::format("{} min {:02} s", s / 60, s % 60);
}

}  // namespace

ProgressLine::ProgressLine(std::ostream& err, std::string label, bool enabled,
                           std::function<Clock::time_point()> now)
    : err_(err), label_(std::move(label)), enabled_(enabled), now_(std::move(now)) {}

ProgressLine::~ProgressLine() {
  clear();
}

std::string ProgressLine::text(const std::string& label, const SourceProgress& p, double seconds) {
  // Work counted in files only (uninstall's renames) says no bytes, and rates files.
  const bool by_bytes = p.total_bytes > 0;
  std::string s = "  " + label + ": ";
  if (by_bytes) s += human_bytes(p.bytes) + " of " + human_bytes(p.total_bytes) + ", ";
  s += std::to_string(p.files) + " of " + std::to_string(p.total_files) + " files";
  const double done = by_bytes ? static_cast<double>(p.bytes) : static_cast<double>(p.files);
  const double total =
      by_bytes ? static_cast<double>(p.total_bytes) : static_cast<double>(p.total_files);
  if (seconds >= 0.5 && done > 0) {
    const double rate = done / seconds;
    if (by_bytes) s += ", " + human_bytes(static_cast<unsigned long long>(rate)) + "/s";
    if (total > done) s += ", " + duration_text((total - done) / rate) + " left";
  }
  return s;
}

void ProgressLine::update(const SourceProgress& p) {
  if (!enabled_) return;
  if (p.done) {
    clear();  // the pass is over: what follows is printed on a clean line
    started_ = false;
    return;
  }
  const auto t = now_();
  if (!started_) {
    // A pass begins (install reads the source more than once): the rate counts from here;
    // the first line comes only after kRedrawEvery, so a quick pass draws none.
    started_ = true;
    start_ = t;
    last_draw_ = t;
    return;
  }
  if (t - last_draw_ < kRedrawEvery) return;
  last_draw_ = t;
  const double seconds = std::chrono::duration<double>(t - start_).count();
  err_ << kEraseLine << text(label_, p, seconds) << std::flush;
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  err_ << kEraseLine << std::flush;
  drawn_ = false;
}

}  // namespace dlenv
