#!/usr/bin/env python3
"""Builds a --root tree for timing `dlenv doctor` against the size of a machine.

The tree holds:
  * N conda environments under /home/u/miniconda3/envs, each with the file layout of the
    torch (cu13), TensorFlow and JAX (cuda13 plugin) wheels: the dist-info records the
    Python probe reads, torch/version.py, TF's build_info.py, the frameworks' extension
    libraries (small ELF files built here with gcc, with the wheels' DT_NEEDED and
    DT_RPATH shapes) and the nvidia/*/lib directories holding this machine's real CUDA 13
    and cuDNN 9 libraries (nothing is imported or executed);
  * T CUDA toolkits /usr/local/cuda-12.0 ... (version.json, bin/nvcc, lib64 with the real
    CUDA libraries; the first C of them with a cuDNN copy in lib64) and C2 more cuDNN
    copies in /opt/cudnn-*/lib, listed in /etc/ld.so.conf.d and /etc/ld.so.cache
    (written by this machine's `ldconfig -r`);
  * G GPUs' worth of driver facts: /proc/driver/nvidia/version and
    /proc/driver/nvidia/gpus/<bus>/information, /dev/nvidia*;
  * the system libraries the real NVIDIA libraries need, in /usr/lib/x86_64-linux-gnu.

--files link: every environment's files are hard links of one set (one inode per file, as
conda's package cache leaves them); --files copy: every environment's files are copies
(distinct inodes, same content, as pip installs them), about 2 GB of disk per environment.
The toolkits' and the /opt cuDNN copies' libraries are hard links of this machine's files
either way.

Usage: bench/scaling_tree.py DEST --envs N [--toolkits 10] [--cudnn 20] [--gpus 8]
       [--files link|copy] [--cuda /usr/local/cuda/lib64]
Prints the --env-file to pass to doctor (DEST/env).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SYSTEM_LIBS = ["libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
               "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1"]
CU13_LIBS = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcusparse.so.12",
             "libcufft.so.12", "libcurand.so.10", "libnvrtc.so.13", "libnvJitLink.so.13",
             "libcupti.so.13"]
TOOLKIT_LIBS = ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libnvrtc.so.13"]
PYTHON = "3.12.11"
TORCH = "2.9.0+cu130"
TF = "2.20.0"
JAX = "0.7.2"
CUDNN_WHEEL = "9.13.0.50"
OTHER_DISTS = ["numpy-2.3.3", "filelock-3.19.1", "fsspec-2025.9.0", "jinja2-3.1.6",
               "markupsafe-3.0.2", "mpmath-1.3.0", "networkx-3.5", "sympy-1.14.0",
               "typing_extensions-4.15.0", "absl_py-2.3.1", "astunparse-1.6.3",
               "flatbuffers-25.9.23", "gast-0.6.0", "google_pasta-0.2.0", "grpcio-1.75.1",
               "h5py-3.14.0", "keras-3.11.3", "ml_dtypes-0.5.3", "opt_einsum-3.4.0",
               "protobuf-6.32.1", "requests-2.32.5", "six-1.17.0", "termcolor-3.1.0",
               "wrapt-1.17.3", "scipy-1.16.2", "packaging-25.0", "setuptools-80.9.0",
               "wheel-0.45.1", "pip-25.2"]


def real(p):
    return os.path.realpath(p)


def place(src, dst, mode):
    """dst: a hard link of src (mode 'link') or a copy (mode 'copy')."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if mode == "link":
        try:
            os.link(real(src), dst)
            return
        except OSError:
            pass
    shutil.copyfile(real(src), dst)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def dist_info(site, name, version, requires=(), tag="cp312-cp312-manylinux_2_28_x86_64"):
    d = os.path.join(site, f"{name.replace('-', '_')}-{version}.dist-info")
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    write(os.path.join(d, "METADATA"), meta)
    write(os.path.join(d, "INSTALLER"), "pip\n")
    write(os.path.join(d, "WHEEL"), f"Wheel-Version: 1.0\nGenerator: bdist_wheel\n"
          f"Root-Is-Purelib: false\nTag: {tag}\n")
    write(os.path.join(d, "RECORD"), "")


def gcc_lib(out, soname, needed_dirs, needed, rpath=None, work=None):
    """A small shared library with DT_SONAME, DT_NEEDED `needed` (found in needed_dirs at
    link time) and DT_RPATH `rpath`."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = os.path.join(work, "x.c")
    with open(src, "w") as f:
        f.write("int %s_marker(void) { return 1; }\n" % soname.split(".")[0].replace("-", "_"))
    cmd = ["gcc", "-shared", "-fPIC", "-o", out, src, f"-Wl,-soname,{soname}",
           "-Wl,--no-as-needed"]
    if rpath:
        cmd += ["-Wl,--disable-new-dtags", f"-Wl,-rpath,{rpath}"]
    for d in needed_dirs:
        cmd.append(f"-L{d}")
    for n in needed:
        cmd.append(f"-l:{n}")
    cmd += ["-lstdc++", "-lm"]
    subprocess.run(cmd, check=True)


def build_template(tpl, cuda, work):
    """One environment's files (prefix-relative), built once; environments are made from it."""
    site = os.path.join(tpl, "lib/python3.12/site-packages")
    nv = os.path.join(site, "nvidia")
    for f in sorted(os.listdir(cuda)):
        if f.startswith("libcudnn") and f.endswith(".so.9"):
            place(os.path.join(cuda, f), os.path.join(nv, "cudnn/lib", f), "link")
    for n in CU13_LIBS:
        if os.path.exists(os.path.join(cuda, n)):
            place(os.path.join(cuda, n), os.path.join(nv, "cu13/lib", n), "link")
    if os.path.exists(os.path.join(cuda, "libnccl.so.2")):
        place(os.path.join(cuda, "libnccl.so.2"), os.path.join(nv, "nccl/lib/libnccl.so.2"), "link")
    for pkg, v in [("nvidia-cudnn-cu13", CUDNN_WHEEL), ("nvidia-cublas", "13.0.2.14"),
                   ("nvidia-cuda-runtime", "13.0.96"), ("nvidia-cuda-nvrtc", "13.0.88"),
                   ("nvidia-cufft", "12.0.0.61"), ("nvidia-curand", "10.4.0.35"),
                   ("nvidia-cusparse", "12.6.3.3"), ("nvidia-nvjitlink", "13.0.88"),
                   ("nvidia-cuda-cupti", "13.0.85"), ("nvidia-nccl-cu13", "2.27.7")]:
        dist_info(site, pkg, v, tag="py3-none-manylinux_2_27_x86_64")
    # torch: torch/lib with DT_RPATH into the nvidia wheels, as the PyPI wheels link it.
    rp = ("$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:"
          "$ORIGIN/../../nvidia/nccl/lib:$ORIGIN")
    tl = os.path.join(site, "torch/lib")
    dirs = [tl, os.path.join(nv, "cu13/lib"), os.path.join(nv, "cudnn/lib"),
            os.path.join(nv, "nccl/lib")]
    gcc_lib(os.path.join(tl, "libc10.so"), "libc10.so", [], [], "$ORIGIN", work)
    gcc_lib(os.path.join(tl, "libc10_cuda.so"), "libc10_cuda.so", dirs,
            ["libc10.so", "libcudart.so.13"], rp, work)
    gcc_lib(os.path.join(tl, "libtorch_cpu.so"), "libtorch_cpu.so", dirs, ["libc10.so"], rp, work)
    cuda_needed = [n for n in ["libc10_cuda.so", "libc10.so", "libtorch_cpu.so", "libcudart.so.13",
                               "libcublas.so.13", "libcublasLt.so.13", "libcusparse.so.12",
                               "libcufft.so.12", "libcurand.so.10", "libcupti.so.13",
                               "libnvrtc.so.13", "libcudnn.so.9", "libnccl.so.2"]
                   if any(os.path.exists(os.path.join(d, n)) for d in dirs)]
    gcc_lib(os.path.join(tl, "libtorch_cuda.so"), "libtorch_cuda.so", dirs, cuda_needed, rp, work)
    gcc_lib(os.path.join(tl, "libtorch.so"), "libtorch.so", dirs,
            ["libtorch_cpu.so", "libtorch_cuda.so"], rp, work)
    gcc_lib(os.path.join(tl, "libtorch_python.so"), "libtorch_python.so", dirs,
            ["libtorch.so", "libc10.so"], rp, work)
    gcc_lib(os.path.join(tl, "libshm.so"), "libshm.so", dirs, ["libc10.so"], rp, work)
    gcc_lib(os.path.join(site, "torch/_C.cpython-312-x86_64-linux-gnu.so"),
            "_C.cpython-312-x86_64-linux-gnu.so", dirs, ["libtorch_python.so"],
            "$ORIGIN/lib", work)
    write(os.path.join(site, "torch/version.py"),
          f"__version__ = '{TORCH}'\ndebug = False\ncuda = '13.0'\ngit_version = 'x'\nhip = None\n")
    write(os.path.join(site, "torch/__init__.py"), "")
    dist_info(site, "torch", TORCH, requires=[f"nvidia-cudnn-cu13==9.13.0.50; platform_system == "
                                              "\"Linux\"", "nvidia-cublas==13.0.2.14"])
    # TensorFlow: CUDA libraries opened at run time (dlopen), not DT_NEEDED.
    tf = os.path.join(site, "tensorflow")
    tfrp = ("$ORIGIN/../:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:"
            "$ORIGIN/../../nvidia/nccl/lib:$ORIGIN")
    gcc_lib(os.path.join(tf, "libtensorflow_framework.so.2"), "libtensorflow_framework.so.2", [],
            [], "$ORIGIN", work)
    gcc_lib(os.path.join(tf, "libtensorflow_cc.so.2"), "libtensorflow_cc.so.2", [tf],
            ["libtensorflow_framework.so.2"], "$ORIGIN", work)
    gcc_lib(os.path.join(tf, "python/_pywrap_tensorflow_internal.so"),
            "_pywrap_tensorflow_internal.so", [tf], ["libtensorflow_framework.so.2"], tfrp, work)
    write(os.path.join(tf, "python/platform/build_info.py"),
          "build_info = {'cpu_compiler': '/usr/lib/llvm-18/bin/clang', "
          "'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90'], "
          "'cuda_version': '12.5.1', 'cudnn_version': '9', 'is_cuda_build': True, "
          "'is_rocm_build': False, 'is_tensorrt_build': False}\n")
    write(os.path.join(tf, "__init__.py"), "")
    dist_info(site, "tensorflow", TF, requires=["nvidia-cudnn-cu12==9.3.0.75; extra == \"and-cuda\""])
    # JAX: the CUDA 13 PJRT plugin, linked against cuDNN through its DT_RPATH.
    jp = os.path.join(site, "jax_plugins/xla_cuda13")
    jrp = "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib"
    gcc_lib(os.path.join(jp, "xla_cuda_plugin.so"), "xla_cuda_plugin.so", dirs,
            [n for n in ["libcudnn.so.9", "libcudart.so.13"]
             if any(os.path.exists(os.path.join(d, n)) for d in dirs)], jrp, work)
    write(os.path.join(jp, "__init__.py"), "")
    gcc_lib(os.path.join(site, "jaxlib/_jax.cpython-312-x86_64-linux-gnu.so"),
            "_jax.cpython-312-x86_64-linux-gnu.so", [], [], None, work)
    write(os.path.join(site, "jax/__init__.py"), "")
    dist_info(site, "jax", JAX, tag="py3-none-any")
    dist_info(site, "jaxlib", JAX)
    dist_info(site, "jax-cuda13-plugin", JAX)
    dist_info(site, "jax-cuda13-pjrt", JAX, tag="py3-none-manylinux_2_27_x86_64")
    for d in OTHER_DISTS:
        name, v = d.rsplit("-", 1)
        dist_info(site, name, v)
        write(os.path.join(site, name, "__init__.py"), "")
    write(os.path.join(tpl, f"conda-meta/python-{PYTHON}-h9e4cc4f_0.json"), "{}\n")
    write(os.path.join(tpl, "conda-meta/history"), "==> 2025-10-01 00:00:00 <==\n")
    # The interpreter: this machine's python3 ELF (its header gives the environment's bits).
    place(sys.executable, os.path.join(tpl, "bin/python3.12"), "link")
    os.symlink("python3.12", os.path.join(tpl, "bin/python3"))
    os.symlink("python3.12", os.path.join(tpl, "bin/python"))


def clone_env(tpl, dest, mode):
    """Environment `dest` from the template: directories made, files hard-linked or copied,
    symbolic links recreated."""
    for d, subdirs, files in os.walk(tpl):
        rel = os.path.relpath(d, tpl)
        out = os.path.join(dest, rel) if rel != "." else dest
        os.makedirs(out, exist_ok=True)
        for f in files:
            s = os.path.join(d, f)
            t = os.path.join(out, f)
            if os.path.islink(s):
                os.symlink(os.readlink(s), t)
            elif mode == "link":
                os.link(s, t)
            else:
                shutil.copyfile(s, t)
        for sd in subdirs:
            if os.path.islink(os.path.join(d, sd)):
                os.symlink(os.readlink(os.path.join(d, sd)), os.path.join(out, sd))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dest")
    ap.add_argument("--envs", type=int, required=True)
    ap.add_argument("--toolkits", type=int, default=10)
    ap.add_argument("--cudnn", type=int, default=20, help="cuDNN copies outside the environments")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--files", choices=["link", "copy"], default="link")
    ap.add_argument("--cuda", default="/usr/local/cuda/lib64")
    a = ap.parse_args()
    root = os.path.abspath(a.dest)
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    cuda = a.cuda
    work = tempfile.mkdtemp()
    try:
        # System libraries and the program interpreter.
        sysdir = os.path.join(root, "usr/lib/x86_64-linux-gnu")
        for n in SYSTEM_LIBS:
            for d in ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]:
                if os.path.exists(os.path.join(d, n)):
                    place(os.path.join(d, n), os.path.join(sysdir, n), "link")
                    break
        place("/lib64/ld-linux-x86-64.so.2", os.path.join(root, "usr/lib64/ld-linux-x86-64.so.2"),
              "link")
        for d in ["lib", "lib64", "bin", "sbin"]:
            os.symlink(f"usr/{d}", os.path.join(root, d))
        os.makedirs(os.path.join(root, "usr/bin"), exist_ok=True)
        os.makedirs(os.path.join(root, "usr/sbin"), exist_ok=True)
        write(os.path.join(root, "etc/os-release"),
              'PRETTY_NAME="Ubuntu 24.04.3 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\n')
        # GPUs and the driver (facts from /proc, as on a machine whose NVML is not loaded).
        drv = "580.95.05"
        write(os.path.join(root, "proc/driver/nvidia/version"),
              f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {drv}  Release Build  "
              "(dvs-builder@U22-I3-AM02-24-3)  Wed Oct  1 00:00:00 UTC 2025\n"
              "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")
        write(os.path.join(root, "sys/module/nvidia/version"), drv + "\n")
        write(os.path.join(root, "proc/modules"),
              "nvidia_uvm 2076672 0 - Live 0x0000000000000000 (POE)\n"
              "nvidia 104910848 2 nvidia_uvm, Live 0x0000000000000000 (POE)\n")
        write(os.path.join(root, "dev/nvidiactl"), "")
        for g in range(a.gpus):
            bus = f"0000:{0x18 + g // 8:02x}:{g % 8:02x}.0"
            write(os.path.join(root, f"proc/driver/nvidia/gpus/{bus}/information"),
                  f"Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t {100 + g}\n"
                  f"GPU UUID: \t GPU-{g:08x}-0000-0000-0000-000000000000\n"
                  f"Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
                  f"DMA Mask: \t 0xfffffffffffff\nBus Location: \t {bus}\nDevice Minor: \t {g}\n"
                  "GPU Excluded:\t No\n")
            write(os.path.join(root, f"dev/nvidia{g}"), "")
        # CUDA toolkits, the first ones with a cuDNN copy in lib64, and cuDNN copies in /opt.
        in_toolkits = min(a.toolkits, a.cudnn // 2)
        conf = []
        for t in range(a.toolkits):
            ver = f"12.{t}" if t < a.toolkits - 1 else "13.0"
            tk = os.path.join(root, f"usr/local/cuda-{ver}")
            write(os.path.join(tk, "version.json"),
                  '{\n  "cuda" : {\n    "name" : "CUDA SDK",\n    "version" : "%s.0"\n  },\n'
                  '  "cuda_nvcc" : {\n    "name" : "CUDA NVCC",\n    "version" : "%s.76"\n  }\n}\n'
                  % (ver, ver))
            write(os.path.join(tk, "bin/nvcc"), "")
            for n in TOOLKIT_LIBS:
                place(os.path.join(cuda, n), os.path.join(tk, "targets/x86_64-linux/lib", n), "link")
            os.symlink("targets/x86_64-linux/lib", os.path.join(tk, "lib64"))
            if t < in_toolkits:
                for f in sorted(os.listdir(cuda)):
                    if f.startswith("libcudnn") and f.endswith(".so.9"):
                        place(os.path.join(cuda, f),
                              os.path.join(tk, "targets/x86_64-linux/lib", f), "link")
            if t == a.toolkits - 1:
                os.symlink(f"cuda-{ver}", os.path.join(root, "usr/local/cuda"))
        for c in range(a.cudnn - in_toolkits):
            d = os.path.join(root, f"opt/cudnn-9.{c}/lib")
            for f in sorted(os.listdir(cuda)):
                if f.startswith("libcudnn") and f.endswith(".so.9"):
                    place(os.path.join(cuda, f), os.path.join(d, f), "link")
            conf.append(f"/opt/cudnn-9.{c}/lib")
        write(os.path.join(root, "etc/ld.so.conf"), "include /etc/ld.so.conf.d/*.conf\n")
        write(os.path.join(root, "etc/ld.so.conf.d/x86_64-linux-gnu.conf"),
              "/usr/local/lib\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n")
        write(os.path.join(root, "etc/ld.so.conf.d/cudnn.conf"), "".join(x + "\n" for x in conf))
        subprocess.run(["ldconfig", "-X", "-r", root], check=True)
        # The conda base and its environments.
        home = os.path.join(root, "home/u")
        base = os.path.join(home, "miniconda3")
        write(os.path.join(base, f"conda-meta/python-{PYTHON}-h9e4cc4f_0.json"), "{}\n")
        write(os.path.join(base, "conda-meta/conda-25.7.0-py312h06a4308_0.json"), "{}\n")
        place(sys.executable, os.path.join(base, "bin/python3.12"), "link")
        os.symlink("python3.12", os.path.join(base, "bin/python3"))
        os.makedirs(os.path.join(base, "lib/python3.12/site-packages"))
        tpl = os.path.join(work, "template")
        build_template(tpl, cuda, work)
        for i in range(a.envs):
            clone_env(tpl, os.path.join(base, f"envs/env{i:03d}"), a.files)
        env_file = os.path.join(root, "env")
        write(env_file, "HOME=/home/u\nUSER=u\nPATH=/home/u/miniconda3/bin:/usr/local/cuda/bin:"
              "/usr/bin:/bin\nCONDA_EXE=/home/u/miniconda3/bin/conda\nLANG=C.UTF-8\n")
        print(env_file)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
