// Live probes in a child process (probe/live_isolation.h): the request/answer protocol,
// the child's loop with its watchdog, and the parent's session that turns whatever the
// child did into answers or failures.
#include "probe/live_isolation.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "platform/filesystem.h"
#include "platform/process.h"
#include "platform/system.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// --- Facts to and from the protocol's JSON ---------------------------------------------

json to_j(const std::string& v) {
  return v;
}
json to_j(int v) {
  return v;
}
json to_j(uint64_t v) {
  return v;
}
json to_j(bool v) {
  return v;
}
json to_j(const Version& v) {
  return v.str();
}

bool from_j(const json& j, std::string& v) {
  if (!j.is_string()) return false;
  v = j.get<std::string>();
  return true;
}
bool from_j(const json& j, int& v) {
  if (!j.is_number_integer()) return false;
  v = j.get<int>();
  return true;
}
bool from_j(const json& j, uint64_t& v) {
  if (!j.is_number_unsigned() && !j.is_number_integer()) return false;
  v = j.get<uint64_t>();
  return true;
}
bool from_j(const json& j, bool& v) {
  if (!j.is_boolean()) return false;
  v = j.get<bool>();
  return true;
}
bool from_j(const json& j, Version& v) {
  if (!j.is_string()) return false;
  auto p = Version::parse(j.get<std::string>());
  if (!p) return false;
  v = *p;
  return true;
}

template <class T>
json fact_j(const Fact<T>& f) {
  json j{{"status", static_cast<int>(f.status)}, {"source", f.source}};
  if (f.value) j["value"] = to_j(*f.value);
  if (!f.reason.empty()) j["reason"] = f.reason;
  return j;
}

// A protocol error: the answer is garbage.
struct Garbage {
  std::string what;
};

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (!it->is_string()) throw Garbage{std::string("\"") + key + "\" is not a string"};
  return it->get<std::string>();
}

template <class T>
Fact<T> fact_from(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) throw Garbage{std::string("no fact \"") + key + "\""};
  const json& o = *it;
  Fact<T> f;
  int st = o.value("status", -1);
  if (st < 0 || st > static_cast<int>(FactStatus::skipped)) {
    throw Garbage{std::string("fact \"") + key + "\" has no valid status"};
  }
  f.status = static_cast<FactStatus>(st);
  f.source = str_field(o, "source");
  f.reason = str_field(o, "reason");
  if (auto v = o.find("value"); v != o.end()) {
    T value{};
    if (!from_j(*v, value)) throw Garbage{std::string("fact \"") + key + "\" has a bad value"};
    f.value = std::move(value);
  }
  if (f.status == FactStatus::ok && !f.value) {
    throw Garbage{std::string("fact \"") + key + "\" is ok without a value"};
  }
  return f;
}

json gpu_j(const GpuFacts& g) {
  return json{{"index", g.index},
              {"name", fact_j(g.name)},
              {"uuid", fact_j(g.uuid)},
              {"pci_bus_id", fact_j(g.pci_bus_id)},
              {"compute_capability", fact_j(g.compute_capability)},
              {"memory_total_bytes", fact_j(g.memory_total_bytes)},
              {"persistence_mode", fact_j(g.persistence_mode)},
              {"mig_mode", fact_j(g.mig_mode)},
              {"compute_mode", fact_j(g.compute_mode)},
              {"driver_model", fact_j(g.driver_model)},
              {"source", g.source}};
}

GpuFacts gpu_from(const json& j) {
  if (!j.is_object()) throw Garbage{"a GPU is not an object"};
  GpuFacts g;
  g.index = j.value("index", -1);
  g.name = fact_from<std::string>(j, "name");
  g.uuid = fact_from<std::string>(j, "uuid");
  g.pci_bus_id = fact_from<std::string>(j, "pci_bus_id");
  g.compute_capability = fact_from<Version>(j, "compute_capability");
  g.memory_total_bytes = fact_from<uint64_t>(j, "memory_total_bytes");
  g.persistence_mode = fact_from<bool>(j, "persistence_mode");
  g.mig_mode = fact_from<std::string>(j, "mig_mode");
  g.compute_mode = fact_from<std::string>(j, "compute_mode");
  g.driver_model = fact_from<std::string>(j, "driver_model");
  g.source = str_field(j, "source");
  return g;
}

json nvml_j(const NvmlSnapshot& s) {
  json gpus = json::array();
  for (const auto& g : s.gpus) gpus.push_back(gpu_j(g));
  return json{{"library", fact_j(s.library)},
              {"driver_version", fact_j(s.driver_version)},
              {"cuda_driver_version", fact_j(s.cuda_driver_version)},
              {"device_count", fact_j(s.device_count)},
              {"gpus", gpus},
              {"init_error", fact_j(s.init_error)},
              {"init_return", s.init_return},
              {"bound_symbols", s.bound_symbols},
              {"init_ms", s.init_ms},
              {"query_ms", s.query_ms}};
}

NvmlSnapshot nvml_from(const json& j) {
  NvmlSnapshot s;
  s.library = fact_from<std::string>(j, "library");
  s.driver_version = fact_from<std::string>(j, "driver_version");
  s.cuda_driver_version = fact_from<int>(j, "cuda_driver_version");
  s.device_count = fact_from<int>(j, "device_count");
  auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array()) throw Garbage{"no GPU list"};
  for (const auto& g : *gpus) s.gpus.push_back(gpu_from(g));
  s.init_error = fact_from<std::string>(j, "init_error");
  s.init_return = j.value("init_return", 0);
  if (auto b = j.find("bound_symbols"); b != j.end() && b->is_array()) {
    for (const auto& n : *b) {
      if (n.is_string()) s.bound_symbols.push_back(n.get<std::string>());
    }
  }
  s.init_ms = j.value("init_ms", 0.0);
  s.query_ms = j.value("query_ms", 0.0);
  return s;
}

json cuda_j(const CudaDriverSnapshot& s) {
  return json{{"library", fact_j(s.library)},
              {"version", fact_j(s.version)},
              {"stub", s.stub},
              {"error", fact_j(s.error)},
              {"result", s.result}};
}

CudaDriverSnapshot cuda_from(const json& j) {
  CudaDriverSnapshot s;
  s.library = fact_from<std::string>(j, "library");
  s.version = fact_from<int>(j, "version");
  s.stub = j.value("stub", false);
  s.error = fact_from<std::string>(j, "error");
  s.result = j.value("result", 0);
  return s;
}

const char* kind_name(LiveRequest::Kind k) {
  switch (k) {
    case LiveRequest::Kind::nvml: return "nvml";
    case LiveRequest::Kind::cuda_driver: return "cuda";
    case LiveRequest::Kind::cudnn: return "cudnn";
    case LiveRequest::Kind::load: return "load";
  }
  return "?";
}

// The probe's name in findings.
const char* probe_name(LiveRequest::Kind k) {
  switch (k) {
    case LiveRequest::Kind::nvml: return "NVML";
    case LiveRequest::Kind::cuda_driver: return "libcuda";
    case LiveRequest::Kind::cudnn: return "cuDNN";
    case LiveRequest::Kind::load: return "load";
  }
  return "?";
}

std::optional<LiveRequest::Kind> kind_from(const std::string& s) {
  for (auto k : {LiveRequest::Kind::nvml, LiveRequest::Kind::cuda_driver, LiveRequest::Kind::cudnn,
                 LiveRequest::Kind::load}) {
    if (s == kind_name(k)) return k;
  }
  return std::nullopt;
}

// What the step was loading, for a failure: the target, or the candidates in order.
std::string request_library(const LiveRequest& r) {
  if (!r.target.empty()) return r.target;
  return join(r.candidates, ", ");
}

json request_j(const LiveRequest& r, size_t step, std::chrono::milliseconds timeout) {
  json j{{"v", kLiveProtocolVersion},
         {"step", step},
         {"probe", kind_name(r.kind)},
         {"timeout_ms", timeout.count()}};
  if (!r.target.empty()) j["target"] = r.target;
  if (!r.candidates.empty()) j["candidates"] = r.candidates;
  return j;
}

bool is_path(const std::string& s) {
  return s.find_first_of("/\\") != std::string::npos;
}

// A printable excerpt of a garbage line.
std::string excerpt(std::string_view line) {
  std::string out;
  for (char c : line.substr(0, 60)) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  if (line.size() > 60) out += "...";
  return out;
}

// --- The child ---------------------------------------------------------------------------

// Ends the process (through hooks.overrun) when a step runs past its deadline.
class Watchdog {
 public:
  explicit Watchdog(const LiveServeHooks& hooks) : hooks_(hooks), thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void arm(size_t step, std::chrono::milliseconds timeout) {
    std::lock_guard lock(mutex_);
    step_ = step;
    timeout_ = timeout;
    deadline_ = Clock::now() + timeout;
    armed_ = true;
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
          Clock::now() >= deadline_) {
        hooks_.emit(json_text(
            json{{"v", kLiveProtocolVersion}, {"step", step_}, {"overrun_ms", timeout_.count()}}));
        hooks_.overrun();
        armed_ = false;
      }
    }
  }

  const LiveServeHooks& hooks_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool armed_ = false;
  size_t step_ = 0;
  std::chrono::milliseconds timeout_{0};
  Clock::time_point deadline_;
  std::thread thread_;
};

json refused_j(const std::vector<std::pair<std::string, std::string>>& refused) {
  json r = json::array();
  for (const auto& [path, why] : refused) r.push_back(json{{"path", path}, {"problem", why}});
  return r;
}

// The file ld.so would try first for a library `name`: the first LD_LIBRARY_PATH entry
// that holds it (the usual place of a half-copied library or a FIFO), or "" when none
// does. Elsewhere (ld.so.cache, the default directories) a crash is caught by the child's
// isolation instead. A path is itself.
std::string first_ld_library_path_file(const std::string& name) {
  if (is_path(name)) return name;
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  if (ld_path == nullptr || *ld_path == '\0') return {};
  auto fs = make_real_filesystem();
  for (const auto& dir : split(ld_path, ':', true)) {
    std::string p = path_join(dir.empty() ? "." : dir, name);
    if (fs->lstat(p)) return p;
  }
  return {};
}

// Candidates that fail the pre-check (checked where first_ld_library_path_file finds them)
// are taken out, and reported, before the probe loads the others.
std::vector<std::string> checked_candidates(const std::vector<std::string>& candidates,
                                            std::vector<std::pair<std::string, std::string>>& out) {
  std::vector<std::string> keep;
  for (const auto& c : candidates) {
    const std::string file = first_ld_library_path_file(c);
    if (!file.empty()) {
      if (auto why = library_file_problem(file)) {
        out.emplace_back(file, *why);
        continue;
      }
    }
    keep.push_back(c);
  }
  return keep;
}

using SizeFn = size_t (*)();

json serve_cudnn(const std::string& path) {
  CudnnLiveAnswer a;
  if (auto why = library_file_problem(path)) {
    a.version =
        Fact<Version>::unknown(FactStatus::error, "not loaded: " + *why, "pre-check " + path);
    return json{{"version", fact_j(a.version)},
                {"cuda_major", fact_j(a.cuda_major)},
                {"refused", refused_j({{path, *why}})}};
  }
  auto lib = DynamicLibrary::open_isolated(path);
  if (!lib) {
    a.version = Fact<Version>::unknown(FactStatus::error, lib.error().message, "dlopen " + path);
  } else {
    void* get_version = nullptr;
    void* get_cudart = nullptr;
    SymbolSpec specs[] = {{"cudnnGetVersion", &get_version, true, 0},
                          {"cudnnGetCudartVersion", &get_cudart, false, 0}};
    auto bound = bind_symbols(*lib, specs);
    // Never report another copy's version: the file mapped must be this copy.
    const std::string loaded = lib->loaded_path();
    auto fs = make_real_filesystem();
    if (!bound) {
      a.version = Fact<Version>::unknown(FactStatus::error, bound.error().message, path);
    } else if (!loaded.empty() &&
               fs->real_path(path).value_or(path) != fs->real_path(loaded).value_or(loaded)) {
      a.version = Fact<Version>::unknown(
          FactStatus::error, "the loader returned the already-loaded copy " + loaded, path);
    } else {
      const size_t v = reinterpret_cast<SizeFn>(get_version)();
      a.version = Fact<Version>::known(Version::from_cudnn_int(static_cast<long>(v)),
                                       "cudnnGetVersion() in " + loaded);
      if (get_cudart) {
        const size_t rt = reinterpret_cast<SizeFn>(get_cudart)();
        if (rt > 0) {
          a.cuda_major = Fact<int>::known(static_cast<int>(rt / 1000),
                                          "cudnnGetCudartVersion() = " + std::to_string(rt));
        }
      }
    }
  }
  return json{{"version", fact_j(a.version)}, {"cuda_major", fact_j(a.cuda_major)}};
}

json serve_load(const std::string& target) {
  if (const std::string file = first_ld_library_path_file(target); !file.empty()) {
    if (auto why = library_file_problem(file)) {
      return json{{"loaded", false},
                  {"path", file},
                  {"error", "not loaded: " + file + ": " + *why},
                  {"refused", refused_j({{file, *why}})}};
    }
  }
  auto lib = DynamicLibrary::open(target);
  if (!lib) {
    return json{{"loaded", false},
                {"error", lib.error().message},
                {"error_code", DynamicLibrary::last_error_code()}};
  }
  const std::string path = lib->loaded_path();
  json j{{"loaded", true}, {"path", path}};
  if (auto v = library_version_call(*lib, path_basename(path.empty() ? target : path))) {
    j["version"] = v->version;
    j["version_call"] = v->call;
  }
  return j;
}

// --- The parent ----------------------------------------------------------------------------

std::string signal_text(int sig) {
  switch (sig) {
#ifdef SIGBUS
    case SIGBUS: return "SIGBUS";
#endif
#ifdef SIGKILL
    case SIGKILL: return "SIGKILL";
#endif
    case SIGSEGV: return "SIGSEGV";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

}  // namespace

std::string crash_text(const ProcessResult& r) {
  if (r.term_signal != 0) return signal_text(r.term_signal);
  const auto code = static_cast<uint32_t>(r.exit_code);
  if (code >= 0xC0000000u) {
    return fmt::format("exception {:#010x}{}", code,
                       code == 0xC0000005u ? " (access violation)" : "");
  }
  return "";
}

namespace {

// How a child ended, in a finding's words.
std::string ending_text(const Result<ProcessResult>& r, std::chrono::milliseconds timeout) {
  if (!r) return "could not start the probe process (" + r.error().message + ")";
  if (r->timed_out) {
    return fmt::format("did not answer within {:.1f} s",
                       static_cast<double>(timeout.count()) / 1000.0);
  }
  if (std::string crash = crash_text(*r); !crash.empty()) return "crashed the loader with " + crash;
  if (r->exit_code != 0) return fmt::format("ended the process with exit status {}", r->exit_code);
  return "ended the process without answering";
}

}  // namespace

std::optional<std::string> library_file_problem(const std::string& host_path) {
  auto fs = make_real_filesystem();
  auto st = fs->stat(host_path);
  if (!st) return std::nullopt;  // missing: the loader says so itself
  switch (st->type) {
    case FileType::regular: break;
    case FileType::directory: return "it is a directory, not a library file";
    case FileType::char_device:
    case FileType::block_device: return "it is a device node, not a library file";
    default: return "it is not a regular file (a FIFO or socket: opening it would block)";
  }
  auto m = fs->map_file(host_path);
  if (!m) return std::nullopt;
  ByteView bytes = (*m)->bytes();
  if (auto elf = elf_load_problem(bytes)) return elf;
  return pe_load_problem(bytes);
}

std::optional<LibraryVersionCall> library_version_call(const DynamicLibrary& lib,
                                                       const std::string& base) {
  auto sym = [&](const char* n) { return lib.symbol(n); };
  if (base.starts_with("libcudnn") || base.starts_with("cudnn")) {
    if (auto* f = reinterpret_cast<size_t (*)()>(sym("cudnnGetVersion"))) {
      const size_t v = f();
      return LibraryVersionCall{fmt::format("cudnnGetVersion() = {}", v),
                                Version::from_cudnn_int(static_cast<long>(v)).str()};
    }
  }
  if (base.starts_with("libcublasLt")) {
    if (auto* f = reinterpret_cast<size_t (*)()>(sym("cublasLtGetVersion"))) {
      const size_t v = f();
      return LibraryVersionCall{fmt::format("cublasLtGetVersion() = {}", v),
                                fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)};
    }
  } else if (base.starts_with("libcublas")) {
    if (auto* f = reinterpret_cast<int (*)(int, int*)>(sym("cublasGetProperty"))) {
      int ma = 0, mi = 0, pa = 0;
      if (f(0, &ma) == 0 && f(1, &mi) == 0 && f(2, &pa) == 0) {
        return LibraryVersionCall{"cublasGetProperty(MAJOR/MINOR/PATCH_LEVEL)",
                                  fmt::format("{}.{}.{}", ma, mi, pa)};
      }
    }
  }
  if (base.starts_with("libcudart")) {
    if (auto* f = reinterpret_cast<int (*)(int*)>(sym("cudaRuntimeGetVersion"))) {
      int v = 0;
      if (f(&v) == 0) {
        return LibraryVersionCall{fmt::format("cudaRuntimeGetVersion() = {}", v),
                                  Version::from_cuda_int(v).str()};
      }
    }
  }
  if (base.starts_with("libnccl")) {
    if (auto* f = reinterpret_cast<int (*)(int*)>(sym("ncclGetVersion"))) {
      int v = 0;
      if (f(&v) == 0) {
        const int major = v >= 20900 ? v / 10000 : v / 1000;
        const int minor = v >= 20900 ? (v % 10000) / 100 : (v % 1000) / 100;
        return LibraryVersionCall{fmt::format("ncclGetVersion() = {}", v),
                                  fmt::format("{}.{}.{}", major, minor, v % 100)};
      }
    }
  }
  if (base.starts_with("libnvrtc")) {
    if (auto* f = reinterpret_cast<int (*)(int*, int*)>(sym("nvrtcVersion"))) {
      int ma = 0, mi = 0;
      if (f(&ma, &mi) == 0) {
        return LibraryVersionCall{"nvrtcVersion()", fmt::format("{}.{}", ma, mi)};
      }
    }
  }
  if (base.starts_with("libcuda.")) {
    if (auto* f = reinterpret_cast<int (*)(int*)>(sym("cuDriverGetVersion"))) {
      int v = 0;
      if (f(&v) == 0) {
        return LibraryVersionCall{fmt::format("cuDriverGetVersion() = {}", v),
                                  Version::from_cuda_int(v).str()};
      }
    }
  }
  return std::nullopt;
}

int serve_live_probes(std::istream& in, const LiveServeHooks& hooks) {
  Watchdog watchdog(hooks);
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    json req = parse_json_text(line, false);
    if (req.is_discarded() || !req.is_object() || req.value("v", 0) != kLiveProtocolVersion ||
        !req.contains("step") || !req["step"].is_number_unsigned()) {
      hooks.emit(json_text(json{{"v", kLiveProtocolVersion}, {"error", "malformed request"}}));
      return 2;
    }
    const size_t step = req["step"].get<size_t>();
    auto kind = kind_from(req.value("probe", std::string()));
    if (!kind) {
      hooks.emit(
          json_text(json{{"v", kLiveProtocolVersion}, {"step", step}, {"error", "unknown probe"}}));
      return 2;
    }
    std::vector<std::string> candidates;
    if (auto c = req.find("candidates"); c != req.end() && c->is_array()) {
      for (const auto& x : *c) {
        if (x.is_string()) candidates.push_back(x.get<std::string>());
      }
    }
    const std::string target = req.value("target", std::string());
    const auto timeout =
        std::chrono::milliseconds(std::max<int64_t>(1, req.value("timeout_ms", int64_t{5000})));
    hooks.emit(
        json_text(json{{"v", kLiveProtocolVersion}, {"step", step}, {"begin", kind_name(*kind)}}));
    watchdog.arm(step, timeout);
    json answer{{"v", kLiveProtocolVersion}, {"step", step}};
    std::vector<std::pair<std::string, std::string>> refused;
    switch (*kind) {
      case LiveRequest::Kind::nvml: {
        auto keep = checked_candidates(candidates, refused);
        answer["nvml"] = nvml_j(probe_nvml(keep));
        break;
      }
      case LiveRequest::Kind::cuda_driver: {
        auto keep = checked_candidates(candidates, refused);
        answer["cuda"] = cuda_j(probe_cuda_driver(keep));
        break;
      }
      case LiveRequest::Kind::cudnn: answer["cudnn"] = serve_cudnn(target); break;
      case LiveRequest::Kind::load: answer["load"] = serve_load(target); break;
    }
    watchdog.disarm();
    if (!refused.empty()) answer["refused"] = refused_j(refused);
    hooks.emit(json_text(answer));
  }
  return 0;
}

size_t read_live_output(const std::string& out, const std::vector<LiveRequest>& requests,
                        size_t first_step, const std::string& how, LiveAnswers& answers) {
  std::vector<bool> answered(requests.size(), false);
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t open_step = kNone;  // began, not answered
  std::optional<int64_t> overrun_ms;
  std::string garbage;
  auto cudnn_ordinal = [&](size_t step) {
    size_t n = 0;
    for (size_t i = 0; i < step; ++i) n += requests[i].kind == LiveRequest::Kind::cudnn;
    return n;
  };
  auto add_refused = [&](const json& list, const LiveRequest& r) {
    if (!list.is_array()) return;
    for (const auto& x : list) {
      LiveProbeFailure f;
      f.probe = probe_name(r.kind);
      f.library = str_field(x, "path");
      f.path = f.library;
      f.problem_path = f.library;
      f.file_problem = str_field(x, "problem");
      answers.failures.push_back(std::move(f));
    }
  };
  for (const auto& raw : split_lines(out)) {
    std::string_view line = trim(raw);
    if (line.empty()) continue;
    json j = parse_json_text(line, false);
    try {
      if (j.is_discarded() || !j.is_object()) throw Garbage{"not JSON: " + excerpt(line)};
      if (j.value("v", 0) != kLiveProtocolVersion) {
        throw Garbage{"protocol version " + json_text(j.value("v", json(nullptr))) + ", expected " +
                      std::to_string(kLiveProtocolVersion)};
      }
      if (!j.contains("step") || !j["step"].is_number_unsigned()) {
        throw Garbage{"a line without a step: " + excerpt(line)};
      }
      const size_t step = j["step"].get<size_t>();
      if (step < first_step || step >= requests.size()) {
        throw Garbage{"an answer for step " + std::to_string(step) + ", which was not asked"};
      }
      const LiveRequest& r = requests[step];
      if (j.contains("begin")) {
        open_step = step;
        continue;
      }
      if (j.contains("overrun_ms")) {
        overrun_ms = j["overrun_ms"].is_number_integer() ? j["overrun_ms"].get<int64_t>() : 0;
        continue;
      }
      switch (r.kind) {
        case LiveRequest::Kind::nvml: answers.nvml = nvml_from(j.at("nvml")); break;
        case LiveRequest::Kind::cuda_driver: answers.cuda = cuda_from(j.at("cuda")); break;
        case LiveRequest::Kind::cudnn: {
          const json& c = j.at("cudnn");
          CudnnLiveAnswer a;
          a.version = fact_from<Version>(c, "version");
          a.cuda_major = fact_from<int>(c, "cuda_major");
          const size_t k = cudnn_ordinal(step);
          if (answers.cudnn.size() <= k) answers.cudnn.resize(k + 1);
          answers.cudnn[k] = std::move(a);
          if (c.contains("refused")) add_refused(c["refused"], r);
          break;
        }
        case LiveRequest::Kind::load: {
          const json& l = j.at("load");
          LoadAnswer a;
          a.loaded = l.value("loaded", false);
          a.path = str_field(l, "path");
          a.error = str_field(l, "error");
          a.error_code = l.value("error_code", 0);
          a.version = str_field(l, "version");
          a.version_call = str_field(l, "version_call");
          a.refused = l.contains("refused");
          answers.load = std::move(a);
          if (l.contains("refused")) add_refused(l["refused"], r);
          break;
        }
      }
      if (j.contains("refused")) add_refused(j["refused"], r);
      answered[step] = true;
      if (open_step == step) open_step = kNone;
    } catch (const Garbage& g) {
      if (garbage.empty()) garbage = g.what;
    } catch (const json::exception& e) {
      if (garbage.empty()) garbage = std::string("an answer that does not parse: ") + e.what();
    }
  }
  size_t first_unanswered = requests.size();
  for (size_t i = first_step; i < requests.size(); ++i) {
    if (!answered[i]) {
      first_unanswered = i;
      break;
    }
  }
  if (first_unanswered == requests.size()) return first_unanswered;
  // The step the child failed in: the one it began, else the first it did not answer.
  const size_t culprit = open_step != kNone ? open_step : first_unanswered;
  LiveProbeFailure f;
  f.probe = probe_name(requests[culprit].kind);
  f.library = request_library(requests[culprit]);
  if (is_path(requests[culprit].target)) f.path = requests[culprit].target;
  if (overrun_ms) {
    f.failure = fmt::format("did not answer within {:.1f} s (the probe process was stopped)",
                            static_cast<double>(*overrun_ms) / 1000.0);
  } else if (!garbage.empty() && how == "ended the process without answering") {
    f.failure = "answered garbage (" + garbage + ")";
  } else {
    f.failure = how;
    if (!garbage.empty()) f.failure += "; it also answered garbage (" + garbage + ")";
  }
  answers.failures.push_back(std::move(f));
  return culprit;
}

// --- LiveProbeSession --------------------------------------------------------------------

struct LiveProbeSession::State {
  std::vector<std::string> argv;
  LiveLimits limits;
  std::mutex mutex;
  std::vector<LiveRequest> requests;
  std::shared_ptr<ChildInput> input;
  std::string start_error;
  std::promise<Result<ProcessResult>> first;
  std::future<Result<ProcessResult>> first_result;
};

namespace {

Result<ProcessResult> run_child(const std::vector<std::string>& argv,
                                std::shared_ptr<ChildInput> input,
                                std::chrono::milliseconds timeout) {
  if (argv.empty()) {
    return fail("this program is not dlenv (set DLENV_LIVE_PROBE_PROGRAM to the dlenv binary)");
  }
  ProcessOptions po;
  po.timeout = timeout;
  po.input = std::move(input);
  return run_process(argv, po);
}

// The most a first child may take in all: it idles while the file probes run, and each
// of its steps is bounded by its own watchdog; this only catches a child that cannot die.
constexpr std::chrono::minutes kChildBackstop{10};

}  // namespace

LiveProbeSession::LiveProbeSession(std::vector<std::string> argv, LiveLimits limits)
    : state_(std::make_shared<State>()) {
  state_->argv = std::move(argv);
  state_->limits = limits;
  state_->first_result = state_->first.get_future();
  auto in = ChildInput::open();
  if (!in) {
    state_->start_error = in.error().message;
    state_->first.set_value(fail("cannot open the probe process's input: " + in.error().message));
    return;
  }
  state_->input = *in;
  // A thread of its own, detached: a child stuck in the kernel must not hold up the report.
  std::thread([s = state_] {
    s->first.set_value(run_child(s->argv, s->input, kChildBackstop));
  }).detach();
}

LiveProbeSession::~LiveProbeSession() {
  if (state_->input) state_->input->close();
}

void LiveProbeSession::request(LiveRequest r) {
  std::lock_guard lock(state_->mutex);
  const size_t step = state_->requests.size();
  if (state_->input) {
    state_->input->write(json_text(request_j(r, step, state_->limits.step_timeout)) + "\n");
  }
  state_->requests.push_back(std::move(r));
}

LiveAnswers LiveProbeSession::finish() {
  LiveAnswers answers;
  std::vector<LiveRequest> requests;
  {
    std::lock_guard lock(state_->mutex);
    requests = state_->requests;
  }
  if (state_->input) state_->input->close();
  const auto started = Clock::now();
  const auto budget_end = started + state_->limits.total;
  Result<ProcessResult> r = fail("the probe process did not end in time");
  std::chrono::milliseconds waited_for = state_->limits.total;
  if (state_->first_result.wait_until(budget_end) == std::future_status::ready) {
    r = state_->first_result.get();
  } else {
    ProcessResult timed_out;
    timed_out.timed_out = true;
    r = timed_out;
  }
  answers.children = 1;
  size_t next = 0;
  for (;;) {
    const std::string how = ending_text(r, waited_for);
    const std::string out = r ? r->out : std::string();
    const size_t culprit = read_live_output(out, requests, next, how, answers);
    if (culprit >= requests.size()) break;
    next = culprit + 1;
    if (next >= requests.size()) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(budget_end - Clock::now());
    if (left < std::chrono::milliseconds(200)) {
      for (size_t i = next; i < requests.size(); ++i) {
        LiveProbeFailure f;
        f.probe = probe_name(requests[i].kind);
        f.library = request_library(requests[i]);
        f.failure = fmt::format("not run: the live probes' time budget ({:.1f} s) was spent",
                                static_cast<double>(state_->limits.total.count()) / 1000.0);
        answers.failures.push_back(std::move(f));
      }
      break;
    }
    // The steps after the failed one, in a fresh child, all at once.
    auto in = ChildInput::open();
    if (!in) {
      r = fail(in.error().message);
      continue;
    }
    const auto step_timeout = std::min(state_->limits.step_timeout, left);
    for (size_t i = next; i < requests.size(); ++i) {
      (*in)->write(json_text(request_j(requests[i], i, step_timeout)) + "\n");
    }
    (*in)->close();
    ++answers.children;
    waited_for = left;
    r = run_child(state_->argv, *in, left);
  }
  return answers;
}

std::string describe_live_failure(const LiveProbeFailure& f) {
  std::string who = f.library;
  if (!f.path.empty() && f.path != f.library) who += " at " + f.path;
  std::string text = f.probe == kLdLibraryPathCheck ? who + " is on LD_LIBRARY_PATH"
                     : f.failure.empty()            ? who + " was not loaded"
                                                    : who + " " + f.failure;
  if (!f.file_problem.empty()) {
    text += ": ";
    if (!f.problem_path.empty() && f.problem_path != f.path && f.problem_path != f.library) {
      text += "it needs " + f.problem_path + ", and ";
    }
    text += f.file_problem;
  }
  return text;
}

namespace {
std::mutex g_program_mutex;
std::string g_program;     // set_live_probe_program
std::string g_invocation;  // set_live_probe_invocation, made absolute

bool names_dlenv(const std::string& path) {
  return to_lower(file_name_of(path)).starts_with("dlenv");  // C:\...\dlenv.exe too
}

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}
}  // namespace

void set_live_probe_program(std::string path) {
  std::lock_guard lock(g_program_mutex);
  g_program = std::move(path);
}

void set_live_probe_invocation(std::string argv0) {
  std::string found;
  if (argv0.find('/') != std::string::npos || argv0.find('\\') != std::string::npos) {
    std::error_code ec;
    found = std::filesystem::absolute(argv0, ec).string();
    if (ec) found.clear();
  } else if (const char* path = std::getenv("PATH"); path != nullptr && !argv0.empty()) {
#ifdef _WIN32
    constexpr char kPathSeparator = ';';
#else
    constexpr char kPathSeparator = ':';
#endif
    for (const std::string& dir : split(path, kPathSeparator, /*keep_empty=*/true)) {
      const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + argv0;
      if (is_regular_file(candidate)) {
        std::error_code ec;
        found = std::filesystem::absolute(candidate, ec).string();
        break;
      }
    }
  }
  std::lock_guard lock(g_program_mutex);
  g_invocation = std::move(found);
}

std::string dlenv_program() {
  std::lock_guard lock(g_program_mutex);
  if (!g_program.empty()) return g_program;
  if (const char* p = std::getenv("DLENV_LIVE_PROBE_PROGRAM"); p != nullptr && *p != '\0') {
    return p;
  }
  // Only dlenv serves the probe mode: a test binary that ran itself would run its tests.
  const std::string self = current_executable();
  if (auto real = make_real_filesystem()->real_path(self); real && names_dlenv(*real)) {
    return self;
  }
  if (!g_invocation.empty() && names_dlenv(g_invocation) && is_regular_file(g_invocation)) {
    return g_invocation;
  }
  return "";
}

std::vector<std::string> live_probe_argv() {
  std::string program = dlenv_program();
  if (program.empty()) return {};
  return {std::move(program), kLiveProbeCommand};
}

void apply_cudnn_live(CudnnCopy& c, const CudnnLiveAnswer& a) {
  c.live_version = a.version;
  if (a.cuda_major.ok() && !c.cuda_major) c.cuda_major = a.cuda_major;
}

}  // namespace dlenv
