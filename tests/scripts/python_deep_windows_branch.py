"""Runs the Windows branch of dlenv's --deep probe script (src/probe/python_deep_probe.py,
embedded into dlenv at build time) on this Python with a fake kernel32: sys.platform is set
to "win32" and ctypes.WinDLL returns an object whose K32EnumProcessModules and
GetModuleFileNameW answer from a table (2005 modules, so the buffer-regrow loop
runs). Checks that exactly the NVIDIA DLLs come back in "loaded", in module
order, as written. The real ctypes calls need a Windows Python (not in CI).
usage: python3 python_deep_windows_branch.py src/probe/python_deep_probe.py"""
import ctypes
import io
import json
import sys

script = open(sys.argv[1], encoding="utf-8").read()

named = {0x1000: r"C:\Python311\python.exe",
         0x2000: r"C:\Windows\System32\KERNEL32.DLL",
         0x3000: r"C:\venv\Lib\site-packages\torch\lib\cudnn64_9.dll",
         0x4000: r"C:\Windows\System32\DriverStore\FileRepository\nv_x\nvcuda.dll",
         0x5000: r"C:\venv\Lib\site-packages\torch\lib\CUBLASLT64_12.DLL",
         0x5100: r"C:\venv\Lib\site-packages\torch\lib\cudnn64_9.dll"}
filler = {0x10000 + i * 16: "C:\\x\\mod%d.dll" % i for i in range(2000)}
order = list(named) + list(filler)
ptr = ctypes.sizeof(ctypes.c_void_p)


def enum_modules(process, mods, size, need):
    need._obj.value = len(order) * ptr
    for i, m in enumerate(order[:size // ptr]):
        mods[i] = m
    return 1


def module_file_name(module, buf, size):
    buf.value = named.get(module) or filler[module]
    return len(buf.value)


class Fn:
    def __init__(self, f):
        self.f = f

    def __call__(self, *args):
        return self.f(*args)


class Kernel32:
    K32EnumProcessModules = Fn(enum_modules)
    GetCurrentProcess = Fn(lambda: 1)
    GetModuleFileNameW = Fn(module_file_name)


ctypes.WinDLL = lambda name, **kw: Kernel32()
sys.platform = "win32"
captured = io.StringIO()
real_stdout, sys.stdout = sys.stdout, captured
try:
    exec(compile(script, "dlenv-probe", "exec"), {"__name__": "__main__"})
finally:
    sys.stdout = real_stdout
text = captured.getvalue()
body = text[text.index("DLENV-DEEP-BEGIN") + 16:text.index("DLENV-DEEP-END")]
loaded = json.loads(body)["loaded"]
want = [named[0x3000], named[0x4000], named[0x5000]]
if loaded != want:
    sys.exit("loaded: %r\nwanted: %r" % (loaded, want))
print("ok: " + ", ".join(loaded))
