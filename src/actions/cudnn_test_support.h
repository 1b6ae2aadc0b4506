// Shared by the cuDNN tests: temporary directories, archives written with
// libarchive's writer, fake cuDNN distributions (headers with version macros,
// gcc-built ELF libraries with the right sonames, PE DLLs from the PE builder),
// toolkit sysroots and a snapshot of a directory tree for exact comparisons.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "binfmt/pe_test_builder.h"
#include "platform/process.h"

namespace dlenv::testing {

namespace sfs = std::filesystem;

class TempDir {
 public:
  // `in_memory`: under /dev/shm when it is there (tmpfs), for tests that run an install
  // hundreds of times: every step of one is fsync'd, which costs milliseconds on a disk
  // and nothing in memory (a killed process leaves the same state in both).
  explicit TempDir(const std::string& tag, bool in_memory = false) {
    const char* base = std::getenv("DLENV_TEST_TMP");
    std::error_code ec;
    sfs::path dir =
        in_memory && sfs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
            ? sfs::path("/dev/shm")
        : base && *base ? sfs::path(base)
                        : sfs::temp_directory_path();
    sfs::create_directories(dir);
    std::string tmpl = (dir / (tag + "-XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    path_ = sfs::canonical(tmpl).string();
  }
  ~TempDir() {
    std::error_code ec;
    sfs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string at(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& content, unsigned mode = 0644) {
  sfs::create_directories(sfs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
  sfs::permissions(path, static_cast<sfs::perms>(mode));
}

inline std::string read_host_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One entry of an archive (or of a fake distribution).
struct ArchiveEntry {
  enum Kind { file, dir, symlink, hardlink, chardev };
  ArchiveEntry(std::string p, std::string c = "", Kind k = file, std::string l = "",
               unsigned m = 0644)
      : path(std::move(p)), content(std::move(c)), kind(k), link(std::move(l)), mode(m) {}
  std::string path;
  std::string content;
  Kind kind = file;
  std::string link;
  unsigned mode = 0644;
  int64_t declared_size = -1;  // -1: content.size()
};

enum class ArchiveFormat { tar_xz, zip, tar };

// Writes `entries` with libarchive's writer.
inline void write_archive(const std::string& file, ArchiveFormat fmt,
                          const std::vector<ArchiveEntry>& entries) {
  archive* a = archive_write_new();
  if (fmt == ArchiveFormat::tar_xz || fmt == ArchiveFormat::tar) {
    if (fmt == ArchiveFormat::tar_xz) archive_write_add_filter_xz(a);
    archive_write_set_format_pax_restricted(a);
  } else {
    archive_write_set_format_zip(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, file.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const auto& e : entries) {
    archive_entry* ae = archive_entry_new();
    archive_entry_set_pathname(ae, e.path.c_str());
    archive_entry_set_perm(ae, e.mode);
    switch (e.kind) {
      case ArchiveEntry::file:
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_size(
            ae, e.declared_size >= 0 ? e.declared_size : static_cast<int64_t>(e.content.size()));
        break;
      case ArchiveEntry::dir: archive_entry_set_filetype(ae, AE_IFDIR); break;
      case ArchiveEntry::symlink:
        archive_entry_set_filetype(ae, AE_IFLNK);
        archive_entry_set_symlink(ae, e.link.c_str());
        break;
      case ArchiveEntry::hardlink:
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_hardlink(ae, e.link.c_str());
        break;
      case ArchiveEntry::chardev:
        archive_entry_set_filetype(ae, AE_IFCHR);
        archive_entry_set_rdev(ae, 0x0101);
        break;
    }
    ASSERT_EQ(archive_write_header(a, ae), ARCHIVE_OK) << e.path << ": " << archive_error_string(a);
    if (e.kind == ArchiveEntry::file && !e.content.empty()) {
      archive_write_data(a, e.content.data(), e.content.size());
    }
    archive_entry_free(ae);
  }
  archive_write_close(a);
  archive_write_free(a);
}

inline std::string version_header(int major, int minor, int patch) {
  return "/* cudnn_version.h (test) */\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n"
         "#define CUDNN_MAJOR " +
         std::to_string(major) + "\n#define CUDNN_MINOR " + std::to_string(minor) +
         "\n#define CUDNN_PATCHLEVEL " + std::to_string(patch) +
         "\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
         "#endif\n";
}

// A small ELF shared library with `soname`, DT_RUNPATH $ORIGIN, cudnnGetVersion()
// returning `version_int` and the string "libcublasLt.so.<cuda>" in .rodata (cuDNN 9
// loads cuBLASLt by that name). `needed`: a DT_NEEDED entry on that soname (linked
// against a stub built alongside, which is not part of the result). Built once per
// process per distinct argument set.
inline std::string fake_cudnn_elf(const std::string& soname, int version_int, int cuda,
                                  bool runpath = true, const std::string& needed = "") {
  static std::map<std::string, std::string> cache;
  std::string key = soname + "/" + std::to_string(version_int) + "/" + std::to_string(cuda) +
                    (runpath ? "" : "/norunpath") + "/" + needed;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const char* t = std::getenv("DLENV_TEST_TMP");
  std::string dir = std::string(t && *t ? t : "/tmp") + "/cudnn-elf-" + std::to_string(getpid());
  sfs::create_directories(dir);
  std::string src = dir + "/fake.c";
  write_file(
      src,
      "#include <stddef.h>\n"
      "const char dlenv_cublaslt_name[] = \"libcublasLt.so.\" CUDA_STR;\n"
      "size_t cudnnGetVersion(void) { return VERSION_INT + (dlenv_cublaslt_name[0] - 'l'); }\n");
  std::string out = dir + "/" + std::to_string(cache.size()) + "-" + soname;
  std::vector<std::string> argv = {DLENV_C_COMPILER,
                                   "-x",
                                   "c",
                                   "-shared",
                                   "-fPIC",
                                   "-O1",
                                   "-DVERSION_INT=" + std::to_string(version_int),
                                   "-DCUDA_STR=\"" + std::to_string(cuda) + "\"",
                                   "-Wl,-soname," + soname};
  if (runpath) argv.insert(argv.end(), {"-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"});
  argv.insert(argv.end(), {src, "-o", out});
  if (!needed.empty()) {
    const std::string stub_dir = dir + "/stub-" + std::to_string(cache.size());
    sfs::create_directories(stub_dir);
    auto stub = run_process({DLENV_C_COMPILER, "-x", "c", "-shared", "-fPIC",
                             "-Wl,-soname," + needed, "/dev/null", "-o", stub_dir + "/" + needed});
    if (!stub || stub->exit_code != 0) {
      ADD_FAILURE() << "cannot build the stub " << needed << ": "
                    << (stub ? stub->err : stub.error().message);
      return "";
    }
    argv.insert(argv.end(), {"-L" + stub_dir, "-Wl,--push-state,--no-as-needed", "-l:" + needed,
                             "-Wl,--pop-state"});
  }
  auto r = run_process(argv);
  if (!r || r->exit_code != 0) {
    ADD_FAILURE() << "cannot build " << soname << ": " << (r ? r->err : r.error().message);
    return "";
  }
  cache[key] = read_host_file(out);
  return cache[key];
}

// A PE DLL importing cublasLt64_<cuda>.dll (cuDNN 8 links cuBLAS directly).
inline std::string fake_cudnn_dll(const std::string& name, int cuda, const uint16_t ver[4]) {
  testbuild::PeSpec s;
  s.imports = {{"cublasLt64_" + std::to_string(cuda) + ".dll", {"cublasLtCreate"}},
               {"KERNEL32.dll", {"GetProcAddress"}}};
  s.export_name = name;
  s.exports = {{"cudnnGetVersion", ""}};
  s.version_resource = true;
  for (int i = 0; i < 4; ++i) s.file_version[i] = ver[i];
  auto img = testbuild::build_pe(s);
  return std::string(img.bytes.begin(), img.bytes.end());
}

// NVIDIA's Linux archive layout for cuDNN 9 (8 libraries as .so -> .so.9 -> .so.9.x.y,
// 14 headers, LICENSE), under `top`.
// `ops_needs`: a DT_NEEDED entry of libcudnn_ops (see fake_cudnn_elf).
inline std::vector<ArchiveEntry> fake_cudnn9_linux(const std::string& top, int minor, int patch,
                                                   int cuda, bool runpath = true,
                                                   const std::string& ops_needs = "") {
  const std::string v = "9." + std::to_string(minor) + "." + std::to_string(patch);
  const int vi = 9 * 10000 + minor * 100 + patch;
  std::vector<ArchiveEntry> e;
  e.push_back({top, "", ArchiveEntry::dir, "", 0755});
  for (std::string h : {"cudnn", "cudnn_adv", "cudnn_backend", "cudnn_cnn", "cudnn_graph",
                        "cudnn_ops", "cudnn_version"}) {
    for (std::string suffix : {"", "_v9"}) {
      std::string name = h + suffix + ".h";
      std::string body = h == "cudnn_version"
                             ? version_header(9, minor, patch)
                             : "/* " + name + " */\n#include \"cudnn_version.h\"\n";
      e.push_back({top + "/include/" + name, body});
    }
  }
  for (std::string l :
       {"cudnn", "cudnn_graph", "cudnn_ops", "cudnn_cnn", "cudnn_adv", "cudnn_engines_precompiled",
        "cudnn_engines_runtime_compiled", "cudnn_heuristic"}) {
    std::string so = "lib" + l + ".so";
    e.push_back({top + "/lib/" + so + "." + v,
                 fake_cudnn_elf(so + ".9", vi, cuda, runpath, l == "cudnn_ops" ? ops_needs : ""),
                 ArchiveEntry::file, "", 0755});
    e.push_back({top + "/lib/" + so + ".9", "", ArchiveEntry::symlink, so + "." + v, 0777});
    e.push_back({top + "/lib/" + so, "", ArchiveEntry::symlink, so + ".9", 0777});
  }
  e.push_back({top + "/LICENSE", "cuDNN license (test)\n"});
  return e;
}

// The cuDNN 8.5.0.96 Windows archive layout (7 DLLs, 9 headers, 14 .lib, LICENSE).
inline std::vector<ArchiveEntry> fake_cudnn8_windows(const std::string& top, int cuda) {
  std::vector<ArchiveEntry> e;
  const uint16_t ver[4] = {8, 5, 0, 96};
  for (std::string l : {"cudnn", "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer",
                        "cudnn_cnn_train", "cudnn_adv_infer", "cudnn_adv_train"}) {
    e.push_back({top + "/bin/" + l + "64_8.dll", fake_cudnn_dll(l + "64_8.dll", cuda, ver)});
    e.push_back({top + "/lib/x64/" + l + ".lib", "!<arch>\n"});
    e.push_back({top + "/lib/x64/" + l + "64_8.lib", "!<arch>\n"});
  }
  for (std::string h :
       {"cudnn", "cudnn_adv_infer", "cudnn_adv_train", "cudnn_backend", "cudnn_cnn_infer",
        "cudnn_cnn_train", "cudnn_ops_infer", "cudnn_ops_train"}) {
    e.push_back({top + "/include/" + h + ".h", "/* " + h + " */\n"});
  }
  e.push_back({top + "/include/cudnn_version.h", version_header(8, 5, 0)});
  e.push_back({top + "/LICENSE", "cuDNN license (test)\n"});
  return e;
}

// Under the sysroot `root`: /usr/local/cuda-X.Y (version.json, cuda.h, cudart) with an
// older cuDNN 9.0.0 (header, library, links) and /usr/local/cuda -> cuda-X.Y. Returns
// the toolkit's logical path.
inline std::string write_toolkit_with_cudnn_9_0(const std::string& root,
                                                const std::string& cuda_version, int library_cuda) {
  const std::string tk = "/usr/local/cuda-" + cuda_version.substr(0, cuda_version.rfind('.'));
  const std::string t = root + tk;
  write_file(t + "/version.json",
             "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"" + cuda_version + "\"}}");
  write_file(t + "/include/cuda.h", "/* cuda.h */\n");
  write_file(t + "/include/cudnn_version.h", version_header(9, 0, 0));
  write_file(t + "/include/cudnn.h", "/* old cudnn.h */\n");
  write_file(t + "/lib64/libcudart.so.12.4.127", "ELF", 0755);
  write_file(t + "/lib64/libcudnn.so.9.0.0", fake_cudnn_elf("libcudnn.so.9", 90000, library_cuda),
             0755);
  sfs::create_symlink("libcudnn.so.9.0.0", t + "/lib64/libcudnn.so.9");
  sfs::create_symlink("libcudnn.so.9", t + "/lib64/libcudnn.so");
  sfs::create_symlink(tk.substr(std::string("/usr/local/").size()), root + "/usr/local/cuda");
  return tk;
}

// Every path under `root` -> "type mode content-or-target" (for exact before/after checks).
inline std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (auto it = sfs::recursive_directory_iterator(root); it != sfs::recursive_directory_iterator();
       ++it) {
    const auto& p = it->path();
    std::string rel = p.string().substr(root.size());
    struct stat st {};
    ::lstat(p.c_str(), &st);
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    if (S_ISLNK(st.st_mode)) {
      out[rel] = "link " + sfs::read_symlink(p).string();
    } else if (S_ISDIR(st.st_mode)) {
      out[rel] = std::string("dir ") + mode;
    } else {
      out[rel] = std::string("file ") + mode + " " + read_host_file(p.string());
    }
  }
  return out;
}

}  // namespace dlenv::testing
