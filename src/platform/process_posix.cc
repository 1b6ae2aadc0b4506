// run_process on POSIX: posix_spawn into a new process group, stdout/stderr
// drained with poll(), the whole group SIGKILLed on timeout.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "platform/process.h"
#include "util/strings.h"

extern "C" char** environ;

namespace dlenv {
namespace {

using Clock = std::chrono::steady_clock;

// After the child exits, output still arriving from processes it left behind in
// its group is read for at most this long without a pause before they are killed.
constexpr auto kDrainGrace = std::chrono::milliseconds(100);
// How long to wait for a SIGKILLed child to be reaped before handing it to a thread.
constexpr auto kReapWait = std::chrono::milliseconds(500);
// How long after both output pipes closed an unreaped child is looked at every millisecond.
constexpr auto kPipesClosedFastWait = std::chrono::milliseconds(100);

class Pipe {
 public:
  Pipe() = default;
  ~Pipe() { close_both(); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
    read_ = fds[0];
    write_ = fds[1];
    return 0;
  }
  int read_end() const { return read_; }
  int write_end() const { return write_; }
  void close_read() { close_fd(read_); }
  void close_write() { close_fd(write_); }
  void close_both() {
    close_read();
    close_write();
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int read_ = -1;
  int write_ = -1;
};

// Finds `name` on `path_list` the way execvp does (first executable regular file).
std::optional<std::string> find_on_path(const std::string& name, std::string_view path_list) {
  for (const auto& dir : split(path_list, ':')) {
    std::string candidate = path_join(dir, name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

std::string search_path(const ProcessOptions& options) {
  if (options.env) {
    auto it = options.env->find("PATH");
    if (it != options.env->end()) return it->second;
  }
  const char* p = std::getenv("PATH");
  return p != nullptr ? std::string(p) : std::string("/bin:/usr/bin");
}

// Appends what is readable on fd to `sink` (up to `cap` bytes, the rest discarded).
// Returns false at EOF or on a read error (the caller then stops polling it).
bool drain_once(int fd, std::string& sink, size_t cap) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 && errno == EAGAIN;
    size_t room = sink.size() < cap ? cap - sink.size() : 0;
    sink.append(buf, std::min(room, static_cast<size_t>(n)));
    return true;
  }
}

// drain_once for a stdout handed to `on_stdout`: false at EOF, on a read error, or
// when the consumer wants no more (*stopped set).
bool stream_once(int fd, const std::function<bool(std::string_view)>& on_stdout, bool* stopped) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 && errno == EAGAIN;
    if (!on_stdout(std::string_view(buf, static_cast<size_t>(n)))) {
      *stopped = true;
      return false;
    }
    return true;
  }
}

// waitpid(pid) for at most `limit`; true with *status when reaped.
bool wait_for(pid_t pid, int* status, Clock::duration limit) {
  const auto until = Clock::now() + limit;
  for (;;) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // ECHILD: nothing left to reap
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

// A socket pair rather than a pipe: send(MSG_NOSIGNAL) tells a writer that the child is
// gone without raising SIGPIPE in the parent.
Result<std::shared_ptr<ChildInput>> ChildInput::open() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return fail(std::string("socketpair: ") + std::strerror(errno));
  }
  ::shutdown(fds[0], SHUT_WR);
  ::shutdown(fds[1], SHUT_RD);
  std::shared_ptr<ChildInput> in(new ChildInput());
  in->child_end_ = fds[0];
  in->parent_end_ = fds[1];
  return in;
}

ChildInput::~ChildInput() {
  close();
  release_child_end();
}

bool ChildInput::write(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  while (!bytes.empty()) {
    if (parent_end_ < 0) return false;
    ssize_t n = ::send(static_cast<int>(parent_end_), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void ChildInput::close() {
  std::lock_guard lock(mutex_);
  if (parent_end_ >= 0) ::close(static_cast<int>(parent_end_));
  parent_end_ = -1;
}

void ChildInput::release_child_end() {
  std::lock_guard lock(mutex_);
  if (child_end_ >= 0) ::close(static_cast<int>(child_end_));
  child_end_ = -1;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return fail("cannot run a process: empty command line");
  const std::string& name = argv[0];

  std::string program = name;
  if (name.find('/') == std::string::npos) {
    auto found = find_on_path(name, search_path(options));
    if (!found) return fail("cannot run " + name + ": not found on PATH");
    program = *found;
  }

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  std::vector<std::string> env_strings;
  std::vector<char*> cenv;
  if (options.env) {
    for (const auto& [k, v] : *options.env) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) cenv.push_back(s.data());
    cenv.push_back(nullptr);
  }

  Pipe out_pipe, err_pipe;
  if (int e = out_pipe.open(); e != 0) {
    return fail("cannot run " + name + ": pipe: " + std::strerror(e));
  }
  if (int e = err_pipe.open(); e != 0) {
    return fail("cannot run " + name + ": pipe: " + std::strerror(e));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.input && options.input->child_end() >= 0) {
    posix_spawn_file_actions_adddup2(&actions, static_cast<int>(options.input->child_end()), 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_pipe.write_end(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe.write_end(), 2);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  sigaddset(&default_signals, SIGINT);
  sigaddset(&default_signals, SIGTERM);
  sigaddset(&default_signals, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &default_signals);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                                     POSIX_SPAWN_SETSIGMASK));

  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, cargv.data(),
                         options.env ? cenv.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (rc == ENOENT && program != name) return fail("cannot run " + name + ": not found on PATH");
    return fail("cannot run " + name + ": " + std::strerror(rc));
  }
  out_pipe.close_write();
  err_pipe.close_write();
  if (options.input) options.input->release_child_end();
  ::fcntl(out_pipe.read_end(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe.read_end(), F_SETFL, O_NONBLOCK);

  ProcessResult result;
  bool out_open = true, err_open = true;
  bool reaped = false;
  bool stopped = false;  // on_stdout wanted no more: the group is killed
  int status = 0;
  std::optional<Clock::time_point> exited_at;
  std::optional<Clock::time_point> pipes_closed_at;  // both output pipes reached EOF

  for (;;) {
    if (!reaped) {
      struct rusage usage {};
      pid_t r = ::wait4(pid, &status, WNOHANG, &usage);
      if (r == pid) result.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
      if (r == pid || (r < 0 && errno != EINTR)) {
        reaped = true;
        exited_at = Clock::now();
      }
    }
    if (reaped && !out_open && !err_open) break;
    if (stopped) break;

    const auto now = Clock::now();
    if (now >= deadline) {
      if (!reaped) result.timed_out = true;
      break;
    }
    // Left-behind processes holding the pipes open after the child exited.
    if (reaped && now - *exited_at >= kDrainGrace) break;

    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    // While the child runs, wake up now and then to notice its exit even if it
    // closed (or passed on) its output pipes.
    wait = std::min<std::chrono::milliseconds>(wait, std::chrono::milliseconds(reaped ? 10 : 20));
    if (wait.count() < 1) wait = std::chrono::milliseconds(1);

    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = pollfd{out_pipe.read_end(), POLLIN, 0};
    if (err_open) fds[n++] = pollfd{err_pipe.read_end(), POLLIN, 0};
    if (n == 0) {
      // Both pipes closed, the child not reaped yet: it is usually exiting (a process closes
      // its descriptors on the way out, a moment before wait4 sees it), so look again within
      // a millisecond for kPipesClosedFastWait; a child that lives on past that is looked at
      // every `wait` as before. (A 20 ms sleep here was half of doctor's live-probe wait.)
      if (!pipes_closed_at) pipes_closed_at = now;
      if (now - *pipes_closed_at < kPipesClosedFastWait) wait = std::chrono::milliseconds(1);
      std::this_thread::sleep_for(wait);
      continue;
    }
    int pr = ::poll(fds, n, static_cast<int>(wait.count()));
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen with valid fds; do not spin
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      const bool is_out = fds[i].fd == out_pipe.read_end();
      std::string& sink = is_out ? result.out : result.err;
      const bool more = is_out && options.on_stdout
                            ? stream_once(fds[i].fd, options.on_stdout, &stopped)
                            : drain_once(fds[i].fd, sink, options.max_output);
      if (!more) {
        if (is_out) {
          out_open = false;
          out_pipe.close_read();
        } else {
          err_open = false;
          err_pipe.close_read();
        }
      } else if (reaped) {
        exited_at = Clock::now();  // still flowing: extend the grace period
      }
    }
  }

  // Kill whatever is left in the group (the child on timeout, stragglers otherwise).
  // The group id stays reserved while any member lives, so this cannot hit others.
  if (!reaped || out_open || err_open || stopped) ::kill(-pid, SIGKILL);
  out_pipe.close_read();
  err_pipe.close_read();
  if (!reaped) {
    if (!wait_for(pid, &status, kReapWait)) {
      // Stuck in the kernel (uninterruptible sleep): reap it whenever it dies.
      std::thread([pid] {
        int ignored = 0;
        while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
        }
      }).detach();
      status = 0;
      result.term_signal = SIGKILL;
    }
  }
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  if (result.term_signal == 0) {
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.term_signal = WTERMSIG(status);
    }
  }
  if (result.timed_out) result.exit_code = -1;
  return result;
}

}  // namespace dlenv
