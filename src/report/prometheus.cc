// `dlenv doctor --format prometheus` (and --textfile): the node's stack as info gauges for
// node-exporter's textfile collector (docs/json-schema.md, "Prometheus metrics").
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/internal.h"
#include "report/prometheus_text.h"
#include "report/report.h"

namespace dlenv {
namespace {

using namespace report_detail;

template <class T>
std::string value_or_empty(const Fact<T>& f) {
  return f.ok() ? value_text(*f) : std::string();
}

// The cuDNN version a copy reports: loaded live, else its file name, else its header.
std::string cudnn_version_text(const CudnnCopy& c) {
  for (const Fact<Version>* f : {&c.live_version, &c.library_version, &c.header_version}) {
    if (f->ok()) return (*f)->str();
  }
  return {};
}

}  // namespace

std::string render_prometheus(const Facts& facts, const std::vector<Finding>& findings,
                              double timestamp_seconds, Redactor* redact) {
  auto r = [&](std::string_view s) { return redact != nullptr ? (*redact)(s) : std::string(s); };
  PrometheusWriter w;
  const DriverFacts& d = facts.driver;
  w.gauge("dlenv_info",
          "The NVIDIA driver stack of this node (1): driver version, CUDA driver API version, "
          "kernel module version; empty when not found.");
  std::string cuda_driver =
      d.cuda_driver_version.ok() ? Version::from_cuda_int(*d.cuda_driver_version).str() : "";
  w.sample("dlenv_info",
           {{"driver", driver_version_text(d)},
            {"cuda_driver", cuda_driver},
            {"kernel_module", value_or_empty(d.kernel_module_version)}},
           1);

  w.gauge("dlenv_gpu_info", "One per GPU (1): index, name, UUID, compute capability.");
  for (const GpuFacts& g : facts.gpus) {
    w.sample("dlenv_gpu_info",
             {{"index", std::to_string(g.index)},
              {"name", r(value_or_empty(g.name))},
              {"uuid", r(value_or_empty(g.uuid))},
              {"cc", value_or_empty(g.compute_capability)}},
             1);
  }

  w.gauge("dlenv_toolkit_info",
          "One per CUDA toolkit found (1): version, path, whether it is the active one.");
  for (const ToolkitFacts& t : facts.toolkits) {
    w.sample("dlenv_toolkit_info",
             {{"version", value_or_empty(t.version)},
              {"path", r(t.root)},
              {"active", active_via(t).empty() ? "false" : "true"}},
             1);
  }

  w.gauge("dlenv_cudnn_info", "One per cuDNN copy found (1): version, CUDA major, library path.");
  for (const CudnnCopy& c : facts.cudnn) {
    w.sample("dlenv_cudnn_info",
             {{"version", cudnn_version_text(c)},
              {"cuda_major", value_or_empty(c.cuda_major)},
              {"path", r(c.library.empty() ? c.dir : c.library)}},
             1);
  }

  w.gauge("dlenv_framework_info",
          "One per framework build in each Python environment (1): environment prefix, "
          "framework, version, the CUDA it was built for (empty: CPU build or unknown).");
  // One series per label set: the same framework listed twice in one environment is one.
  std::map<std::vector<std::string>, bool> frameworks;
  for (const PythonEnv& e : facts.python) {
    std::string env = e.prefix.empty() ? value_or_empty(e.interpreter) : e.prefix;
    for (const FrameworkFacts& f : e.frameworks) {
      frameworks[{r(env), f.name, f.version, value_or_empty(f.cuda)}] = true;
    }
  }
  for (const auto& [labels, _] : frameworks) {
    w.sample("dlenv_framework_info",
             {{"env", labels[0]}, {"name", labels[1]}, {"version", labels[2]}, {"cuda", labels[3]}},
             1);
  }

  w.gauge("dlenv_finding",
          "Findings of this node by id and severity: how many (1 for each finding; dlenv "
          "explain ID tells what it means).");
  std::map<std::pair<std::string, std::string>, int> by_id;
  for (const Finding& f : findings) ++by_id[{f.id, severity_name(f.severity)}];
  for (const auto& [key, n] : by_id) {
    w.sample("dlenv_finding", {{"id", key.first}, {"severity", key.second}}, n);
  }
  w.gauge("dlenv_findings", "How many findings of each severity this node has.");
  Counts c = count_findings(findings);
  w.sample("dlenv_findings", {{"severity", "error"}}, c.errors);
  w.sample("dlenv_findings", {{"severity", "warning"}}, c.warnings);
  w.sample("dlenv_findings", {{"severity", "info"}}, c.infos);

  w.gauge("dlenv_probe_seconds", "Wall time of each probe of this report, in seconds.");
  for (const auto& [probe, ms] : facts.timing.ms) {
    w.sample("dlenv_probe_seconds", {{"probe", probe}}, ms / 1000.0);
  }
  w.gauge("dlenv_report_timestamp_seconds", "When this report was made (Unix time).");
  w.sample("dlenv_report_timestamp_seconds", {}, timestamp_seconds);
  return w.text();
}

}  // namespace dlenv
