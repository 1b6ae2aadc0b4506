#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "actions/cudnn_install.h"
#include "actions/plan.h"
#include "cli/choices.h"
#include "cli/command_tree.h"
#include "cli/completion.h"
#include "cli/cudnn_cmd.h"
#include "cli/deps.h"
#include "cli/env_cmd.h"
#include "cli/fleet_cmd.h"
#include "cli/help_format.h"
#include "cli/highlight.h"
#include "cli/live_probe_cmd.h"
#include "cli/man_page.h"
#include "cli/plan_cmd.h"
#include "cli/plan_link.h"
#include "cli/safe_output.h"
#include "cli/setup.h"
#include "cli/suggest.h"
#include "cli/verify_cmd.h"
#include "cli/version_info.h"
#include "cli/which_cmd.h"
#include "kb/kb.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "platform/registry_file.h"
#include "platform/replace_file.h"
#include "platform/system.h"
#include "probe/live_isolation.h"
#include "probe/probe.h"
#include "report/report.h"
#include "rules/rules.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct CommonOptions {
  std::string root;
  std::string os_name;
  std::string env_file;
  std::string kb_dir;
};

struct DoctorOptions {
  bool json = false;
  bool markdown = false;
  bool strict = false;
  bool verbose = false;
  bool no_color = false;
  bool no_live = false;
  bool redact = false;              // --redact
  bool no_redact = false;           // --no-redact (--markdown redacts by default)
  std::vector<std::string> python;  // --python PATH (repeatable)
  std::string project;              // --project DIR
  bool deep = false;
  int deep_timeout = 60;
  std::vector<std::string> registry_files;  // --registry-file FILE.reg (repeatable)
  std::string format;                       // --format text|json|markdown|prometheus
  std::string textfile;                     // --textfile PATH (Prometheus, replaced atomically)
};

std::vector<std::string> doctor_formats() {
  return {"text", "json", "markdown", "prometheus"};
}

// The one output format --format, --json, --markdown and --textfile ask for, or a usage error.
Result<std::string> doctor_format(const DoctorOptions& o) {
  std::string format = o.format;
  for (auto [flag, name] : {std::pair{o.json, "json"}, std::pair{o.markdown, "markdown"}}) {
    if (!flag) continue;
    if (!format.empty() && format != name) {
      return fail(std::string("--") + name + " and --format " + format +
                  " cannot be used together: choose one");
    }
    format = name;
  }
  if (!o.textfile.empty()) {
    if (!format.empty() && format != "prometheus") {
      return fail("--textfile writes the Prometheus format: --format " + format +
                  " cannot be used with it");
    }
    format = "prometheus";
  }
  return format.empty() ? "text" : format;
}

// color_wanted (report/report.h) with this process's NO_COLOR, FORCE_COLOR,
// CLICOLOR_FORCE and TERM.
bool tty_color(bool tty) {
  return color_wanted(tty, std::getenv("NO_COLOR"), std::getenv("TERM"), std::getenv("FORCE_COLOR"),
                      std::getenv("CLICOLOR_FORCE"));
}

// The command `dlenv` runs without one, and with only its flags (`dlenv --json`).
constexpr const char* kDefaultCommand = "doctor";

// `dlenv --json ...` is `dlenv doctor --json ...`: a first argument that is an option other
// than the top level's own (--help, --version) selects the default command.
std::vector<std::string> with_default_command(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0].starts_with("-") && args[0] != "-h" && args[0] != "--help" &&
      args[0] != "--version") {
    args.insert(args.begin(), kDefaultCommand);
  }
  return args;
}

// The deepest command the parse selected ("dlenv cudnn install": install).
const CLI::App* selected_command(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (;;) {
    auto subs = cur->get_subcommands();
    if (subs.empty()) return cur;
    cur = subs.front();
  }
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    path = a->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

std::vector<std::string> option_names_of(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
    for (const auto& n : o->get_snames()) out.push_back("-" + n);
  }
  return out;
}

std::vector<std::string> subcommand_names_of(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_group().empty()) out.push_back(sub->get_name());
  }
  return out;
}

// A usage error in words, with "did you mean" for a mistyped command or option.
std::string usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* cmd = selected_command(app);
  const std::string where = command_path(cmd);
  std::string msg = e.what();
  // CLI11: "--json excludes --markdown".
  static const std::regex excludes("^(\\S+) excludes (\\S+)$");
  std::smatch m;
  if (std::regex_match(msg, m, excludes)) {
    msg = m[1].str() + " and " + m[2].str() + " cannot be used together: choose one";
  }
  for (const std::string& extra : app.remaining(true)) {
    std::string word = extra.substr(0, extra.find('='));
    bool is_option = word.starts_with("-");
    auto near = closest_name(word, is_option ? option_names_of(*cmd) : subcommand_names_of(*cmd));
    if (!near && !is_option) continue;
    msg = std::string("unknown ") + (is_option ? "option" : "command") + " '" + word + "'";
    if (near) msg += "; did you mean `" + *near + "`?";
    break;
  }
  return where + ": " + msg + "\nRun `" + where + " --help` for usage.\n";
}

// `dlenv help [COMMAND...]`: the help of that command, as `dlenv COMMAND --help` prints it.
int run_help(CLI::App& app, const std::vector<std::string>& path, std::ostream& out,
             std::ostream& err) {
  CLI::App* cur = &app;
  for (const auto& name : path) {
    CLI::App* next = nullptr;
    for (CLI::App* sub : cur->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == name && !sub->get_group().empty()) next = sub;
    }
    if (next == nullptr) {
      err << "dlenv help: unknown command '" << name << "'";
      if (auto near = closest_name(name, subcommand_names_of(*cur))) {
        err << "; did you mean `" << *near << "`?";
      }
      err << "\n";
      return kExitUsage;
    }
    cur = next;
  }
  // Not app.help(): that shows the selected command's, here `help`'s own.
  out << cur->get_formatter()->make_help(cur, command_path(cur), CLI::AppFormatMode::Normal);
  return kExitOk;
}

// For --redact: the user and home directory of the environment the facts come from.
std::string user_name(const SystemView& view) {
  for (const char* var : {"USER", "LOGNAME", "USERNAME"}) {
    if (auto v = view.env->get(var); v && !v->empty()) return *v;
  }
  return view.live ? current_system().user_name : std::string();
}

std::string home_dir(const SystemView& view) {
  for (const char* var : {"HOME", "USERPROFILE"}) {
    if (auto v = view.env->get(var); v && !v->empty()) return *v;
  }
  return {};
}

// Everything a system-reading command needs, built from the common options.
Result<SystemView> make_setup(const CommonOptions& o) {
  return open_system_view(o.root, o.os_name, o.env_file, o.kb_dir);  // cli/setup.h
}

void add_common(CLI::App* app, CommonOptions& o, Choices& choices) {
  app->add_option("--root", o.root,
                  "Read every file under DIR as if it were / (Linux) or drive C: (--os windows); "
                  "live probes are skipped")
      ->type_name("DIR");
  choices.attach(
      app->add_option("--os", o.os_name,
                      "Rule set and path conventions under --root: " + join(os_names(), "|"))
          ->type_name("OS"),
      os_names);
  app->add_option("--env-file", o.env_file, "KEY=VALUE lines used instead of the environment")
      ->type_name("FILE");
  app->add_option("--kb", o.kb_dir, "Load the knowledge base from DIR instead of the built-in one")
      ->type_name("DIR");
}

// The registry a Windows doctor reads: `reg export` files when given, else this
// system's own (only on Windows, without --root).
Result<bool> windows_registry(ProbeContext& ctx, const std::vector<std::string>& files) {
  if (!files.empty()) {
    RegistryData all;
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      if (!in) return fail("--registry-file " + file + ": cannot open the file");
      std::stringstream ss;
      ss << in.rdbuf();
      auto data = parse_reg_file(ss.str(), file);
      if (!data) return std::unexpected(data.error());
      for (auto& [key, values] : data->keys) {
        for (auto& [name, value] : values) all.keys[key][name] = value;
      }
    }
    ctx.registry = registry_from_data(std::move(all));
    ctx.registry_source = "--registry-file " + join(files, ", ");
  } else if (ctx.os == Os::windows && !ctx.fs.is_rooted() && this_host_os() == Os::windows) {
    ctx.registry = live_registry();
    ctx.registry_source = "registry";
  }
  return true;
}

int run_doctor(const CommonOptions& co, const DoctorOptions& o, std::ostream& out,
               std::ostream& err, bool tty) {
  auto t0 = std::chrono::steady_clock::now();
  auto setup = make_setup(co);
  if (!setup) {
    err << "dlenv: " << setup.error().message << "\n";
    return kExitUsage;
  }
  ProbeContext ctx{
      *setup->fs,       *setup->env, *setup->kb, setup->os, !setup->fs->is_rooted() && !o.no_live,
      setup->env_source};
  if (ctx.os != this_host_os()) ctx.live = false;
  if (auto reg = windows_registry(ctx, o.registry_files); !reg) {
    err << "dlenv: " << reg.error().message << "\n";
    return kExitUsage;
  }
  ProbeOptions po;
  po.python_paths = o.python;
  po.project_dir = o.project;
  po.python_deep = o.deep;
  po.python_deep_timeout_s = o.deep_timeout;
  Facts facts = collect_facts(ctx, po);
  facts.tool_version = version_number();
  facts.root = co.root;
  for (const auto& t : find_interrupted_transactions(ctx)) {
    facts.interrupted_changes.push_back(
        {display_path(t.toolkit, ctx.os), display_path(t.journal, ctx.os),
         describe_pending(t.pending), recover_command(t.toolkit, ctx.os)});
  }
  auto findings = run_rules(facts, *setup->kb, setup->os);
  attach_plan_fixes(facts, *setup->kb, findings);
  facts.timing.ms["wall"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto format = doctor_format(o);
  if (!format) {
    err << "dlenv doctor: " << format.error().message << "\n";
    return kExitUsage;
  }
  std::optional<Redactor> redactor;
  if (o.redact || (*format == "markdown" && !o.no_redact)) {
    redactor.emplace(facts, user_name(*setup), home_dir(*setup));
  }
  Redactor* redact = redactor ? &*redactor : nullptr;
  if (*format == "prometheus") {
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string metrics = render_prometheus(facts, findings, std::floor(now), redact);
    if (o.textfile.empty()) {
      out << metrics;
    } else if (auto written = replace_file_atomically(o.textfile, metrics); !written) {
      err << "dlenv doctor: --textfile " << written.error().message << "\n";
      return kExitToolFailed;
    }
  } else if (*format == "json") {
    out << render_json(facts, findings, redact);
  } else if (*format == "markdown") {
    out << render_markdown(facts, findings, redact);
  } else {
    ReportOptions ro;
    ro.verbose = o.verbose;
    ro.color = !o.no_color && tty_color(tty);
    ro.redact = redact;
    out << render_text(facts, findings, ro);
  }
  int code = kExitOk;
  for (const auto& f : findings) {
    if (f.severity == Severity::error || (o.strict && f.severity == Severity::warning)) {
      code = kExitFindings;
    }
  }
  return code;
}

}  // namespace

void remember_invocation(const char* argv0) {
  set_live_probe_invocation(argv0);
}

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& raw_err,
             bool stdout_is_tty) {
  if (argc == 2 && std::string_view(argv[1]) == kLiveProbeCommand) return run_live_probe_child();
  // Messages on stderr name untrusted paths and values: shown with visible escapes
  // (cli/safe_output.h). verify's progress line writes its own escapes to raw_err.
  VisibleTextBuf visible_err(raw_err);
  std::ostream err(&visible_err);
  CLI::App app{
      "dlenv: diagnose the NVIDIA driver -> CUDA -> cuDNN -> framework stack.\n"
      "Run without a command, or with only doctor's flags (dlenv --json), for `dlenv doctor`.",
      "dlenv"};
  // Under _WIN32 CLI11 reads "/x" as the option "x" (Windows style); dlenv's arguments are
  // often POSIX paths (`deps /opt/x.so --root /srv/img`), so only - and -- start options.
  // Subcommands copy this setting from the app when they are added.
  app.allow_windows_style_options(false);
  // Every --help line fits in 80 columns; subcommands copy the formatter when added.
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_version_flag("--version", version_line());
  app.require_subcommand(0, 1);

  Choices choices;
  CommonOptions common;
  DoctorOptions doctor;
  auto* doc =
      app.add_subcommand(kDefaultCommand, "Inventory every layer and report findings with fixes");
  add_common(doc, common, choices);
  auto* doc_json =
      doc->add_flag("--json", doctor.json, "Machine-readable report (schema dlenv.report/1)");
  doc->add_flag("--markdown", doctor.markdown, "Markdown, to paste into a bug report")
      ->excludes(doc_json);
  auto* redact_flag = doc->add_flag(
      "--redact", doctor.redact,
      "Replace hostname, user name, home directory and GPU UUIDs with placeholders (<host>, "
      "<user>, ~, GPU-<uuid-1>); the default with --markdown");
  doc->add_flag("--no-redact", doctor.no_redact, "With --markdown: keep them")
      ->excludes(redact_flag);
  choices.attach(doc->add_option("--format", doctor.format,
                                 "Output format: " + join(doctor_formats(), "|") +
                                     " (prometheus: node-exporter's textfile format)")
                     ->type_name("FORMAT"),
                 doctor_formats);
  doc->add_option("--textfile", doctor.textfile,
                  "Write the Prometheus metrics to PATH, replacing it atomically (for "
                  "node-exporter's textfile collector: PATH ending in .prom)")
      ->type_name("PATH");
  doc->add_flag("--strict", doctor.strict, "Exit 1 on warnings too");
  doc->add_flag("-v,--verbose", doctor.verbose, "Show the source of every fact");
  doc->add_flag("--no-color", doctor.no_color, "No ANSI colours (NO_COLOR is honoured too)");
  doc->add_flag("--no-live", doctor.no_live, "Read files only: do not load NVML, libcuda or cuDNN");
  doc->add_option("--python", doctor.python,
                  "Also inspect this Python interpreter (repeatable; read from files, not run)")
      ->type_name("PATH");
  doc->add_option("--project", doctor.project,
                  "Also inspect the interpreter PyCharm (.idea) or VS Code (.vscode) uses for "
                  "this project, and a .venv inside it")
      ->type_name("DIR");
  doc->add_flag("--deep", doctor.deep,
                "Run each Python found: import its frameworks, ask them about the GPU, list the "
                "CUDA libraries they really load");
  doc->add_option("--deep-timeout", doctor.deep_timeout,
                  "Seconds each interpreter may take with --deep (default 60)")
      ->type_name("S")
      ->check(CLI::Range(1, 3600));
  doc->add_option("--registry-file", doctor.registry_files,
                  "With --os windows: registry values from a `reg export` file (HKCU\\Environment, "
                  "HKLM\\...\\Session Manager\\Environment, display adapters); repeatable")
      ->type_name("FILE.reg");

  std::string explain_id;
  bool explain_all = false, explain_md = false;
  std::string explain_kb;
  VerifyCliOptions verify_opts;
  auto* ver = app.add_subcommand(
      "verify",
      "Run real work on every GPU (copies, GEMM, cuDNN convolutions / activations / "
      "LSTM / GRU), check every result against the CPU, time it");
  ver->add_option("--libs", verify_opts.libs,
                  "Which cuBLAS and cuDNN: auto (the pip wheels your Python's framework would "
                  "load, else the newest toolkit), toolkit, python[:INTERPRETER], or a directory")
      ->type_name("auto|toolkit|python[:INTERP]|DIR");
  ver->add_flag("--no-cudnn", verify_opts.no_cudnn,
                "Skip the cuDNN convolution / activation / RNN checks");
  ver->add_option("--device", verify_opts.device, "GPU index or 'all'")->type_name("N|all");
  ver->add_flag("--full", verify_opts.full,
                "Bigger problems (8192³ GEMM, 1 GiB copies), more runs");
  bool quick = false;
  ver->add_flag("--quick", quick, "The default: a few seconds in all");
  ver->add_flag("--json", verify_opts.json, "Machine-readable result (schema dlenv.verify/1)");
  ver->add_option("--kb", verify_opts.kb_dir, "Knowledge base directory")->type_name("DIR");
  ver->add_option("--timeout", verify_opts.timeout_s,
                  "Stop the GPU work after this long and report the step it hung in "
                  "(default 600, with --full 3600)")
      ->type_name("SECONDS");
  ver->add_flag("--in-process", verify_opts.in_process,
                "Run the GPU work in this process, not in a child (a crash in a CUDA library "
                "then ends dlenv)");
  ver->add_flag("--child-protocol", verify_opts.child_protocol)->group("");  // the child's side

  PlanCliOptions plan_o;
  auto* plan = app.add_subcommand(
      "plan", "Choose the framework build, CUDA, cuDNN and driver that fit together");
  // Checked by parse_framework_spec (a name, then maybe a version): the names complete.
  choices.attach(plan->add_option("--framework", plan_o.frameworks,
                                  "torch, torch==1.13.1, tensorflow>=2.10, paddlepaddle-gpu==2.4, "
                                  "jax, onnxruntime-gpu, cupy (repeatable: one environment)")
                     ->type_name("SPEC"),
                 plan_framework_names, false);
  plan->add_option("--gpu", plan_o.gpu, "GPU name, e.g. \"NVIDIA GeForce RTX 4090\"")
      ->type_name("NAME");
  plan->add_option("--cc", plan_o.cc, "GPU compute capability, e.g. 8.9")->type_name("X.Y");
  plan->add_option("--driver", plan_o.driver, "NVIDIA driver version")->type_name("VER");
  choices.attach(plan->add_option("--os", plan_o.os, join(plan_os_names(), "|"))->type_name("OS"),
                 plan_os_names);
  plan->add_option("--python", plan_o.python, "Python version")->type_name("X.Y");
  plan->add_flag("--json", plan_o.json, "Machine-readable (schema dlenv.plan/1)");
  plan->add_flag("--no-probe", plan_o.no_probe,
                 "Do not read this machine for missing inputs (they stay unknown)");
  plan->add_option("--kb", plan_o.kb_dir, "Knowledge base directory")->type_name("DIR");

  auto* exp = app.add_subcommand("explain", "Print the full entry of a finding id");
  // Unknown ids get their own message (run below): the ids only complete.
  choices.attach(
      exp->add_option("id", explain_id, "Finding id, e.g. cudnn-header-library-mismatch"),
      [] {
        auto kb = Kb::load_embedded();
        return kb ? finding_ids(**kb) : std::vector<std::string>{};
      },
      false);
  exp->add_flag("--all", explain_all, "Every finding");
  exp->add_flag("--markdown", explain_md, "With --all: docs/findings.md");
  exp->add_option("--kb", explain_kb, "Knowledge base directory")->type_name("DIR");

  DepsOptions deps_o;
  bool deps_tree = false;
  auto* deps = app.add_subcommand(
      "deps", "Dependency tree of a library as the loader would resolve it (never runs it)");
  deps->add_option("target", deps_o.target, "FILE (a path) or a library NAME")->required();
  auto* deps_tree_flag = deps->add_flag("--tree", deps_tree, "Tree view (the default)");
  deps->add_flag("--flat", deps_o.flat, "One line per object, in load order")
      ->excludes(deps_tree_flag);
  deps->add_flag("--json", deps_o.json, "Machine-readable (schema dlenv.deps/1)");
  deps->add_flag("--trace", deps_o.trace,
                 "Linux model: add the walk's timeline (which thread searched, opened or "
                 "scanned what, when)");
  deps->add_option("--dlopen-from", deps_o.dlopen_from,
                   "Linux: NAME is opened by dlopen from FILE (e.g. a framework's extension "
                   "module): FILE's DT_RPATH/DT_RUNPATH are searched")
      ->type_name("FILE");
  deps->add_option("--root", deps_o.root, "Read every file under DIR as if it were /")
      ->type_name("DIR");
  deps->add_option("--env-file", deps_o.env_file, "KEY=VALUE lines (LD_LIBRARY_PATH)")
      ->type_name("FILE");
  choices.attach(
      deps->add_option("--os", deps_o.os,
                       join(os_names(), "|") + " (default: windows for a PE file or a .dll)")
          ->type_name("OS"),
      os_names);
  deps->add_option("--app-dir", deps_o.app_dir, "Windows: the directory of the program's .exe")
      ->type_name("DIR");
  deps->add_option("--add-dll-dir", deps_o.dll_dirs,
                   "Windows: a directory given to os.add_dll_directory/AddDllDirectory")
      ->type_name("DIR");
  deps->add_option("--cwd", deps_o.cwd, "Windows: the process's current directory")
      ->type_name("DIR");
  deps->add_flag("--python-ext", deps_o.python_ext,
                 "Windows: load as Python >= 3.8 loads an extension module (PATH not searched)");
  deps->add_flag("--altered-search-path", deps_o.altered_search_path,
                 "Windows: LoadLibraryEx with LOAD_WITH_ALTERED_SEARCH_PATH");
  WhichOptions which_o;
  auto* which = app.add_subcommand(
      "which",
      "The NVIDIA/CUDA libraries a live process has loaded, their versions and origin. Linux: "
      "/proc/PID/maps (-- CMD: read every --interval-ms while it runs). Windows: toolhelp module "
      "snapshots; -- CMD runs under the debug API and records every DLL load and unload event");
  which->add_option("--pid", which_o.pid, "A running process")->type_name("N");
  which->add_option("--holding", which_o.holding, "List the processes that have NAME mapped")
      ->type_name("NAME");
  which->add_option("command", which_o.command, "-- CMD ARGS...: run it, report what it loaded");
  which->add_flag("--json", which_o.json, "Machine-readable (schema dlenv.which/1)");
  which->add_option("--root", which_o.root, "Read DIR/proc/PID/maps (with --pid/--holding)")
      ->type_name("DIR");
  which->add_option("--timeout", which_o.timeout_s, "-- CMD: kill it after S seconds (120)")
      ->type_name("S");
  which->add_option("--interval-ms", which_o.interval_ms, "-- CMD, Linux: read maps every MS (2)")
      ->type_name("MS");
  LoadOptions load_o;
  auto* load =
      app.add_subcommand("load", "Really load a library (dlopen), report path and version");
  load->add_option("target", load_o.target, "Library NAME or PATH")->required();
  load->add_flag("--json", load_o.json, "Machine-readable (schema dlenv.load/1)");
  load->add_option("--root", load_o.root, "Explain only, reading files under DIR")
      ->type_name("DIR");
  load->add_option("--env-file", load_o.env_file, "KEY=VALUE lines (PATH, LD_LIBRARY_PATH)")
      ->type_name("FILE");
  choices.attach(
      load->add_option("--os", load_o.os,
                       join(os_names(), "|") + " (another OS than this one: explain only)")
          ->type_name("OS"),
      os_names);
  load->add_option("--error-code", load_o.error_code, "Windows: the LoadLibrary error to explain")
      ->type_name("N");
  // deps, load, which, plan, cudnn, verify and explain write through this: coloured
  // (cli/highlight.h) when color_wanted() says so and no --json or --markdown was asked for.
  // doctor's renderer colours its own; env's output is shell code, never coloured.
  // Before the colour: every line through VisibleTextBuf (cli/safe_output.h), so that an
  // escape sequence in a path is shown, never acted on.
  HighlightBuf highlight(out);
  std::ostream highlighted(&highlight);
  VisibleTextBuf visible(highlighted);
  std::ostream text_out(&visible);
  // cudnn inspect/install draw a progress line as verify does: escapes of our own, on raw_err.
  auto run_cudnn =
      add_cudnn_command(app, choices, text_out, err, stdout_is_tty ? &raw_err : nullptr);
  auto run_env = add_env_command(app, choices, out, err);
  auto run_fleet = add_fleet_command(app, choices, std::cin, out, err);

  std::string completion_shell;
  auto* completion = app.add_subcommand(
      "completion", "Print the shell completion script of " + join(completion_shells(), ", ") +
                        " (bash: source <(dlenv completion bash))");
  choices.attach(
      completion->add_option("shell", completion_shell, join(completion_shells(), "|"))->required(),
      [] { return completion_shells(); });
  std::vector<std::string> help_path;
  bool help_man = false;
  auto* help = app.add_subcommand(
      "help", "The help of a command (`dlenv help cudnn install`), or the man page (--man)");
  choices.attach(
      help->add_option("command", help_path, "COMMAND [SUBCOMMAND]"),
      [&app] { return subcommand_names_of(app); }, false);
  help->add_flag("--man", help_man,
                 "Print the man page dlenv.1 (roff): dlenv help --man | man -l -");

  std::vector<std::string> args = with_default_command(argc, argv);
  try {
    // CLI11 parses a vector given in reverse order.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    auto kb = Kb::load_embedded();
    out << version_text(kb ? kb->get() : nullptr);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      // Sub-command --help.
      std::ostringstream ss;
      app.exit(e, ss, ss);
      out << ss.str();
      return kExitOk;
    }
    err << usage_error(app, e);
    return kExitUsage;
  }

  highlight.enable(tty_color(stdout_is_tty) &&
                   std::none_of(args.begin(), args.end(), [](const std::string& a) {
                     return a == "--json" || a == "--markdown";
                   }));
  try {
    if (*completion) {
      out << *completion_script(describe_commands(app, choices), completion_shell, kDefaultCommand);
      return kExitOk;
    }
    if (*help) {
      if (help_man) {
        out << man_page(describe_commands(app, choices), version_number());
        return kExitOk;
      }
      return run_help(app, help_path, out, err);
    }
    if (auto rc = run_cudnn()) return *rc;
    if (auto rc = run_env()) return *rc;
    if (auto rc = run_fleet()) return *rc;
    if (*deps) return run_deps(deps_o, text_out, err);
    if (*load) return run_load(load_o, text_out, err);
    if (*which) return run_which(which_o, text_out, err);
    if (*ver) {
      verify_opts.progress = stdout_is_tty;
      return run_verify_command(verify_opts, text_out, raw_err);
    }
    if (*plan) return run_plan(plan_o, text_out, err);
    if (*exp) {
      auto kb = explain_kb.empty() ? Kb::load_embedded() : Kb::load_dir(explain_kb);
      if (!kb) {
        err << "dlenv: knowledge base: " << kb.error().message << "\n";
        return kExitToolFailed;
      }
      if (explain_all) {
        if (explain_md) {
          text_out << findings_markdown(**kb);
        } else {
          // A list for scripts and completions: never coloured.
          for (const auto& id : finding_ids(**kb)) out << id << "\n";
        }
        return kExitOk;
      }
      if (explain_id.empty()) {
        err << "dlenv explain: give a finding id (or --all)\n";
        return kExitUsage;
      }
      auto text = explain_text(explain_id, **kb);
      if (!text) {
        err << "dlenv explain: unknown finding id '" << explain_id
            << "'. `dlenv explain --all` lists them.\n";
        return kExitUsage;
      }
      text_out << *text;
      return kExitOk;
    }
    // `dlenv` alone is `dlenv doctor`.
    return run_doctor(common, doctor, out, err, stdout_is_tty);
  } catch (const std::exception& e) {
    err << "dlenv: internal error: " << e.what() << "\n";
    return kExitToolFailed;
  }
}

}  // namespace dlenv
