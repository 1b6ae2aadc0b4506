# dlenv doctor --deep: run by each Python interpreter found (`python -c <this file>`), embedded
# into dlenv at build time (cmake/embed_text.cmake). It imports every installed framework,
# asks it about the GPU, runs one tiny GPU operation and lists the CUDA libraries loaded into
# the process (/proc/self/maps on Linux; on Windows the module list through ctypes), then
# prints one JSON object between the lines DLENV-DEEP-BEGIN and DLENV-DEEP-END
# (src/probe/python_deep.cc reads it). Runs on Python 3.6+; every step is guarded so one
# failure never hides the others.
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
