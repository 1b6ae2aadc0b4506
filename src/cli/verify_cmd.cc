#include "cli/verify_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>

#include "cli/cli.h"
#include "cli/live_probe_cmd.h"
#include "cli/progress_line.h"
#include "gpu/verify.h"
#include "kb/finding_catalog.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "platform/process.h"
#include "platform/system.h"
#include "probe/live_isolation.h"
#include "probe/nvml.h"
#include "probe/nvml_health.h"
#include "probe/probe.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// RLIMIT_DATA of verify's child: --full's buffers (1 GiB copies, 8192² matrices) fit many
// times over.
constexpr uint64_t kVerifyDataBytes = 32ull << 30;

// Where verify takes cuBLAS and cuDNN from, and why (shown in the report).
struct LibChoice {
  std::string cublas_dir;  // "" = by soname through the loader
  std::string cudnn_dir;   // "" = by soname through the loader
  std::string why;
};

bool dir_has(const FileSystem& fs, const std::string& dir, std::string_view prefix) {
  auto entries = fs.list_dir(dir);
  if (!entries) return false;
  for (const auto& e : *entries) {
    if (starts_with(e.name, prefix)) return true;
  }
  return false;
}

// The copies a Python environment's frameworks would load: its nvidia-* wheels
// (found by the Python probe), preferring an environment that has a framework.
std::optional<LibChoice> from_python(const ProbeContext& ctx, const std::string& interpreter) {
  ProbeOptions po;
  if (!interpreter.empty()) po.python_paths.push_back(interpreter);
  auto envs = probe_python(ctx, po);
  std::stable_sort(envs.begin(), envs.end(), [](const PythonEnv& a, const PythonEnv& b) {
    return a.frameworks.size() > b.frameworks.size();
  });
  for (const auto& e : envs) {
    if (!interpreter.empty() && e.interpreter.value.value_or("") != interpreter) continue;
    LibChoice c;
    for (const auto& lib : e.cuda_libs) {
      if (lib.library == "cublas" && c.cublas_dir.empty()) c.cublas_dir = path_dirname(lib.path);
      if (lib.library == "cudnn" && c.cudnn_dir.empty()) c.cudnn_dir = path_dirname(lib.path);
    }
    if (c.cublas_dir.empty() && c.cudnn_dir.empty()) continue;
    c.why = "the pip wheel copies of the Python at " + e.interpreter.value.value_or(e.prefix);
    return c;
  }
  return std::nullopt;
}

// The newest toolkit's libraries (cuDNN too when it was copied into the toolkit).
LibChoice from_toolkit(const ProbeContext& ctx) {
  LoaderConfig loader = read_loader_config(ctx);
  auto toolkits = probe_toolkits(ctx, loader);
  std::stable_sort(
      toolkits.begin(), toolkits.end(), [](const ToolkitFacts& a, const ToolkitFacts& b) {
        return a.version.value.value_or(Version{}) > b.version.value.value_or(Version{});
      });
  LibChoice c;
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) {
      if (c.cublas_dir.empty() && dir_has(ctx.fs, d, "libcublas.so.")) {
        c.cublas_dir = d;
        c.why = "the CUDA toolkit at " + t.root;
      }
      if (c.cudnn_dir.empty() && dir_has(ctx.fs, d, "libcudnn.so.")) c.cudnn_dir = d;
    }
    if (!c.cublas_dir.empty()) break;
  }
  if (c.cublas_dir.empty()) c.why = "the dynamic loader's search path";
  return c;
}

int soname_major(const FileSystem& fs, const std::string& dir, std::string_view prefix) {
  int best = 0;
  if (auto entries = fs.list_dir(dir)) {
    for (const auto& e : *entries) {
      if (!starts_with(e.name, prefix)) continue;
      if (auto v = parse_int(e.name.substr(prefix.size())); v && *v > best)
        best = static_cast<int>(*v);
    }
  }
  return best;
}

// The isolated run's protocol, on the child's standard output (libraries that print get its
// stderr instead), one line each: "step <JSON string>" as a step begins, and last
// "output <JSON string>": the report, rendered as asked. Its exit status is verify's.
constexpr std::string_view kStepLine = "step ";
constexpr std::string_view kOutputLine = "output ";

std::string protocol_line(std::string_view kind, const std::string& text) {
  return std::string(kind) + json_text(nlohmann::json(text)) + "\n";
}

std::optional<std::string> protocol_text(std::string_view line, std::string_view kind) {
  if (!starts_with(line, kind)) return std::nullopt;
  auto j = parse_json_text(line.substr(kind.size()), /*allow_exceptions=*/false);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

// What the child wrote last on stderr (a library's own message before an abort).
std::string last_stderr_line(const std::string& err) {
  std::string last;
  for (const std::string& line : split(err, '\n')) {
    if (std::string_view t = trim(line); !t.empty()) last = std::string(t);
  }
  if (last.size() > 300) last = last.substr(0, 300) + "…";
  return last;
}

// The report of a run whose child did not finish: the steps it began, and the one it
// stopped in.
VerifyResult stopped_result(const ProcessResult& run, double timeout_s,
                            std::vector<std::pair<std::string, double>> steps, double wall_ms) {
  VerifyResult r;
  r.step_ms = std::move(steps);
  r.wall_ms = wall_ms;
  r.stopped_during = r.step_ms.empty() ? "start-up" : r.step_ms.back().first;
  const std::string where = "during \"" + r.stopped_during + "\"";
  VerifyProblem p;
  p.id = finding_name(FindingId::verify_crashed);
  p.severity = severity_name(Severity::error);
  const std::string crash = crash_text(run);
  if (run.timed_out) {
    p.text = fmt::format("the GPU work did not finish within {:.0f} s {} (the process was stopped)",
                         timeout_s, where);
    p.fix =
        "A GPU or driver that stops answering: look for Xid errors (`sudo dmesg | grep -i xid`) "
        "and at `nvidia-smi`; a busy or slow machine may need a longer --timeout";
  } else {
    p.text =
        "the GPU work " +
        (crash.empty() ? fmt::format("ended with exit status {} without a report", run.exit_code)
                       : "crashed with " + crash) +
        " " + where;
    p.fix =
        "The crash is inside the CUDA libraries verify loaded: run `dlenv doctor` to see whether "
        "they fit the driver and each other, pick other copies with --libs, or leave cuDNN out "
        "with --no-cudnn to see whether it is the one";
  }
  if (std::string said = last_stderr_line(run.err); !said.empty()) {
    p.text += "; its last message: " + said;
  }
  r.problems.push_back(std::move(p));
  return r;
}

std::vector<std::string> child_argv(const std::string& program, const VerifyCliOptions& o) {
  std::vector<std::string> a{program,  "verify", "--in-process", "--child-protocol",
                             "--libs", o.libs,   "--device",     o.device};
  if (o.full) a.emplace_back("--full");
  if (o.json) a.emplace_back("--json");
  if (o.no_cudnn) a.emplace_back("--no-cudnn");
  if (!o.kb_dir.empty()) {
    a.emplace_back("--kb");
    a.push_back(o.kb_dir);
  }
  return a;
}

int run_verify_isolated(const VerifyCliOptions& o, const std::string& program, std::ostream& out,
                        std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto since_start = [&start] {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  const double timeout_s = o.timeout_s > 0 ? o.timeout_s : (o.full ? 3600.0 : 600.0);
  std::vector<std::pair<std::string, double>> steps;  // name, start time until closed
  std::optional<std::string> report;
  std::string pending;
  auto close_step = [&steps, &since_start] {
    if (!steps.empty()) steps.back().second = since_start() - steps.back().second;
  };
  ProcessOptions po;
  po.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000.0));
  po.max_output = 64u << 20;
  po.on_stdout = [&](std::string_view piece) {
    pending.append(piece);
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (auto step = protocol_text(line, kStepLine)) {
        close_step();
        steps.emplace_back(*step, since_start());
        if (o.progress && !o.json) err << kEraseLine << "  running: " << *step << std::flush;
      } else if (auto text = protocol_text(line, kOutputLine)) {
        report = std::move(text);
      }
    }
    return true;
  };
  auto run = run_process(child_argv(program, o), po);
  close_step();
  if (o.progress && !o.json) err << kEraseLine << std::flush;
  if (!run) {
    err << "dlenv verify: cannot start the GPU work in a child process: " << run.error().message
        << " (--in-process runs it in this one)\n";
    return kExitToolFailed;
  }
  err << run->err;  // the child's own messages and what its libraries printed
  if (report && !run->timed_out && run->term_signal == 0 && crash_text(*run).empty()) {
    out << *report;
    return run->exit_code;
  }
  if (!report && !run->timed_out && crash_text(*run).empty() && run->exit_code >= kExitUsage &&
      run->exit_code <= kExitToolFailed) {
    return run->exit_code;  // a usage error or a tool failure, said on stderr
  }
  VerifyResult r = stopped_result(*run, timeout_s, std::move(steps), since_start());
  out << (o.json ? render_verify_json(r) : render_verify_text(r));
  return kExitFindings;
}

}  // namespace

int run_verify_command(const VerifyCliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.timeout_s < 0 || !std::isfinite(o.timeout_s)) {
    err << "dlenv verify: --timeout must be a positive number of seconds\n";
    return kExitUsage;
  }
  if (!o.in_process) {
    const std::string program = dlenv_program();
    if (program.empty()) {
      err << "dlenv verify: cannot find the dlenv program to run the GPU work in (set "
             "DLENV_LIVE_PROBE_PROGRAM to the dlenv binary, or use --in-process)\n";
      return kExitToolFailed;
    }
    return run_verify_isolated(o, program, out, err);
  }
  // In the child: the real standard output carries the protocol only.
  const int protocol_fd = o.child_protocol ? take_stdout_for_protocol() : -1;
  auto emit = [protocol_fd](const std::string& line) {
    write_protocol_line(protocol_fd, line.data(), static_cast<unsigned long>(line.size()));
  };
  auto kb = o.kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(o.kb_dir);
  if (!kb) {
    err << "dlenv verify: knowledge base: " << kb.error().message << "\n";
    return kExitToolFailed;
  }
  VerifyOptions vo;
  vo.kb = kb->get();
  vo.full = o.full;
  if (o.device != "all") {
    auto d = parse_int(o.device);
    if (!d || *d < 0) {
      err << "dlenv verify: --device must be a GPU index or 'all', not '" << o.device << "'\n";
      return kExitUsage;
    }
    vo.device = static_cast<int>(*d);
  }
  auto fs = make_real_filesystem();
  auto env = make_process_env();
  ProbeContext ctx{*fs, *env, **kb, Os::linux, false, "process environment"};
  LibChoice choice;
  if (o.libs == "auto" || o.libs == "python" || starts_with(o.libs, "python:")) {
    std::string interp = starts_with(o.libs, "python:") ? o.libs.substr(7) : "";
    if (!interp.empty() && !fs->exists(interp)) {
      err << "dlenv verify: --libs " << o.libs << ": no such interpreter " << interp << "\n";
      return kExitUsage;
    }
    if (auto c = from_python(ctx, interp)) {
      choice = *c;
      // A wheel set without one of the two libraries: take that one from the toolkit.
      LibChoice tk = from_toolkit(ctx);
      if (choice.cublas_dir.empty()) choice.cublas_dir = tk.cublas_dir;
      if (choice.cudnn_dir.empty()) choice.cudnn_dir = tk.cudnn_dir;
    } else if (o.libs != "auto") {
      err << "dlenv verify: --libs " << o.libs
          << ": no Python environment with CUDA wheels (nvidia-cublas / nvidia-cudnn) found\n";
      return kExitUsage;
    } else {
      choice = from_toolkit(ctx);
    }
  } else if (o.libs == "toolkit") {
    choice = from_toolkit(ctx);
  } else {
    if (!fs->is_dir(o.libs)) {
      err << "dlenv verify: --libs " << o.libs
          << ": not a directory (use auto, toolkit, python[:INTERPRETER] or DIR)\n";
      return kExitUsage;
    }
    choice.cublas_dir = o.libs;
    choice.cudnn_dir = dir_has(*fs, o.libs, "libcudnn.so.") ? o.libs : "";
    choice.why = "--libs";
  }
  vo.cublas_dir = choice.cublas_dir;
  vo.cudnn_path = choice.cudnn_dir;
  vo.skip_dnn = o.no_cudnn;
  // The soname's major is what the directory holds.
  if (!vo.cublas_dir.empty()) vo.cuda_major = soname_major(*fs, vo.cublas_dir, "libcublas.so.");
  if (!vo.cudnn_path.empty()) vo.cudnn_major = soname_major(*fs, vo.cudnn_path, "libcudnn.so.");
  const std::string& why = choice.why;
  if (o.child_protocol) {
    vo.progress = [&emit](const std::string& step) { emit(protocol_line(kStepLine, step)); };
  } else if (o.progress && !o.json) {
    vo.progress = [&err](const std::string& step) {
      err << kEraseLine << "  running: " << step << std::flush;
    };
  }
  // NVML, when present, reads each GPU's compute mode and ECC counters before and after
  // its work. Without it (no driver, CI) verify runs the same minus those checks.
  auto nvml = NvmlHealthReader::open(o.nvml_candidates.empty() ? default_nvml_candidates()
                                                               : o.nvml_candidates);
  if (nvml) {
    const NvmlHealthReader& reader = **nvml;
    vo.health = [&reader](const std::string& bus, int index) -> std::optional<GpuHealth> {
      // By bus id: CUDA's order (CUDA_VISIBLE_DEVICES, FASTEST_FIRST) is not NVML's.
      auto h = bus.empty() ? reader.by_index(index) : reader.by_pci_bus_id(bus);
      if (!h) return std::nullopt;
      GpuHealth g;
      g.compute_mode = h->compute_mode;
      g.compute_processes = h->compute_processes;
      g.ecc_enabled = h->ecc_enabled;
      g.ecc_uncorrected_volatile = h->ecc_uncorrected_volatile;
      g.ecc_corrected_volatile = h->ecc_corrected_volatile;
      g.remap_pending = h->remap_pending;
      g.remap_failed = h->remap_failed;
      g.source = "NVML (" + reader.library() + ")";
      return g;
    };
  }
#ifdef __linux__
  // The child's memory cap: a runaway library stops here, not in the machine's OOM killer.
  // Data only: CUDA reserves far more address space than it uses.
  if (o.child_protocol) limit_own_memory(std::numeric_limits<uint64_t>::max(), kVerifyDataBytes);
#endif
  if (o.child_protocol) let_crashes_end_this_process();
  VerifyResult r = run_verify(vo);
  if (vo.progress && !o.child_protocol) err << kEraseLine << std::flush;
  std::string report;
  if (o.json) {
    report = render_verify_json(r);
  } else {
    report = render_verify_text(r);
    if (!why.empty() && !r.cublas_library.empty())
      report += "(libraries chosen: " + why + "; --libs picks others)\n";
  }
  if (o.child_protocol) {
    emit(protocol_line(kOutputLine, report));
  } else {
    out << report;
  }
  for (const auto& p : r.problems) {
    if (p.severity == "error") return kExitFindings;
  }
  if (r.devices.empty()) return kExitFindings;
  return kExitOk;
}

}  // namespace dlenv
