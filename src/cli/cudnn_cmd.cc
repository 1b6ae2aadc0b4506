#include "cli/cudnn_cmd.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

#include "actions/cudnn_install.h"
#include "actions/cudnn_verify.h"
#include "cli/cli.h"
#include "cli/kill_point.h"
#include "cli/progress_line.h"
#include "cli/self_exe.h"
#include "util/safe_text.h"
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
  bool no_wait = false;
  std::string sha256;
  std::string max_file_size, max_total_size;  // SourceLimits overrides ("" = default)
  size_t max_files = 0;
  std::ostream* progress = nullptr;  // where progress lines go (a terminal), else none
};

// The progress line of one kind of pass over the source ("reading", "hashing"): drawn on
// o.progress unless there is none or --json was asked for.
ProgressLine progress_line(const CudnnOptions& o, std::ostream& err, const char* label) {
  const bool on = o.progress != nullptr && !o.common.json;
  return ProgressLine(on ? *o.progress : err, label, on);
}

// `src` reporting its reading passes to `line` when the line is on.
std::unique_ptr<CudnnSource> shown_on(std::unique_ptr<CudnnSource> src, ProgressLine& line) {
  if (!line.enabled()) return src;
  return reporting_progress(std::move(src), line.reporter());
}

// The limits a source is opened with: the defaults (cudnn_source.h), or the
// --max-file-size / --max-total-size / --max-files given. nullopt (said on `err`)
// for a size that does not parse.
std::optional<SourceLimits> source_limits(const char* cmd, const CudnnOptions& o,
                                          std::ostream& err) {
  SourceLimits limits;
  for (auto [text, flag, field] :
       {std::tuple{&o.max_file_size, "--max-file-size", &limits.max_entry_bytes},
        std::tuple{&o.max_total_size, "--max-total-size", &limits.max_total_bytes}}) {
    if (text->empty()) continue;
    auto v = parse_byte_size(*text);
    if (!v) {
      err << "dlenv cudnn " << cmd << ": " << flag << " wants a size (2G, 512M, 1048576), not '"
          << *text << "'\n";
      return std::nullopt;
    }
    *field = *v;
  }
  if (o.max_files > 0) limits.max_entries = o.max_files;
  return limits;
}

// The source limits' options, on inspect and install.
void add_limit_options(CLI::App* app, CudnnOptions& o) {
  app->add_option("--max-file-size", o.max_file_size,
                  "Refuse a source with a file larger than SIZE (default 2G: 8x the largest file "
                  "of a real cuDNN release)")
      ->type_name("SIZE");
  app->add_option("--max-total-size", o.max_total_size,
                  "Refuse a source whose files add up to more than SIZE (default 8G)")
      ->type_name("SIZE");
  app->add_option("--max-files", o.max_files,
                  "Refuse a source with more than N entries (default 2000)")
      ->type_name("N");
}

int inspect(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto kb = o.common.kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(o.common.kb_dir);
  if (!kb) {
    err << "dlenv: knowledge base: " << kb.error().message << "\n";
    return kExitToolFailed;
  }
  auto limits = source_limits("inspect", o, err);
  if (!limits) return kExitUsage;
  // A source that cannot be read at all: the message, and with --json a document that
  // says so (docs/json-schema.md, dlenv.cudnn-inspect/1).
  auto unreadable = [&](const std::string& message) {
    err << "dlenv cudnn inspect: " << message << "\n";
    if (o.common.json) {
      out << json_text(nlohmann::ordered_json{{"schema", "dlenv.cudnn-inspect/1"},
                                              {"source", o.source},
                                              {"complete", false},
                                              {"errors", {message}}},
                       2)
          << "\n";
    }
    return kExitFindings;
  };
  auto src = open_cudnn_source(o.source, *limits);
  if (!src) return unreadable(src.error().message);
  ProgressLine reading = progress_line(o, err, "reading");
  const auto source = shown_on(std::move(*src), reading);
  auto info = inspect_cudnn(*source, **kb);
  if (!info) return unreadable(info.error().message);
  ProgressLine hashing = progress_line(o, err, "hashing");
  if (auto sha = source_sha256(o.source, hashing.reporter())) add_archive_digest(*info, **kb, *sha);
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

// The file system, environment and KB a cudnn subcommand works on ("dlenv cudnn CMD:
// why" on `err` when they cannot be opened).
std::optional<ActionSetup> open_setup(const char* cmd, const CudnnOptions& o, std::ostream& err) {
  auto setup = make_action_setup(o.common);
  if (!setup) {
    err << "dlenv cudnn " << cmd << ": " << setup.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*setup);
}

ProbeContext probe_context(const ActionSetup& s) {
  return ProbeContext{*s.fs, *s.env, *s.kb, s.os, s.live, "environment"};
}

// Locks `toolkit` and recovers what an earlier run left in its journal (said on
// `err` when there was something). nullptr with the message printed when either fails.
std::unique_ptr<FileLock> lock_and_recover(const char* cmd, const CudnnOptions& o,
                                           const ProbeContext& ctx, FileWriter& writer,
                                           const std::string& toolkit, std::ostream& err) {
  ToolkitLockOptions lo;
  lo.wait = !o.no_wait;
  lo.on_wait = [&](const std::string& msg) {
    err << "dlenv cudnn " << cmd << ": " << msg << "\n" << std::flush;  // said before blocking
  };
  auto lock = lock_toolkit(writer, toolkit, ctx.os, lo);
  if (!lock) {
    err << "dlenv cudnn " << cmd << ": " << lock.error().message << "\n";
    return nullptr;
  }
  auto rec = recover_toolkit(ctx, writer, toolkit);
  if (!rec) {
    err << "dlenv cudnn " << cmd << ": recovering " << display_path(toolkit, ctx.os) << ": "
        << rec.error().message << "\n";
    return nullptr;
  }
  if (rec->outcome != RecoveryResult::Outcome::nothing) {
    err << "dlenv cudnn " << cmd << ": "
        << render_recover_text({CudnnRecoverEntry{toolkit, *rec, ""}}, ctx.os);
  }
  if (!rec->problems.empty()) return nullptr;
  return std::move(*lock);
}

int install(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = open_setup("install", o, err);
  if (!setup) return kExitUsage;
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
  // The archive's digest: against --sha256 when given, and against the one NVIDIA published
  // when the file carries the name of an archive the KB knows (kb/cudnn_archives.json).
  const std::string file_name(file_name_of(o.source));
  if (!o.sha256.empty() || setup->kb->cudnn_archive_by_file(file_name)) {
    ProgressLine hashing = progress_line(o, err, "hashing");
    auto sha = source_sha256(o.source, hashing.reporter());
    if (!sha && !o.sha256.empty()) {
      err << "dlenv cudnn install: --sha256: " << sha.error().message << "\n";
      return kExitFindings;
    }
    if (sha && !o.sha256.empty() && to_lower(o.sha256) != *sha) {
      err << "dlenv cudnn install: " << o.source << " has SHA-256 " << *sha << ", not the "
          << o.sha256 << " given with --sha256: nothing was changed (download it again)\n";
      return kExitFindings;
    }
    const ArchiveDigestCheck known =
        sha ? check_archive_digest(*setup->kb, file_name, *sha) : ArchiveDigestCheck{};
    if (known.named && known.named->ref.confirmed && o.sha256.empty()) {
      err << "dlenv cudnn install: " << o.source << ": "
          << archive_digest_mismatch(*known.named, *sha)
          << ". Nothing was changed (to install this file anyway, vouch for it with --sha256 "
          << *sha << ")\n";
      return kExitFindings;
    }
    if (known.named) {
      err << "dlenv cudnn install: warning: " << archive_digest_mismatch(*known.named, *sha)
          << "\n";
    } else if (known.match && !o.common.json) {
      out << "SHA-256 " << *sha << " is " << known_archive_text(*known.match) << "\n";
    }
  }
  auto limits = source_limits("install", o, err);
  if (!limits) return kExitUsage;
  auto opened = open_cudnn_source(o.source, *limits);
  if (!opened) {
    err << "dlenv cudnn install: " << opened.error().message << "\n";
    return kExitFindings;
  }
  ProgressLine reading = progress_line(o, err, "reading");
  const auto src = shown_on(std::move(*opened), reading);
  const ProbeContext ctx = probe_context(*setup);
  auto plan = plan_cudnn_install(ctx, *src, io);
  if (!plan) {
    err << "dlenv cudnn install: " << plan.error().message << "\n";
    return kExitFindings;
  }
  auto show_plan = [&](const CudnnInstallPlan& p) {
    out << (o.common.json ? render_install_json(p, nullptr, true, setup->os)
                          : render_install_plan_text(p, setup->os) +
                                (p.ok() ? "dry run: nothing was changed.\n" : ""));
    return p.ok() ? kExitOk : kExitFindings;
  };
  if (o.dry_run || plan->toolkit_real.empty()) return show_plan(*plan);
  // Under the toolkit's lock, after recovering an interrupted run, plan again: the
  // toolkit may have changed while this process waited.
  auto writer = make_cli_file_writer(setup->root);
  auto lock = lock_and_recover("install", o, ctx, *writer, plan->toolkit_real, err);
  if (!lock) return kExitFindings;
  const std::string toolkit = plan->toolkit_real;
  plan = plan_cudnn_install(ctx, *src, io);
  if (!plan) {
    err << "dlenv cudnn install: " << plan.error().message << "\n";
    return kExitFindings;
  }
  if (plan->toolkit_real != toolkit) {
    err << "dlenv cudnn install: the toolkit changed while waiting for its lock (now "
        << display_path(plan->toolkit_real, setup->os) << "); run the install again\n";
    return kExitFindings;
  }
  if (!plan->ok()) return show_plan(*plan);
  if (!o.common.json) out << render_install_plan_text(*plan, setup->os);
  if (!o.yes && !confirm(out)) {
    err << "dlenv cudnn install: not confirmed; nothing was changed (re-run with --yes)\n";
    return kExitFindings;
  }
  auto r = execute_cudnn_install(
      ctx, *src, *plan, *writer,
      child_load_checker({self_executable(), "cudnn", "load-check"}, setup->os));
  out << (o.common.json ? render_install_json(*plan, &r, false, setup->os)
                        : render_install_result_text(r));
  return r.installed ? kExitOk : kExitFindings;
}

int uninstall(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = open_setup("uninstall", o, err);
  if (!setup) return kExitUsage;
  const ProbeContext ctx = probe_context(*setup);
  auto writer = make_cli_file_writer(setup->root);
  auto show = [&](const CudnnUninstallPlan& p) {
    out << (o.common.json ? render_uninstall_plan_json(p)
                          : render_uninstall_plan_text(p, setup->os) +
                                (p.ok() ? "dry run: nothing was changed.\n" : ""));
    return p.ok() ? kExitOk : kExitFindings;
  };
  auto plan = plan_cudnn_uninstall(ctx, o.version, o.toolkit);
  if (o.dry_run) return show(plan);
  std::unique_ptr<FileLock> lock;
  if (!plan.ok()) {
    // An uninstall cut short after it moved the manifest away: recover, then look again.
    const std::string given = logical_toolkit_path(ctx, o.toolkit);
    for (const auto& t : find_interrupted_transactions(ctx)) {
      if (!o.toolkit.empty() && t.toolkit != ctx.fs.real_path(given).value_or(given)) continue;
      if (!lock_and_recover("uninstall", o, ctx, *writer, t.toolkit, err)) return kExitFindings;
    }
    plan = plan_cudnn_uninstall(ctx, o.version, o.toolkit);
    if (!plan.ok()) return show(plan);
  }
  // Under the toolkit's lock, after recovering an interrupted run, plan again.
  lock = lock_and_recover("uninstall", o, ctx, *writer, plan.toolkit, err);
  if (!lock) return kExitFindings;
  plan = plan_cudnn_uninstall(ctx, o.version, plan.toolkit);
  if (!plan.ok()) return show(plan);
  if (!o.common.json) out << render_uninstall_plan_text(plan, setup->os);
  if (!o.yes && !confirm(out)) {
    err << "dlenv cudnn uninstall: not confirmed; nothing was changed (re-run with --yes)\n";
    return kExitFindings;
  }
  ProgressLine removing = progress_line(o, err, "removing");
  auto r = execute_cudnn_uninstall(
      ctx, plan, *writer, removing.enabled() ? removing.reporter() : SourceProgressReport{});
  out << (o.common.json ? render_uninstall_json(r) : render_uninstall_text(r));
  return r.removed ? kExitOk : kExitFindings;
}

int recover(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = open_setup("recover", o, err);
  if (!setup) return kExitUsage;
  const ProbeContext ctx = probe_context(*setup);
  std::vector<std::string> toolkits;
  if (!o.toolkit.empty()) {
    std::string t = logical_toolkit_path(ctx, o.toolkit);
    if (!ctx.fs.is_dir(t)) {
      err << "dlenv cudnn recover: " << o.toolkit << " is not a directory\n";
      return kExitUsage;
    }
    toolkits.push_back(ctx.fs.real_path(t).value_or(t));
  } else {
    for (const auto& t : find_cuda_toolkits(ctx)) toolkits.push_back(t.real);
  }
  auto writer = make_cli_file_writer(setup->root);
  std::vector<CudnnRecoverEntry> entries;
  bool ok = true;
  for (const auto& t : toolkits) {
    CudnnRecoverEntry e{t, std::nullopt, ""};
    ToolkitLockOptions lo;
    lo.wait = !o.no_wait;
    lo.on_wait = [&](const std::string& msg) {
      err << "dlenv cudnn recover: " << msg << "\n" << std::flush;
    };
    auto lock = lock_toolkit(*writer, t, setup->os, lo);
    auto rec = lock ? recover_toolkit(ctx, *writer, t)
                    : Result<RecoveryResult>(std::unexpected(lock.error()));
    if (rec) {
      ok = ok && rec->problems.empty();
      e.result = std::move(*rec);
    } else {
      ok = false;
      e.error = rec.error().message;
    }
    entries.push_back(std::move(e));
  }
  out << (o.common.json ? render_recover_json(entries) : render_recover_text(entries, setup->os));
  return ok ? kExitOk : kExitFindings;
}

int list(const CudnnOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = open_setup("list", o, err);
  if (!setup) return kExitUsage;
  const ProbeContext ctx = probe_context(*setup);
  auto l = list_cudnn(ctx);
  auto interrupted = find_interrupted_transactions(ctx);
  out << (o.common.json ? render_cudnn_list_json(l, interrupted)
                        : render_cudnn_list_text(l, interrupted, setup->os));
  return interrupted.empty() ? kExitOk : kExitFindings;
}

}  // namespace

CommandRunner add_cudnn_command(CLI::App& app, Choices& choices, std::ostream& out,
                                std::ostream& err, std::ostream* progress) {
  auto o = std::make_shared<CudnnOptions>();
  o->progress = progress;
  auto* cudnn = app.add_subcommand(
      "cudnn",
      "Inspect a cuDNN archive, install it into a CUDA toolkit (and undo that), list copies");
  cudnn->require_subcommand(1);
  auto* ins = cudnn->add_subcommand(
      "inspect", "Version, platform, CUDA major and completeness of a cuDNN archive or directory");
  ins->add_option("source", o->source, "ARCHIVE (.tar.xz/.zip) or extracted DIR")->required();
  ins->add_flag("--json", o->common.json, "Machine-readable (schema dlenv.cudnn-inspect/1)");
  ins->add_option("--kb", o->common.kb_dir, "Knowledge base directory")->type_name("DIR");
  add_limit_options(ins, *o);
  auto* inst = cudnn->add_subcommand(
      "install", "Copy cuDNN into the matching CUDA toolkit, transactionally, and verify it");
  inst->add_option("source", o->source, "ARCHIVE (.tar.xz/.zip) or extracted DIR")->required();
  inst->add_option("--toolkit", o->toolkit, "The toolkit directory")->type_name("DIR");
  inst->add_option("--cuda", o->cuda, "The toolkit of this CUDA version")->type_name("X.Y");
  inst->add_flag("--dry-run", o->dry_run, "Show the plan only");
  inst->add_flag("-y,--yes", o->yes, "Do not ask for confirmation");
  inst->add_flag("--force", o->force, "Install into a toolkit of another CUDA major");
  inst->add_option(
          "--sha256", o->sha256,
          "Refuse the archive unless its SHA-256 is HEX (as NVIDIA publishes it). An archive "
          "carrying the name of one the knowledge base knows is checked against NVIDIA's "
          "digest without this; HEX also vouches for a file whose digest differs")
      ->type_name("HEX");
  add_limit_options(inst, *o);
  inst->add_flag("--no-wait", o->no_wait,
                 "Fail at once when another dlenv process holds the toolkit's lock");
  add_action_common(inst, o->common, choices);
  auto* un = cudnn->add_subcommand("uninstall",
                                   "Remove a dlenv-installed cuDNN and restore what it replaced");
  un->add_option("version", o->version, "cuDNN version (9.1.0.70, or a prefix like 9.1)")
      ->required();
  un->add_option("--toolkit", o->toolkit, "The toolkit directory")->type_name("DIR");
  un->add_flag("--dry-run", o->dry_run, "Show what is removed and restored only");
  un->add_flag("-y,--yes", o->yes, "Do not ask for confirmation");
  un->add_flag("--no-wait", o->no_wait,
               "Fail at once when another dlenv process holds the toolkit's lock");
  add_action_common(un, o->common, choices);
  auto* rec = cudnn->add_subcommand(
      "recover",
      "Finish or roll back an install/uninstall that was interrupted (kill -9, power loss)");
  rec->add_option("--toolkit", o->toolkit, "Only this toolkit (default: every toolkit found)")
      ->type_name("DIR");
  rec->add_flag("--no-wait", o->no_wait,
                "Fail at once when another dlenv process holds the toolkit's lock");
  add_action_common(rec, o->common, choices);
  auto* ls = cudnn->add_subcommand(
      "list", "Every cuDNN copy: version, CUDA major, completeness, who would load it");
  add_action_common(ls, o->common, choices);
  // Hidden (no group): the real load of install's verification, run by dlenv itself in
  // a child process (cudnn_verify.h), so that foreign code never runs in the installer.
  auto* check = cudnn->add_subcommand("load-check", "Load FILE... in this process (internal)");
  check->group("");
  auto files = std::make_shared<std::vector<std::string>>();
  check->add_option("files", *files, "Libraries, the main one first")->required();
  return [=, &out, &err]() -> std::optional<int> {
    if (!*cudnn) return std::nullopt;
    if (*ins) return inspect(*o, out, err);
    if (*inst) return install(*o, out, err);
    if (*un) return uninstall(*o, out, err);
    if (*rec) return recover(*o, out, err);
    if (*ls) return list(*o, out, err);
    if (*check) {
      out << run_load_check(*files);
      return kExitOk;
    }
    return kExitUsage;
  };
}

}  // namespace dlenv
