// The JSON report, schema "dlenv.report/1" (docs/json-schema.md).
#include <string>
#include <vector>

#include "report/internal.h"
#include "report/python_loaded.h"
#include "report/report.h"
#include "util/safe_text.h"

namespace dlenv {
namespace {

using json = nlohmann::ordered_json;

json value_json(const std::string& v) {
  return v;
}
json value_json(bool v) {
  return v;
}
json value_json(int v) {
  return v;
}
json value_json(uint64_t v) {
  return v;
}
json value_json(const Version& v) {
  return v.str();
}

// {"value": ..., "source": ...} or {"status": ..., "reason": ..., "source": ...}.
template <class T, class Conv>
json fact_json(const Fact<T>& f, Conv conv) {
  json j = json::object();
  if (f.ok()) {
    j["value"] = conv(*f);
  } else {
    j["status"] = fact_status_name(report_detail::missing_status(f));
    j["reason"] = f.reason;
  }
  j["source"] = f.source;
  return j;
}

template <class T>
json fact_json(const Fact<T>& f) {
  return fact_json(f, [](const T& v) { return value_json(v); });
}

json strings_json(const std::vector<std::string>& v) {
  json j = json::array();
  for (const auto& s : v) j.push_back(s);
  return j;
}

json library_files_json(const std::vector<LibraryFile>& files) {
  json j = json::array();
  for (const LibraryFile& f : files) {
    j.push_back(json{{"path", f.path},
                     {"version", f.version},
                     {"is_stub", f.is_stub},
                     {"found_via", f.found_via}});
  }
  return j;
}

json host_json(const HostFacts& h) {
  json j;
  j["os"] = fact_json(h.os);
  j["distro"] = fact_json(h.distro);
  j["kernel"] = fact_json(h.kernel);
  j["glibc"] = fact_json(h.glibc);
  j["arch"] = fact_json(h.arch);
  j["hostname"] = fact_json(h.hostname);
  j["cpu_model"] = fact_json(h.cpu_model);
  j["cpu_count"] = fact_json(h.cpu_count);
  j["container"] = fact_json(h.container);
  j["container_evidence"] = strings_json(h.container_evidence);
  j["wsl"] = fact_json(h.wsl2);
  return j;
}

json driver_json(const DriverFacts& d) {
  json j;
  std::string version = report_detail::driver_version_text(d);
  j["version"] = version.empty() ? json(nullptr) : json(version);
  j["kernel_module_version"] = fact_json(d.kernel_module_version);
  j["sys_module_version"] = fact_json(d.sys_module_version);
  j["open_kernel_module"] = fact_json(d.open_kernel_module);
  j["nvml_driver_version"] = fact_json(d.nvml_driver_version);
  j["nvml_library"] = fact_json(d.nvml_library);
  j["nvml_error"] = fact_json(d.nvml_error);
  j["cuda_driver_version"] =
      fact_json(d.cuda_driver_version, [](int x) { return json(Version::from_cuda_int(x).str()); });
  j["libcuda_library"] = fact_json(d.libcuda_library);
  j["libcuda_error"] = fact_json(d.libcuda_error);
  j["nvidia_smi_version"] = fact_json(d.nvidia_smi_version);
  if (!d.windows_dll_version.source.empty()) {  // only set by the Windows probe
    j["windows_dll_version"] = fact_json(d.windows_dll_version);
  }
  j["libcuda_files"] = library_files_json(d.libcuda_files);
  j["libnvml_files"] = library_files_json(d.libnvml_files);
  j["modules"] = json{{"nvidia", d.nvidia_loaded},
                      {"nvidia_uvm", d.nvidia_uvm_loaded},
                      {"nouveau", d.nouveau_loaded},
                      {"nova", d.nova_loaded},
                      {"lines", strings_json(d.loaded_modules)},
                      {"source", d.modules_source}};
  json nodes = json::array();
  for (const DeviceNode& n : d.device_nodes) {
    nodes.push_back(json{{"path", n.path},
                         {"present", n.present},
                         {"readable", n.readable},
                         {"writable", n.writable},
                         {"mode", n.mode},
                         {"gid", n.gid},
                         {"source", n.source}});
  }
  j["device_nodes"] = nodes;
  return j;
}

json gpus_json(const std::vector<GpuFacts>& gpus) {
  json arr = json::array();
  for (const GpuFacts& g : gpus) {
    json j;
    j["index"] = g.index;
    j["name"] = fact_json(g.name);
    j["uuid"] = fact_json(g.uuid);
    j["pci_bus_id"] = fact_json(g.pci_bus_id);
    j["compute_capability"] = fact_json(g.compute_capability);
    j["memory_total_bytes"] = fact_json(g.memory_total_bytes);
    j["persistence_mode"] = fact_json(g.persistence_mode);
    j["mig_mode"] = fact_json(g.mig_mode);
    j["compute_mode"] = fact_json(g.compute_mode);
    j["driver_model"] = fact_json(g.driver_model);
    j["visible"] = g.visible;
    j["visibility_reason"] = g.visibility_reason;
    j["source"] = g.source;
    arr.push_back(std::move(j));
  }
  return arr;
}

json toolkits_json(const std::vector<ToolkitFacts>& toolkits) {
  json arr = json::array();
  for (const ToolkitFacts& t : toolkits) {
    json j;
    j["root"] = t.root;
    j["real_root"] = t.real_root;
    j["version"] = fact_json(t.version);
    j["nvcc"] = fact_json(t.nvcc);
    j["nvcc_version"] = fact_json(t.nvcc_version);
    j["cudart_library"] = fact_json(t.cudart_library);
    j["found_via"] = strings_json(t.found_via);
    j["pip_assembled"] = t.pip_assembled;
    j["lib_dirs"] = strings_json(t.lib_dirs);
    j["active"] = json{{"path", t.active_path},
                       {"cuda_home", t.active_cuda_home},
                       {"ld_library_path", t.active_ld_library_path},
                       {"ld_cache", t.in_ld_cache},
                       {"default_link", t.is_default_link}};
    j["active_via"] = strings_json(report_detail::active_via(t));
    arr.push_back(std::move(j));
  }
  return arr;
}

json cudnn_json(const std::vector<CudnnCopy>& copies) {
  json arr = json::array();
  for (const CudnnCopy& c : copies) {
    json j;
    j["dir"] = c.dir;
    j["library"] = c.library;
    j["major"] = c.major;
    j["library_version"] = fact_json(c.library_version);
    j["header_version"] = fact_json(c.header_version);
    j["header_path"] = c.header_path;
    j["live_version"] = fact_json(c.live_version);
    j["cuda_major"] = fact_json(c.cuda_major);
    j["found_via"] = strings_json(c.found_via);
    j["toolkit_root"] = c.toolkit_root;
    j["python_site"] = c.python_site;
    j["sublibraries_present"] = strings_json(c.sublibraries_present);
    j["sublibraries_missing"] = strings_json(c.sublibraries_missing);
    json mixed = json::object();
    for (const auto& [file, version] : c.mixed_versions) mixed[file] = version;
    j["mixed_versions"] = mixed;
    arr.push_back(std::move(j));
  }
  return arr;
}

json python_json(const Facts& facts) {
  json arr = json::array();
  for (const PythonEnv& e : facts.python) {
    json j;
    j["interpreter"] = fact_json(e.interpreter);
    j["prefix"] = e.prefix;
    j["version"] = fact_json(e.version);
    j["bits"] = fact_json(e.bits);
    j["kind"] = e.kind;
    j["source"] = strings_json(e.found_via);
    j["site_packages"] = strings_json(e.site_packages);
    json pk = json::array();
    for (const PythonPackage& p : e.packages) {
      json x{{"name", p.name},
             {"version", p.version},
             {"installer", p.installer},
             {"location", p.location},
             {"direct_url", p.direct_url},
             {"requires_nvidia", strings_json(p.requires_nvidia)},
             {"source", p.source}};
      if (!p.requires_torch.empty()) x["requires_torch"] = strings_json(p.requires_torch);
      if (!p.wheel_tags.empty()) x["wheel_tags"] = strings_json(p.wheel_tags);
      pk.push_back(std::move(x));
    }
    j["packages"] = pk;
    json fw = json::array();
    for (const FrameworkFacts& f : e.frameworks) {
      json x{{"name", f.name},
             {"package", f.package},
             {"version", f.version},
             {"local_tag", f.local_tag},
             {"cuda_build", fact_json(f.cuda_build)},
             {"cuda", fact_json(f.cuda)},
             {"cudnn", fact_json(f.cudnn)},
             {"related_packages", strings_json(f.cuda_packages)}};
      if (!f.cuda_archs.empty()) x["cuda_archs"] = strings_json(f.cuda_archs);
      if (!f.gpu_library.empty()) {
        x["gpu_library"] = f.gpu_library;
        json needed = json::array();
        for (const NeededLibrary& n : f.needed) {
          needed.push_back(json{{"name", n.name},
                                {"resolved", n.resolved.empty() ? json(nullptr) : json(n.resolved)},
                                {"version", n.version},
                                {"via", n.via},
                                {"wheel_copy", n.wheel_copy}});
        }
        x["needed"] = needed;
      }
      fw.push_back(std::move(x));
    }
    j["frameworks"] = fw;
    json libs = json::array();
    for (const PythonLibCopy& l : e.cuda_libs) {
      libs.push_back(json{{"library", l.library},
                          {"major", l.major},
                          {"path", l.path},
                          {"version", l.version},
                          {"package", l.package}});
      if (!l.needs_nvjitlink.empty()) libs.back()["needs_nvjitlink"] = l.needs_nvjitlink;
    }
    j["cuda_libraries"] = libs;
    if (e.kind == "conda") {
      json conda = json::array();
      for (const CondaPackage& p : e.conda) {
        conda.push_back(json{
            {"name", p.name}, {"version", p.version}, {"build", p.build}, {"source", p.source}});
      }
      j["conda_packages"] = conda;
    }
    if (!e.xla_dirs.empty()) {
      json xd = json::array();
      for (const XlaCudaDir& x : e.xla_dirs) {
        xd.push_back(
            json{{"dir", x.dir}, {"via", x.via}, {"libdevice", x.libdevice}, {"ptxas", x.ptxas}});
      }
      j["xla_cuda_dirs"] = xd;
    }
    if (e.deep) {
      json d;
      d["status"] = fact_json(e.deep->status);
      d["wall_ms"] = e.deep->wall_ms;
      json fws = json::array();
      for (const DeepFramework& f : e.deep->frameworks) {
        fws.push_back(json{{"name", f.name},
                           {"imported", f.imported},
                           {"version", f.version},
                           {"error", f.error},
                           {"gpu_available", fact_json(f.gpu_available)},
                           {"device_count", f.device_count},
                           {"cuda", f.cuda},
                           {"cudnn", f.cudnn},
                           {"gpu_op", f.gpu_op}});
        if (!f.cudnn_compiled.empty()) fws.back()["cudnn_compiled"] = f.cudnn_compiled;
      }
      d["frameworks"] = fws;
      d["loaded_libraries"] = strings_json(e.deep->loaded_libraries);
      json view = json::array();
      for (const LoadedLibraryView& v : loaded_vs_installed(facts, e)) {
        view.push_back(json{{"name", v.name},
                            {"loaded", v.loaded},
                            {"version", v.version},
                            {"origin", v.origin},
                            {"installed", strings_json(v.installed)},
                            {"warning", v.warning}});
      }
      d["loaded_vs_installed"] = view;
      j["deep"] = d;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

json env_json(const EnvFacts& e) {
  json j;
  json vars = json::object();
  for (const auto& [k, v] : e.vars) vars[k] = v;
  j["vars"] = vars;
  j["path"] = strings_json(e.path);
  j["ld_library_path"] = strings_json(e.ld_library_path);
  j["source"] = e.source;
  return j;
}

// Facts::system (probe/system_facts.h): WSL, container, Docker host, kernel, host compiler,
// Fabric Manager, forward compatibility.
json system_json(const SystemFacts& s) {
  const WslFacts& w = s.wsl;
  json libcuda = json::array();
  for (const FileKind& k : w.libcuda) {
    libcuda.push_back(
        json{{"path", k.path}, {"symlink", k.symlink}, {"target", k.target}, {"size", k.size}});
  }
  json wsl{{"version", w.version},
           {"version_source", w.version_source},
           {"dxg", w.dxg},
           {"lib_dir", w.lib_dir},
           {"libcuda", libcuda},
           {"lib_dir_in_ld_conf", w.lib_dir_in_ld_conf},
           {"lib_dir_on_ld_library_path", w.lib_dir_on_ld_library_path},
           {"unversioned_libcuda", w.unversioned_libcuda},
           {"unversioned_libcuda_via", w.unversioned_libcuda_via},
           {"unversioned_basis", w.unversioned_basis},
           {"linux_driver_files", strings_json(w.linux_driver_files)},
           {"linux_driver_packages", strings_json(w.linux_driver_packages)},
           {"packages_source", w.packages_source}};
  const ContainerFacts& c = s.container;
  json container{{"nvidia_require_cuda", fact_json(c.nvidia_require_cuda)},
                 {"cuda_version", fact_json(c.cuda_version)},
                 {"disable_require", c.disable_require},
                 {"shm_bytes", fact_json(c.shm_bytes)},
                 {"devices_allow_nvidia", fact_json(c.devices_allow_nvidia)}};
  const DockerHostFacts& d = s.docker;
  json docker{{"docker", d.docker},
              {"docker_path", d.docker_path},
              {"docker_snap", d.docker_snap},
              {"toolkit_files", strings_json(d.toolkit_files)},
              {"runtime_hook", d.runtime_hook},
              {"nvml_in_ld_cache", fact_json(d.nvml_in_ld_cache)},
              {"daemon_runtimes",
               fact_json(d.daemon_runtimes,
                         [](const std::vector<std::string>& v) { return strings_json(v); })},
              {"default_runtime", fact_json(d.default_runtime)},
              {"cgroup_driver", fact_json(d.cgroup_driver)},
              {"cdi_specs", strings_json(d.cdi_specs)},
              {"dev_char_checked", d.dev_char_checked},
              {"dev_char_missing", strings_json(d.dev_char_missing)}};
  const KernelFacts& k = s.kernel;
  json modules = json::object();
  for (const auto& [path, state] : k.nvidia_modules) modules[path] = state;
  json log = json::array();
  for (const KernelLogLine& l : k.log_lines)
    log.push_back(json{{"text", l.text}, {"source", l.source}});
  json kernel{{"secure_boot", fact_json(k.secure_boot)},
              {"modules_dir", k.modules_dir},
              {"nvidia_modules", modules},
              {"mok_key_present", k.mok_key_present},
              {"mok_key_enrolled", fact_json(k.mok_key_enrolled)},
              {"dkms", strings_json(k.dkms)},
              {"log_lines", log},
              {"log_sources", strings_json(k.log_sources)},
              {"log_unreadable", strings_json(k.log_unreadable)}};
  const HostCompilerFacts& h = s.host_compiler;
  json max_gcc = json::object();
  for (const auto& [root, f] : h.toolkit_max_gcc) max_gcc[root] = fact_json(f);
  json compiler{{"compiler", fact_json(h.compiler)},
                {"gcc_major", fact_json(h.gcc_major)},
                {"toolkit_max_gcc", max_gcc}};
  const FabricFacts& fm = s.fabric;
  json fabric{{"checked", fm.checked},
              {"nvswitch_evidence", strings_json(fm.nvswitch_evidence)},
              {"binary", fm.binary},
              {"units", strings_json(fm.units)},
              {"enabled", fact_json(fm.enabled)},
              {"running", fact_json(fm.running)},
              {"package", fm.package},
              {"version", fact_json(fm.version)}};
  const ForwardCompatFacts& fc = s.forward_compat;
  json forward_compat{{"libcuda", fact_json(fc.libcuda)},
                      {"rule", fc.rule},
                      {"version", fc.version},
                      {"compat", fc.compat},
                      {"compat_copies", strings_json(fc.compat_copies)}};
  return json{{"wsl", wsl},
              {"container", container},
              {"docker", docker},
              {"kernel", kernel},
              {"host_compiler", compiler},
              {"fabric", fabric},
              {"forward_compat", forward_compat}};
}

json findings_json(const std::vector<Finding>& findings) {
  json arr = json::array();
  for (const Finding& f : sorted_findings(findings)) {
    json j;
    j["id"] = f.id;
    j["severity"] = severity_name(f.severity);
    j["layer"] = f.layer;
    j["title"] = f.title;
    json ev = json::array();
    for (const Evidence& e : f.evidence) ev.push_back(json{{"fact", e.fact}, {"source", e.source}});
    j["evidence"] = ev;
    json fix = json::array();
    for (const FixStep& s : f.fix) {
      fix.push_back(json{{"text", s.text}, {"command", s.command}, {"shell", s.shell}});
    }
    j["fix"] = fix;
    j["confirmed"] = f.confirmed;
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace

nlohmann::ordered_json report_json(const Facts& facts, const std::vector<Finding>& findings) {
  json j;
  j["schema"] = kReportSchema;
  j["tool"] = json{{"version", facts.tool_version}};
  j["rooted"] = facts.rooted;
  j["root"] = facts.rooted ? json(facts.root) : json(nullptr);
  j["host"] = host_json(facts.host);
  j["driver"] = driver_json(facts.driver);
  j["gpu_count"] = fact_json(facts.gpu_count);
  j["gpus"] = gpus_json(facts.gpus);
  j["toolkits"] = toolkits_json(facts.toolkits);
  j["cudnn"] = cudnn_json(facts.cudnn);
  j["libraries"] = json::array();
  j["python"] = python_json(facts);
  j["env"] = env_json(facts.env);
  j["system"] = system_json(facts.system);
  if (facts.windows) j["windows"] = report_detail::windows_json(*facts.windows);
  json live_failures = json::array();
  for (const auto& x : facts.live_failures) {
    live_failures.push_back(json{{"probe", x.probe},
                                 {"library", x.library},
                                 {"path", x.path},
                                 {"failure", x.failure},
                                 {"file_problem", x.file_problem},
                                 {"problem_path", x.problem_path}});
  }
  j["live_failures"] = live_failures;
  j["findings"] = findings_json(findings);
  report_detail::Counts c = report_detail::count_findings(findings);
  j["summary"] = json{{"errors", c.errors}, {"warnings", c.warnings}, {"info", c.infos}};
  json timing = json::object();
  for (const auto& [probe, ms] : facts.timing.ms) timing[probe] = ms;
  j["timing_ms"] = timing;
  return j;
}

namespace {

void redact_strings(nlohmann::ordered_json& j, Redactor& redact) {
  if (j.is_string()) {
    j = redact(j.get_ref<const std::string&>());
  } else if (j.is_structured()) {
    for (auto& child : j) redact_strings(child, redact);
  }
}

}  // namespace

std::string render_json(const Facts& facts, const std::vector<Finding>& findings,
                        Redactor* redact) {
  auto doc = report_json(facts, findings);
  if (redact != nullptr) redact_strings(doc, *redact);
  // Text from files can be invalid UTF-8: replace it rather than throw.
  return json_text(doc, 2) + "\n";
}

}  // namespace dlenv
