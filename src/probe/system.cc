// System facts around the driver: WSL, the container this runs in, the Docker host
// side (NVIDIA Container Toolkit), and the host compiler nvcc would use.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "platform/process.h"
#include "probe/system_probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

constexpr const char* kWslLib = "/usr/lib/wsl/lib";

bool has_ld_dir(const std::vector<std::string>& dirs, std::string_view dir) {
  for (const auto& d : dirs) {
    std::string n = path_normalize(d);
    if (n == dir) return true;
  }
  return false;
}

// ---- WSL ---------------------------------------------------------------------

void probe_wsl(const ProbeContext& ctx, const LoaderConfig& loader, const Facts& facts,
               WslFacts& w) {
  const FileSystem& fs = ctx.fs;
  std::string text;
  std::string source;
  if (auto v = fs.read_file("/proc/version")) {
    text = std::string(trim(*v));
    source = "/proc/version";
  }
  if (!contains(to_lower(text), "microsoft") && facts.host.kernel &&
      contains(to_lower(*facts.host.kernel), "microsoft")) {
    text = *facts.host.kernel;
    source = facts.host.kernel.source;
  }
  w.dxg = fs.exists("/dev/dxg");
  w.lib_dir = fs.is_dir(kWslLib);
  if (!contains(to_lower(text), "microsoft")) return;
  std::string lower = to_lower(text);
  // WSL2 kernels: "5.15.153.1-microsoft-standard-WSL2"; WSL1: "4.4.0-19041-Microsoft".
  bool wsl2 = contains(lower, "wsl2") || contains(lower, "microsoft-standard") || w.dxg;
  w.version = wsl2 ? 2 : 1;
  std::string shown = text.size() > 120 ? text.substr(0, 120) + "..." : text;
  w.version_source = source + ": " + shown;

  if (auto entries = fs.list_dir(kWslLib)) {
    for (const auto& e : *entries) {
      if (e.name != "libcuda.so" && !starts_with(e.name, "libcuda.so.")) continue;
      FileKind k;
      k.path = path_join(kWslLib, e.name);
      if (auto l = fs.lstat(k.path); l && l->type == FileType::symlink) {
        k.symlink = true;
        k.target = fs.read_link(k.path).value_or("");
      }
      if (auto s = fs.stat(k.path)) k.size = s->size;
      w.libcuda.push_back(std::move(k));
    }
  }
  w.lib_dir_in_ld_conf = has_ld_dir(loader.conf_dirs, kWslLib);
  w.lib_dir_on_ld_library_path = has_ld_dir(loader.ld_library_path, kWslLib);

  // Can dlopen("libcuda.so") succeed? LD_LIBRARY_PATH first, then the cache.
  for (const auto& d : loader.ld_library_path) {
    std::string p = path_join(d, "libcuda.so");
    if (fs.exists(p) && !contains(p, "/stubs")) {
      w.unversioned_libcuda = true;
      w.unversioned_libcuda_via = "LD_LIBRARY_PATH " + d;
      break;
    }
  }
  if (loader.cache) {
    w.unversioned_basis = "/etc/ld.so.cache";
    if (!w.unversioned_libcuda) {
      for (const auto& e : loader.cache->entries) {
        if (e.soname == "libcuda.so" && !contains(e.path, "/stubs")) {
          w.unversioned_libcuda = true;
          w.unversioned_libcuda_via = "ld.so.cache -> " + e.path;
          break;
        }
      }
    }
  } else {
    // No cache to read: model ldconfig, which registers a development name
    // (libcuda.so) only when it is a symlink; the WSL copies are regular files.
    w.unversioned_basis = "ld.so.conf directories (no readable /etc/ld.so.cache)";
    if (!w.unversioned_libcuda) {
      std::vector<std::string> dirs = loader.conf_dirs;
      for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) dirs.push_back(d);
      for (const auto& d : dirs) {
        std::string p = path_join(d, "libcuda.so");
        auto l = fs.lstat(p);
        if (l && l->type == FileType::symlink && !contains(p, "/stubs")) {
          w.unversioned_libcuda = true;
          w.unversioned_libcuda_via = "ldconfig would register the link " + p;
          break;
        }
      }
    }
  }

  // A Linux driver installed inside the distribution: versioned driver libraries
  // (libcuda.so.580.95.05) next to the system libraries.
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                          "/usr/lib/aarch64-linux-gnu", "/lib/x86_64-linux-gnu"}) {
    auto entries = fs.list_dir(dir);
    if (!entries) continue;
    for (const auto& e : *entries) {
      for (std::string stem : {"libcuda.so.", "libnvidia-ml.so."}) {
        if (!starts_with(e.name, stem)) continue;
        auto v = Version::parse(e.name.substr(stem.size()));
        if (!v || v->parts().size() < 2) continue;  // libcuda.so.1 links are not a driver
        std::string p = path_join(dir, e.name);
        std::string real = fs.real_path(p).value_or(p);
        if (starts_with(real, kWslLib)) continue;
        if (std::find(w.linux_driver_files.begin(), w.linux_driver_files.end(), real) ==
            w.linux_driver_files.end()) {
          w.linux_driver_files.push_back(real);
        }
      }
    }
  }

  // Linux driver packages (Debian/Ubuntu dpkg database).
  auto is_driver_package = [](std::string_view name) {
    static const char* const kPrefixes[] = {
        "nvidia-driver-", "nvidia-utils-",         "libnvidia-compute-", "cuda-drivers",
        "nvidia-dkms-",   "nvidia-kernel-common-", "libnvidia-gl-"};
    for (const char* p : kPrefixes) {
      if (starts_with(name, p)) return true;
    }
    return false;
  };
  if (auto packages = read_dpkg_status(fs, is_driver_package)) {
    w.packages_source = kDpkgStatus;
    for (const auto& p : *packages) w.linux_driver_packages.push_back(p.name);
  }
}

// ---- containers --------------------------------------------------------------

void probe_container(const ProbeContext& ctx, ContainerFacts& c) {
  const std::string env_src = ctx.env_source;
  if (auto v = ctx.env.get("NVIDIA_REQUIRE_CUDA")) {
    c.nvidia_require_cuda = Fact<std::string>::known(*v, env_src);
  } else {
    c.nvidia_require_cuda =
        Fact<std::string>::unknown(FactStatus::not_found, "not set", "NVIDIA_REQUIRE_CUDA");
  }
  if (auto v = ctx.env.get("CUDA_VERSION")) {
    c.cuda_version = Fact<std::string>::known(*v, env_src);
  } else {
    c.cuda_version = Fact<std::string>::unknown(FactStatus::not_found, "not set", "CUDA_VERSION");
  }
  if (auto v = ctx.env.get("NVIDIA_DISABLE_REQUIRE")) {
    std::string l = to_lower(trim(*v));
    c.disable_require = l == "1" || l == "true" || l == "yes";
  }

  const char* mounts = "/proc/mounts";
  c.shm_bytes = Fact<uint64_t>::unknown(FactStatus::not_found, "no /dev/shm mount", mounts);
  if (auto text = ctx.fs.read_file(mounts)) {
    for (const auto& line : split_lines(*text)) {
      auto f = split(line, ' ');
      if (f.size() < 4 || f[1] != "/dev/shm") continue;
      // The last mount of /dev/shm is the one in effect.
      c.shm_bytes = Fact<uint64_t>::unknown(FactStatus::not_supported,
                                            "no size= option (tmpfs default: half of RAM)", mounts);
      for (const auto& opt : split(f[3], ',')) {
        if (!starts_with(opt, "size=")) continue;
        if (auto b = parse_tmpfs_size(std::string_view(opt).substr(5))) {
          c.shm_bytes = Fact<uint64_t>::known(*b, std::string(mounts) + " (" + opt + ")");
        } else {
          c.shm_bytes =
              Fact<uint64_t>::unknown(FactStatus::not_supported, "relative size " + opt, mounts);
        }
      }
    }
  } else {
    c.shm_bytes = Fact<uint64_t>::unknown(FactStatus::not_found, text.error().message, mounts);
  }

  const char* devlist = "/sys/fs/cgroup/devices/devices.list";
  if (auto text = ctx.fs.read_file(devlist)) {
    bool allow = false;
    for (const auto& line : split_lines(*text)) {
      std::string_view l = trim(line);
      if (starts_with(l, "a ") || starts_with(l, "c 195:") || starts_with(l, "c *:")) allow = true;
    }
    c.devices_allow_nvidia = Fact<bool>::known(allow, devlist);
  } else {
    c.devices_allow_nvidia =
        Fact<bool>::unknown(FactStatus::not_found, "no cgroup v1 device list", devlist);
  }
}

// ---- Docker host -------------------------------------------------------------

void probe_docker_host(const ProbeContext& ctx, const LoaderConfig& loader, const Facts& facts,
                       DockerHostFacts& d) {
  const FileSystem& fs = ctx.fs;
  if (!loader.cache) {
    d.nvml_in_ld_cache = Fact<std::string>::unknown(loader.cache_status.status,
                                                    loader.cache_status.reason, "/etc/ld.so.cache");
  } else if (const LdCacheEntry* e = loader.cache->find("libnvidia-ml.so.1")) {
    d.nvml_in_ld_cache = Fact<std::string>::known(e->path, "/etc/ld.so.cache");
  } else {
    d.nvml_in_ld_cache = Fact<std::string>::unknown(
        FactStatus::not_found, "no libnvidia-ml.so.1 entry", "/etc/ld.so.cache");
  }
  for (const char* p : {"/usr/bin/dockerd", "/usr/sbin/dockerd", "/usr/local/bin/dockerd"}) {
    if (fs.exists(p)) {
      d.docker = true;
      d.docker_path = p;
      break;
    }
  }
  if (fs.exists("/snap/bin/docker") || fs.is_dir("/snap/docker")) {
    d.docker_snap = true;
    if (!d.docker) {
      d.docker = true;
      d.docker_path = "/snap/bin/docker";
    }
  }
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/sbin"}) {
    for (const char* name :
         {"nvidia-ctk", "nvidia-container-runtime", "nvidia-container-runtime-hook",
          "nvidia-container-toolkit", "nvidia-container-cli", "nvidia-cdi-hook"}) {
      std::string p = path_join(dir, name);
      if (!fs.exists(p)) continue;
      d.toolkit_files.push_back(p);
      std::string n = name;
      if (n == "nvidia-container-runtime-hook" || n == "nvidia-container-toolkit") {
        d.runtime_hook = true;
      }
    }
  }
  for (const char* dir : {"/etc/cdi", "/var/run/cdi", "/run/cdi"}) {
    if (auto entries = fs.list_dir(dir)) {
      for (const auto& e : *entries) {
        if (starts_with(e.name, "nvidia")) d.cdi_specs.push_back(path_join(dir, e.name));
      }
    }
  }

  const char* daemon = "/etc/docker/daemon.json";
  std::string exec_driver;
  if (auto text = fs.read_file(daemon, 1u << 20)) {
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      d.daemon_runtimes =
          Fact<std::vector<std::string>>::unknown(FactStatus::error, "not valid JSON", daemon);
    } else {
      std::vector<std::string> names;
      if (auto it = j.find("runtimes"); it != j.end() && it->is_object()) {
        for (auto r = it->begin(); r != it->end(); ++r) names.push_back(r.key());
      }
      d.daemon_runtimes = Fact<std::vector<std::string>>::known(names, daemon);
      if (auto it = j.find("default-runtime"); it != j.end() && it->is_string()) {
        d.default_runtime = Fact<std::string>::known(it->get<std::string>(), daemon);
      }
      if (auto it = j.find("exec-opts"); it != j.end() && it->is_array()) {
        for (const auto& o : *it) {
          if (!o.is_string()) continue;
          std::string s = o.get<std::string>();
          if (starts_with(s, "native.cgroupdriver=")) exec_driver = s.substr(20);
        }
      }
    }
  } else {
    d.daemon_runtimes =
        Fact<std::vector<std::string>>::unknown(FactStatus::not_found, "no daemon.json", daemon);
  }
  if (!exec_driver.empty()) {
    d.cgroup_driver = Fact<std::string>::known(exec_driver, std::string(daemon) + " exec-opts");
  } else if (fs.exists("/sys/fs/cgroup/cgroup.controllers")) {
    d.cgroup_driver = Fact<std::string>::known(
        "systemd", "cgroup v2 (/sys/fs/cgroup/cgroup.controllers): Docker's default driver");
  } else if (fs.is_dir("/sys/fs/cgroup")) {
    d.cgroup_driver = Fact<std::string>::known("cgroupfs", "cgroup v1: Docker's default driver");
  }

  // runc re-applies device rules through /dev/char/MAJ:MIN links; NVIDIA's nodes
  // have none unless something (nvidia-ctk, a udev rule) creates them.
  for (const auto& n : facts.driver.device_nodes) {
    if (!n.present) continue;
    std::string name = path_basename(n.path);
    std::string minor;
    if (name == "nvidiactl") {
      minor = "255";
    } else if (starts_with(name, "nvidia") && name.size() > 6 &&
               std::all_of(name.begin() + 6, name.end(),
                           [](char ch) { return ch >= '0' && ch <= '9'; })) {
      minor = name.substr(6);
    } else {
      continue;
    }
    d.dev_char_checked = true;
    if (!fs.exists("/dev/char/195:" + minor)) d.dev_char_missing.push_back(n.path);
  }
}

// ---- host compiler -----------------------------------------------------------

std::optional<std::string> find_on_path(const FileSystem& fs, const std::vector<std::string>& path,
                                        const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return fs.exists(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  for (const auto& d : path) {
    std::string p = path_join(d, name);
    if (fs.is_file(p)) return p;
  }
  return std::nullopt;
}

void probe_host_compiler(const ProbeContext& ctx, const Facts& facts, HostCompilerFacts& h) {
  const FileSystem& fs = ctx.fs;
  for (const auto& t : facts.toolkits) {
    std::string src;
    std::optional<std::string> text;
    for (const char* rel :
         {"/include/crt/host_config.h", "/targets/x86_64-linux/include/crt/host_config.h",
          "/targets/sbsa-linux/include/crt/host_config.h"}) {
      src = t.root + rel;
      if (auto r = fs.read_file(src, 1u << 20)) {
        text = *r;
        break;
      }
    }
    if (!text) {
      h.toolkit_max_gcc[t.root] = Fact<int>::unknown(FactStatus::not_found, "no host_config.h",
                                                     t.root + "/include/crt/host_config.h");
    } else if (auto n = host_config_max_gcc(*text)) {
      h.toolkit_max_gcc[t.root] = Fact<int>::known(*n, src);
    } else {
      h.toolkit_max_gcc[t.root] =
          Fact<int>::unknown(FactStatus::not_found, "no GCC version check in it", src);
    }
  }
  if (facts.toolkits.empty()) return;

  // The compiler nvcc runs: NVCC_CCBIN (nvcc itself), CUDAHOSTCXX (CMake), else gcc.
  std::string name = "gcc";
  std::string why = "gcc on PATH (nvcc's default host compiler)";
  for (const char* var : {"NVCC_CCBIN", "CUDAHOSTCXX"}) {
    if (auto v = ctx.env.get(var); v && !trim(*v).empty()) {
      name = std::string(trim(*v));
      why = std::string(var) + "=" + name;
      break;
    }
  }
  auto found = find_on_path(fs, facts.env.path, name);
  if (!found && name == "gcc") found = find_on_path(fs, facts.env.path, "g++");
  if (!found) {
    h.compiler = Fact<std::string>::unknown(FactStatus::not_found, name + " not found", why);
    return;
  }
  h.compiler = Fact<std::string>::known(*found, why);
  std::string base = path_basename(name);
  if (contains(base, "clang") || contains(base, "icpx") || contains(base, "nvc")) {
    h.gcc_major = Fact<int>::unknown(FactStatus::not_supported, "not GCC: " + base, *found);
    return;
  }
  std::string real = fs.real_path(*found).value_or(*found);
  if (auto m = gcc_major_from_name(path_basename(real))) {
    h.gcc_major = Fact<int>::known(*m, real);
    return;
  }
  if (auto m = gcc_major_from_name(path_basename(*found))) {
    h.gcc_major = Fact<int>::known(*m, *found);
    return;
  }
  if (ctx.live) {
    ProcessOptions po;
    po.timeout = std::chrono::milliseconds(3000);
    auto r = run_process({fs.host_path(*found), "-dumpversion"}, po);
    if (r && !r->timed_out && r->exit_code == 0) {
      if (auto v = Version::parse(trim(r->out))) {
        h.gcc_major = Fact<int>::known(v->major(), *found + " -dumpversion");
        return;
      }
    }
  }
  // The GCC internal directories name the installed majors.
  std::set<int> majors;
  for (const char* dir : {"/usr/lib/gcc/x86_64-linux-gnu", "/usr/lib/gcc/x86_64-redhat-linux",
                          "/usr/lib/gcc/aarch64-linux-gnu"}) {
    if (auto entries = fs.list_dir(dir)) {
      for (const auto& e : *entries) {
        if (auto v = Version::parse(e.name);
            v && e.name.find_first_not_of("0123456789.") == std::string::npos) {
          majors.insert(v->major());
        }
      }
    }
  }
  if (majors.size() == 1) {
    h.gcc_major = Fact<int>::known(*majors.begin(),
                                   "/usr/lib/gcc/<target>/" + std::to_string(*majors.begin()));
  } else {
    h.gcc_major = Fact<int>::unknown(
        FactStatus::not_found,
        majors.empty() ? "version not readable from files" : "several GCC versions installed",
        *found);
  }
}

}  // namespace

std::optional<uint64_t> parse_tmpfs_size(std::string_view value) {
  value = trim(value);
  if (value.empty() || value.back() == '%') return std::nullopt;
  uint64_t mult = 1;
  char last = static_cast<char>(std::tolower(static_cast<unsigned char>(value.back())));
  if (last == 'k' || last == 'm' || last == 'g' || last == 't') {
    mult = last == 'k'   ? 1ull << 10
           : last == 'm' ? 1ull << 20
           : last == 'g' ? 1ull << 30
                         : 1ull << 40;
    value.remove_suffix(1);
  }
  if (value.empty() || value.size() > 15) return std::nullopt;
  uint64_t n = 0;
  for (char ch : value) {
    if (ch < '0' || ch > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(ch - '0');
  }
  return n * mult;
}

std::optional<int> host_config_max_gcc(std::string_view text) {
  auto lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!contains(lines[i], "unsupported GNU version")) continue;
    // The nearest preceding "#if __GNUC__ > N" (possibly with a minor clause).
    for (size_t j = i; j-- > 0 && i - j < 12;) {
      std::string_view l = trim(lines[j]);
      if (!starts_with(l, "#if")) continue;
      size_t p = l.find("__GNUC__ >");
      if (p == std::string_view::npos) continue;
      std::string_view rest = trim(l.substr(p + 10));
      if (!rest.empty() && rest[0] == '=') continue;  // ">=" is a different form
      size_t k = 0;
      while (k < rest.size() && rest[k] >= '0' && rest[k] <= '9') ++k;
      if (k == 0 || k > 3) continue;
      return static_cast<int>(parse_int(rest.substr(0, k)).value_or(0));
    }
  }
  return std::nullopt;
}

std::optional<int> gcc_major_from_name(std::string_view name) {
  std::string base = path_basename(name);
  for (const char* stem : {"gcc-", "g++-", "c++-", "cc-"}) {
    size_t p = base.rfind(stem);
    if (p == std::string::npos) continue;
    if (p > 0 && base[p - 1] != '-') continue;  // "x86_64-linux-gnu-gcc-12" or "gcc-12"
    std::string_view v = std::string_view(base).substr(p + std::string_view(stem).size());
    if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    return static_cast<int>(parse_int(v).value_or(0));
  }
  return std::nullopt;
}

void probe_system(const ProbeContext& ctx, const LoaderConfig& loader, const Facts& facts,
                  SystemFacts& out) {
  if (ctx.os != Os::linux) return;
  probe_wsl(ctx, loader, facts, out.wsl);
  probe_container(ctx, out.container);
  probe_docker_host(ctx, loader, facts, out.docker);
  probe_host_compiler(ctx, facts, out.host_compiler);
  probe_kernel(ctx, facts, out.kernel);
  probe_fabric(ctx, facts, out.fabric);
  probe_forward_compat(ctx, loader, out.forward_compat);
}

}  // namespace dlenv
