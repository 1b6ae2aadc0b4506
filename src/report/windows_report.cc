// The Windows parts of the reports (--os windows): the "windows" object of the JSON
// report and the rows of the text report's "Windows" section.
#include "report/internal.h"
#include "util/strings.h"

namespace dlenv::report_detail {
namespace {

using json = nlohmann::ordered_json;

json fact_or_status(const Fact<std::string>& f) {
  json j = json::object();
  if (f.ok()) {
    j["value"] = *f;
  } else {
    j["status"] = fact_status_name(missing_status(f));
    j["reason"] = f.reason;
  }
  j["source"] = f.source;
  return j;
}

json files_json(const std::vector<WinFile>& files) {
  json arr = json::array();
  for (const WinFile& f : files) {
    json imports = json::array();
    for (const auto& i : f.imports) imports.push_back(i);
    arr.push_back(json{{"name", f.name},
                       {"path", f.path},
                       {"version", fact_or_status(f.version)},
                       {"machine", f.machine},
                       {"found_via", f.found_via},
                       {"imports", imports}});
  }
  return arr;
}

json strings(const std::vector<std::string>& v) {
  json j = json::array();
  for (const auto& s : v) j.push_back(s);
  return j;
}

std::string file_line(const WinFile& f) {
  std::string s = f.path;
  std::vector<std::string> notes;
  if (f.version.ok()) notes.push_back(*f.version);
  if (!f.machine.empty() && f.machine != "x64") notes.push_back(f.machine);
  if (!f.found_via.empty()) notes.push_back(f.found_via);
  if (!notes.empty()) s += "  [" + join(notes, ", ") + "]";
  return s;
}

}  // namespace

nlohmann::ordered_json windows_json(const WindowsFacts& w) {
  json j;
  j["driver_version"] = fact_or_status(w.driver_version);
  j["nvcuda"] = files_json(w.nvcuda);
  j["nvml"] = files_json(w.nvml);
  j["registry_gpus"] = strings(w.registry_gpus);
  j["system32"] = w.system32;
  j["msvc_runtime"] = files_json(w.msvc_runtime);
  j["openmp"] = files_json(w.openmp);
  j["zlibwapi"] = files_json(w.zlibwapi);
  json py = json::object();
  for (const auto& [name, paths] : w.python_dlls) py[name] = strings(paths);
  j["python_dlls"] = py;
  json vars = json::object();
  for (const auto& [k, v] : w.cuda_path_vars) vars[k] = v;
  j["cuda_path_vars"] = vars;
  json path = json::array();
  for (const auto& p : w.path) {
    path.push_back(json{{"entry", p.entry},
                        {"logical", p.logical},
                        {"exists", p.exists},
                        {"toolkit_root", p.toolkit_root},
                        {"cuda_files", strings(p.cuda_files)}});
  }
  j["path"] = path;
  json resolved = json::object();
  for (const auto& r : w.resolved) resolved[r.name] = strings(r.paths);
  j["resolved"] = resolved;
  j["user_path"] = fact_or_status(w.user_path);
  j["machine_path"] = fact_or_status(w.machine_path);
  j["path_not_in_process"] = strings(w.path_not_in_process);
  return j;
}

std::vector<WindowsRow> windows_rows(const WindowsFacts& w) {
  std::vector<WindowsRow> rows;
  auto list = [&](const std::string& label, const std::vector<std::string>& items,
                  const std::string& empty) {
    if (items.empty()) {
      rows.push_back({label, empty, {}});
      return;
    }
    for (size_t i = 0; i < items.size(); ++i) rows.push_back({i ? "" : label, items[i], {}});
  };
  rows.push_back({"driver (nvcuda.dll)", fact_text(w.driver_version), w.driver_version.source});
  std::vector<std::string> items;
  for (const auto& f : w.nvcuda) items.push_back(file_line(f));
  for (const auto& f : w.nvml) items.push_back(file_line(f));
  list("driver DLLs", items, "none found");
  items.clear();
  for (const auto& f : w.msvc_runtime) items.push_back(file_line(f));
  list("MSVC run time", items, "none found");
  items.clear();
  for (const auto& f : w.openmp) items.push_back(file_line(f));
  list("OpenMP run times", items, "none found");
  items.clear();
  for (const auto& f : w.zlibwapi) items.push_back(file_line(f));
  list("zlibwapi.dll", items, "none found");
  items.clear();
  for (const auto& [k, v] : w.cuda_path_vars) items.push_back(k + "=" + v);
  list("CUDA_PATH*", items, "not set");
  items.clear();
  for (const auto& p : w.path) {
    if (p.toolkit_root.empty() && p.cuda_files.empty()) continue;
    std::string s = p.entry;
    if (!p.toolkit_root.empty()) s += "  [toolkit " + p.toolkit_root + "]";
    if (!p.cuda_files.empty()) s += "  (" + std::to_string(p.cuda_files.size()) + " CUDA files)";
    items.push_back(s);
  }
  list("CUDA dirs on PATH", items, "none");
  items.clear();
  for (const auto& r : w.resolved) {
    if (r.paths.size() < 2) continue;
    items.push_back(r.name + " -> " + r.paths.front() + " (+" + std::to_string(r.paths.size() - 1) +
                    " shadowed)");
  }
  if (!items.empty()) list("first on PATH", items, {});
  rows.push_back({"registry user Path", w.user_path.ok() ? "read" : fact_text(w.user_path),
                  w.user_path.source});
  rows.push_back({"registry machine Path", w.machine_path.ok() ? "read" : fact_text(w.machine_path),
                  w.machine_path.source});
  if (!w.path_not_in_process.empty()) {
    list("not in this PATH", w.path_not_in_process, {});
  }
  return rows;
}

std::string windows_summary(const WindowsFacts& w) {
  std::vector<std::string> parts;
  for (const auto& f : w.msvc_runtime) {
    if (f.name == "vcruntime140.dll" && to_lower(path_dirname(f.path)) == to_lower(w.system32)) {
      parts.push_back("MSVC run time " + (f.version.ok() ? *f.version : std::string("?")));
    }
  }
  if (parts.empty()) parts.push_back("no MSVC run time in System32");
  std::vector<std::string> toolkits;
  for (const auto& p : w.path) {
    if (!p.toolkit_root.empty()) toolkits.push_back(path_basename(p.toolkit_root));
  }
  parts.push_back("CUDA on PATH: " +
                  (toolkits.empty() ? std::string("none") : join(toolkits, " > ")));
  auto cp = w.cuda_path_vars.find("CUDA_PATH");
  parts.push_back("CUDA_PATH " +
                  (cp == w.cuda_path_vars.end() ? std::string("not set") : cp->second));
  parts.push_back(std::to_string(w.zlibwapi.size()) + " zlibwapi.dll");
  if (!w.user_path.ok() && !w.machine_path.ok()) {
    parts.push_back("registry PATH not read");
  } else if (!w.path_not_in_process.empty()) {
    parts.push_back(std::to_string(w.path_not_in_process.size()) +
                    " registry PATH entries missing from this shell");
  }
  return join(parts, "; ");
}

}  // namespace dlenv::report_detail
