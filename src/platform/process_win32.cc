// run_process on Windows: CreateProcessW in a job object (so a timeout kills the
// whole tree), stdin from NUL, stdout/stderr through pipes drained by two reader
// threads. Only the two pipe ends are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST),
// so processes started at the same time from other threads never hold our pipes.
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "platform/process.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using Clock = std::chrono::steady_clock;

// After the child exits, output still arriving from processes it left behind in
// its job is read for at most this long without a pause before they are killed.
constexpr auto kDrainGrace = std::chrono::milliseconds(100);

class Handle {
 public:
  Handle() = default;
  explicit Handle(HANDLE h) : h_(h) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  HANDLE get() const { return h_; }
  HANDLE* out() { return &h_; }
  void reset() {
    if (h_ != nullptr && h_ != INVALID_HANDLE_VALUE) ::CloseHandle(h_);
    h_ = nullptr;
  }
  explicit operator bool() const { return h_ != nullptr && h_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE h_ = nullptr;
};

std::string last_error_message(DWORD err) {
  return "error " + std::to_string(err) + ": " + win32::error_text(err);
}

bool has_separator(std::string_view s) {
  return s.find_first_of("\\/") != std::string_view::npos;
}

bool is_regular_file(const std::string& path) {
  const DWORD a = ::GetFileAttributesW(win32::native_path(path).c_str());
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

std::optional<std::string> lookup(const std::map<std::string, std::string>* env,
                                  std::string_view name) {
  if (env != nullptr) {
    // Windows variable names are case-insensitive ("Path").
    for (const auto& [k, v] : *env) {
      if (to_lower(k) == to_lower(name)) return v;
    }
    return std::nullopt;
  }
  std::wstring wname = win32::widen(name);
  const DWORD n = ::GetEnvironmentVariableW(wname.c_str(), nullptr, 0);
  if (n == 0) return std::nullopt;
  std::wstring buf(n, L'\0');
  const DWORD m = ::GetEnvironmentVariableW(wname.c_str(), buf.data(), n);
  if (m == 0 || m >= n) return std::nullopt;
  buf.resize(m);
  return win32::narrow(buf);
}

// Looks `name` up on PATH like the command interpreter does: each directory in
// turn, the name as given when it has an extension, else with each PATHEXT one.
std::optional<std::string> find_on_path(const std::string& name,
                                        const std::map<std::string, std::string>* env) {
  const std::string path_list = lookup(env, "PATH").value_or("");
  std::vector<std::string> exts;
  const bool has_ext = path_basename(name).find('.') != std::string::npos;
  if (has_ext) exts.push_back("");
  for (auto& e : split(lookup(env, "PATHEXT").value_or(".COM;.EXE;.BAT;.CMD"), ';')) {
    exts.push_back(std::move(e));
  }
  for (const auto& dir : split(path_list, ';')) {
    for (const auto& ext : exts) {
      std::string candidate = dir;
      if (!candidate.empty() && candidate.back() != '\\' && candidate.back() != '/') {
        candidate += '\\';
      }
      candidate += name + ext;
      if (is_regular_file(candidate)) return candidate;
    }
  }
  return std::nullopt;
}

// "K=V\0K=V\0\0", sorted case-insensitively as Windows expects.
std::wstring environment_block(const std::map<std::string, std::string>& env) {
  std::vector<std::wstring> entries;
  for (const auto& [k, v] : env) entries.push_back(win32::widen(k + "=" + v));
  std::sort(entries.begin(), entries.end(), [](const std::wstring& a, const std::wstring& b) {
    return ::CompareStringOrdinal(a.c_str(), -1, b.c_str(), -1, TRUE) == CSTR_LESS_THAN;
  });
  std::wstring block;
  for (const auto& e : entries) {
    block += e;
    block += L'\0';
  }
  block += L'\0';
  return block;
}

// Reads one pipe to EOF on its own thread, keeping at most `cap` bytes.
struct Reader {
  HANDLE pipe = nullptr;
  size_t cap = 0;
  const std::function<bool(std::string_view)>* on_data = nullptr;  // instead of `data`
  std::function<void()> stop;  // kills the process when on_data wants no more
  std::mutex mu;
  std::string data;
  Clock::time_point last_data = Clock::now();
};

DWORD WINAPI reader_main(LPVOID param) {
  auto* r = static_cast<Reader*>(param);
  char buf[65536];
  for (;;) {
    DWORD n = 0;
    if (!::ReadFile(r->pipe, buf, sizeof buf, &n, nullptr) || n == 0) break;
    if (r->on_data) {
      if (!(*r->on_data)(std::string_view(buf, n))) {
        r->stop();
        break;
      }
      std::lock_guard<std::mutex> lock(r->mu);
      r->last_data = Clock::now();
      continue;
    }
    std::lock_guard<std::mutex> lock(r->mu);
    const size_t room = r->data.size() < r->cap ? r->cap - r->data.size() : 0;
    r->data.append(buf, std::min<size_t>(room, n));
    r->last_data = Clock::now();
  }
  return 0;
}

class ProcThreadAttributes {
 public:
  bool init(HANDLE* handles, size_t count) {
    SIZE_T size = 0;
    ::InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
    storage_.resize(size);
    list_ = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage_.data());
    if (!::InitializeProcThreadAttributeList(list_, 1, 0, &size)) {
      list_ = nullptr;
      return false;
    }
    if (!::UpdateProcThreadAttribute(list_, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles,
                                     count * sizeof(HANDLE), nullptr, nullptr)) {
      ::DeleteProcThreadAttributeList(list_);
      list_ = nullptr;
      return false;
    }
    return true;
  }
  ~ProcThreadAttributes() {
    if (list_ != nullptr) ::DeleteProcThreadAttributeList(list_);
  }
  LPPROC_THREAD_ATTRIBUTE_LIST get() const { return list_; }

 private:
  std::vector<char> storage_;
  LPPROC_THREAD_ATTRIBUTE_LIST list_ = nullptr;
};

}  // namespace

Result<std::shared_ptr<ChildInput>> ChildInput::open() {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read = nullptr, write = nullptr;
  if (!::CreatePipe(&read, &write, &inherit, 0)) {
    return fail("pipe: " + last_error_message(::GetLastError()));
  }
  ::SetHandleInformation(write, HANDLE_FLAG_INHERIT, 0);
  std::shared_ptr<ChildInput> in(new ChildInput());
  in->child_end_ = reinterpret_cast<intptr_t>(read);
  in->parent_end_ = reinterpret_cast<intptr_t>(write);
  return in;
}

ChildInput::~ChildInput() {
  close();
  release_child_end();
}

bool ChildInput::write(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  while (!bytes.empty()) {
    if (parent_end_ == -1) return false;
    DWORD n = 0;
    const DWORD chunk = static_cast<DWORD>(std::min<size_t>(bytes.size(), 1u << 20));
    if (!::WriteFile(reinterpret_cast<HANDLE>(parent_end_), bytes.data(), chunk, &n, nullptr) ||
        n == 0) {
      return false;
    }
    bytes.remove_prefix(n);
  }
  return true;
}

void ChildInput::close() {
  std::lock_guard lock(mutex_);
  if (parent_end_ != -1) ::CloseHandle(reinterpret_cast<HANDLE>(parent_end_));
  parent_end_ = -1;
}

void ChildInput::release_child_end() {
  std::lock_guard lock(mutex_);
  if (child_end_ != -1) ::CloseHandle(reinterpret_cast<HANDLE>(child_end_));
  child_end_ = -1;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return fail("cannot run a process: empty command line");
  const std::string& name = argv[0];
  const auto* env = options.env ? &*options.env : nullptr;

  std::string program = name;
  if (!has_separator(name)) {
    auto found = find_on_path(name, env);
    if (!found) return fail("cannot run " + name + ": not found on PATH");
    program = *found;
  }

  std::wstring cmd;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) cmd += L' ';
    win32::append_quoted(cmd, win32::widen(i == 0 ? program : argv[i]));
  }
  std::wstring env_block;
  if (env) env_block = environment_block(*env);

  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  Handle out_read, out_write, err_read, err_write;
  if (!::CreatePipe(out_read.out(), out_write.out(), &inherit, 0) ||
      !::CreatePipe(err_read.out(), err_write.out(), &inherit, 0)) {
    return fail("cannot run " + name + ": pipe: " + last_error_message(::GetLastError()));
  }
  ::SetHandleInformation(out_read.get(), HANDLE_FLAG_INHERIT, 0);
  ::SetHandleInformation(err_read.get(), HANDLE_FLAG_INHERIT, 0);
  Handle null_in(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit,
                               OPEN_EXISTING, 0, nullptr));
  if (!null_in) {
    return fail("cannot run " + name + ": NUL: " + last_error_message(::GetLastError()));
  }

  HANDLE in_handle = options.input && options.input->child_end() != -1
                         ? reinterpret_cast<HANDLE>(options.input->child_end())
                         : null_in.get();
  HANDLE inherited[3] = {in_handle, out_write.get(), err_write.get()};
  ProcThreadAttributes attrs;
  const bool have_list = attrs.init(inherited, 3);

  STARTUPINFOEXW si{};
  si.StartupInfo.cb = have_list ? sizeof(STARTUPINFOEXW) : sizeof(STARTUPINFOW);
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = in_handle;
  si.StartupInfo.hStdOutput = out_write.get();
  si.StartupInfo.hStdError = err_write.get();
  si.lpAttributeList = have_list ? attrs.get() : nullptr;

  Handle job(::CreateJobObjectW(nullptr, nullptr));
  if (job) {
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);
  }

  DWORD flags = CREATE_UNICODE_ENVIRONMENT | CREATE_NO_WINDOW | CREATE_SUSPENDED;
  if (have_list) flags |= EXTENDED_STARTUPINFO_PRESENT;
  std::wstring program_w = win32::native_path(program);
  PROCESS_INFORMATION pi{};
  const auto start = Clock::now();
  if (!::CreateProcessW(program_w.c_str(), cmd.data(), nullptr, nullptr, TRUE, flags,
                        env ? env_block.data() : nullptr, nullptr, &si.StartupInfo, &pi)) {
    const DWORD err = ::GetLastError();
    return fail("cannot run " + name + " (" + program + "): " + last_error_message(err));
  }
  Handle process(pi.hProcess);
  Handle thread(pi.hThread);
  const bool in_job = job && ::AssignProcessToJobObject(job.get(), process.get());
  ::ResumeThread(thread.get());
  // Our copies of the child's ends: EOF on the pipes once every holder is gone.
  out_write.reset();
  err_write.reset();
  null_in.reset();
  if (options.input) options.input->release_child_end();

  auto kill_tree = [&] {
    if (in_job) {
      ::TerminateJobObject(job.get(), 1);
    } else {
      ::TerminateProcess(process.get(), 1);
    }
  };

  Reader out_reader, err_reader;
  out_reader.pipe = out_read.get();
  out_reader.cap = options.max_output;
  if (options.on_stdout) {
    out_reader.on_data = &options.on_stdout;
    out_reader.stop = kill_tree;
  }
  err_reader.pipe = err_read.get();
  err_reader.cap = options.max_output;
  Handle out_thread(::CreateThread(nullptr, 0, reader_main, &out_reader, 0, nullptr));
  Handle err_thread(::CreateThread(nullptr, 0, reader_main, &err_reader, 0, nullptr));

  ProcessResult result;
  const auto deadline = start + options.timeout;
  const auto remaining_ms = [&](Clock::time_point until) -> DWORD {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    return left.count() > 0 ? static_cast<DWORD>(left.count()) : 0;
  };
  if (::WaitForSingleObject(process.get(), remaining_ms(deadline)) == WAIT_TIMEOUT) {
    result.timed_out = true;
    kill_tree();
    ::WaitForSingleObject(process.get(), 5000);
  }

  // Output from left-behind processes: keep reading while it flows (at most until the
  // deadline), then kill them so the readers see EOF.
  HANDLE readers[2];
  DWORD reader_count = 0;
  if (out_thread) readers[reader_count++] = out_thread.get();
  if (err_thread) readers[reader_count++] = err_thread.get();
  auto last_data = [&] {
    std::lock_guard<std::mutex> a(out_reader.mu);
    std::lock_guard<std::mutex> b(err_reader.mu);
    return std::max(out_reader.last_data, err_reader.last_data);
  };
  if (!result.timed_out) {
    for (;;) {
      const DWORD w = ::WaitForMultipleObjects(reader_count, readers, TRUE, 10);
      if (w != WAIT_TIMEOUT) break;
      const auto now = Clock::now();
      if (now >= deadline || now - std::max(last_data(), start) >= kDrainGrace) break;
    }
  }
  kill_tree();  // stragglers (nothing when the job is already empty)
  if (::WaitForMultipleObjects(reader_count, readers, TRUE, 2000) == WAIT_TIMEOUT) {
    // A pipe still held outside the job: stop the blocked reads.
    if (out_thread) ::CancelSynchronousIo(out_thread.get());
    if (err_thread) ::CancelSynchronousIo(err_thread.get());
    ::WaitForMultipleObjects(reader_count, readers, TRUE, INFINITE);
  }
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  result.out = std::move(out_reader.data);
  result.err = std::move(err_reader.data);

  DWORD code = 0;
  if (!result.timed_out && ::GetExitCodeProcess(process.get(), &code) && code != STILL_ACTIVE) {
    result.exit_code = static_cast<int>(code);
  } else {
    result.exit_code = -1;
  }
  return result;
}

}  // namespace dlenv
