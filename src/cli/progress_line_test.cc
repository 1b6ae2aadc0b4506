// The progress line of cudnn inspect/install (cli/progress_line.h): drawn in place no
// sooner than 200 ms into a pass and no more often, cleared when the pass ends, silent
// when off; driven here by a clock the test moves.
#include "cli/progress_line.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dlenv {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  ProgressLine::Clock::time_point t{};
  std::function<ProgressLine::Clock::time_point()> fn() {
    return [this] { return t; };
  }
};

SourceProgress at(uint64_t bytes, size_t files, bool done = false) {
  SourceProgress p;
  p.bytes = bytes;
  p.total_bytes = 4u << 20;
  p.files = files;
  p.total_files = 4;
  p.done = done;
  return p;
}

TEST(ProgressLine, DrawsAfterAPauseAtMostFiveTimesASecondAndClearsWhenThePassEnds) {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressLine line(err, "reading", true, clock.fn());
    line.update(at(0, 0));
    clock.t += 100ms;
    line.update(at(1u << 20, 1));
    EXPECT_EQ(err.str(), "") << "nothing before 200 ms";
    clock.t += 150ms;
    line.update(at(1u << 20, 1));
    // No rate in the first half second.
    EXPECT_EQ(err.str(), "\r\033[K  reading: 1.0 MiB of 4.0 MiB, 1 of 4 files");
    clock.t += 50ms;
    line.update(at(2u << 20, 2));
    EXPECT_EQ(err.str().find("2.0 MiB of"), std::string::npos) << "redrawn within 200 ms";
    clock.t += 200ms;
    line.update(at(2u << 20, 2));
    EXPECT_NE(
        err.str().find("\r\033[K  reading: 2.0 MiB of 4.0 MiB, 2 of 4 files, 4.0 MiB/s, 1 s left"),
        std::string::npos)
        << err.str();
    err.str("");
    line.update(at(4u << 20, 4, true));
    EXPECT_EQ(err.str(), "\r\033[K") << "the line is erased when the pass is done";
    err.str("");
    // A second pass starts its own clock: nothing for its first 200 ms.
    line.update(at(0, 0));
    clock.t += 100ms;
    line.update(at(3u << 20, 3));
    EXPECT_EQ(err.str(), "");
  }
  EXPECT_EQ(err.str(), "") << "nothing drawn, nothing to clear at the end";
}

TEST(ProgressLine, ALineLeftDrawnIsClearedAtTheEnd) {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressLine line(err, "hashing", true, clock.fn());
    line.update(at(0, 0));
    clock.t += 300ms;
    line.update(at(1u << 20, 0));
  }
  const std::string s = err.str();
  ASSERT_GE(s.size(), 4u);
  EXPECT_EQ(s.substr(s.size() - 4), "\r\033[K");
}

// Work counted in files only (uninstall's renames): no bytes, time left from the file rate.
TEST(ProgressLine, FilesOnlyWork) {
  SourceProgress p;
  p.files = 10;
  p.total_files = 40;
  EXPECT_EQ(ProgressLine::text("removing", p, 0.2), "  removing: 10 of 40 files");
  EXPECT_EQ(ProgressLine::text("removing", p, 2.0), "  removing: 10 of 40 files, 6 s left");
}

TEST(ProgressLine, OffWritesNothing) {
  std::ostringstream err;
  FakeClock clock;
  {
    ProgressLine line(err, "reading", false, clock.fn());
    for (int i = 0; i < 10; ++i) {
      clock.t += 1s;
      line.update(at(static_cast<uint64_t>(i) << 18, 0));
    }
    line.update(at(4u << 20, 4, true));
  }
  EXPECT_EQ(err.str(), "");
}

TEST(ProgressLine, TextOfALongPassShowsMinutesLeft) {
  SourceProgress p;
  p.bytes = 10u << 20;
  p.total_bytes = 1000u << 20;
  p.files = 1;
  p.total_files = 40;
  EXPECT_EQ(ProgressLine::text("reading", p, 10.0),
            "  reading: 10.0 MiB of 1000.0 MiB, 1 of 40 files, 1.0 MiB/s, 16 min 30 s left");
  // No rate before half a second: it would be noise.
  EXPECT_EQ(ProgressLine::text("reading", p, 0.2),
            "  reading: 10.0 MiB of 1000.0 MiB, 1 of 40 files");
}

}  // namespace
}  // namespace dlenv
