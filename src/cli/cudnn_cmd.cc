#include "cli/cudnn_cmd.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "actions/cudnn_install.h"
#include "cli/cli.h"
#include "util/strings.h"

namespace dlenv {

void add_action_common(CLI::App* app, ActionCommonOptions& o, Choices& choices) {
  app->add_option("--root", o.root,
                  "Work under DIR as if it were / (Linux) or drive C: (--os windows); nothing "
                  "outside it is read or written, nothing is loaded")
      ->type_name("DIR");
  choices.attach(
      app->add_option("--os", o.os, "Path conventions under --root: " + join(os_names(), "|"))
          ->type_name("OS"),
      os_names);
  app->add_option("--env-file", o.env_file, "KEY=VALUE lines used instead of the environment")
      ->type_name("FILE");
  app->add_option("--kb", o.kb_dir, "Knowledge base directory")->type_name("DIR");
  app->add_flag("--json", o.json, "Machine-readable output");
}

Result<ActionSetup> make_action_setup(const ActionCommonOptions& o) {
  return open_system_view(o.root, o.os, o.env_file, o.kb_dir);
}

namespace {

struct CudnnOptions {
  ActionCommonOptions common;
  std::string source;
  std::string toolkit;
  std::string cuda;
  std::string version;
  bool dry_run = false;
  bool yes = false;
  bool force = false;
};

int inspect(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto kb = o.common.kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(o.common.kb_dir);
  if (!kb) {
    err << "dlenv: knowledge base: " << kb.error().message << "\n";
    return kExitToolFailed;
  }
  auto src = open_cudnn_source(o.source);
  if (!src) {
    err << "dlenv cudnn inspect: " << src.error().message << "\n";
    return kExitFindings;
  }
  auto info = inspect_cudnn(**src, **kb);
  if (!info) {
    err << "dlenv cudnn inspect: " << info.error().message << "\n";
    return kExitFindings;
  }
  out << (o.common.json ? render_cudnn_inspect_json(*info) : render_cudnn_inspect_text(*info));
  return info->complete() ? kExitOk : kExitFindings;
}

bool confirm(std::ostream& out) {
  if (!::isatty(0)) return false;
  out << "Proceed? [y/N] " << std::flush;
  std::string line;
  std::getline(std::cin, line);
  return line == "y" || line == "Y" || line == "yes";
}

int install(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = make_action_setup(o.common);
  if (!setup) {
    err << "dlenv cudnn install: " << setup.error().message << "\n";
    return kExitUsage;
  }
  if (!o.toolkit.empty() && !o.cuda.empty()) {
    err << "dlenv cudnn install: give --toolkit or --cuda, not both\n";
    return kExitUsage;
  }
  CudnnInstallOptions io;
  io.toolkit = o.toolkit;
  io.force = o.force;
  if (!o.cuda.empty()) {
    io.cuda = Version::parse(o.cuda);
    if (!io.cuda) {
      err << "dlenv cudnn install: --cuda wants X.Y, not '" << o.cuda << "'\n";
      return kExitUsage;
    }
  }
  auto src = open_cudnn_source(o.source);
  if (!src) {
    err << "dlenv cudnn install: " << src.error().message << "\n";
    return kExitFindings;
  }
  ProbeContext ctx{*setup->fs, *setup->env, *setup->kb, setup->os, setup->live, "environment"};
  auto plan = plan_cudnn_install(ctx, **src, io);
  if (!plan) {
    err << "dlenv cudnn install: " << plan.error().message << "\n";
    return kExitFindings;
  }
  if (o.dry_run || !plan->ok()) {
    out << (o.common.json ? render_install_json(*plan, nullptr, true, setup->os)
                          : render_install_plan_text(*plan, setup->os) +
                                (plan->ok() ? "dry run: nothing was changed.\n" : ""));
    return plan->ok() ? kExitOk : kExitFindings;
  }
  if (!o.common.json) out << render_install_plan_text(*plan, setup->os);
  if (!o.yes && !confirm(out)) {
    err << "dlenv cudnn install: not confirmed; nothing was changed (re-run with --yes)\n";
    return kExitFindings;
  }
  auto writer = make_file_writer(setup->root);
  auto r = execute_cudnn_install(ctx, **src, *plan, *writer);
  out << (o.common.json ? render_install_json(*plan, &r, false, setup->os)
                        : render_install_result_text(r));
  return r.installed ? kExitOk : kExitFindings;
}

int uninstall(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = make_action_setup(o.common);
  if (!setup) {
    err << "dlenv cudnn uninstall: " << setup.error().message << "\n";
    return kExitUsage;
  }
  ProbeContext ctx{*setup->fs, *setup->env, *setup->kb, setup->os, setup->live, "environment"};
  auto writer = make_file_writer(setup->root);
  auto r = uninstall_cudnn(ctx, o.version, o.toolkit, *writer);
  out << (o.common.json ? render_uninstall_json(r) : render_uninstall_text(r));
  return r.removed ? kExitOk : kExitFindings;
}

int list(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = make_action_setup(o.common);
  if (!setup) {
    err << "dlenv cudnn list: " << setup.error().message << "\n";
    return kExitUsage;
  }
  ProbeContext ctx{*setup->fs, *setup->env, *setup->kb, setup->os, setup->live, "environment"};
  auto l = list_cudnn(ctx);
  out << (o.common.json ? render_cudnn_list_json(l) : render_cudnn_list_text(l));
  return kExitOk;
}

}  // namespace

CommandRunner add_cudnn_command(CLI::App& app, Choices& choices, std::ostream& out,
                                std::ostream& err) {
  auto o = std::make_shared<CudnnOptions>();
  auto* cudnn = app.add_subcommand(
      "cudnn",
      "Inspect a cuDNN archive, install it into a CUDA toolkit (and undo that), list copies");
  cudnn->require_subcommand(1);
  auto* ins = cudnn->add_subcommand(
      "inspect", "Version, platform, CUDA major and completeness of a cuDNN archive or directory");
  ins->add_option("source", o->source, "ARCHIVE (.tar.xz/.zip) or extracted DIR")->required();
  ins->add_flag("--json", o->common.json, "Machine-readable (schema dlenv.cudnn-inspect/1)");
  ins->add_option("--kb", o->common.kb_dir, "Knowledge base directory")->type_name("DIR");
  auto* inst = cudnn->add_subcommand(
      "install", "Copy cuDNN into the matching CUDA toolkit, transactionally, and verify it");
  inst->add_option("source", o->source, "ARCHIVE (.tar.xz/.zip) or extracted DIR")->required();
  inst->add_option("--toolkit", o->toolkit, "The toolkit directory")->type_name("DIR");
  inst->add_option("--cuda", o->cuda, "The toolkit of this CUDA version")->type_name("X.Y");
  inst->add_flag("--dry-run", o->dry_run, "Show the plan only");
  inst->add_flag("-y,--yes", o->yes, "Do not ask for confirmation");
  inst->add_flag("--force", o->force, "Install into a toolkit of another CUDA major");
  add_action_common(inst, o->common, choices);
  auto* un = cudnn->add_subcommand("uninstall",
                                   "Remove a dlenv-installed cuDNN and restore what it replaced");
  un->add_option("version", o->version, "cuDNN version (9.1.0.70, or a prefix like 9.1)")
      ->required();
  un->add_option("--toolkit", o->toolkit, "The toolkit directory")->type_name("DIR");
  add_action_common(un, o->common, choices);
  auto* ls = cudnn->add_subcommand(
      "list", "Every cuDNN copy: version, CUDA major, completeness, who would load it");
  add_action_common(ls, o->common, choices);
  return [=, &out, &err]() -> std::optional<int> {
    if (!*cudnn) return std::nullopt;
    if (*ins) return inspect(*o, out, err);
    if (*inst) return install(*o, out, err);
    if (*un) return uninstall(*o, out, err);
    if (*ls) return list(*o, out, err);
    return kExitUsage;
  };
}

}  // namespace dlenv
