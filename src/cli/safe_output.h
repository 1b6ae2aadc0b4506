// What dlenv writes, made safe and checked:
//   - VisibleTextBuf: the text of the plain-text commands (deps, load, which, plan, cudnn,
//     explain) and the messages on stderr pass through it, line by line, so that an untrusted
//     string in them (a path, an environment value, a string read from a library) shows its
//     control bytes and escape sequences as visible escapes (util/safe_text.h) instead of
//     acting on the terminal. doctor's renderer does the same per value (report_detail::clean).
//   - protect_standard_fds / finish_output: a write error on stdout or stderr is the tool's
//     failure (exit 3, a message on stderr where stderr still works); a closed pipe
//     (`dlenv doctor | head -1`) ends the process by SIGPIPE, quietly, as cat and grep do.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>

namespace dlenv {

class VisibleTextBuf : public std::streambuf {
 public:
  explicit VisibleTextBuf(std::ostream& dest) : dest_(dest) {}
  ~VisibleTextBuf() override { sync(); }
  VisibleTextBuf(const VisibleTextBuf&) = delete;
  VisibleTextBuf& operator=(const VisibleTextBuf&) = delete;

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void write_line(bool with_newline);
  std::ostream& dest_;
  std::string line_;
};

// main(), first: SIGPIPE back to its default action (a parent may have left it ignored),
// and a standard descriptor (0, 1, 2) that is closed opened on /dev/null with the wrong
// access mode, so that no file dlenv opens later takes its number (and receives the
// report), and every write to it fails (EBADF) as a write to the closed one would.
// Windows: nothing to do.
void protect_standard_fds();

// The process's stdout and stderr as streams that remember the first write error (POSIX:
// straight to descriptors 1 and 2, short writes continued, EINTR retried; Windows:
// std::cout and std::cerr).
std::ostream& standard_out();
std::ostream& standard_err();

// main(), last: flushes both; a failed or short write to either (now or at any time before)
// turns `code` into 3 with a message on stderr where stderr still works. EPIPE (the
// reader went away: `dlenv doctor | head -1`) ends the process by SIGPIPE with the default
// action, quietly, as cat and grep do: the shell sees 141.
int finish_output(int code);

}  // namespace dlenv
