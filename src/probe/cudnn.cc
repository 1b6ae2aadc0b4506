// cuDNN: every copy a process on this machine could load -- inside toolkits, in
// distro directories, in the ld.so.cache, on LD_LIBRARY_PATH, in pip wheels and
// conda envs -- with its version from the header, the file name / wheel metadata,
// and (live) cudnnGetVersion, plus the CUDA major it was built for.
#include <algorithm>
#include <regex>

#include "binfmt/elf.h"
#include "probe/live_isolation.h"
#include "probe/probe.h"
#include "probe/text_formats.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct Candidate {
  std::string dir;
  std::string via;
  std::string toolkit_root;
  std::string python_site;
  std::string real_dir = {};  // dir with its links resolved, by add_candidate
};

void add_candidate(std::vector<Candidate>& out, const FileSystem& fs, Candidate c) {
  c.dir = path_normalize(c.dir);
  if (!fs.is_dir(c.dir)) return;
  std::string real = fs.real_path(c.dir).value_or(c.dir);
  for (auto& existing : out) {
    if (existing.real_dir == real) {
      if (!contains(existing.via, c.via)) existing.via += ", " + c.via;
      if (existing.toolkit_root.empty()) existing.toolkit_root = c.toolkit_root;
      if (existing.python_site.empty()) existing.python_site = c.python_site;
      return;
    }
  }
  c.real_dir = std::move(real);
  out.push_back(std::move(c));
}

}  // namespace

void probe_cudnn_live(const ProbeContext& ctx, CudnnCopy& c) {
  LiveProbeSession session(live_probe_argv(), LiveLimits{});
  session.request({LiveRequest::Kind::cudnn, {}, ctx.fs.host_path(c.library)});
  LiveAnswers a = session.finish();
  if (!a.cudnn.empty() && a.cudnn[0]) {
    apply_cudnn_live(c, *a.cudnn[0]);
  } else {
    c.live_version =
        Fact<Version>::unknown(FactStatus::error,
                               a.failures.empty() ? "the probe process did not answer"
                                                  : describe_live_failure(a.failures.front()),
                               "dlopen " + c.library + " (in a probe process)");
  }
}

namespace {

// The CUDA major a cuDNN build targets: from the cuBLAS/cuBLASLt sonames it needs.
void cuda_major_from_elf(const FileSystem& fs, const std::string& dir,
                         const std::vector<std::string>& files, const Kb& kb, CudnnCopy& c) {
  // 1) DT_NEEDED of the sub-libraries (cuDNN 8 links cuBLAS directly).
  for (const auto& f : files) {
    std::string p = path_join(dir, f);
    auto m = fs.map_file(p);
    if (!m) continue;
    auto elf = parse_elf((*m)->bytes(), p);
    if (!elf || !*elf) continue;
    for (const auto& n : (**elf).needed) {
      if (auto lib = kb.library_from_file_name(n);
          lib && (lib->first == "cublas" || lib->first == "cublasLt" || lib->first == "cudart")) {
        c.cuda_major = Fact<int>::known(lib->second, p + " needs " + n);
        return;
      }
    }
  }
  // 2) cuDNN 9 dlopens cuBLASLt by name: the soname is a string in its read-only data.
  for (const auto& f : files) {
    if (!contains(f, "_adv") && !contains(f, "_ops")) continue;
    std::string p = path_join(dir, f);
    auto m = fs.map_file(p);
    if (!m) continue;
    for (const auto& s : elf_find_strings((*m)->bytes(), "libcublasLt.so.", 4)) {
      if (auto lib = kb.library_from_file_name(s)) {
        c.cuda_major = Fact<int>::known(lib->second, p + " loads " + s);
        return;
      }
    }
  }
}

}  // namespace

std::vector<CudnnCopy> probe_cudnn(const ProbeContext& ctx, const LoaderConfig& loader,
                                   const std::vector<ToolkitFacts>& toolkits,
                                   const ProbeOptions& options) {
  const FileSystem& fs = ctx.fs;
  std::vector<Candidate> cands;
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) {
      add_candidate(cands, fs, {d, "toolkit " + t.root, t.root, ""});
    }
  }
  if (loader.cache) {
    for (const auto& e : loader.cache->entries) {
      if (starts_with(e.soname, "libcudnn.so.")) {
        add_candidate(cands, fs, {path_dirname(e.path), "ld.so.cache", "", ""});
      }
    }
  }
  for (const auto& d : loader.ld_library_path)
    add_candidate(cands, fs, {d, "LD_LIBRARY_PATH", "", ""});
  for (const char* var : {"CUDNN_HOME", "CUDNN_PATH", "CUDNN_ROOT"}) {
    if (auto v = ctx.env.get(var); v && !v->empty()) {
      add_candidate(cands, fs, {path_join(*v, "lib64"), var, "", ""});
      add_candidate(cands, fs, {path_join(*v, "lib"), var, "", ""});
    }
  }
  for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib",
                        "/usr/lib/aarch64-linux-gnu", "/usr/lib"}) {
    add_candidate(cands, fs, {d, "system directory", "", ""});
  }
  if (auto conda = ctx.env.get("CONDA_PREFIX"); conda && !conda->empty()) {
    add_candidate(cands, fs, {path_join(*conda, "lib"), "conda env", "", ""});
  }
  // The Python probe's discovery (interpreters on PATH, --python, venvs, conda, pyenv).
  for (const auto& site : python_site_packages(ctx, options)) {
    add_candidate(cands, fs, {path_join(site, "nvidia/cudnn/lib"), "pip wheel", "", site});
  }

  static const std::regex lib_re(R"(libcudnn(_[a-z_]+)?\.so\.(\d+)(\.[\d.]+)?)");
  std::vector<CudnnCopy> out;
  for (const auto& cand : cands) {
    auto entries = fs.list_dir(cand.dir);
    if (!entries) continue;
    std::map<int, std::vector<std::string>> by_major;  // major -> cudnn file names in dir
    for (const auto& e : *entries) {
      std::smatch m;
      if (std::regex_match(e.name, m, lib_re)) {
        by_major[static_cast<int>(parse_int(m[2].str()).value_or(0))].push_back(e.name);
      }
    }
    for (const auto& [major, files] : by_major) {
      std::string main_name = "libcudnn.so." + std::to_string(major);
      CudnnCopy c;
      c.major = major;
      c.dir = cand.dir;
      c.library = path_join(cand.dir, main_name);
      c.toolkit_root = cand.toolkit_root;
      c.python_site = cand.python_site;
      c.found_via = split(cand.via, ',');
      for (auto& v : c.found_via) v = std::string(trim(v));
      bool has_main = fs.exists(c.library);

      // Version from the real file name (libcudnn.so.9 -> libcudnn.so.9.14.0).
      if (has_main) {
        std::string real = fs.real_path(c.library).value_or(c.library);
        std::smatch m;
        std::string base = path_basename(real);
        if (std::regex_match(base, m, lib_re) && m[3].matched) {
          if (auto v = Version::parse(m[2].str() + m[3].str())) {
            c.library_version = Fact<Version>::known(*v, real);
          }
        }
      }
      // pip wheel metadata: <site>/nvidia_cudnn_cuNN-X.dist-info, or a toolkit's dist-info/.
      std::vector<std::string> meta_dirs;
      if (!cand.python_site.empty()) meta_dirs.push_back(cand.python_site);
      if (!cand.toolkit_root.empty())
        meta_dirs.push_back(path_join(cand.toolkit_root, "dist-info"));
      for (const auto& md : meta_dirs) {
        static const std::regex any_wheel(R"((nvidia_cudnn_cu(\d+))-([\d.]+)\.dist-info)");
        auto es = fs.list_dir(md);
        if (!es) continue;
        for (const auto& e : *es) {
          std::smatch m;
          if (!std::regex_match(e.name, m, any_wheel)) continue;
          auto v = Version::parse(m[3].str());
          if (!v || v->major() != major) continue;
          std::string src = path_join(md, e.name);
          if (!c.library_version) c.library_version = Fact<Version>::known(*v, src);
          c.cuda_major = Fact<int>::known(static_cast<int>(parse_int(m[2].str()).value_or(0)),
                                          src + " (wheel built for CUDA " + m[2].str() + ")");
          break;
        }
      }
      if (!c.library_version) {
        c.library_version = Fact<Version>::unknown(
            FactStatus::not_found,
            has_main ? "the file name has no full version and no wheel metadata was found"
                     : main_name + " is missing from this directory",
            c.library);
      }
      // Header: next to the copy first, then the toolkit, then system include dirs.
      std::vector<std::string> headers;
      std::string parent = path_dirname(cand.dir);
      for (const char* h : {"include/cudnn_version.h", "include/cudnn.h"}) {
        headers.push_back(path_join(parent, h));
      }
      if (!cand.toolkit_root.empty()) {
        headers.push_back(path_join(cand.toolkit_root, "include/cudnn_version.h"));
        headers.push_back(path_join(cand.toolkit_root, "include/cudnn.h"));
      }
      if (starts_with(cand.dir, "/usr/lib") || starts_with(cand.dir, "/lib") ||
          cand.dir == "/usr/local/lib") {
        std::string v = std::to_string(major);
        for (const std::string& h :
             std::vector<std::string>{"/usr/include/cudnn_version_v" + v + ".h",
                                      "/usr/include/x86_64-linux-gnu/cudnn_version_v" + v + ".h",
                                      std::string("/usr/include/cudnn_version.h"),
                                      std::string("/usr/include/x86_64-linux-gnu/cudnn_version.h"),
                                      std::string("/usr/local/include/cudnn_version.h"),
                                      std::string("/usr/include/cudnn.h")}) {
          headers.push_back(h);
        }
      }
      // A header that is there but cannot be read (a FIFO, a socket or a device in its
      // place, no permission, too big) is said, not taken for a missing one.
      std::optional<std::string> unreadable_header;
      for (const auto& h : headers) {
        auto text = fs.read_file(h);
        if (!text) {
          if (!unreadable_header && fs.lstat(h)) unreadable_header = text.error().message;
          continue;
        }
        if (auto v = cudnn_header_version(*text)) {
          if (v->major() != major) continue;  // a header for another major belongs to another copy
          c.header_version = Fact<Version>::known(*v, h);
          c.header_path = h;
          break;
        }
      }
      if (!c.header_version && unreadable_header) {
        c.header_version = Fact<Version>::unknown(FactStatus::error, *unreadable_header,
                                                  path_join(parent, "include"));
      } else if (!c.header_version) {
        c.header_version = Fact<Version>::unknown(
            FactStatus::not_found,
            "no cudnn_version.h for cuDNN " + std::to_string(major) + " beside this copy",
            path_join(parent, "include"));
      }
      // Sub-library completeness.
      for (const auto& want : ctx.kb.cudnn_library_files(major, Os::linux)) {
        if (std::find(files.begin(), files.end(), want) != files.end()) {
          c.sublibraries_present.push_back(want);
        } else {
          c.sublibraries_missing.push_back(want);
        }
      }
      // Versions of the individual files (only full-version file names say it).
      for (const auto& f : files) {
        std::string real = fs.real_path(path_join(cand.dir, f)).value_or(f);
        std::smatch m;
        std::string base = path_basename(real);
        if (std::regex_match(base, m, lib_re) && m[3].matched && c.library_version) {
          std::string v = m[2].str() + m[3].str();
          if (Version::parse(v) && !(*Version::parse(v) == *c.library_version)) {
            c.mixed_versions[base] = v;
          }
        }
      }
      if (!c.cuda_major) cuda_major_from_elf(fs, cand.dir, files, ctx.kb, c);
      if (ctx.live && options.load_cudnn && has_main && ctx.os == Os::linux) {
        probe_cudnn_live(ctx, c);
      } else {
        c.live_version = Fact<Version>::unknown(
            FactStatus::skipped, ctx.live ? "not loaded" : "not loaded under --root");
      }
      if (!c.cuda_major) {
        c.cuda_major = Fact<int>::unknown(
            FactStatus::not_found, "no wheel metadata, cuBLAS dependency or cuBLASLt name found",
            cand.dir);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace dlenv
