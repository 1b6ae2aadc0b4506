// See safe_output.h: stdout and stderr written straight to descriptors 1 and 2.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/safe_output.h"

namespace dlenv {
namespace {

// A stream buffer on a descriptor that keeps the errno of its first failed write; after
// it, writes are refused (the stream goes bad).
class FdBuf : public std::streambuf {
 public:
  FdBuf(int fd, size_t buffer) : fd_(fd), buf_(buffer) {
    if (!buf_.empty()) setp(buf_.data(), buf_.data() + buf_.size());
  }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    char c = traits_type::to_char_type(ch);
    if (buf_.empty()) return write_all(&c, 1) ? ch : traits_type::eof();
    *pptr() = c;
    pbump(1);
    return ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    auto count = static_cast<size_t>(n);
    // Unbuffered (no put area: pptr() is null) goes straight to the descriptor.
    if (buf_.empty()) return write_all(s, count) ? n : 0;
    if (count <= static_cast<size_t>(epptr() - pptr())) {
      std::memcpy(pptr(), s, count);
      pbump(static_cast<int>(count));
      return n;
    }
    if (!drain()) return 0;
    if (count < buf_.size()) {
      std::memcpy(pptr(), s, count);
      pbump(static_cast<int>(count));
      return n;
    }
    return write_all(s, count) ? n : 0;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    if (buf_.empty()) return error_ == 0;
    auto pending = static_cast<size_t>(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    return write_all(buf_.data(), pending);
  }
  bool write_all(const char* p, size_t n) {
    if (error_ != 0) return false;
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

FdBuf& out_buf() {
  static auto* b = new FdBuf(STDOUT_FILENO, 64 * 1024);  // never destroyed: flushed by main
  return *b;
}

FdBuf& err_buf() {
  static auto* b = new FdBuf(STDERR_FILENO, 0);  // unbuffered, as stderr is
  return *b;
}

[[noreturn]] void die_of_sigpipe() {
  signal(SIGPIPE, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(SIGPIPE);
  std::_Exit(128 + SIGPIPE);  // not reached
}

}  // namespace

void protect_standard_fds() {
  signal(SIGPIPE, SIG_DFL);
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // stdin write-only, stdout and stderr read-only: every use fails with EBADF.
    int opened = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (opened >= 0 && opened != fd) {
      dup2(opened, fd);  // dup2 clears O_CLOEXEC on fd: children see it too
      close(opened);
    }
  }
}

std::ostream& standard_out() {
  static auto* s = new std::ostream(&out_buf());
  return *s;
}

std::ostream& standard_err() {
  static auto* s = new std::ostream(&err_buf());
  return *s;
}

int finish_output(int code) {
  standard_out().flush();
  standard_err().flush();
  const int out_error = out_buf().error();
  const int err_error = err_buf().error();
  if (out_error == EPIPE || err_error == EPIPE) die_of_sigpipe();
  if (out_error == 0 && err_error == 0) return code;
  if (out_error != 0 && err_error == 0) {
    // Where stderr works, say why; a broken stderr leaves no one to tell.
    std::string msg = std::string("dlenv: error writing to stdout: ") + std::strerror(out_error) +
                      "; the output is incomplete\n";
    ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
  }
  return kExitToolFailed;
}

}  // namespace dlenv
