// Colour for the plain-text output of the commands other than doctor (whose report
// renderer colours its own): deps, load, which, plan, cudnn, verify, explain. One
// convention for all of them, applied line by line as the text is written:
//   - a heading (a line that starts at column 0 with a letter) in bold;
//   - a severity tag ([error], [warning], [info]) in its colour (red, yellow, cyan);
//   - a line whose first word is error, warning or failed: that word in its colour;
//   - a conflict line ("  ! ..."): the ! in yellow.
// Whether to colour at all is color_wanted()'s decision (report/report.h).
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace dlenv {

std::string highlight_line(std::string_view line);

// A stream buffer that writes to `dest`, each complete line through highlight_line() while
// enabled; a flush writes a partial line (a prompt) as it is.
class HighlightBuf : public std::streambuf {
 public:
  explicit HighlightBuf(std::ostream& dest) : dest_(dest) {}
  ~HighlightBuf() override { sync(); }
  HighlightBuf(const HighlightBuf&) = delete;
  HighlightBuf& operator=(const HighlightBuf&) = delete;
  void enable(bool on) { enabled_ = on; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  std::ostream& dest_;
  bool enabled_ = false;
  std::string line_;
};

}  // namespace dlenv
