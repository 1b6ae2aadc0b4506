// The human text report.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "report/internal.h"
#include "report/python_loaded.h"
#include "report/report.h"
#include "util/ansi.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace report_detail;

std::string spaces(size_t n) {
  return std::string(n, ' ');
}

std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

struct Cell {
  std::string text;  // plain text (already cleaned)
  Style style = Style::none;
};
using CellRow = std::vector<Cell>;

// Lays rows out in columns: each cell that has a non-empty cell after it is
// padded to its column's width plus the gap that follows the column.
std::vector<std::string> layout(const std::vector<CellRow>& rows, size_t indent,
                                const std::vector<size_t>& gaps, bool color) {
  auto last_nonempty = [](const CellRow& r) -> long {
    for (long i = static_cast<long>(r.size()) - 1; i >= 0; --i) {
      if (!r[static_cast<size_t>(i)].text.empty()) return i;
    }
    return -1;
  };
  std::vector<size_t> widths;
  for (const CellRow& r : rows) {
    long last = last_nonempty(r);
    if (widths.size() < r.size()) widths.resize(r.size(), 0);
    for (long i = 0; i < last; ++i) {
      auto k = static_cast<size_t>(i);
      widths[k] = std::max(widths[k], display_width(r[k].text));
    }
  }
  std::vector<std::string> out;
  for (const CellRow& r : rows) {
    long last = last_nonempty(r);
    std::string line = spaces(indent);
    for (long i = 0; i <= last; ++i) {
      auto k = static_cast<size_t>(i);
      line += paint(r[k].text, r[k].style, color);
      if (i < last) {
        if (widths[k] == 0) continue;  // a column empty in every padded row
        size_t gap = k < gaps.size() ? gaps[k] : 2;
        line += spaces(widths[k] - display_width(r[k].text) + gap);
      }
    }
    out.push_back(rstrip(std::move(line)));
  }
  return out;
}

// One "label  value   (source)" line.
struct Row {
  std::string label;
  std::string value;
  std::string source;
};

template <class T>
Row fact_row(std::string label, const Fact<T>& f) {
  return {std::move(label), fact_text(f), f.source};
}

// A list: the label on the first line only; `empty` when there are no items.
void add_list(std::vector<Row>& rows, const std::string& label,
              const std::vector<std::string>& items, const std::string& source,
              const std::string& empty) {
  if (items.empty()) {
    rows.push_back({label, empty, source});
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    rows.push_back({i == 0 ? label : std::string(), clean(items[i]), source});
  }
}

std::string joined(const std::vector<std::string>& items, const std::string& none) {
  if (items.empty()) return none;
  std::vector<std::string> cleaned;
  for (const auto& s : items) cleaned.push_back(clean(s));
  return join(cleaned, ", ");
}

class Writer {
 public:
  Writer(bool color, bool verbose) : color_(color), verbose_(verbose) {}

  void line(std::string s = {}) { lines_.push_back(rstrip(std::move(s))); }
  void lines(const std::vector<std::string>& ls) {
    for (const auto& l : ls) line(l);
  }
  void heading(std::string_view title) {
    if (!lines_.empty()) line();
    line(paint(title, Style::bold, color_));
  }
  void rows(const std::vector<Row>& rs, size_t indent) {
    std::vector<CellRow> cells;
    for (const Row& r : rs) {
      Cell src;
      if (verbose_ && !trim(r.source).empty()) src = {"(" + clean(r.source) + ")", Style::dim};
      cells.push_back({{clean(r.label)}, {clean(r.value)}, src});
    }
    lines(layout(cells, indent, {2, 3}, color_));
  }
  std::string str() const {
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

  bool color() const { return color_; }
  bool verbose() const { return verbose_; }

 private:
  bool color_;
  bool verbose_;
  std::vector<std::string> lines_;
};

void host_section(Writer& w, const HostFacts& h) {
  w.heading("Host");
  std::vector<Row> rows = {
      fact_row("OS", h.os),
      fact_row("distro", h.distro),
      fact_row("kernel", h.kernel),
      fact_row("arch", h.arch),
      fact_row("hostname", h.hostname),
      fact_row("container", h.container),
      fact_row("WSL2", h.wsl2),
  };
  if (w.verbose() && !h.container_evidence.empty()) {
    add_list(rows, "container evidence", h.container_evidence, {}, {});
  }
  w.rows(rows, 2);
}

std::string library_file_text(const LibraryFile& f) {
  std::vector<std::string> notes;
  if (!f.version.empty()) notes.push_back(clean(f.version));
  if (f.is_stub) notes.push_back("stub");
  if (!f.found_via.empty()) notes.push_back(clean(f.found_via));
  std::string out = clean(f.path);
  if (!notes.empty()) out += "  [" + join(notes, ", ") + "]";
  return out;
}

std::string device_node_text(const DeviceNode& n, size_t path_width) {
  std::string out = clean(n.path);
  if (!n.present) return out + "  missing";
  out += spaces(path_width - display_width(out));
  std::string access;
  access += n.readable ? 'r' : '-';
  access += n.writable ? 'w' : '-';
  char mode[16];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(n.mode & 07777));
  return out + "  " + access + "  mode " + mode + "  gid " + std::to_string(n.gid);
}

void driver_section(Writer& w, const DriverFacts& d) {
  w.heading("Driver");
  std::vector<Row> rows;
  rows.push_back(fact_row("kernel module", d.kernel_module_version));
  rows.push_back(fact_row("open kernel module", d.open_kernel_module));
  rows.push_back(fact_row("sys module version", d.sys_module_version));
  rows.push_back(fact_row("NVML driver", d.nvml_driver_version));
  rows.push_back(fact_row("NVML library", d.nvml_library));
  if (d.nvml_error.ok()) rows.push_back(fact_row("NVML error", d.nvml_error));
  Row cuda{"CUDA driver API", fact_text(d.cuda_driver_version), d.cuda_driver_version.source};
  if (d.cuda_driver_version.ok()) {
    cuda.value = Version::from_cuda_int(*d.cuda_driver_version).str();
  }
  rows.push_back(cuda);
  rows.push_back(fact_row("libcuda", d.libcuda_library));
  if (d.libcuda_error.ok()) rows.push_back(fact_row("libcuda error", d.libcuda_error));
  rows.push_back(fact_row("nvidia-smi", d.nvidia_smi_version));

  std::vector<std::string> mods;
  if (d.nvidia_loaded) mods.push_back("nvidia");
  if (d.nvidia_uvm_loaded) mods.push_back("nvidia_uvm");
  if (d.nouveau_loaded) mods.push_back("nouveau");
  if (d.nova_loaded) mods.push_back("nova");
  rows.push_back({"kernel modules", joined(mods, "none loaded"), d.modules_source});

  size_t path_width = 0;
  for (const DeviceNode& n : d.device_nodes) {
    path_width = std::max(path_width, display_width(clean(n.path)));
  }
  for (size_t i = 0; i < d.device_nodes.size(); ++i) {
    const DeviceNode& n = d.device_nodes[i];
    rows.push_back({i == 0 ? "device nodes" : "", device_node_text(n, path_width), n.source});
  }
  std::vector<std::string> files;
  for (const auto& f : d.libcuda_files) files.push_back(library_file_text(f));
  add_list(rows, "libcuda files", files, {}, "none found");
  files.clear();
  for (const auto& f : d.libnvml_files) files.push_back(library_file_text(f));
  add_list(rows, "libnvidia-ml files", files, {}, "none found");
  w.rows(rows, 2);
}

// --os windows: the driver DLLs, run times and PATH facts instead of Linux's modules and nodes.
void windows_section(Writer& w, const WindowsFacts& win, const DriverFacts& d) {
  w.heading("Driver (Windows)");
  std::vector<Row> rows;
  rows.push_back(fact_row("NVML driver", d.nvml_driver_version));
  rows.push_back(fact_row("NVML library", d.nvml_library));
  Row cuda{"CUDA driver API", fact_text(d.cuda_driver_version), d.cuda_driver_version.source};
  if (d.cuda_driver_version.ok()) cuda.value = Version::from_cuda_int(*d.cuda_driver_version).str();
  rows.push_back(cuda);
  for (const auto& r : windows_rows(win)) rows.push_back({r.label, r.value, r.source});
  w.rows(rows, 2);
}

std::string gpu_hidden_text(const GpuFacts& g) {
  if (g.visible) return {};
  std::string out = "hidden by CUDA_VISIBLE_DEVICES";
  std::string why = clean(g.visibility_reason);
  if (!why.empty()) out += " (" + why + ")";
  return out;
}

void gpu_section(Writer& w, const Facts& facts) {
  w.heading("GPUs");
  w.rows({fact_row("count", facts.gpu_count)}, 2);
  std::vector<CellRow> table;
  for (const GpuFacts& g : facts.gpus) {
    CellRow r;
    r.push_back({"[" + std::to_string(g.index) + "]"});
    r.push_back({g.name.ok() ? clean(*g.name) : "unknown GPU"});
    r.push_back({"cc " + (g.compute_capability.ok() ? g.compute_capability->str() : "?")});
    r.push_back({g.memory_total_bytes.ok() ? human_bytes(*g.memory_total_bytes) : "memory ?"});
    r.push_back({"PCI " + (g.pci_bus_id.ok() ? clean(*g.pci_bus_id) : "?")});
    r.push_back({gpu_hidden_text(g)});
    if (w.verbose() && !trim(g.source).empty()) {
      r.push_back({"(" + clean(g.source) + ")", Style::dim});
    }
    table.push_back(std::move(r));
  }
  std::vector<std::string> lines = layout(table, 2, {2, 2, 2, 2, 2, 3}, w.color());
  for (size_t i = 0; i < facts.gpus.size(); ++i) {
    w.line(lines[i]);
    if (!w.verbose()) continue;
    const GpuFacts& g = facts.gpus[i];
    Row mem = fact_row("memory", g.memory_total_bytes);
    if (g.memory_total_bytes.ok()) {
      mem.value = human_bytes(*g.memory_total_bytes) + " (" +
                  std::to_string(*g.memory_total_bytes) + " bytes)";
    }
    std::vector<Row> rows = {
        fact_row("name", g.name),
        fact_row("UUID", g.uuid),
        fact_row("PCI bus", g.pci_bus_id),
        fact_row("compute capability", g.compute_capability),
        mem,
        fact_row("persistence mode", g.persistence_mode),
        fact_row("MIG mode", g.mig_mode),
        fact_row("compute mode", g.compute_mode),
    };
    // Windows only (WDDM / TCC / MCDM): Linux answers "n/a", not worth a row.
    if (g.driver_model.ok() && *g.driver_model != "n/a") {
      rows.push_back(fact_row("driver model", g.driver_model));
    }
    w.rows(rows, 6);
  }
}

void toolkit_section(Writer& w, const std::vector<ToolkitFacts>& toolkits) {
  w.heading("CUDA toolkits");
  if (toolkits.empty()) w.line("  none found");
  for (const ToolkitFacts& t : toolkits) {
    w.line("  " + (trim(t.root).empty() ? "(unknown path)" : clean(t.root)));
    std::vector<Row> rows;
    rows.push_back(fact_row("version", t.version));
    if (!t.real_root.empty() && t.real_root != t.root) {
      rows.push_back({"real path", t.real_root, {}});
    }
    rows.push_back({"found via", joined(t.found_via, "-"), {}});
    rows.push_back({"active via", joined(active_via(t), "not active"), {}});
    rows.push_back(fact_row("nvcc", t.nvcc));
    rows.push_back(fact_row("nvcc version", t.nvcc_version));
    rows.push_back(fact_row("cudart", t.cudart_library));
    add_list(rows, "library dirs", t.lib_dirs, {}, "none");
    if (t.pip_assembled) rows.push_back({"pip-assembled", "yes", {}});
    w.rows(rows, 4);
  }
}

void cudnn_section(Writer& w, const std::vector<CudnnCopy>& copies) {
  w.heading("cuDNN");
  if (copies.empty()) w.line("  none found");
  for (const CudnnCopy& c : copies) {
    std::string where = clean(c.library.empty() ? c.dir : c.library);
    w.line("  " + (where.empty() ? "(unknown path)" : where));
    std::vector<Row> rows;
    rows.push_back(fact_row("library version", c.library_version));
    rows.push_back(fact_row("header version", c.header_version));
    if (!c.header_path.empty()) rows.push_back({"header", c.header_path, {}});
    rows.push_back(fact_row("live version", c.live_version));
    rows.push_back(fact_row("CUDA major", c.cuda_major));
    rows.push_back({"found via", joined(c.found_via, "-"), {}});
    if (!c.toolkit_root.empty()) rows.push_back({"in toolkit", c.toolkit_root, {}});
    if (!c.python_site.empty()) rows.push_back({"python site", c.python_site, {}});
    rows.push_back({"missing sub-libraries", joined(c.sublibraries_missing, "none"), {}});
    if (!c.mixed_versions.empty()) {
      std::vector<std::string> mixed;
      for (const auto& [file, version] : c.mixed_versions) {
        mixed.push_back(clean(file) + " " + clean(version));
      }
      add_list(rows, "mixed versions", mixed, {}, {});
    }
    w.rows(rows, 4);
  }
}

std::string framework_line(const FrameworkFacts& f) {
  std::string s = f.package + " " + f.version;
  if (f.cuda_build.ok()) s += *f.cuda_build ? ", CUDA build" : ", CPU build";
  if (f.cuda.ok()) s += ", CUDA " + *f.cuda;
  if (f.cudnn.ok()) s += ", cuDNN " + *f.cudnn;
  if (!f.cuda_packages.empty()) s += " [" + join(f.cuda_packages, ", ") + "]";
  return s;
}

void python_section(Writer& w, const Facts& facts) {
  const std::vector<PythonEnv>& envs = facts.python;
  w.heading("Python");
  if (envs.empty()) w.line("  no Python interpreter found");
  for (const PythonEnv& e : envs) {
    // An interpreter with no DL packages: one line.
    if (e.interpreter.ok() && e.frameworks.empty() && e.cuda_libs.empty() &&
        (!e.deep || (e.deep->status.ok() && e.deep->frameworks.empty()))) {
      std::string what = e.version.ok() ? "Python " + *e.version : "Python";
      if (!e.kind.empty()) what += ", " + e.kind;
      w.line("  " + clean(*e.interpreter) + " (" + clean(what) + "): no GPU frameworks");
      continue;
    }
    w.line("  " + clean(e.interpreter.ok() ? *e.interpreter : e.prefix));
    std::vector<Row> rows;
    if (!e.interpreter.ok()) rows.push_back(fact_row("interpreter", e.interpreter));
    rows.push_back(fact_row("version", e.version));
    rows.push_back(fact_row("bits", e.bits));
    if (!e.kind.empty()) rows.push_back({"kind", e.kind, {}});
    add_list(rows, "found via", e.found_via, {}, "-");
    add_list(rows, "site-packages", e.site_packages, {}, "none found");
    if (e.frameworks.empty()) {
      rows.push_back({"frameworks", "none installed", {}});
    }
    for (size_t i = 0; i < e.frameworks.size(); ++i) {
      const auto& f = e.frameworks[i];
      const std::string& src = f.cuda.ok() ? f.cuda.source : f.cuda_build.source;
      rows.push_back({i == 0 ? "frameworks" : "", clean(framework_line(f)), src});
    }
    std::vector<std::string> libs;
    for (const auto& l : e.cuda_libs) {
      std::string s = l.path;
      if (!l.package.empty()) s += " (" + l.package + " " + l.version + ")";
      libs.push_back(s);
    }
    if (!libs.empty()) add_list(rows, "CUDA wheels", libs, {}, {});
    if (e.deep) {
      rows.push_back(fact_row("deep probe", e.deep->status));
      for (const auto& f : e.deep->frameworks) {
        std::string t = f.name + (f.version.empty() ? "" : " " + f.version) + ": ";
        if (!f.imported) {
          t += "import failed: " + f.error;
        } else {
          t += f.gpu_available.ok()
                   ? (*f.gpu_available
                          ? "GPU available (" + std::to_string(f.device_count) + " devices)"
                          : "GPU NOT available")
                   : "GPU unknown";
          if (!f.cuda.empty()) t += ", CUDA " + f.cuda;
          if (!f.cudnn.empty()) t += ", cuDNN " + f.cudnn;
          if (!f.gpu_op.empty()) t += ", GPU op " + f.gpu_op;
          if (!f.error.empty()) t += "; error: " + f.error;
        }
        rows.push_back({"  imported", clean(t), {}});
      }
      // Loaded vs installed: what the process mapped next to the copies on disk.
      auto view = loaded_vs_installed(facts, e);
      for (const auto& v : view) {
        rows.push_back({"  loaded " + v.name,
                        clean(v.loaded + (v.version.empty() ? "" : " (" + v.version + ")") +
                              (v.warning.empty() ? "" : "  ! " + v.warning)),
                        {}});
        if (!v.origin.empty()) rows.push_back({"    from", clean(v.origin), {}});
        for (const auto& i : v.installed) rows.push_back({"    installed", clean(i), {}});
      }
      if (view.empty() && !e.deep->loaded_libraries.empty()) {
        add_list(rows, "  loaded", e.deep->loaded_libraries, {}, {});
      }
    }
    w.rows(rows, 4);
  }
}

void env_section(Writer& w, const EnvFacts& e) {
  w.heading("Environment");
  std::vector<Row> rows;
  for (const auto& [name, value] : e.vars) {
    if (name == "PATH" || name == "LD_LIBRARY_PATH") continue;
    rows.push_back({name, value, e.source});
  }
  add_list(rows, "PATH", e.path, e.source, "empty");
  add_list(rows, "LD_LIBRARY_PATH", e.ld_library_path, e.source, "not set");
  w.rows(rows, 2);
}

// WSL, container, Docker host, kernel and host compiler: only the rows that apply.
void system_section(Writer& w, const Facts& f) {
  const SystemFacts& s = f.system;
  std::vector<Row> rows;
  if (s.wsl.version > 0) {
    size_t copies = 0;
    for (const auto& k : s.wsl.libcuda) copies += k.symlink ? 0 : 1;
    std::string v = "WSL" + std::to_string(s.wsl.version);
    if (s.wsl.version == 2) {
      v += s.wsl.dxg ? ", /dev/dxg" : ", no /dev/dxg";
      v += "; /usr/lib/wsl/lib: " + std::to_string(s.wsl.libcuda.size()) + " libcuda files (" +
           std::to_string(copies) + " copies)";
      v += s.wsl.unversioned_libcuda ? "; libcuda.so resolvable" : "; libcuda.so not resolvable";
    }
    rows.push_back({"WSL", v, "/proc/version"});
    if (!s.wsl.linux_driver_packages.empty()) {
      add_list(rows, "Linux driver packages", s.wsl.linux_driver_packages, s.wsl.packages_source,
               {});
    }
  }
  if (f.host.container.ok() && *f.host.container != "none") {
    const auto& c = s.container;
    rows.push_back({"/dev/shm", c.shm_bytes ? human_bytes(*c.shm_bytes) : fact_text(c.shm_bytes),
                    c.shm_bytes.source});
    if (c.nvidia_require_cuda)
      rows.push_back(fact_row("NVIDIA_REQUIRE_CUDA", c.nvidia_require_cuda));
    if (c.devices_allow_nvidia) {
      rows.push_back({"device cgroup",
                      *c.devices_allow_nvidia ? "allows the NVIDIA devices"
                                              : "does not allow the NVIDIA devices (c 195:*)",
                      c.devices_allow_nvidia.source});
    }
  }
  if (s.docker.docker) {
    const auto& d = s.docker;
    rows.push_back({"Docker", clean(d.docker_path) + (d.docker_snap ? " (snap)" : ""), {}});
    add_list(rows, "NVIDIA Container Toolkit", d.toolkit_files, {}, "not installed");
    if (d.daemon_runtimes) {
      rows.push_back({"daemon.json runtimes",
                      d.daemon_runtimes->empty() ? "none" : join(*d.daemon_runtimes, ", "),
                      d.daemon_runtimes.source});
    }
    if (d.cgroup_driver) rows.push_back(fact_row("cgroup driver", d.cgroup_driver));
  }
  const auto& k = s.kernel;
  if (k.secure_boot.ok()) {
    rows.push_back({"Secure Boot", *k.secure_boot ? "enabled" : "disabled", k.secure_boot.source});
  }
  for (const auto& [path, state] : k.nvidia_modules) rows.push_back({"nvidia.ko", state, path});
  if (!k.log_lines.empty() || w.verbose()) {
    rows.push_back({"kernel log",
                    std::to_string(k.log_lines.size()) +
                        " lines of interest (Xid, fallen off the bus, rejected module keys)",
                    join(k.log_sources, "; ")});
    if (w.verbose() && !k.log_unreadable.empty()) {
      add_list(rows, "kernel log unreadable", k.log_unreadable, {}, {});
    }
  }
  const auto& h = s.host_compiler;
  if (h.compiler.ok() || !h.toolkit_max_gcc.empty()) {
    std::string v = h.compiler ? clean(*h.compiler) : fact_text(h.compiler);
    if (h.gcc_major) v += " (GCC " + std::to_string(*h.gcc_major) + ")";
    std::vector<std::string> limits;
    for (const auto& [root, m] : h.toolkit_max_gcc) {
      if (m) limits.push_back(clean(root) + " <= GCC " + std::to_string(*m));
    }
    if (!limits.empty()) v += "; nvcc accepts: " + join(limits, ", ");
    rows.push_back({"host compiler", v, h.gcc_major ? h.gcc_major.source : h.compiler.source});
  }
  if (rows.empty()) return;
  w.heading("System");
  w.rows(rows, 2);
}

void timing_section(Writer& w, const ProbeTiming& t) {
  if (t.ms.empty()) return;
  w.heading("Timing");
  std::vector<Row> rows;
  for (const auto& [probe, ms] : t.ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
    rows.push_back({probe, buf, {}});
  }
  w.rows(rows, 2);
}

void facts_sections(Writer& w, const Facts& facts) {
  std::string title = "dlenv";
  if (!facts.tool_version.empty()) title += " " + clean(facts.tool_version);
  w.line(paint(title + " doctor report", Style::bold, w.color()));
  if (facts.rooted) {
    w.line("root: " + clean(facts.root) + " (files read under it; live probes skipped)");
  }
  host_section(w, facts.host);
  if (facts.windows) {
    windows_section(w, *facts.windows, facts.driver);
  } else {
    driver_section(w, facts.driver);
  }
  gpu_section(w, facts);
  toolkit_section(w, facts.toolkits);
  cudnn_section(w, facts.cudnn);
  python_section(w, facts);
  env_section(w, facts.env);
  system_section(w, facts);
  if (w.verbose()) timing_section(w, facts.timing);
}

std::string prompt(const std::string& shell) {
  if (shell == "powershell" || shell == "pwsh") return "PS> ";
  if (shell == "cmd") return "> ";
  return "$ ";
}

void findings_section(Writer& w, const std::vector<Finding>& findings) {
  w.heading("Findings");
  if (findings.empty()) {
    w.line("  none");
    return;
  }
  const size_t tag_width = std::string_view("[warning]").size();
  bool first = true;
  for (const Finding& f : sorted_findings(findings)) {
    if (!first) w.line();
    first = false;
    std::string tag = std::string("[") + severity_name(f.severity) + "]";
    std::string head = "  " + paint(tag, severity_style(severity_name(f.severity)), w.color()) +
                       spaces(tag_width - tag.size() + 1) + clean(f.id);
    std::string title = clean(f.title);
    if (!title.empty()) head += " — " + title;
    w.line(head);
    if (!f.evidence.empty()) {
      w.line("    evidence");
      // Short facts align their sources in a column; a long fact would push that
      // column off the screen, so it keeps its source on the line below.
      constexpr size_t kAlignLimit = 72;
      std::vector<CellRow> ev;
      for (const Evidence& e : f.evidence) {
        if (clean(e.fact).size() > kAlignLimit) continue;
        Cell src;
        if (!trim(e.source).empty()) src = {"(" + clean(e.source) + ")", Style::dim};
        ev.push_back({{clean(e.fact)}, src});
      }
      std::vector<std::string> aligned = layout(ev, 6, {3}, w.color());
      size_t next = 0;
      for (const Evidence& e : f.evidence) {
        std::string fact = clean(e.fact);
        if (fact.size() <= kAlignLimit) {
          if (next < aligned.size()) w.line(aligned[next++]);
          continue;
        }
        w.line(spaces(6) + fact);
        if (!trim(e.source).empty()) {
          w.line(spaces(8) + paint("(" + clean(e.source) + ")", Style::dim, w.color()));
        }
      }
    }
    if (!f.fix.empty()) {
      w.line("    fix");
      for (size_t i = 0; i < f.fix.size(); ++i) {
        const FixStep& step = f.fix[i];
        std::string number = std::to_string(i + 1) + ". ";
        w.line("      " + number + clean(step.text));
        for (const std::string& cmd : split_lines(step.command)) {
          std::string c = clean(cmd);
          if (c.empty()) continue;
          w.line(spaces(6 + number.size() + 2) + prompt(step.shell) + c);
        }
      }
    }
    if (!f.confirmed) w.line("    note: rests on an unconfirmed knowledge-base row");
  }
}

}  // namespace

std::string report_detail::render_facts_text(const Facts& facts, const ReportOptions& options) {
  Writer w(options.color, options.verbose);
  facts_sections(w, facts);
  return w.str();
}

std::string render_text(const Facts& facts, const std::vector<Finding>& findings,
                        const ReportOptions& options) {
  Writer w(options.color, options.verbose);
  facts_sections(w, facts);
  findings_section(w, findings);
  w.line();
  std::string summary = counts_text(count_findings(findings));
  summary += findings.empty() ? " — no problems found" : " — run `dlenv explain ID` for details";
  w.line(summary);
  if (options.redact != nullptr) {
    w.line(Redactor::notice());
    return options.redact->columns(w.str());
  }
  return w.str();
}

}  // namespace dlenv
