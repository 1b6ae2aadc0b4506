// Python environments: interpreters, their site-packages, the distributions we
// care about (frameworks and NVIDIA wheels) and the build facts the framework
// packages ship. Read from files only; Python is never run here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/fact.h"
#include "probe/mapped_library.h"

namespace dlenv {

// One installed distribution (a *.dist-info or *.egg-info directory).
struct PythonPackage {
  std::string name;        // normalised: lower case, '_' and '.' -> '-' ("nvidia-cudnn-cu12")
  std::string version;     // as installed, local label included ("2.11.0+cu130")
  std::string installer;   // INSTALLER file ("pip", "uv", "conda"); "" unknown
  std::string location;    // the site-packages directory holding it
  std::string source;      // the METADATA (or dist-info directory) read
  std::string direct_url;  // direct_url.json "url" when present
  std::vector<std::string> requires_nvidia;  // Requires-Dist entries naming nvidia-* wheels
  std::vector<std::string> requires_torch;   // Requires-Dist entries naming torch (extensions)
  std::vector<std::string> wheel_tags;  // WHEEL "Tag:" lines ("cp311-cp311-manylinux_2_28_x86_64")
  std::string wheel_source;             // the WHEEL file read; "" when absent
};

// One conda-meta/*.json record (only the packages dlenv reasons about).
struct CondaPackage {
  std::string name;     // "pytorch", "pytorch-mutex", "cpuonly", "cudatoolkit", "cuda-version"
  std::string version;  // "2.5.1"
  std::string build;    // "py3.11_cuda12.1_cudnn9.1.0_0", "cpu", "cuda"
  std::string source;   // the json file
};

// A shared library a framework's GPU component links against (ELF DT_NEEDED, PE
// import) or opens by name, and what the loader would pick for it.
struct NeededLibrary {
  std::string name;        // "libcublasLt.so.12", "libcudnn.so", "cudnn64_9.dll"
  std::string resolved;    // the file the loader picks; "" when none
  std::string version;     // version from the resolved file's real name ("8.9.7"); "" unknown
  std::string via;         // the search rule that found it ("ld.so.cache", "PATH", ...)
  std::string wheel_copy;  // a copy in site-packages/nvidia/*/lib|bin the loader does not search
};

// A directory XLA (JAX, TensorFlow) can take libdevice and ptxas from.
struct XlaCudaDir {
  std::string dir;
  std::string via;         // "nvidia-cuda-nvcc wheel", "XLA_FLAGS", "CUDA toolkit", ...
  bool libdevice = false;  // nvvm/libdevice/libdevice.10.bc
  bool ptxas = false;      // bin/ptxas
};

// Build facts of one framework, from the files its package ships.
struct FrameworkFacts {
  std::string name;         // "torch", "tensorflow", "jax", "paddle", "onnxruntime", "cupy",
                            // "ctranslate2"
  std::string package;      // the distribution that provides it ("paddlepaddle-gpu")
  std::string version;      // distribution version
  std::string local_tag;    // PEP 440 local label: "cpu", "cu130", "cuda12.cudnn89"; "" none
  Fact<std::string> cuda;   // CUDA it was built for ("13.0"); not-found for CPU builds
  Fact<std::string> cudnn;  // cuDNN it was built for, where the package says
  Fact<bool> cuda_build;    // the package says whether it is a CUDA build
  std::vector<std::string> cuda_packages;  // companion GPU distributions (jax-cuda12-plugin...)
  // The GPU library inspected (ORT's CUDA provider; paddle's cuDNN lookup) and what it needs.
  std::string gpu_library;
  std::vector<NeededLibrary> needed;
  bool pip_cuda_libraries = false;      // paddle: with_pip_cuda_libraries = 'ON'
  std::vector<std::string> cuda_archs;  // TF build_info cuda_compute_capabilities
  Fact<bool> tensorrt_build;            // TF build_info is_tensorrt_build
};

// A CUDA library copy inside the environment (site-packages/nvidia/*/lib, torch/lib).
struct PythonLibCopy {
  std::string library;  // "cudnn", "cudart", "cublas", "nvJitLink"
  int major = 0;        // from the file name (libcudnn.so.9 -> 9)
  std::string path;     // logical path of the file
  std::string version;  // the providing wheel's version ("9.19.0.56"); "" unknown
  std::string package;  // the providing wheel ("nvidia-cudnn-cu13"); "" unknown
  // cuSPARSE: the newest nvJitLink interface its imports name (__nvJitLinkAddData_12_4 ->
  // "12.4"); "" when none or not read.
  std::string needs_nvjitlink;
};

// What one framework said when it was really imported (--deep).
struct DeepFramework {
  std::string name;  // "torch", "tensorflow", "jax", "cupy", "onnxruntime", "paddle"
  bool imported = false;
  std::string version;       // __version__ as imported
  std::string error;         // the exception (type: message), whole; "" when none
  Fact<bool> gpu_available;  // torch.cuda.is_available(), TF/JAX GPU devices, ...
  int device_count = 0;
  std::string cuda;            // the CUDA version it reports (torch.version.cuda, ...)
  std::string cudnn;           // the cuDNN version it reports
  std::string gpu_op;          // "ok" or the error text of one tiny GPU operation
  std::string cudnn_compiled;  // torch: the cuDNN it was compiled against ("90100"); "" unknown
};

// The result of running the interpreter with dlenv's embedded probe script.
struct DeepProbe {
  Fact<std::string> status;  // "ok", or timed-out / error (exit code, crash, unparsable output)
  double wall_ms = 0;
  std::vector<DeepFramework> frameworks;
  std::vector<std::string> loaded_libraries;  // CUDA/cuDNN/cuBLAS files mapped in that process
  // The NVIDIA ones among them (Linux .so and Windows DLL names alike) with their version
  // and where each came from (pip wheel, CUDA toolkit, conda env, system, driver), read
  // from the files as `dlenv which` does. Empty when the run gave no paths.
  std::vector<MappedLibrary> loaded;
};

struct PythonEnv {
  Fact<std::string> interpreter;       // logical path of the python executable
  std::string prefix;                  // sys.prefix equivalent
  Fact<std::string> version;           // "3.11.7" (or "3.11" from lib/python3.11)
  Fact<int> bits;                      // 32 / 64 from the interpreter's ELF header
  std::vector<std::string> found_via;  // "PATH", "--python", "VIRTUAL_ENV", "conda env", ...
  std::string kind;                    // "venv", "conda", "pyenv", "system"
  std::vector<std::string> site_packages;
  std::vector<PythonPackage> packages;  // only the distributions dlenv reasons about
  std::vector<FrameworkFacts> frameworks;
  std::vector<PythonLibCopy> cuda_libs;
  std::vector<CondaPackage> conda;   // conda-meta records of a conda environment
  std::vector<XlaCudaDir> xla_dirs;  // only when JAX or TensorFlow is installed
  std::optional<DeepProbe> deep;     // only with --deep
};

}  // namespace dlenv
