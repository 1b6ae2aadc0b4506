// /proc/PID/maps parsing (fixture text) and the classification of mapped
// NVIDIA libraries (a temporary tree read through the rooted file system).
#include "probe/process_maps.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "binfmt/pe_test_builder.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMaps =
    "55d0c6a00000-55d0c6a2c000 r--p 00000000 08:01 1311 /usr/bin/python3.12\n"
    "55d0c8000000-55d0c8400000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f1a20000000-7f1a24000000 r-xp 00200000 fd:00 44 "
    "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13.1.0.3\n"
    "7f1a24000000-7f1a24100000 r--p 00000000 fd:00 44 "
    "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13.1.0.3\n"
    "7f1a30000000-7f1a31000000 r-xp 00000000 fd:00 45 "
    "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9\n"
    "7f1a32000000-7f1a33000000 r-xp 00000000 fd:00 46 "
    "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n"
    "7f1a34000000-7f1a35000000 r-xp 00000000 fd:00 47 /opt/my libs/libnccl.so.2.27.3 (deleted)\n"
    "7f1a36000000-7f1a37000000 r-xp 00000000 fd:00 48 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f1a38000000-7f1a39000000 r-xp 00000000 fd:00 49 /conda/envs/tf/lib/libcudart.so.12.4.127\n"
    "7f1a3a000000-7f1a3b000000 r-xp 00000000 fd:00 50 /usr/local/cuda-13.1/lib/libcublasLt.so.13\n"
    "7ffd1000000-7ffd1021000 rw-p 00000000 00:00 0 [stack]\n";

TEST(ProcMaps, ParsesEveryFieldPathsWithSpacesAndDeleted) {
  auto m = parse_proc_maps(kMaps, "fixture");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 11u);
  EXPECT_EQ((*m)[0].start, 0x55d0c6a00000u);
  EXPECT_EQ((*m)[0].end, 0x55d0c6a2c000u);
  EXPECT_EQ((*m)[0].perms, "r--p");
  EXPECT_EQ((*m)[0].dev, "08:01");
  EXPECT_EQ((*m)[0].inode, 1311u);
  EXPECT_EQ((*m)[0].path, "/usr/bin/python3.12");
  EXPECT_EQ((*m)[1].path, "[heap]");
  EXPECT_EQ((*m)[2].offset, 0x200000u);
  EXPECT_EQ((*m)[6].path, "/opt/my libs/libnccl.so.2.27.3");
  EXPECT_TRUE((*m)[6].deleted);
  EXPECT_EQ((*m)[10].path, "[stack]");
  // Anonymous mapping: no path.
  auto anon = parse_proc_maps("7f00-7f10 rw-p 00000000 00:00 0\n", "a");
  ASSERT_TRUE(anon);
  EXPECT_EQ((*anon)[0].path, "");
  EXPECT_TRUE(parse_proc_maps("", "empty")->empty());
}

TEST(ProcMaps, MalformedLinesAreErrorsNamingTheLine) {
  for (const char* bad :
       {"zz-10 r--p 0 08:01 1 /x\n", "10-20 r--q 0 08:01 1 /x\n", "10-20 r--p 0 0801 1 /x\n",
        "10-20 r--p 0 08:01 x1 /x\n", "20-10 r--p 0 08:01 1 /x\n", "10-20\n", "10 r--p\n"}) {
    auto m = parse_proc_maps(std::string("10-20 r--p 0 08:01 1 /ok\n") + bad, "maps");
    ASSERT_FALSE(m) << bad;
    EXPECT_NE(m.error().message.find("maps: line 2"), std::string::npos) << m.error().message;
  }
}

TEST(ProcMaps, NvidiaLibraryKinds) {
  EXPECT_EQ(nvidia_library_kind("/x/libcublasLt.so.13"), "cublasLt");
  EXPECT_EQ(nvidia_library_kind("libcublas.so.12.8.4.1"), "cublas");
  EXPECT_EQ(nvidia_library_kind("libcudart-a7b20f20.so.12"), "cudart");
  EXPECT_EQ(nvidia_library_kind("libcudnn_ops.so.9"), "cudnn");
  EXPECT_EQ(nvidia_library_kind("libcuda.so.1"), "cuda (driver)");
  EXPECT_EQ(nvidia_library_kind("libnvidia-ml.so.1"), "nvml (driver)");
  EXPECT_EQ(nvidia_library_kind("libnvidia-ptxjitcompiler.so.1"), "driver");
  EXPECT_EQ(nvidia_library_kind("libnvrtc-builtins.so.13.0"), "nvrtc");
  EXPECT_FALSE(nvidia_library_kind("libcudaxyz.so.1"));
  EXPECT_FALSE(nvidia_library_kind("libc.so.6"));
  EXPECT_FALSE(nvidia_library_kind("libcublas.a"));
}

class Tree {
 public:
  Tree() {
    root_ = testing::make_unique_temp_dir("maps");
    fs_ = make_rooted_filesystem(root_.string());
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Tree& file(const std::string& logical, const std::string& content = "") {
    fs::create_directories((root_ / logical.substr(1)).parent_path());
    std::ofstream(root_ / logical.substr(1)) << content;
    return *this;
  }
  const FileSystem& fsys() const { return *fs_; }
  fs::path root_;
  std::unique_ptr<FileSystem> fs_;
};

TEST(ProcMaps, LibrariesClassifiedByOriginWithVersions) {
  Tree t;
  t.file("/usr/local/cuda-13.0/version.json",
         R"({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}})");
  t.file("/venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.13.0.50.dist-info/RECORD",
         "nvidia/cudnn/__init__.py,,\nnvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n");
  t.file("/venv/lib/python3.12/site-packages/nvidia_cublas-13.0.0.19.dist-info/RECORD",
         "nvidia/cu13/lib/libcublas.so.13,,\n");
  t.file("/conda/envs/tf/conda-meta/history");
  // A toolkit assembled from wheels: no version.json, nvcc and dist-info/.
  t.file("/usr/local/cuda-13.1/bin/nvcc");
  t.file("/usr/local/cuda-13.1/dist-info/nvidia_cublas-13.1.0.3.dist-info/RECORD",
         "nvidia/cu13/lib/libcublasLt.so.13,sha256=x,2\n");
  auto maps = parse_proc_maps(kMaps, "fixture");
  ASSERT_TRUE(maps);
  auto libs = nvidia_libraries(t.fsys(), *maps);
  ASSERT_EQ(libs.size(), 6u);
  EXPECT_EQ(libs[0].library, "cublas");
  EXPECT_EQ(libs[0].version, "13.1.0.3");
  EXPECT_EQ(libs[0].version_source, "file name");
  EXPECT_EQ(libs[0].origin, "CUDA toolkit");
  EXPECT_EQ(libs[0].origin_detail, "/usr/local/cuda-13.0 (CUDA 13.0.2)");
  EXPECT_EQ(libs[1].library, "cudnn");
  EXPECT_EQ(libs[1].origin, "pip wheel");
  EXPECT_EQ(libs[1].origin_detail,
            "nvidia-cudnn-cu13 9.13.0.50 in /venv/lib/python3.12/site-packages");
  EXPECT_EQ(libs[1].version, "9.13.0.50");
  EXPECT_EQ(libs[1].version_source, "pip wheel metadata");
  EXPECT_EQ(libs[2].origin, "driver");
  EXPECT_EQ(libs[2].version, "580.65.06");
  EXPECT_EQ(libs[3].library, "nccl");
  EXPECT_TRUE(libs[3].deleted);
  EXPECT_EQ(libs[3].origin, "other");
  EXPECT_EQ(libs[4].origin, "conda env");
  EXPECT_EQ(libs[4].origin_detail, "/conda/envs/tf");
  EXPECT_EQ(libs[5].library, "cublasLt");
  EXPECT_EQ(libs[5].origin, "CUDA toolkit");
  EXPECT_EQ(libs[5].version, "13.1.0.3");
  EXPECT_EQ(libs[5].version_source, "/usr/local/cuda-13.1/dist-info (nvidia-cublas)");
}

TEST(ProcMaps, ReadProcessAndHoldingUnderARoot) {
  Tree t;
  t.file("/proc/42/maps", kMaps).file("/proc/42/comm", "python3\n");
  t.file("/proc/7/maps", "10-20 r-xp 0 08:01 1 /usr/lib/libc.so.6\n").file("/proc/7/comm", "sh\n");
  t.file("/proc/9/maps", "garbage\n");
  t.file("/proc/self/maps", kMaps);  // not a pid: skipped
  auto p = read_process_libraries(t.fsys(), 42);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->command, "python3");
  EXPECT_EQ(p->libraries.size(), 6u);
  EXPECT_FALSE(read_process_libraries(t.fsys(), 43));
  auto scan = processes_holding(t.fsys(), "libcublas");
  EXPECT_EQ(scan.scanned, 3);
  ASSERT_EQ(scan.holders.size(), 1u);
  EXPECT_EQ(scan.holders[0].pid, 42);
  EXPECT_EQ(scan.holders[0].command, "python3");
  ASSERT_EQ(scan.holders[0].paths.size(), 2u);  // libcublas and libcublasLt
  ASSERT_EQ(scan.unreadable.size(), 1u);
  EXPECT_EQ(scan.unreadable[0].first, 9);
}

TEST(ProcMaps, ThisProcessOnTheRealSystem) {
  auto fs = make_real_filesystem();
  auto text = fs->read_file("/proc/self/maps", 64u << 20);
  ASSERT_TRUE(text) << text.error().message;
  auto m = parse_proc_maps(*text, "/proc/self/maps");
  ASSERT_TRUE(m) << m.error().message;
  bool self = false;
  for (const auto& e : *m) self = self || e.path.find("probe_test") != std::string::npos;
  EXPECT_TRUE(self);
  auto p = read_process_libraries(*fs, static_cast<int>(getpid()));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->libraries.empty());  // the test binary maps no CUDA library
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

TEST(ProcModules, NvidiaDllKinds) {
  EXPECT_EQ(nvidia_dll_kind("cudnn64_8.dll"), "cudnn");
  EXPECT_EQ(nvidia_dll_kind("C:\\x\\cudnn_ops_infer64_8.dll"), "cudnn");
  EXPECT_EQ(nvidia_dll_kind("CUBLASLT64_12.DLL"), "cublasLt");
  EXPECT_EQ(nvidia_dll_kind("cublas64_11.dll"), "cublas");
  EXPECT_EQ(nvidia_dll_kind("cudart64_110.dll"), "cudart");
  EXPECT_EQ(nvidia_dll_kind("nvrtc-builtins64_118.dll"), "nvrtc");
  EXPECT_EQ(nvidia_dll_kind("nvcuda.dll"), "cuda (driver)");
  EXPECT_EQ(nvidia_dll_kind("nvml.dll"), "nvml (driver)");
  EXPECT_EQ(nvidia_dll_kind("zlibwapi.dll"), "zlibwapi");
  EXPECT_EQ(nvidia_dll_kind("nvJitLink_120_0.dll"), "nvJitLink");
  EXPECT_FALSE(nvidia_dll_kind("cudnn64_8.lib"));
  EXPECT_FALSE(nvidia_dll_kind("kernel32.dll"));
  EXPECT_FALSE(nvidia_dll_kind("cudnnx.dll"));
  EXPECT_FALSE(nvidia_dll_kind("nvcudadebugger.dll"));
  EXPECT_FALSE(nvidia_dll_kind("libcudnn.so.9"));
}

void write_bytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// Module paths as a Windows process reports them (backslashes), drive-less so
// that the rooted file system reads them on either OS.
TEST(ProcModules, DllsClassifiedByWindowsOriginWithVersions) {
  Tree t;
  testbuild::PeSpec spec;
  spec.version_resource = true;
  spec.file_version[0] = 8;
  spec.file_version[1] = 5;
  spec.file_version[3] = 96;
  const std::string tk = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.7";
  write_bytes(t.root_ / tk.substr(1) / "bin/cudnn64_8.dll", testbuild::build_pe(spec).bytes);
  t.file(tk + "/bin/cublas64_11.dll", "not a PE file");
  t.file("/venv/Lib/site-packages/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
         "nvidia/cudnn/bin/cudnn64_9.dll,sha256=x,1\n");
  t.file("/venv/Lib/site-packages/nvidia/cudnn/bin/cudnn64_9.dll");
  t.file("/miniconda3/envs/tf/conda-meta/history");
  t.file("/miniconda3/envs/tf/Library/bin/cudart64_110.dll");
  const std::vector<std::string> modules = {
      "\\Users\\u\\venv\\Scripts\\python.exe",
      "\\Windows\\System32\\KERNEL32.DLL",
      "\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\cudnn64_8.dll",
      "\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\cublas64_11.dll",
      "\\PROGRAM FILES\\NVIDIA GPU COMPUTING TOOLKIT\\CUDA\\V11.7\\BIN\\CUDNN64_8.DLL",  // again
      "\\venv\\Lib\\site-packages\\nvidia\\cudnn\\bin\\cudnn64_9.dll",
      "\\miniconda3\\envs\\tf\\Library\\bin\\cudart64_110.dll",
      "\\Windows\\System32\\DriverStore\\FileRepository\\nv_dispi.inf_amd64_1\\nvcuda.dll",
      "\\\\?\\C:\\Windows\\System32\\cudnn_ops_infer64_8.dll",
      "\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin\\12.3\\cudnn_graph64_9.dll",
      "\\Tools\\nvml.dll"};
  auto libs = nvidia_modules(t.fsys(), modules);
  ASSERT_EQ(libs.size(), 8u);
  EXPECT_EQ(libs[0].path, modules[2]);
  EXPECT_EQ(libs[0].name, "cudnn64_8.dll");
  EXPECT_EQ(libs[0].library, "cudnn");
  EXPECT_EQ(libs[0].version, "8.5.0.96");
  EXPECT_EQ(libs[0].version_source, "PE version resource");
  EXPECT_EQ(libs[0].origin, "CUDA toolkit");
  EXPECT_EQ(libs[0].origin_detail,
            "\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7 (CUDA 11.7)");
  EXPECT_EQ(libs[1].library, "cublas");
  EXPECT_EQ(libs[1].version, "11") << "no version resource: the name's major";
  EXPECT_EQ(libs[1].version_source, "file name (major only)");
  EXPECT_EQ(libs[2].origin, "pip wheel");
  EXPECT_EQ(libs[2].version, "9.1.0.70");
  EXPECT_EQ(libs[2].origin_detail, "nvidia-cudnn-cu12 9.1.0.70 in \\venv\\Lib\\site-packages");
  EXPECT_EQ(libs[3].library, "cudart");
  EXPECT_EQ(libs[3].origin, "conda env");
  EXPECT_EQ(libs[3].origin_detail, "\\miniconda3\\envs\\tf");
  EXPECT_EQ(libs[3].version, "11");
  EXPECT_EQ(libs[4].origin, "driver");
  EXPECT_EQ(libs[4].origin_detail,
            "driver store: \\Windows\\System32\\DriverStore\\FileRepository\\nv_dispi.inf_amd64_1");
  EXPECT_EQ(libs[5].path, modules[8]) << "the path is kept as the OS gave it";
  EXPECT_EQ(libs[5].origin, "system");
  EXPECT_EQ(libs[5].origin_detail,
            "C:\\Windows\\System32 (copied into the Windows system directory)");
  EXPECT_EQ(libs[6].origin, "cuDNN installer");
  EXPECT_EQ(libs[6].version, "9");
  EXPECT_EQ(libs[7].origin, "driver");
  EXPECT_EQ(libs[7].origin_detail, "\\Tools (not a system directory)");
  EXPECT_FALSE(libs[0].loaded_at_exit) << "only -- CMD on Windows observes unloads";
}

}  // namespace
}  // namespace dlenv
