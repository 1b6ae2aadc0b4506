// Python rules, second group: the libraries a framework's GPU part really needs
// (paddle's cuDNN, the pins of torch and JAX on the NVIDIA wheels, cuSPARSE and
// nvJitLink), conda records, wheel tags (glibc, CPython), extensions built for
// another torch, TensorFlow build info (archs, TensorRT) and XLA's CUDA files.
#include <algorithm>
#include <set>

#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "util/strings.h"

namespace dlenv::pyrules {

// ---- requirements (declared in python_common.h) -----------------------------------

namespace {
std::string norm(std::string_view n) {
  std::string s = to_lower(n);
  for (auto& ch : s) {
    if (ch == '_' || ch == '.') ch = '-';
  }
  return s;
}
}  // namespace

std::optional<Requirement> parse_requirement(std::string_view text) {
  Requirement r;
  r.text = std::string(text);
  auto semi = text.find(';');
  std::string_view head = text.substr(0, semi);
  if (semi != std::string_view::npos) r.extra_only = contains(text.substr(semi), "extra");
  size_t i = 0;
  while (i < head.size() && (std::isalnum(static_cast<unsigned char>(head[i])) || head[i] == '-' ||
                             head[i] == '_' || head[i] == '.'))
    ++i;
  if (i == 0) return std::nullopt;
  r.name = norm(head.substr(0, i));
  std::string rest;
  for (char ch : head.substr(i)) {
    if (ch != ' ' && ch != '(' && ch != ')') rest += ch;
  }
  if (auto b = rest.find('['); b == 0) rest = rest.substr(rest.find(']') + 1);  // extras
  for (const auto& part : split(rest, ',')) {
    size_t n = 0;
    while (n < part.size() && std::string_view("=<>!~").find(part[n]) != std::string_view::npos)
      ++n;
    auto v = Version::parse(std::string_view(part).substr(n));
    if (n == 0 || !v) continue;
    r.specs.push_back({part.substr(0, n), *v});
  }
  return r;
}

// The lowest version a requirement allows (== or >=); nullopt when unbounded below.
std::optional<Version> lower_bound(const Requirement& r) {
  for (const auto& [op, v] : r.specs) {
    if (op == "==" || op == ">=" || op == "~=" || op == "===") return v;
  }
  return std::nullopt;
}

bool satisfies(const Requirement& r, const Version& v) {
  for (const auto& [op, want] : r.specs) {
    // "==9.1.0.70" against "9.1.0.70"; "==2.*" is parsed as 2 and compared on its length.
    Version have = v.truncated(std::max<size_t>(want.parts().size(), 1));
    if ((op == "==" || op == "===") && !(have == want)) return false;
    if (op == ">=" && v < want) return false;
    if (op == ">" && !(want < v)) return false;
    if (op == "<=" && want < v) return false;
    if (op == "<" && !(v < want)) return false;
    if (op == "!=" && have == want) return false;
  }
  return true;
}

namespace {

// ---- small helpers ---------------------------------------------------------------

std::string base_version(const std::string& v) {
  return v.substr(0, v.find('+'));
}

bool in_ld_library_path(const Facts& f, const std::string& dir) {
  for (const auto& d : f.env.ld_library_path) {
    if (path_normalize(d) == path_normalize(dir)) return true;
  }
  return false;
}

std::string lib_dir_of(const std::string& path) {
  return path_dirname(path);
}

// ---- paddle: the cuDNN it opens by name ---------------------------------------------

// ---- the NVIDIA wheels torch and JAX pin ----------------------------------------------

// Which finding an older cuDNN is for a framework distribution.
FindingId older_cudnn_id(std::string_view dist) {
  return starts_with(dist, "jax") ? FindingId::jax_cudnn_version_mismatch
                                  : FindingId::torch_cudnn_runtime_older_than_build;
}

// ---- cuSPARSE and nvJitLink ------------------------------------------------------------

// ---- conda ------------------------------------------------------------------------------

const CondaPackage* conda_pkg(const PythonEnv& e, std::string_view name) {
  for (const auto& p : e.conda) {
    if (p.name == name) return &p;
  }
  return nullptr;
}
Evidence conda_ev(const CondaPackage& p) {
  return ev("conda package " + p.name + " " + p.version + " (build " + p.build + ")", p.source);
}

// The CUDA the environment's conda packages provide: cudatoolkit (old), cuda-version
// (conda-forge and nvidia channels), cuda-cudart.
std::optional<std::pair<Version, const CondaPackage*>> conda_cuda(const PythonEnv& e) {
  for (const char* n : {"cudatoolkit", "cuda-version", "cuda-cudart", "cuda-runtime"}) {
    if (const auto* p = conda_pkg(e, n)) {
      if (auto v = Version::parse(p->version)) return std::make_pair(*v, p);
    }
  }
  return std::nullopt;
}

// ---- building extensions: nvcc vs torch.version.cuda -----------------------------------

// ---- extensions built for another torch --------------------------------------------------

// "torch2.6" (flash-attn wheel names), "pt25" / "pt2.5" (PyG, detectron2 local labels).
std::optional<Version> torch_tag(std::string_view s) {
  for (const char* key : {"torch", "pt"}) {
    for (size_t p = s.find(key); p != std::string_view::npos; p = s.find(key, p + 1)) {
      std::string_view rest = s.substr(p + std::string_view(key).size());
      if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) continue;
      if (rest.size() > 1 && rest[1] == '.') {
        if (auto v = Version::parse(rest)) return v->truncated(2);
        continue;
      }
      // "pt25" -> 2.5, "pt210" -> 2.10
      size_t n = 0;
      while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
      if (n < 2) continue;
      auto minor = parse_int(rest.substr(1, n - 1));
      if (minor) return Version{rest[0] - '0', static_cast<int>(*minor)};
    }
  }
  return std::nullopt;
}

// ---- wheel tags: glibc and CPython ---------------------------------------------------------

// The glibc a platform tag needs: manylinux_2_28_x86_64 -> 2.28, manylinux2014 -> 2.17.
std::optional<Version> manylinux_glibc(std::string_view platform) {
  if (starts_with(platform, "manylinux1")) return Version{2, 5};
  if (starts_with(platform, "manylinux2010")) return Version{2, 12};
  if (starts_with(platform, "manylinux2014")) return Version{2, 17};
  if (!starts_with(platform, "manylinux_")) return std::nullopt;
  auto parts = split(platform.substr(10), '_');
  if (parts.size() < 2) return std::nullopt;
  auto a = parse_int(parts[0]);
  auto b = parse_int(parts[1]);
  if (!a || !b) return std::nullopt;
  return Version{static_cast<int>(*a), static_cast<int>(*b)};
}

// ---- TensorFlow: driver library, cuDNN, TensorRT, architectures ------------------------------

const FrameworkFacts* tf_cuda(const PythonEnv& e) {
  const auto* t = fw(e, "tensorflow");
  return t && t->cuda_build.ok() && *t->cuda_build ? t : nullptr;
}

// "sm_90" / "compute_80" / "sm_90a" -> 9.0 / 8.0.
std::optional<Version> arch_version(std::string_view a) {
  auto u = a.find('_');
  if (u == std::string_view::npos) return std::nullopt;
  std::string digits;
  for (char ch : a.substr(u + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    digits += ch;
  }
  if (digits.size() < 2) return std::nullopt;
  auto n = parse_int(digits);
  if (!n) return std::nullopt;
  return Version{static_cast<int>(*n / 10), static_cast<int>(*n % 10)};
}

// ---- XLA: libdevice and ptxas ----------------------------------------------------------------

}  // namespace

}  // namespace dlenv::pyrules

namespace dlenv::checks {

using namespace pyrules;

// Linux only: the Windows variant (cudnn64_N.dll on PATH) is win-paddle-third-party-dso in
// windows_rules.cc.
void paddle_cudnn(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f) || c.os != Os::linux) return;
  const FindingId id = FindingId::paddle_cannot_load_cudnn;
  for (const auto& e : c.f.python) {
    const auto* p = fw(e, "paddle");
    if (!p || !p->cuda_build.ok() || !*p->cuda_build || p->needed.empty()) continue;
    auto built = p->cudnn ? Version::parse(*p->cudnn) : std::nullopt;
    const NeededLibrary& n = p->needed.front();
    auto have = Version::parse(n.version);
    std::string problem;
    Severity sev = Severity::error;
    if (n.resolved.empty()) {
      problem = "cannot load cuDNN: " + n.name + " is not found";
    } else if (built && have && have->major() != built->major()) {
      problem = "would load cuDNN " + have->str() + " (" + n.resolved + "), but it is built for " +
                "cuDNN " + built->str();
    } else if (built && have && have->truncated(2) < built->truncated(2)) {
      problem = "loads cuDNN " + have->str() + ", older than the cuDNN " + built->str() +
                " it was built with";
      sev = Severity::warning;
    } else {
      continue;
    }
    Finding x =
        make_finding(id, sev, "paddle " + p->version + " in " + env_name(e) + " " + problem);
    if (const auto* pk = pkg(e, p->package)) x.evidence.push_back(pkg_ev(*pk));
    if (p->cudnn) {
      x.evidence.push_back(
          ev("built for CUDA " + (p->cuda ? *p->cuda : std::string("?")) + ", cuDNN " + *p->cudnn,
             p->cudnn.source));
    }
    x.evidence.push_back(ev("looks up " + n.name + ": " + p->gpu_library, p->cudnn.source));
    if (!n.resolved.empty()) {
      x.evidence.push_back(ev(
          n.name + " resolves to " + n.resolved + (n.version.empty() ? "" : " (" + n.version + ")"),
          n.via));
    }
    if (!n.wheel_copy.empty()) {
      x.evidence.push_back(ev("a pip wheel copy exists at " + n.wheel_copy +
                                  ", but paddle does not search the wheel directories for it",
                              n.wheel_copy));
    }
    std::vector<const CudnnCopy*> same_major;
    for (const auto& copy : c.f.cudnn) {
      x.evidence.push_back(
          ev("cuDNN " +
                 (copy.library_version ? copy.library_version->str() : std::to_string(copy.major)) +
                 " in " + copy.dir,
             copy.library));
      if (built && copy.major == built->major()) same_major.push_back(&copy);
    }
    std::string major = built ? std::to_string(built->major()) : "N";
    std::string cuda_major =
        p->cuda ? std::to_string(Version::parse(*p->cuda).value_or(Version{12}).major()) : "12";
    if (p->pip_cuda_libraries) {
      x.fix.push_back(step("install the cuDNN wheel this paddle build loads",
                           pip(e) + " install nvidia-cudnn-cu" + cuda_major +
                               "==" + (built ? built->str() + ".*" : "9.*"),
                           &c));
    } else {
      if (!same_major.empty()) {
        std::string d = same_major.front()->dir;
        x.fix.push_back(step(
            "give paddle the unversioned name it opens, next to the cuDNN " + major + " in " + d,
            "sudo ln -sf libcudnn.so." + major + " " + d + "/libcudnn.so && sudo ldconfig", &c));
      } else if (!n.wheel_copy.empty()) {
        std::string d = lib_dir_of(n.wheel_copy);
        x.fix.push_back(
            step("link the wheel's cuDNN under the name paddle opens and put it on "
                 "the loader path",
                 "ln -sf libcudnn.so." + major + " " + d +
                     "/libcudnn.so && export LD_LIBRARY_PATH=" + d + ":$LD_LIBRARY_PATH",
                 &c));
      }
      x.fix.push_back(step("or install cuDNN " + major + " for CUDA " + cuda_major +
                               " with its development package (it provides libcudnn.so)",
                           major == "8"
                               ? "sudo apt-get install libcudnn8 libcudnn8-dev"
                               : "sudo apt-get install libcudnn" + major + "-cuda-" + cuda_major +
                                     " libcudnn" + major + "-dev-cuda-" + cuda_major,
                           &c));
    }
    out.push_back(std::move(x));
  }
}

void wheel_pins(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  for (const auto& e : c.f.python) {
    for (const auto& owner : e.packages) {
      bool torch = owner.name == "torch";
      bool jax = owner.name == "jaxlib" || starts_with(owner.name, "jax-cuda");
      if (!torch && !jax) continue;
      for (const auto& text : owner.requires_nvidia) {
        auto r = parse_requirement(text);
        if (!r || !starts_with(r->name, "nvidia-cudnn-cu")) continue;
        auto lo = lower_bound(*r);
        if (!lo) continue;
        const auto* have = pkg(e, r->name);
        std::string so = "libcudnn.so." + std::to_string(lo->major());
        // Not installed at all: the import fails with "libcudnn.so.N: cannot open shared
        // object file", which --deep reports; from files alone a CPU-only use is possible.
        if (!have) continue;
        auto hv = Version::parse(have->version);
        if (!hv) continue;
        if (hv->major() != lo->major()) {
          // The loader model decides where it resolved the framework's cuDNN itself.
          if (loader_looks_for_libcudnn(c.f, e, torch ? "torch" : "jax")) continue;
          Finding x =
              make_finding(FindingId::libcudnn8_not_found, Severity::error,
                           owner.name + " " + owner.version + " in " + env_name(e) + " needs " +
                               so + ", but " + have->name + " " + have->version + " provides " +
                               "libcudnn.so." + std::to_string(hv->major()));
          x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
          x.evidence.push_back(pkg_ev(owner));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.evidence.push_back(pkg_ev(*have));
          x.fix.push_back(
              step("reinstall the cuDNN wheel it was built with (another package "
                   "replaced it), or keep the two in separate environments",
                   pip(e) + " install \"" + r->text.substr(0, r->text.find(';')) + "\"", &c));
          out.push_back(std::move(x));
          continue;
        }
        if (*hv < *lo) {
          Finding x =
              make_finding(older_cudnn_id(owner.name), Severity::error,
                           owner.name + " " + owner.version + " in " + env_name(e) +
                               " was built for " + r->text.substr(0, r->text.find(';')) + ", but " +
                               have->name + " " + have->version + " is installed");
          x.evidence.push_back(pkg_ev(owner));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.evidence.push_back(pkg_ev(*have));
          for (const auto& o : e.packages) {
            if (&o == &owner || (o.name != "torch" && !starts_with(o.name, "jax"))) continue;
            for (const auto& t2 : o.requires_nvidia) {
              auto r2 = parse_requirement(t2);
              if (r2 && r2->name == r->name) {
                x.evidence.push_back(ev(o.name + " " + o.version + " wants " + t2, o.source));
              }
            }
          }
          x.fix.push_back(
              step("install the cuDNN wheel it was built for (or keep torch and JAX "
                   "in separate environments when their pins conflict)",
                   pip(e) + " install \"" + r->text.substr(0, r->text.find(';')) + "\"", &c));
          out.push_back(std::move(x));
          continue;
        }
        // The wheel is right; a system cuDNN of the same major on LD_LIBRARY_PATH comes first.
        // Where the loader model resolved this environment's cuDNN, it decides that case
        // (pip-cudnn-vs-system-cudnn-symbols names every file): one finding per cause.
        if (loader_resolves_cudnn(c.f, e)) continue;
        for (const auto& copy : c.f.cudnn) {
          if (!copy.python_site.empty() || copy.major != lo->major() ||
              !in_ld_library_path(c.f, copy.dir) || !copy.library_version ||
              !(copy.library_version->truncated(2) < hv->truncated(2))) {
            continue;
          }
          Finding x =
              make_finding(older_cudnn_id(owner.name), Severity::error,
                           "LD_LIBRARY_PATH puts cuDNN " + copy.library_version->str() + " (" +
                               copy.dir + ") ahead of the cuDNN " + have->version + " wheel " +
                               owner.name + " in " + env_name(e) + " was built for");
          x.evidence.push_back(ev("LD_LIBRARY_PATH contains " + copy.dir, c.f.env.source));
          x.evidence.push_back(
              ev("cuDNN " + copy.library_version->str(), copy.library_version.source));
          x.evidence.push_back(pkg_ev(*have));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.fix.push_back(
              step("remove " + copy.dir + " from LD_LIBRARY_PATH (the wheels find their own cuDNN)",
                   "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' "
                   "'\\n' | grep -vx '" +
                       copy.dir + "' | paste -sd:)",
                   &c));
          out.push_back(std::move(x));
          break;
        }
      }
    }
  }
}

// --deep: the cuDNN torch loaded vs the one it was compiled against.
void torch_deep_cudnn(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (!e.deep) continue;
    for (const auto& d : e.deep->frameworks) {
      if (d.name != "torch" || d.cudnn.empty() || d.cudnn_compiled.empty()) continue;
      auto n = parse_int(d.cudnn);
      auto compiled = Version::parse(d.cudnn_compiled);
      if (!n || !compiled) continue;
      Version runtime = Version::from_cudnn_int(*n);
      if (runtime.major() == compiled->major() && !(runtime.truncated(2) < compiled->truncated(2)))
        continue;
      Finding x = make_finding(FindingId::torch_cudnn_runtime_older_than_build, Severity::error,
                               "torch in " + env_name(e) + " loaded cuDNN " + runtime.str() +
                                   " but was compiled against cuDNN " + compiled->str());
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(ev("torch.backends.cudnn.version() = " + d.cudnn +
                                  ", torch._C._cudnn.getCompileVersion() = " + d.cudnn_compiled,
                              e.deep->status.source));
      for (const auto& l : deep_loaded(e, "cudnn")) {
        x.evidence.push_back(ev("loaded " + l, deep_loaded_source(e)));
      }
      if (!deep_windows(e)) {
        x.fix.push_back(
            step("remove foreign cuDNN directories from LD_LIBRARY_PATH so torch "
                 "finds the cuDNN wheel it was built with",
                 "unset LD_LIBRARY_PATH", &c));
        out.push_back(std::move(x));
        continue;
      }
      // Windows: torch loads cudnn64_N.dll from torch\lib, unless a DLL of that name is
      // already in the process or sits in an earlier place (beside python.exe, System32).
      std::string foreign;
      for (const auto& l : deep_loaded(e, "cudnn")) {
        std::string lp = to_lower(l);
        std::replace(lp.begin(), lp.end(), '\\', '/');
        const std::string b = lp.substr(lp.find_last_of('/') + 1);
        if (b.starts_with("cudnn64_") && !contains(lp, "/site-packages/torch/lib/")) {
          foreign = l;
          break;
        }
      }
      if (!foreign.empty()) {
        const std::string b = foreign.substr(foreign.find_last_of("/\\") + 1);
        const std::string why =
            "move the cuDNN that was loaded instead of torch's own out of "
            "the way (Windows takes a " +
            b + " already loaded, or one beside python.exe, before torch\\lib's)";
        x.fix.push_back(
            step(why, "Rename-Item -LiteralPath '" + foreign + "' '" + b + ".bak'", &c));
      } else {
        x.fix.push_back(step("reinstall torch so the cuDNN DLLs in torch\\lib are its own",
                             pip(e) + " install --force-reinstall torch==" + d.version, &c));
      }
      out.push_back(std::move(x));
    }
  }
}

void nvjitlink_cusparse(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  for (const auto& e : c.f.python) {
    for (const auto& sp : e.cuda_libs) {
      if (sp.library != "cusparse" || sp.needs_nvjitlink.empty()) continue;
      auto need = Version::parse(sp.needs_nvjitlink);
      if (!need) continue;
      // The wheel's libnvJitLink.so.N (what cuSPARSE's RUNPATH finds).
      for (const auto& j : e.cuda_libs) {
        if (j.library != "nvJitLink" || j.major != need->major()) continue;
        auto have = Version::parse(j.version);
        if (!have || !(have->truncated(2) < *need)) continue;
        Finding x = make_finding(
            FindingId::nvjitlink_older_than_cusparse, Severity::error,
            j.package + " " + j.version + " in " + env_name(e) + " is older than the nvJitLink " +
                need->str() + " that " + sp.package + " " + sp.version +
                " needs: undefined symbol "
                "__nvJitLink*_" +
                std::to_string(need->major()) + "_" + std::to_string(need->minor()));
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("libcusparse imports __nvJitLink*_" +
                                    std::to_string(need->major()) + "_" +
                                    std::to_string(need->minor()),
                                sp.path));
        x.evidence.push_back(ev(j.package + " " + j.version, j.path));
        x.fix.push_back(step("upgrade the nvJitLink wheel to at least the cuSPARSE CUDA minor",
                             pip(e) + " install -U \"" + j.package + ">=" + need->str() + "\"",
                             &c));
        out.push_back(std::move(x));
      }
      // A toolkit on LD_LIBRARY_PATH comes before the wheel's RUNPATH.
      for (const auto& t : c.f.toolkits) {
        if (!t.active_ld_library_path || !t.version || t.version->major() != need->major() ||
            !(t.version->truncated(2) < *need)) {
          continue;
        }
        Finding x =
            make_finding(FindingId::nvjitlink_older_than_cusparse, Severity::error,
                         "LD_LIBRARY_PATH puts CUDA " + t.version->str() + "'s libnvJitLink.so." +
                             std::to_string(need->major()) + " ahead of the wheels; " + sp.package +
                             " in " + env_name(e) + " needs nvJitLink " + need->str());
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("libcusparse imports __nvJitLink*_" +
                                    std::to_string(need->major()) + "_" +
                                    std::to_string(need->minor()),
                                sp.path));
        x.evidence.push_back(
            ev("CUDA toolkit " + t.version->str() + " at " + t.root + " is on LD_LIBRARY_PATH",
               c.f.env.source));
        x.fix.push_back(
            step("drop the toolkit's lib directory from LD_LIBRARY_PATH before "
                 "starting Python",
                 "unset LD_LIBRARY_PATH", &c));
        out.push_back(std::move(x));
      }
    }
  }
}

// pytorch (pytorch channel: py3.11_cpu_0 / py3.11_cuda12.1_cudnn8.9.2_0; conda-forge:
// cpu_mkl_py311... / cuda126_...) and pytorch-mutex / cpuonly.
void conda_cpu_pytorch(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    const auto* mutex = conda_pkg(e, "pytorch-mutex");
    const auto* cpuonly = conda_pkg(e, "cpuonly");
    const auto* torch = conda_pkg(e, "pytorch");
    if (!torch) torch = conda_pkg(e, "libtorch");
    bool cpu_build = torch && (contains(torch->build, "_cpu") || starts_with(torch->build, "cpu"));
    bool cpu_mutex = mutex && mutex->build == "cpu";
    if (!cpuonly && !cpu_mutex && !cpu_build) continue;
    if (!torch && !cpuonly && !cpu_mutex) continue;
    Finding x = make_finding(FindingId::conda_solver_picked_cpu_pytorch, Severity::error,
                             "conda installed the CPU build of PyTorch in " + env_name(e) +
                                 " on a machine with an NVIDIA GPU");
    if (torch) x.evidence.push_back(conda_ev(*torch));
    if (mutex) x.evidence.push_back(conda_ev(*mutex));
    if (cpuonly) x.evidence.push_back(conda_ev(*cpuonly));
    std::string cuda = "12.4";
    if (auto dc = driver_cuda(c); dc && dc->cuda < Version{12, 4}) {
      cuda = dc->cuda.truncated(2).str();
    }
    std::string conda = "conda";
    if (cpuonly) {
      x.fix.push_back(step("remove cpuonly (it pins the CPU variant)",
                           conda + " remove -p " + e.prefix + " cpuonly", &c));
    }
    x.fix.push_back(step("install the CUDA variant (or use the pip wheels: `dlenv plan`)",
                         conda + " install -p " + e.prefix + " pytorch pytorch-cuda=" + cuda +
                             " -c pytorch -c nvidia",
                         &c));
    out.push_back(std::move(x));
  }
}

void conda_vs_system(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    auto cc = conda_cuda(e);
    if (!cc) continue;
    const auto& [cv, cp] = *cc;
    // The driver must run it.
    if (auto dc = driver_cuda(c);
        dc && dc->cuda < cv.truncated(2) &&
        std::find(dc->minor_compat_majors.begin(), dc->minor_compat_majors.end(), cv.major()) ==
            dc->minor_compat_majors.end()) {
      Finding x = make_finding(FindingId::conda_cudatoolkit_vs_system_cuda, Severity::error,
                               "the conda CUDA " + cv.str() + " in " + env_name(e) +
                                   " is newer than driver " + dc->driver.str() + " runs (CUDA " +
                                   dc->cuda.str() + ")");
      x.evidence.push_back(conda_ev(*cp));
      x.evidence.push_back(
          ev("driver " + dc->driver.str() + " runs CUDA up to " + dc->cuda.str(), dc->source));
      x.fix.push_back(
          step("pin the environment's CUDA to one the driver runs, or upgrade the "
               "driver",
               "conda install -p " + e.prefix + " \"" + cp->name + "=" +
                   dc->cuda.truncated(2).str() + "\"",
               &c));
      out.push_back(std::move(x));
      continue;
    }
    // A system toolkit of another major is also visible to the same processes.
    for (const auto& t : c.f.toolkits) {
      if (!t.version || t.version->major() == cv.major()) continue;
      if (!t.active_ld_library_path && !t.active_path && !t.active_cuda_home) continue;
      std::vector<std::string> how;
      if (t.active_ld_library_path) how.push_back("LD_LIBRARY_PATH");
      if (t.active_path) how.push_back("PATH");
      if (t.active_cuda_home) how.push_back("CUDA_HOME/CUDA_PATH");
      Finding x = make_finding(FindingId::conda_cudatoolkit_vs_system_cuda, Severity::warning,
                               "conda environment " + env_name(e) + " has CUDA " + cv.str() +
                                   ", but the system CUDA " + t.version->str() +
                                   " is also active (" + join(how, ", ") + ")");
      x.evidence.push_back(conda_ev(*cp));
      x.evidence.push_back(
          ev("CUDA toolkit " + t.version->str() + " at " + t.root + " on " + join(how, ", "),
             c.f.env.source));
      x.fix.push_back(step("use one CUDA per environment: drop " + t.root + " from " +
                               join(how, ", ") +
                               " inside the conda environment, or pin the "
                               "environment's CUDA to " +
                               t.version->truncated(2).str(),
                           "conda install -p " + e.prefix + " \"" + cp->name + "=" +
                               t.version->truncated(2).str() + "\"",
                           &c));
      out.push_back(std::move(x));
      break;
    }
  }
}

// conda derives the __cuda virtual package from libcuda; without a driver (login nodes,
// docker build) conda-forge solves CPU variants unless CONDA_OVERRIDE_CUDA is set.
void conda_virtual_cuda(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  auto override_cuda = c.f.env.vars.find("CONDA_OVERRIDE_CUDA");
  bool has_override = override_cuda != c.f.env.vars.end();
  bool libcuda = !c.f.driver.libcuda_files.empty() || c.f.driver.libcuda_library.ok();
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    const CondaPackage* cpu = nullptr;
    for (const auto& p : e.conda) {
      bool fw_pkg = p.name == "pytorch" || p.name == "libtorch" || p.name == "tensorflow" ||
                    p.name == "tensorflow-base" || p.name == "jaxlib";
      if (fw_pkg && (starts_with(p.build, "cpu") || contains(p.build, "_cpu"))) cpu = &p;
    }
    if (has_override) {
      auto ov = Version::parse(override_cuda->second);
      auto dc = driver_cuda(c);
      if (ov && dc && dc->cuda < ov->truncated(2)) {
        Finding x = make_finding(FindingId::conda_cuda_virtual_package_missing, Severity::warning,
                                 "CONDA_OVERRIDE_CUDA=" + override_cuda->second +
                                     " makes conda solve for a newer CUDA than driver " +
                                     dc->driver.str() + " runs (" + dc->cuda.str() + ")");
        x.evidence.push_back(ev("CONDA_OVERRIDE_CUDA=" + override_cuda->second, c.f.env.source));
        x.evidence.push_back(
            ev("driver " + dc->driver.str() + " runs CUDA up to " + dc->cuda.str(), dc->source));
        x.fix.push_back(step("set the override to the driver's CUDA",
                             "export CONDA_OVERRIDE_CUDA=" + dc->cuda.truncated(2).str(), &c));
        out.push_back(std::move(x));
      }
      continue;
    }
    if (libcuda || !cpu) continue;
    Finding x =
        make_finding(FindingId::conda_cuda_virtual_package_missing,
                     gpu_present(c.f) ? Severity::error : Severity::warning,
                     "conda sees no CUDA driver (no __cuda virtual package) and solved the CPU "
                     "variant of " +
                         cpu->name + " in " + env_name(e));
    x.evidence.push_back(conda_ev(*cpu));
    x.evidence.push_back(
        ev("no libcuda.so.1 found (conda derives __cuda from it)", "driver library scan"));
    x.evidence.push_back(ev("CONDA_OVERRIDE_CUDA is not set", c.f.env.source));
    x.fix.push_back(
        step("on a host without the driver (login node, docker build), tell conda "
             "which CUDA the GPU machines run, then ask for the CUDA variant",
             "CONDA_OVERRIDE_CUDA=12.6 conda install -p " + e.prefix + " \"" + cpu->name +
                 "=*=cuda*\" -c conda-forge",
             &c));
    out.push_back(std::move(x));
  }
}

void toolkit_vs_torch(const Ctx& c, Findings& out) {
  // torch.utils.cpp_extension: CUDA_HOME/CUDA_PATH, else nvcc on PATH, else /usr/local/cuda.
  const ToolkitFacts* pick = nullptr;
  std::string why;
  for (const auto& t : c.f.toolkits) {
    if (t.active_cuda_home) {
      pick = &t;
      why = "CUDA_HOME/CUDA_PATH";
      break;
    }
  }
  for (const auto& t : c.f.toolkits) {
    if (!pick && t.active_path) {
      pick = &t;
      why = "the first nvcc on PATH";
    }
  }
  for (const auto& t : c.f.toolkits) {
    if (!pick && t.is_default_link) {
      pick = &t;
      why = "/usr/local/cuda";
    }
  }
  if (!pick) return;
  auto tv = pick->nvcc_version
                ? std::optional<Version>(*pick->nvcc_version)
                : (pick->version ? std::optional<Version>(*pick->version) : std::nullopt);
  if (!tv) return;
  for (const auto& e : c.f.python) {
    const auto* t = fw(e, "torch");
    if (!t || !t->cuda) continue;
    auto cv = Version::parse(*t->cuda);
    if (!cv || cv->major() == tv->major()) continue;
    Finding x = make_finding(FindingId::toolkit_vs_torch_cuda_mismatch, Severity::warning,
                             "building CUDA extensions for torch " + t->version + " in " +
                                 env_name(e) + " would use CUDA " + tv->str() + " (" + pick->root +
                                 "), but torch is built with CUDA " + *t->cuda);
    x.evidence.push_back(ev("torch.version.cuda = " + *t->cuda, t->cuda.source));
    x.evidence.push_back(ev("torch.utils.cpp_extension picks " + pick->root + " through " + why,
                            pick->version.source));
    x.fix.push_back(step("point CUDA_HOME at a CUDA " + std::to_string(cv->major()) +
                         ".x toolkit before building (pip install of packages that compile), "
                         "or install the torch build for CUDA " +
                         std::to_string(tv->major())));
    for (const auto& other : c.f.toolkits) {
      if (other.version && other.version->major() == cv->major()) {
        x.fix.push_back(
            step("use the installed CUDA " + other.version->str(),
                 "export CUDA_HOME=" + other.root + " PATH=" + other.root + "/bin:$PATH", &c));
        break;
      }
    }
    out.push_back(std::move(x));
  }
}

void extension_abi(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* torch = pkg(e, "torch");
    if (!torch) continue;
    auto tv = Version::parse(torch->version);
    if (!tv) continue;
    for (const auto& p : e.packages) {
      if (p.name == "torch" || p.name == "torchvision" || p.name == "torchaudio" ||
          starts_with(p.name, "nvidia-") || p.name == "triton" || p.name == "pytorch-triton")
        continue;
      std::string why, source;
      for (const auto& text : p.requires_torch) {
        auto r = parse_requirement(text);
        if (!r || r->name != "torch" || r->extra_only) continue;
        bool pinned = false;
        for (const auto& [op, v] : r->specs) pinned |= op == "==";
        if (pinned && !satisfies(*r, *tv)) {
          why = "requires " + text.substr(0, text.find(';'));
          source = p.source;
        }
      }
      if (why.empty()) {
        for (const std::string& s : {p.version, p.direct_url}) {
          std::string local = s == p.version && s.find('+') != std::string::npos
                                  ? s.substr(s.find('+') + 1)
                                  : (s == p.direct_url ? path_basename(s) : std::string());
          auto want = torch_tag(local);
          if (want && !(want->truncated(2) == tv->truncated(2))) {
            why = "was built for torch " + want->str() + " (" + local + ")";
            source = s == p.version ? p.source : "direct_url.json of " + p.name;
            break;
          }
        }
      }
      if (why.empty()) continue;
      Finding x = make_finding(
          FindingId::prebuilt_extension_abi_mismatch, Severity::error,
          p.name + " " + p.version + " in " + env_name(e) + " " + why + ", but torch " +
              torch->version + " is installed: its compiled modules fail with 'undefined symbol'");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(pkg_ev(p));
      x.evidence.push_back(ev(why, source));
      x.evidence.push_back(pkg_ev(*torch));
      x.fix.push_back(step("reinstall " + p.name +
                               " built for this torch (or rebuild it "
                               "against it)",
                           pip(e) + " install --force-reinstall --no-build-isolation " + p.name,
                           &c));
      out.push_back(std::move(x));
    }
  }
}

void wheel_tags(const Ctx& c, Findings& out) {
  auto glibc = c.f.host.glibc ? Version::parse(*c.f.host.glibc) : std::nullopt;
  for (const auto& e : c.f.python) {
    auto pv = e.version ? Version::parse(*e.version) : std::nullopt;
    for (const auto& p : e.packages) {
      if (p.wheel_tags.empty()) continue;
      std::optional<Version> need;  // the lowest glibc any of its tags accepts
      bool any_cp = false, cp_ok = false, abi_any = false;
      std::string cp_tag;
      for (const auto& tag : p.wheel_tags) {
        auto parts = split(tag, '-');
        if (parts.size() != 3) continue;
        if (auto g = manylinux_glibc(parts[2]); g && (!need || *g < *need)) need = g;
        if (parts[1] == "abi3" || parts[1] == "none" || !starts_with(parts[0], "cp")) {
          abi_any = true;
          continue;
        }
        any_cp = true;
        cp_tag = parts[0];
        if (pv && parts[0] == "cp" + std::to_string(pv->major()) + std::to_string(pv->minor())) {
          cp_ok = true;
        }
      }
      if (c.os == Os::linux && glibc && need && *glibc < *need) {
        Finding x = make_finding(FindingId::glibc_too_old_for_wheel, Severity::error,
                                 p.name + " " + p.version + " in " + env_name(e) + " needs glibc " +
                                     need->str() + ", but this system has glibc " + glibc->str());
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("wheel tags: " + join(p.wheel_tags, ", "), p.wheel_source));
        x.evidence.push_back(ev("glibc " + glibc->str(), c.f.host.glibc.source));
        x.fix.push_back(
            step("run it on a newer distribution or in a container with glibc >= " + need->str() +
                 ", or install an older release built for glibc " + glibc->str()));
        out.push_back(std::move(x));
      }
      if (pv && any_cp && !cp_ok && !abi_any) {
        Finding x =
            make_finding(FindingId::python_version_unsupported_by_framework, Severity::error,
                         p.name + " " + p.version + " in " + env_name(e) + " is a " + cp_tag +
                             " wheel, but the interpreter is Python " + *e.version +
                             ": its compiled modules do not import");
        x.evidence.push_back(ev("wheel tags: " + join(p.wheel_tags, ", "), p.wheel_source));
        x.evidence.push_back(ev("Python " + *e.version, e.version.source));
        x.fix.push_back(step(
            "reinstall it for this Python (the environment was upgraded or "
            "copied from another Python)",
            pip(e) + " install --force-reinstall " + p.name + "==" + base_version(p.version), &c));
        out.push_back(std::move(x));
      }
    }
  }
}

void tf_cuda_drivers(const Ctx& c, Findings& out) {
  if (c.os != Os::linux || !gpu_present(c.f)) return;
  if (!c.f.driver.libcuda_files.empty() || c.f.driver.libcuda_library.ok()) return;
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf) continue;
    Finding x = make_finding(FindingId::tf_could_not_find_cuda_drivers, Severity::error,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " will print 'Could not find cuda drivers on your machine': no "
                                 "libcuda.so.1 is on the loader path");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("CUDA build (CUDA " + (tf->cuda ? *tf->cuda : std::string("?")) + ")",
                            tf->cuda_build.source));
    x.evidence.push_back(ev("no libcuda.so* found by the loader configuration",
                            "ld.so.cache, LD_LIBRARY_PATH, default directories"));
    x.fix.push_back(
        step("install the NVIDIA driver's user-space libraries (libcuda.so.1) and run "
             "ldconfig; in a container, start it with --gpus all"));
    out.push_back(std::move(x));
  }
}

void tf_cudnn_minor(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || !tf->cudnn) continue;
    auto built = Version::parse(*tf->cudnn);
    if (!built || built->parts().size() < 2) continue;  // only "8" or "9": nothing to compare
    std::optional<Version> best;
    std::string where;
    for (const auto& p : e.packages) {
      if (!starts_with(p.name, "nvidia-cudnn-cu")) continue;
      auto v = Version::parse(p.version);
      if (v && v->major() == built->major() && (!best || *best < *v)) {
        best = v;
        where = p.source;
      }
    }
    for (const auto& copy : c.f.cudnn) {
      if (copy.major != built->major() || !copy.library_version) continue;
      if (!best || *best < *copy.library_version) {
        best = *copy.library_version;
        where = copy.library;
      }
    }
    if (!best || !(best->truncated(2) < built->truncated(2))) continue;
    Finding x =
        make_finding(FindingId::tf_cudnn_failed_to_initialize, Severity::warning,
                     "TensorFlow " + tf->version + " in " + env_name(e) + " was built with cuDNN " +
                         built->str() + ", but the newest cuDNN " + std::to_string(built->major()) +
                         " here is " + best->str() +
                         ": cuDNN fails to initialize ('Failed to get convolution algorithm')");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("built with cuDNN " + *tf->cudnn, tf->cudnn.source));
    x.evidence.push_back(ev("cuDNN " + best->str(), where));
    x.fix.push_back(
        step("install cuDNN " + built->truncated(2).str() +
                 " or newer of the same "
                 "major",
             pip(e) + " install -U \"nvidia-cudnn-cu" +
                 std::to_string(
                     Version::parse(tf->cuda ? *tf->cuda : "12").value_or(Version{12}).major()) +
                 ">=" + built->truncated(2).str() + "\"",
             &c));
    out.push_back(std::move(x));
  }
}

void tf_tensorrt(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || !tf->tensorrt_build.ok() || !*tf->tensorrt_build) continue;
    std::set<int> majors;
    std::string where;
    for (const auto& l : e.cuda_libs) {
      if (l.library == "nvinfer") {
        majors.insert(l.major);
        where = l.path;
      }
    }
    // TensorFlow 2.x TF-TRT is built against TensorRT 8.
    if (majors.empty() || majors.contains(8)) continue;
    Finding x = make_finding(FindingId::tf_trt_not_found, Severity::info,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " looks for TensorRT 8 (libnvinfer.so.8) but the tensorrt wheel "
                                 "provides libnvinfer.so." +
                                 std::to_string(*majors.rbegin()) +
                                 ": 'TF-TRT Warning: Could not find TensorRT'");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("is_tensorrt_build = True", tf->tensorrt_build.source));
    x.evidence.push_back(ev("libnvinfer.so." + std::to_string(*majors.rbegin()), where));
    x.fix.push_back(step("harmless unless you use TF-TRT; for TF-TRT install TensorRT 8",
                         pip(e) + " install \"tensorrt==8.6.1\"", &c));
    out.push_back(std::move(x));
  }
}

void tf_archs(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || tf->cuda_archs.empty()) continue;
    for (const auto& g : c.f.gpus) {
      if (!g.compute_capability) continue;
      const Version& cc = *g.compute_capability;
      bool sass = false;
      std::optional<Version> ptx;
      for (const auto& a : tf->cuda_archs) {
        auto v = arch_version(a);
        if (!v) continue;
        if (starts_with(a, "sm_") && v->major() == cc.major() && !(cc < *v)) sass = true;
        if (starts_with(a, "compute_") && !(cc < *v) && (!ptx || *ptx < *v)) ptx = v;
      }
      if (sass) continue;
      std::string gpu = g.name ? *g.name : "GPU " + std::to_string(g.index);
      Finding x =
          ptx ? make_finding(FindingId::tf_ptx_jit_new_arch, Severity::warning,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no kernels for the " + gpu + " (compute capability " +
                                 cc.str() + "): they are JIT-compiled from compute_" +
                                 std::to_string(ptx->major()) + std::to_string(ptx->minor()) +
                                 " PTX at start-up (can take 30 minutes or longer)")
              : make_finding(FindingId::no_kernel_image_new_gpu, Severity::error,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no kernels and no usable PTX for the " + gpu +
                                 " (compute capability " + cc.str() + ")");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(
          ev("cuda_compute_capabilities: " + join(tf->cuda_archs, ", "), tf->cuda_build.source));
      x.evidence.push_back(ev(gpu + ": compute capability " + cc.str(), g.source));
      x.fix.push_back(step("install a TensorFlow release built for compute capability " + cc.str() +
                               ", or keep the JIT cache between runs",
                           "export CUDA_CACHE_MAXSIZE=4294967296", &c));
      out.push_back(std::move(x));
      break;
    }
  }
}

void xla_cuda_files(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* jax = fw(e, "jax");
    bool jax_gpu = jax && jax->cuda_build.ok() && *jax->cuda_build;
    const auto* tf = tf_cuda(e);
    if (!jax_gpu && !tf) continue;
    std::string who = jax_gpu ? "JAX " + jax->version : "TensorFlow " + tf->version;
    const XlaCudaDir* flagged = nullptr;
    bool libdevice = false, ptxas = false;
    for (const auto& d : e.xla_dirs) {
      if (d.via == "XLA_FLAGS --xla_gpu_cuda_data_dir") flagged = &d;
      libdevice |= d.libdevice;
      ptxas |= d.ptxas;
    }
    if (flagged && !flagged->libdevice) {
      Finding x = make_finding(FindingId::xla_libdevice_ptxas_not_found, Severity::error,
                               "XLA_FLAGS points XLA at " + flagged->dir +
                                   ", which has no nvvm/libdevice/libdevice.10.bc (" + who +
                                   " in " + env_name(e) + ")");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(
          ev("--xla_gpu_cuda_data_dir=" + flagged->dir, c.f.env.source + " (XLA_FLAGS)"));
      for (const auto& d : e.xla_dirs) {
        if (d.libdevice) {
          x.fix.push_back(step("point it at a directory that has nvvm/libdevice",
                               "export XLA_FLAGS=--xla_gpu_cuda_data_dir=" + d.dir, &c));
          break;
        }
      }
      x.fix.push_back(step("or unset XLA_FLAGS so XLA finds the nvidia-cuda-nvcc wheel",
                           "unset XLA_FLAGS", &c));
      out.push_back(std::move(x));
      continue;
    }
    // TensorFlow needs them only for XLA (jit_compile): a wrong XLA_FLAGS is reported above.
    if (!jax_gpu || (libdevice && ptxas)) continue;
    std::vector<std::string> missing;
    if (!libdevice) missing.push_back("libdevice.10.bc");
    if (!ptxas && jax_gpu) missing.push_back("ptxas");
    Finding x =
        make_finding(FindingId::xla_libdevice_ptxas_not_found, Severity::warning,
                     who + " in " + env_name(e) + ": XLA will not find " + join(missing, " or ") +
                         " (no CUDA toolkit, conda cuda-nvcc or nvidia-cuda-nvcc wheel has it)");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    for (const auto& d : e.xla_dirs) {
      x.evidence.push_back(ev(d.dir + ": libdevice " + (d.libdevice ? "yes" : "no") + ", ptxas " +
                                  (d.ptxas ? "yes" : "no"),
                              d.via));
    }
    if (e.xla_dirs.empty()) {
      x.evidence.push_back(
          ev("searched site-packages/nvidia/cuda_nvcc, CUDA_HOME, "
             "/usr/local/cuda",
             e.prefix));
    }
    std::string major = "12";
    if (jax_gpu && jax->cuda) major = *jax->cuda;
    if (!jax_gpu && tf->cuda) {
      major = std::to_string(Version::parse(*tf->cuda).value_or(Version{12}).major());
    }
    x.fix.push_back(step("install the CUDA compiler wheel XLA looks for",
                         pip(e) + " install nvidia-cuda-nvcc-cu" + major, &c));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc).
const Check paddle_cudnn_entry{
    "paddle_cudnn",
    "the cuDNN paddle's build loads",
    paddle_cudnn,
    {FindingId::paddle_cannot_load_cudnn},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::python};
const Check wheel_pins_entry{
    "wheel_pins",
    "NVIDIA wheels against the versions a framework pins",
    wheel_pins,
    {FindingId::jax_cudnn_version_mismatch, FindingId::libcudnn8_not_found,
     FindingId::torch_cudnn_runtime_older_than_build},
    fact_area::cudnn | fact_area::env | fact_area::loader | fact_area::python};
const Check torch_deep_cudnn_entry{"torch_deep_cudnn",
                                   "torch's runtime cuDNN against its build's (--deep)",
                                   torch_deep_cudnn,
                                   {FindingId::torch_cudnn_runtime_older_than_build},
                                   fact_area::python | fact_area::windows};
const Check nvjitlink_cusparse_entry{"nvjitlink_cusparse",
                                     "nvJitLink older than cuSPARSE",
                                     nvjitlink_cusparse,
                                     {FindingId::nvjitlink_older_than_cusparse},
                                     fact_area::env | fact_area::python | fact_area::toolkits};
const Check conda_cpu_pytorch_entry{"conda_cpu_pytorch",
                                    "a CPU pytorch picked by the conda solver",
                                    conda_cpu_pytorch,
                                    {FindingId::conda_solver_picked_cpu_pytorch},
                                    fact_area::driver | fact_area::gpus | fact_area::python};
const Check conda_vs_system_entry{
    "conda_vs_system",
    "conda's cudatoolkit against the system CUDA",
    conda_vs_system,
    {FindingId::conda_cudatoolkit_vs_system_cuda},
    fact_area::driver | fact_area::env | fact_area::python | fact_area::toolkits};
const Check conda_virtual_cuda_entry{
    "conda_virtual_cuda",
    "conda's __cuda virtual package",
    conda_virtual_cuda,
    {FindingId::conda_cuda_virtual_package_missing},
    fact_area::driver | fact_area::env | fact_area::gpus | fact_area::python};
const Check toolkit_vs_torch_entry{"toolkit_vs_torch",
                                   "the toolkit against torch's CUDA (extension builds)",
                                   toolkit_vs_torch,
                                   {FindingId::toolkit_vs_torch_cuda_mismatch},
                                   fact_area::python | fact_area::toolkits};
const Check extension_abi_entry{"extension_abi",
                                "prebuilt extensions against torch's ABI",
                                extension_abi,
                                {FindingId::prebuilt_extension_abi_mismatch},
                                fact_area::python};
const Check wheel_tags_entry{
    "wheel_tags",
    "a wheel's glibc tag against the system glibc",
    wheel_tags,
    {FindingId::glibc_too_old_for_wheel, FindingId::python_version_unsupported_by_framework},
    fact_area::host | fact_area::python};
const Check tf_cuda_drivers_entry{"tf_cuda_drivers",
                                  "TensorFlow without a driver",
                                  tf_cuda_drivers,
                                  {FindingId::tf_could_not_find_cuda_drivers},
                                  fact_area::driver | fact_area::gpus | fact_area::python};
const Check tf_cudnn_minor_entry{"tf_cudnn_minor",
                                 "TensorFlow's cuDNN minor",
                                 tf_cudnn_minor,
                                 {FindingId::tf_cudnn_failed_to_initialize},
                                 fact_area::cudnn | fact_area::python};
const Check tf_tensorrt_entry{"tf_tensorrt",
                              "TensorFlow's TensorRT",
                              tf_tensorrt,
                              {FindingId::tf_trt_not_found},
                              fact_area::python};
const Check tf_archs_entry{"tf_archs",
                           "the GPU against TensorFlow's kernels",
                           tf_archs,
                           {FindingId::no_kernel_image_new_gpu, FindingId::tf_ptx_jit_new_arch},
                           fact_area::gpus | fact_area::python};
const Check xla_cuda_files_entry{"xla_cuda_files",
                                 "libdevice and ptxas for XLA",
                                 xla_cuda_files,
                                 {FindingId::xla_libdevice_ptxas_not_found},
                                 fact_area::env | fact_area::python};

}  // namespace dlenv::checks
