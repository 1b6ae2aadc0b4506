// Windows probes (probe/windows_*.cc): used by collect_facts when ctx.os is windows.
// Under `--root DIR --os windows` DIR is drive C: ("C:\Program Files\X" is read as
// DIR/Program Files/X) and names match case-insensitively, as on Windows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/probe.h"

namespace dlenv {

// ---- paths (windows_paths.cc) ---------------------------------------------------

// A Windows path as the file system here reads it: "C:\Program Files\X" -> "/Program Files/X"
// under --root (another drive -> "" : not readable), "C:/Program Files/X" on Windows.
// Forward slashes and paths already logical ("/x") pass through; quotes are dropped.
std::string win_logical(const ProbeContext& ctx, std::string_view windows_path);
// The existing path with the case found on disk (matching each component
// case-insensitively, like Windows); nullopt when it does not exist.
std::optional<std::string> win_find(const FileSystem& fs, const std::string& logical);
// A file (or directory) `name` inside `dir`, matched case-insensitively.
std::optional<std::string> win_child(const FileSystem& fs, const std::string& dir,
                                     std::string_view name);
// An environment variable, its name matched case-insensitively ("Path" == "PATH").
std::optional<std::string> win_env(const ProbeContext& ctx, std::string_view name);
// %VAR% expansion with the environment (unknown variables stay as written).
std::string win_expand(const ProbeContext& ctx, std::string_view text);
// The directories of the process PATH, in order (';'-separated, quotes dropped).
std::vector<std::string> win_path_entries(std::string_view path_value);
// System32 and the Windows directory (from SystemRoot / windir, else C:\Windows).
std::string win_system32(const ProbeContext& ctx);
std::string win_windows_dir(const ProbeContext& ctx);
// "C:\Program Files" (ProgramFiles / ProgramW6432), as a logical path.
std::string win_program_files(const ProbeContext& ctx);

// The PE header, version resource and imports of one file.
WinFile win_read_file(const FileSystem& fs, const std::string& path, std::string found_via);
// A display driver's file version -> the NVIDIA driver version: the last five digits
// of the last two fields ("31.0.15.2849" -> "528.49"); nullopt when not of that shape.
std::optional<std::string> nvidia_driver_from_file_version(std::string_view file_version);

// ---- probes ---------------------------------------------------------------------------

// nvcuda.dll / nvml.dll files and their versions; GPUs named in the registry.
void probe_windows_driver(const ProbeContext& ctx, WindowsFacts& win, DriverFacts& driver,
                          std::vector<GpuFacts>& gpus);
// CUDA_PATH, CUDA_PATH_V*_*, Program Files\NVIDIA GPU Computing Toolkit\CUDA\v*, nvcc.exe on
// PATH; versions from version.json / version.txt / cudart64_*.dll names.
std::vector<ToolkitFacts> probe_windows_toolkits(const ProbeContext& ctx);
// cuDNN copies: inside toolkits (bin, bin\x64), the cuDNN 9 installer layout
// (Program Files\NVIDIA\CUDNN\v9.x\bin\<cuda>\), CUDNN_HOME / CUDNN_PATH, every PATH directory.
// The cuDNN `major` header (cudnn_version.h, else cudnn.h) that belongs to DLLs in `dll_dir`:
// in the include directories `include_dirs` (empty: those of the layout, <root>\bin[\x64 or
// \<cuda>] -> <root>\include[\<cuda>]). The version and the header's path.
std::optional<std::pair<Version, std::string>> windows_cudnn_header(
    const FileSystem& fs, const std::string& dll_dir, int major,
    std::vector<std::string> include_dirs = {});

std::vector<CudnnCopy> probe_windows_cudnn(const ProbeContext& ctx,
                                           const std::vector<ToolkitFacts>& toolkits);
// The MSVC and OpenMP run times, zlibwapi.dll, CUDA DLLs inside Python environments, the
// PATH of this process vs the registry's, and which copy of each CUDA DLL the search
// path finds first.
void probe_windows_runtime(const ProbeContext& ctx, const std::vector<ToolkitFacts>& toolkits,
                           const std::vector<CudnnCopy>& cudnn,
                           const std::vector<PythonEnv>& python, WindowsFacts& win);

}  // namespace dlenv
