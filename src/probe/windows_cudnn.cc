// cuDNN on Windows: cudnn64_N.dll and its sub-DLLs inside toolkits (bin, bin\x64), in the
// cuDNN 9 installer layout (Program Files\NVIDIA\CUDNN\v9.x\bin\<cuda>\ with headers in
// include\<cuda>\), under CUDNN_HOME / CUDNN_PATH and in every PATH directory. Versions
// from cudnn_version.h and the DLLs' version resources; the CUDA major from the installer
// folder name or the cuBLAS / cudart DLLs the sub-libraries import.
#include <algorithm>
#include <map>
#include <regex>

#include "probe/text_formats.h"
#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct Candidate {
  std::string dir;
  std::string via;
  std::string toolkit_root;
  std::vector<std::string> include_dirs;  // where its cudnn_version.h may be
  int cuda_major_from_layout = 0;         // bin\12.6 -> 12
};

void add(std::vector<Candidate>& out, const FileSystem& fs, Candidate c) {
  auto found = win_find(fs, c.dir);
  if (!found || !fs.is_dir(*found)) return;
  c.dir = *found;
  for (auto& e : out) {
    if (to_lower(e.dir) == to_lower(c.dir)) {
      if (!contains(e.via, c.via)) e.via += ", " + c.via;
      if (e.toolkit_root.empty()) e.toolkit_root = c.toolkit_root;
      if (e.cuda_major_from_layout == 0) e.cuda_major_from_layout = c.cuda_major_from_layout;
      for (const auto& i : c.include_dirs) e.include_dirs.push_back(i);
      return;
    }
  }
  out.push_back(std::move(c));
}

// <root>\bin -> <root>\include; <root>\bin\12.6 -> <root>\include\12.6 and <root>\include.
std::vector<std::string> includes_for(const std::string& dir) {
  std::vector<std::string> out;
  std::string d = dir;
  std::string sub;
  std::string base = to_lower(path_basename(d));
  if (base != "bin" && to_lower(path_basename(path_dirname(d))) == "bin") {
    sub = path_basename(d);
    d = path_dirname(d);
  } else if (base == "x64" && to_lower(path_basename(path_dirname(d))) == "bin") {
    d = path_dirname(d);
  }
  if (to_lower(path_basename(d)) != "bin") return out;
  std::string inc = path_join(path_dirname(d), "include");
  if (!sub.empty()) out.push_back(path_join(inc, sub));
  out.push_back(inc);
  return out;
}

}  // namespace

std::optional<std::pair<Version, std::string>> windows_cudnn_header(
    const FileSystem& fs, const std::string& dll_dir, int major,
    std::vector<std::string> include_dirs) {
  if (include_dirs.empty()) include_dirs = includes_for(dll_dir);
  for (const auto& inc : include_dirs) {
    auto dir = win_find(fs, inc);
    if (!dir) continue;
    for (const char* h : {"cudnn_version.h", "cudnn.h"}) {
      auto hp = win_child(fs, *dir, h);
      if (!hp) continue;
      auto text = fs.read_file(*hp);
      if (!text) continue;
      if (auto v = cudnn_header_version(*text); v && v->major() == major) {
        return std::make_pair(*v, *hp);
      }
    }
  }
  return std::nullopt;
}

std::vector<CudnnCopy> probe_windows_cudnn(const ProbeContext& ctx,
                                           const std::vector<ToolkitFacts>& toolkits) {
  const FileSystem& fs = ctx.fs;
  std::vector<Candidate> cands;
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) {
      add(cands, fs, {d, "toolkit " + t.root, t.root, {path_join(t.root, "include")}, 0});
    }
  }
  // The cuDNN 9 graphical installer: CUDNN\v9.x\bin\<cuda>\ ; tarballs: CUDNN\v8.x\bin.
  std::string cudnn_base = path_join(win_program_files(ctx), "NVIDIA/CUDNN");
  if (auto base = win_find(fs, cudnn_base)) {
    if (auto versions = fs.list_dir(*base)) {
      for (const auto& v : *versions) {
        std::string bin = path_join(path_join(*base, v.name), "bin");
        auto subs = fs.list_dir(bin);
        if (!subs) continue;
        add(cands, fs, {bin, "cuDNN installer", "", includes_for(bin), 0});
        for (const auto& s : *subs) {
          if (s.type != FileType::directory || !Version::parse(s.name)) continue;
          std::string d = path_join(bin, s.name);
          add(cands, fs,
              {d, "cuDNN installer", "", includes_for(d), Version::parse(s.name)->major()});
        }
      }
    }
  }
  for (const char* var : {"CUDNN_HOME", "CUDNN_PATH", "CUDNN_ROOT"}) {
    auto v = win_env(ctx, var);
    if (!v || v->empty()) continue;
    std::string root = win_logical(ctx, *v);
    add(cands, fs, {path_join(root, "bin"), var, "", includes_for(path_join(root, "bin")), 0});
    if (auto subs = fs.list_dir(win_find(fs, path_join(root, "bin")).value_or(""))) {
      for (const auto& s : *subs) {
        if (s.type != FileType::directory || !Version::parse(s.name)) continue;
        std::string d = path_join(path_join(root, "bin"), s.name);
        add(cands, fs, {d, var, "", includes_for(d), Version::parse(s.name)->major()});
      }
    }
    add(cands, fs, {root, var, "", {path_join(root, "include")}, 0});
  }
  if (auto p = win_env(ctx, "PATH")) {
    for (const auto& entry : win_path_entries(*p)) {
      std::string dir = win_logical(ctx, entry);
      if (dir.empty()) continue;
      add(cands, fs, {dir, "PATH", "", includes_for(dir), 0});
    }
  }

  static const std::regex dll_re(R"(cudnn(_[a-z_]+)?64_(\d+)\.dll)", std::regex::icase);
  std::vector<CudnnCopy> out;
  for (const auto& cand : cands) {
    auto entries = fs.list_dir(cand.dir);
    if (!entries) continue;
    std::map<int, std::vector<std::string>> by_major;  // major -> lower-case file names
    std::map<std::string, std::string> on_disk;        // lower-case -> name as on disk
    for (const auto& e : *entries) {
      std::smatch m;
      if (std::regex_match(e.name, m, dll_re)) {
        int major = static_cast<int>(parse_int(m[2].str()).value_or(0));
        by_major[major].push_back(to_lower(e.name));
        on_disk[to_lower(e.name)] = e.name;
      }
    }
    for (const auto& [major, files] : by_major) {
      std::string main_name = "cudnn64_" + std::to_string(major) + ".dll";
      CudnnCopy c;
      c.major = major;
      c.dir = cand.dir;
      c.toolkit_root = cand.toolkit_root;
      c.found_via = split(cand.via, ',');
      for (auto& v : c.found_via) v = std::string(trim(v));
      bool has_main = on_disk.count(main_name) > 0;
      c.library = path_join(cand.dir, has_main ? on_disk[main_name] : main_name);
      // Version resources of every file; the main library's is the copy's version.
      std::map<std::string, WinFile> pe;
      for (const auto& f : files) pe[f] = win_read_file(fs, path_join(cand.dir, on_disk[f]), "");
      if (has_main && pe[main_name].version) {
        auto v = Version::parse(*pe[main_name].version);
        if (v && v->major() == major) {
          // major.minor.patch, as the header and Linux file names say it (the build number
          // stays in the source).
          c.library_version = Fact<Version>::known(
              v->truncated(3), pe[main_name].version.source + " " + *pe[main_name].version);
        }
      }
      if (!c.library_version) {
        c.library_version = Fact<Version>::unknown(
            FactStatus::not_found,
            has_main ? "cudnn64_" + std::to_string(major) +
                           ".dll has no cuDNN version in its version resource"
                     : main_name + " is missing from this directory",
            c.library);
      }
      if (auto h = windows_cudnn_header(fs, cand.dir, major, cand.include_dirs)) {
        c.header_version = Fact<Version>::known(h->first, h->second);
        c.header_path = h->second;
      } else {
        c.header_version = Fact<Version>::unknown(
            FactStatus::not_found,
            "no cudnn_version.h for cuDNN " + std::to_string(major) + " beside this copy",
            cand.include_dirs.empty() ? cand.dir : cand.include_dirs.front());
      }
      for (const auto& want : ctx.kb.cudnn_library_files(major, Os::windows)) {
        std::string w = to_lower(want);
        if (std::find(files.begin(), files.end(), w) != files.end()) {
          c.sublibraries_present.push_back(want);
        } else {
          c.sublibraries_missing.push_back(want);
        }
      }
      if (c.library_version) {
        for (const auto& f : files) {
          if (f == main_name || !pe[f].version) continue;
          auto v = Version::parse(*pe[f].version);
          if (v && !(v->truncated(3) == *c.library_version)) {
            c.mixed_versions[on_disk[f]] = *pe[f].version;
          }
        }
      }
      if (cand.cuda_major_from_layout > 0) {
        c.cuda_major = Fact<int>::known(
            cand.cuda_major_from_layout,
            cand.dir + " (installer folder for CUDA " + path_basename(cand.dir) + ")");
      }
      for (const auto& f : files) {
        if (c.cuda_major) break;
        for (const auto& imp : pe[f].imports) {
          auto lib = ctx.kb.library_from_file_name(imp);
          if (lib &&
              (lib->first == "cublas" || lib->first == "cublasLt" || lib->first == "cudart")) {
            c.cuda_major =
                Fact<int>::known(lib->second, path_join(cand.dir, on_disk[f]) + " imports " + imp);
            break;
          }
        }
      }
      if (!c.cuda_major) {
        c.cuda_major = Fact<int>::unknown(
            FactStatus::not_found, "no installer folder name or cuBLAS import says", cand.dir);
      }
      c.live_version = Fact<Version>::unknown(
          FactStatus::skipped,
          ctx.live ? "not loaded (file facts only on Windows)" : "not loaded under --root");
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace dlenv
