// --deep: runs each interpreter with a probe script embedded here. The script
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
namespace {

constexpr const char* kBegin = "DLENV-DEEP-BEGIN";
constexpr const char* kEnd = "DLENV-DEEP-END";

// Runs on Python 3.6+; every step is guarded so one failure never hides the others.
constexpr const char* kScript = R"PY(
import json, sys, traceback, importlib.util
out = {"python": sys.version.split()[0], "frameworks": [], "loaded": []}
def err(e):
    return type(e).__name__ + ": " + str(e)
def fw(name, module, probe):
    if importlib.util.find_spec(module) is None:
        return
    r = {"name": name, "imported": False}
    try:
        m = __import__(module)
        r["imported"] = True
        r["version"] = str(getattr(m, "__version__", ""))
        probe(m, r)
    except BaseException as e:
        r["error"] = err(e)
    out["frameworks"].append(r)
def torch_probe(t, r):
    r["cuda"] = str(t.version.cuda or "")
    r["gpu_available"] = bool(t.cuda.is_available())
    r["device_count"] = int(t.cuda.device_count()) if r["gpu_available"] else 0
    try:
        r["cudnn"] = str(t.backends.cudnn.version() or "")
    except BaseException as e:
        r["cudnn"] = ""
    try:
        r["cudnn_compiled"] = "%d.%d.%d" % tuple(t._C._cudnn.getCompileVersion())
    except BaseException:
        pass
    if r["gpu_available"]:
        try:
            x = t.ones(8, device="cuda")
            r["gpu_op"] = "ok" if float((x * 2).sum().item()) == 16.0 else "wrong result"
        except BaseException as e:
            r["gpu_op"] = err(e)
    else:
        try:
            t.zeros(1).cuda()
        except BaseException as e:
            r["error"] = err(e)
def tf_probe(tf, r):
    g = tf.config.list_physical_devices("GPU")
    r["gpu_available"] = len(g) > 0
    r["device_count"] = len(g)
    bi = tf.sysconfig.get_build_info()
    r["cuda"] = str(bi.get("cuda_version", ""))
    r["cudnn"] = str(bi.get("cudnn_version", ""))
def jax_probe(jax, r):
    d = [x for x in jax.devices() if x.platform == "gpu"]
    r["gpu_available"] = len(d) > 0
    r["device_count"] = len(d)
def cupy_probe(cp, r):
    n = cp.cuda.runtime.getDeviceCount()
    r["gpu_available"] = n > 0
    r["device_count"] = n
    r["cuda"] = str(cp.cuda.runtime.runtimeGetVersion())
    r["gpu_op"] = "ok" if int(cp.arange(4).sum()) == 6 else "wrong result"
def ort_probe(ort, r):
    p = ort.get_available_providers()
    r["gpu_available"] = "CUDAExecutionProvider" in p
    r["providers"] = p
def paddle_probe(pd, r):
    r["gpu_available"] = bool(pd.device.is_compiled_with_cuda()) and pd.device.cuda.device_count() > 0
    r["cuda"] = str(pd.version.cuda())
    r["cudnn"] = str(pd.version.cudnn())
fw("torch", "torch", torch_probe)
fw("tensorflow", "tensorflow", tf_probe)
fw("jax", "jax", jax_probe)
fw("cupy", "cupy", cupy_probe)
fw("onnxruntime", "onnxruntime", ort_probe)
fw("paddle", "paddle", paddle_probe)
def win_modules():
    # This process's module list: EnumProcessModules (kernel32's K32 export, else
    # psapi.dll) and GetModuleFileNameW on each handle.
    import ctypes
    from ctypes import wintypes
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    enum = getattr(k32, "K32EnumProcessModules", None) or ctypes.WinDLL("psapi").EnumProcessModules
    enum.argtypes = [wintypes.HANDLE, ctypes.POINTER(ctypes.c_void_p), wintypes.DWORD,
                     ctypes.POINTER(wintypes.DWORD)]
    enum.restype = wintypes.BOOL
    k32.GetCurrentProcess.restype = wintypes.HANDLE
    k32.GetModuleFileNameW.argtypes = [ctypes.c_void_p, wintypes.LPWSTR, wintypes.DWORD]
    k32.GetModuleFileNameW.restype = wintypes.DWORD
    me = k32.GetCurrentProcess()
    n = 1024
    while True:
        mods = (ctypes.c_void_p * n)()
        need = wintypes.DWORD()
        if not enum(me, mods, ctypes.sizeof(mods), ctypes.byref(need)):
            return []
        if need.value <= ctypes.sizeof(mods):
            break
        n = need.value // ctypes.sizeof(ctypes.c_void_p) + 64
    buf = ctypes.create_unicode_buffer(32768)
    paths = []
    for i in range(need.value // ctypes.sizeof(ctypes.c_void_p)):
        if mods[i] and k32.GetModuleFileNameW(mods[i], buf, 32768):
            paths.append(buf.value)
    return paths
try:
    seen = set()
    if sys.platform == "win32":
        for p in win_modules():
            b = p.replace("/", "\\").rsplit("\\", 1)[-1].lower()
            if p.lower() not in seen and b.endswith(".dll") and (b == "nvcuda.dll" or any(
                    b.startswith(k) for k in ("cudnn", "cublas", "cudart", "nvrtc", "nvjitlink",
                                              "cufft", "cusparse", "cusolver", "torch_cuda",
                                              "zlibwapi"))):
                seen.add(p.lower())
                out["loaded"].append(p)
    else:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1] if len(line.split()) >= 6 else ""
                b = p.rsplit("/", 1)[-1]
                if p.startswith("/") and p not in seen and any(b.startswith(k) for k in (
                        "libcudnn", "libcublas", "libcudart", "libcuda.", "libnvrtc", "libnvJitLink",
                        "libnccl", "libcufft", "libcusparse", "libcusolver", "libtorch_cuda")):
                    seen.add(p)
                    out["loaded"].append(p)
except BaseException:
    pass
sys.stdout.write("\nDLENV-DEEP-BEGIN\n" + json.dumps(out) + "\nDLENV-DEEP-END\n")
sys.stdout.flush()
)PY";

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
