#include "actions/cudnn_verify.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "actions/cudnn_inspect.h"
#include "actions/cudnn_install.h"
#include "binfmt/pe.h"
#include "platform/dynamic_library.h"
#include "platform/env.h"
#include "platform/process.h"
#include "probe/loader_model.h"
#include "probe/loader_model_win.h"
#include "probe/nvidia_companions.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {

using nlohmann::json;

namespace {

void check_header(const ProbeContext& ctx, const CudnnVerifyRequest& req, CudnnVerifyResult& r) {
  if (req.include_dir.empty()) return;
  const std::string h = path_join(req.include_dir, "cudnn_version.h");
  auto text = ctx.fs.read_file(h);
  auto hv = text ? parse_cudnn_version_header(*text) : std::nullopt;
  if (!hv || hv->truncated(3) != req.version.truncated(3)) {
    r.errors.push_back(fmt::format("{} says {} after the copy, expected {}",
                                   display_path(h, ctx.os), hv ? hv->str() : "no version",
                                   req.version.truncated(3).str()));
  } else {
    r.verified.push_back(fmt::format("header {}: {}", display_path(h, ctx.os), hv->str()));
  }
}

// Every library file of the major is there; the main library's version agrees.
void check_library_files(const ProbeContext& ctx, const CudnnVerifyRequest& req,
                         const std::vector<std::string>& libs, CudnnVerifyResult& r) {
  for (const auto& l : libs) {
    if (!ctx.fs.exists(path_join(req.lib_dir, l))) {
      r.errors.push_back(fmt::format("{} is missing: {}",
                                     display_path(path_join(req.lib_dir, l), ctx.os),
                                     missing_file_advice(ctx.kb, l, ctx.os, req.lib_dir)));
    }
  }
  const std::string main = path_join(req.lib_dir, libs.front());
  const std::string lv = installed_file_version(ctx.fs, main);
  if (lv.empty()) return;
  auto v = Version::parse(lv);
  const size_t n = std::min<size_t>(v ? v->parts().size() : 0, req.version.parts().size());
  if (!v || v->truncated(n) != req.version.truncated(n)) {
    r.errors.push_back(fmt::format("{} is version {}, the header says {}",
                                   display_path(main, ctx.os), lv, req.version.str()));
  } else {
    r.verified.push_back(fmt::format("library {}: {}", display_path(main, ctx.os), lv));
  }
}

// An object the model could not find that one of cuDNN's files needs (or loads at
// run time): the error names it and where to get it.
bool needed_by_cudnn(const LoadTree& tree, const LoadedObject& obj) {
  if (obj.parent < 0) return true;
  const std::string requester = to_lower(path_basename(tree.objects[obj.parent].name));
  return starts_with(requester, "libcudnn") || starts_with(requester, "cudnn");
}

void report_model(const ProbeContext& ctx, const CudnnVerifyRequest& req, const LoadTree& tree,
                  const std::string& main, CudnnVerifyResult& r) {
  std::set<std::string> reported;
  const std::string driver = to_lower(cuda_driver_companion("", ctx.os).name);
  int resolved = 0;
  const std::string lib_real = ctx.fs.real_path(req.lib_dir).value_or(req.lib_dir);
  for (const auto& obj : tree.objects) {
    const std::string base = path_basename(obj.name);
    const bool cudnn =
        starts_with(to_lower(base), "libcudnn") || starts_with(to_lower(base), "cudnn");
    if (!obj.path) {
      if (!needed_by_cudnn(tree, obj) || !reported.insert(to_lower(base)).second) continue;
      // Windows's own DLLs (KnownDLLs, API sets) are part of every Windows; a root that
      // holds only a toolkit lacks them.
      if (obj.rule == SearchRule::known_dll || obj.rule == SearchRule::api_set) continue;
      if (to_lower(base) == driver) {
        // The driver belongs to the machine that runs cuDNN, not to the toolkit: a
        // build machine or a container image without it is a good install.
        r.notes.push_back(
            fmt::format("{} (the NVIDIA driver's library) is not on this system: "
                        "cuDNN needs it to run, not to be installed",
                        base));
        continue;
      }
      r.errors.push_back(fmt::format(
          "{} ({} {}) is found nowhere on the search path{}: {}", base,
          obj.companion ? "loaded at run time by" : "needed by",
          obj.parent >= 0 ? path_basename(tree.objects[obj.parent].name) : std::string("dlenv"),
          obj.searched.empty() ? "" : " (looked in " + join(obj.searched, ", ") + ")",
          missing_file_advice(ctx.kb, base, ctx.os, req.lib_dir)));
      continue;
    }
    if (!cudnn) continue;
    ++resolved;
    // Shown form: a Windows real path has backslashes, which path_dirname does not split.
    const std::string file = display_path(ctx.fs.real_path(*obj.path).value_or(*obj.path), ctx.os);
    const std::string dir = file.substr(0, file.find_last_of("/\\"));
    if (!path_within(dir, lib_real, ctx.os) || !path_within(lib_real, dir, ctx.os)) {
      r.notes.push_back(fmt::format("{} resolves to {} ({}), not to the copy just installed",
                                    obj.name, display_path(*obj.path, ctx.os),
                                    search_rule_name(obj.rule)));
    }
  }
  if (resolved > 0) {
    r.verified.push_back(fmt::format("loader model: {} cuDNN objects resolve from {}", resolved,
                                     display_path(main, ctx.os)));
  }
}

// The loader model of the main library with the toolkit's library directory first.
void check_model(const ProbeContext& ctx, const CudnnVerifyRequest& req, const std::string& main,
                 CudnnVerifyResult& r) {
  Result<LoadTree> tree = fail("");
  if (ctx.os == Os::linux) {
    LoaderConfig loader = read_loader_config(ctx);
    LinuxLoaderSettings settings;
    settings.cache = loader.cache;
    settings.conf_dirs = loader.conf_dirs;
    settings.ld_library_path = {req.lib_dir};
    settings.ld_library_path.insert(settings.ld_library_path.end(), loader.ld_library_path.begin(),
                                    loader.ld_library_path.end());
    settings.symbols = false;
    settings.companion_strings = false;  // the sub-libraries are hundreds of MB
    tree = model_linux_load(ctx.fs, ctx.kb, main, settings);
  } else {
    // The toolkit's bin folder first on PATH, then PATH (as the real load's child has
    // them; zlibwapi.dll of cuDNN 8.3+ is one of the companions searched there).
    WindowsLoaderSettings settings;
    settings.path.push_back(req.lib_dir);
    for (const auto& p : split(ctx.env.get("PATH").value_or(""), ';')) {
      if (!p.empty()) settings.path.push_back(windows_logical_path(p));
    }
    settings.check_imports = false;
    tree = model_windows_load(ctx.fs, ctx.kb, main, settings);
  }
  if (!tree) {
    r.errors.push_back("the loader model cannot read " + display_path(main, ctx.os) + ": " +
                       tree.error().message);
    return;
  }
  report_model(ctx, req, *tree, main, r);
}

// The real load in a child process, on the live system only.
void check_real_load(const ProbeContext& ctx, const CudnnVerifyRequest& req,
                     const std::vector<std::string>& libs, CudnnVerifyResult& r) {
  if (!ctx.live || ctx.fs.is_rooted()) {
    r.verified.push_back("not loaded for real (under --root)");
    return;
  }
  if (!req.load_check) {
    r.notes.push_back("not loaded for real (no load-check program)");
    return;
  }
  std::vector<std::string> files;
  for (const auto& l : libs) files.push_back(ctx.fs.host_path(path_join(req.lib_dir, l)));
  auto got = req.load_check(files, ctx.fs.host_path(req.lib_dir));
  if (!got) {
    r.errors.push_back("the real load could not run: " + got.error().message);
    return;
  }
  if (!got->failed.empty()) {
    // "libcublasLt.so.12: cannot open shared object file: ..." names the missing file.
    std::string advice;
    if (auto colon = got->error.find(": cannot open shared object file");
        colon != std::string::npos) {
      const std::string missing = got->error.substr(0, colon);
      advice =
          fmt::format(" ({} is missing: {})", missing,
                      missing_file_advice(ctx.kb, path_basename(missing), ctx.os, req.lib_dir));
    }
    r.errors.push_back(fmt::format("loading {} failed: {}{}", got->failed, got->error, advice));
    return;
  }
  if (!got->version || got->version->truncated(3) != req.version.truncated(3)) {
    r.errors.push_back(fmt::format("cudnnGetVersion() of {} says {}, expected {}", files.front(),
                                   got->version ? got->version->str() : "nothing",
                                   req.version.truncated(3).str()));
    return;
  }
  r.verified.push_back(
      fmt::format("loaded for real ({} files, {} first on the search path): "
                  "cudnnGetVersion() = {}",
                  got->loaded.size(), display_path(req.lib_dir, ctx.os), got->version->str()));
}

}  // namespace

std::string installed_file_version(const FileSystem& fs, const std::string& path) {
  static const std::regex so_re(R"(.*\.so\.(\d+\.\d+\.\d+))");
  std::string real = fs.real_path(path).value_or(path);
  std::smatch m;
  std::string base = path_basename(real);
  if (std::regex_match(base, m, so_re)) return m[1].str();
  if (ends_with(to_lower(base), ".dll")) {
    if (auto mf = fs.map_file(path)) {
      if (auto pe = parse_pe((*mf)->bytes(), path); pe && *pe && (**pe).file_version) {
        return *(**pe).file_version;
      }
    }
  }
  return "";
}

CudnnVerifyResult verify_cudnn_install(const ProbeContext& ctx, const CudnnVerifyRequest& req) {
  CudnnVerifyResult r;
  check_header(ctx, req, r);
  const auto libs = ctx.kb.cudnn_library_files(req.version.major(), ctx.os);
  if (req.lib_dir.empty() || libs.empty()) {
    r.errors.push_back("the main library " + (libs.empty() ? "?" : libs.front()) +
                       " was not among the installed files");
    return r;
  }
  check_library_files(ctx, req, libs, r);
  const std::string main = path_join(req.lib_dir, libs.front());
  check_model(ctx, req, main, r);
  if (!r.errors.empty()) return r;  // a load would only repeat what is missing
  check_real_load(ctx, req, libs, r);
  return r;
}

std::string missing_file_advice(const Kb& kb, const std::string& name, Os os,
                                const std::string& toolkit_lib_dir) {
  const std::string lower = to_lower(name);
  const std::string here = display_path(toolkit_lib_dir, os);
  if (lower == "zlibwapi.dll") {
    return fmt::format(
        "cuDNN 8.3 to 8.9 on Windows load it, and it is part of neither Windows, CUDA nor the "
        "cuDNN zip: download the 64-bit ZLIB DLL that NVIDIA's cuDNN 8 installation guide links "
        "(\"Installing Zlib\", https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-890/"
        "install-guide/index.html) and put its zlibwapi.dll in {} (or another PATH folder)",
        here);
  }
  if (starts_with(lower, "libcudnn") || starts_with(lower, "cudnn")) {
    return "it belongs to the cuDNN archive, which is incomplete: download it again from "
           "https://developer.nvidia.com/cudnn-downloads";
  }
  if (auto lib = kb.library_from_file_name(name); lib && lib->second > 0) {
    return fmt::format(
        "it is CUDA {}'s {} library: install that part of the CUDA {} toolkit into {} (NVIDIA's "
        "installer or the distribution's {} package), or put the folder that has it first on "
        "{}",
        lib->second, lib->first, lib->second, here,
        os == Os::windows ? "cuda"
                          : "lib" + to_lower(lib->first) + "-" + std::to_string(lib->second) + "-*",
        os == Os::windows ? "PATH" : "LD_LIBRARY_PATH");
  }
  if (lower == "libz.so.1") return "it is zlib: install it (apt install zlib1g / dnf install zlib)";
  return fmt::format("install the package that provides it, or put its folder on {}",
                     os == Os::windows ? "PATH" : "LD_LIBRARY_PATH");
}

std::string run_load_check(const std::vector<std::string>& files) {
  json out{{"loaded", json::array()}, {"failed", ""}, {"error", ""}, {"version", nullptr}};
  std::vector<DynamicLibrary> kept;  // loaded until the end, as a program would hold them
  for (size_t i = 0; i < files.size(); ++i) {
    auto lib = DynamicLibrary::open(files[i]);
    if (!lib) {
      out["failed"] = files[i];
      out["error"] = lib.error().message;
      break;
    }
    if (i == 0) {
      if (auto* fn = lib->symbol("cudnnGetVersion")) {
        using GetVersion = size_t (*)();
        const long v = static_cast<long>(reinterpret_cast<GetVersion>(fn)());
        out["version"] = Version::from_cudnn_int(v).str();
      }
    }
    out["loaded"].push_back(files[i]);
    kept.push_back(std::move(*lib));
  }
  return json_text(out) + "\n";
}

Result<LoadCheckResult> load_check_in_child(const std::vector<std::string>& command,
                                            const std::vector<std::string>& files,
                                            const std::string& first_dir, Os os) {
  auto env = make_process_env()->all();
  const char* var = os == Os::windows ? "PATH" : "LD_LIBRARY_PATH";
  const std::string sep = os == Os::windows ? ";" : ":";
  std::string& value = env[var];
  value = value.empty() ? first_dir : first_dir + sep + value;
  ProcessOptions opt;
  opt.env = std::move(env);
  opt.timeout = std::chrono::seconds(60);
  std::vector<std::string> argv = command;
  argv.insert(argv.end(), files.begin(), files.end());
  auto run = run_process(argv, opt);
  if (!run) return std::unexpected(run.error());
  if (run->timed_out) return fail("the load did not finish within 60 s");
  json doc = parse_json_text(run->out, false);
  if (run->exit_code != 0 || doc.is_discarded() || !doc.is_object()) {
    return fail(fmt::format("the child {} (exit {}, signal {}): {}",
                            run->term_signal ? "crashed" : "gave no result", run->exit_code,
                            run->term_signal, trim(run->err)));
  }
  LoadCheckResult r;
  for (const auto& f : doc.value("loaded", json::array())) {
    if (f.is_string()) r.loaded.push_back(f.get<std::string>());
  }
  r.failed = doc.value("failed", "");
  r.error = doc.value("error", "");
  if (doc.contains("version") && doc["version"].is_string()) {
    r.version = Version::parse(doc["version"].get<std::string>());
  }
  return r;
}

LoadChecker child_load_checker(std::vector<std::string> command, Os os) {
  return [command = std::move(command), os](const std::vector<std::string>& files,
                                            const std::string& first_dir) {
    return load_check_in_child(command, files, first_dir, os);
  };
}

}  // namespace dlenv
