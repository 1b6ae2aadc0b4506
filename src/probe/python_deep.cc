// --deep: runs each interpreter with the probe script src/probe/python_deep_probe.py. It
// imports every installed framework, asks it about the GPU, runs one tiny GPU
// operation and lists the CUDA libraries really loaded into the process
// (/proc/self/maps on Linux; on Windows the module list, EnumProcessModules +
// GetModuleFileNameW through ctypes, same "loaded" paths); it
// prints one JSON object between two marker lines. Everything the interpreter
// does wrong (hang, crash, garbage, an old Python) becomes a status, never a hang.
#include <cctype>
#include <future>
#include <nlohmann/json.hpp>

#include "platform/process.h"
#include "probe/probe.h"
#include "probe/process_maps.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
// The probe script, src/probe/python_deep_probe.py, embedded at build time
// (cmake/embed_text.cmake).
namespace embedded {
extern const char python_deep_probe_py[];
}  // namespace embedded

namespace {

constexpr const char* kBegin = "DLENV-DEEP-BEGIN";
constexpr const char* kEnd = "DLENV-DEEP-END";

const char* const kScript = embedded::python_deep_probe_py;

DeepProbe run_one(const std::string& interpreter, std::chrono::milliseconds timeout) {
  DeepProbe d;
  const std::string src = interpreter + " -c <dlenv probe script>";
  ProcessOptions po;
  po.timeout = timeout;
  po.max_output = 4u << 20;
  auto r = run_process({interpreter, "-c", kScript}, po);
  if (!r) {
    d.status = Fact<std::string>::unknown(FactStatus::error, r.error().message, src);
    return d;
  }
  d.wall_ms = r->wall_ms;
  if (r->timed_out) {
    d.status = Fact<std::string>::unknown(
        FactStatus::timed_out,
        "no answer in " + std::to_string(timeout.count() / 1000) + " s (killed)", src);
    return d;
  }
  auto b = r->out.rfind(kBegin);
  auto e = r->out.rfind(kEnd);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    std::string why = r->term_signal ? "killed by signal " + std::to_string(r->term_signal)
                                     : "exit " + std::to_string(r->exit_code);
    std::string tail(trim(r->err.empty() ? r->out : r->err));
    if (tail.size() > 2000) tail = "..." + tail.substr(tail.size() - 2000);
    d.status = Fact<std::string>::unknown(
        FactStatus::error, why + ", no probe output" + (tail.empty() ? std::string() : ": " + tail),
        src);
    return d;
  }
  std::string body =
      r->out.substr(b + std::string_view(kBegin).size(), e - b - std::string_view(kBegin).size());
  auto j = parse_json_text(body, false);
  if (!j.is_object()) {
    d.status = Fact<std::string>::unknown(FactStatus::error, "the probe output is not JSON", src);
    return d;
  }
  auto str = [](const nlohmann::json& o, const char* k) {
    return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  if (j.contains("frameworks") && j["frameworks"].is_array()) {
    for (const auto& x : j["frameworks"]) {
      if (!x.is_object()) continue;
      DeepFramework f;
      f.name = str(x, "name");
      f.imported = x.value("imported", false);
      f.version = str(x, "version");
      f.error = str(x, "error");
      if (x.contains("gpu_available") && x["gpu_available"].is_boolean()) {
        f.gpu_available = Fact<bool>::known(x["gpu_available"].get<bool>(), src);
      } else {
        f.gpu_available =
            Fact<bool>::unknown(FactStatus::error, f.error.empty() ? "not reported" : f.error, src);
      }
      if (x.contains("device_count") && x["device_count"].is_number_integer()) {
        f.device_count = x["device_count"].get<int>();
      }
      f.cuda = str(x, "cuda");
      f.cudnn = str(x, "cudnn");
      f.gpu_op = str(x, "gpu_op");
      f.cudnn_compiled = str(x, "cudnn_compiled");
      d.frameworks.push_back(std::move(f));
    }
  }
  if (j.contains("loaded") && j["loaded"].is_array()) {
    for (const auto& p : j["loaded"]) {
      if (p.is_string()) d.loaded_libraries.push_back(p.get<std::string>());
    }
  }
  d.status = Fact<std::string>::known("ok", src);
  return d;
}

// A module path of a Windows process (backslashes or a drive letter: C:\x\y.dll,
// \\?\C:\x\y.dll, C:/x/y.dll).
bool windows_path(std::string_view p) {
  return p.find('\\') != std::string_view::npos ||
         (p.size() >= 2 && p[1] == ':' && std::isalpha(static_cast<unsigned char>(p[0])));
}

// The reported paths as `dlenv which` sees a process's libraries: name, version (file
// name, soname, PE version resource, wheel metadata) and origin. A Windows module list
// (backslash or drive-letter paths) goes through nvidia_modules, /proc/self/maps paths
// through nvidia_libraries.
void classify_loaded(const FileSystem& fs, DeepProbe& d) {
  bool win = false;
  for (const auto& p : d.loaded_libraries) win |= windows_path(p);
  if (win) {
    d.loaded = nvidia_modules(fs, d.loaded_libraries);
    return;
  }
  std::vector<MapsEntry> maps;
  for (const auto& p : d.loaded_libraries) {
    MapsEntry m;
    m.path = p;
    maps.push_back(std::move(m));
  }
  d.loaded = nvidia_libraries(fs, maps);
}

}  // namespace

void probe_python_deep(const FileSystem& fs, std::vector<PythonEnv>& envs,
                       std::chrono::milliseconds timeout) {
  std::vector<std::future<DeepProbe>> runs(envs.size());
  for (size_t i = 0; i < envs.size(); ++i) {
    if (!envs[i].interpreter) continue;
    runs[i] = std::async(std::launch::async, run_one, *envs[i].interpreter, timeout);
  }
  for (size_t i = 0; i < envs.size(); ++i) {
    if (!runs[i].valid()) continue;
    envs[i].deep = runs[i].get();
    classify_loaded(fs, *envs[i].deep);
  }
}

}  // namespace dlenv
