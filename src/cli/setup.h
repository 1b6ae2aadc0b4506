// The view of a system every system-reading command starts from, built from the
// common options (--root, --os, --env-file, --kb): shared by doctor (cli.cc) and
// the action commands (cudnn_cmd.cc, env_cmd.cc) and the binary-analysis commands
// (deps, load: deps.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kb/kb.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "util/result.h"

namespace dlenv {

struct SystemView {
  std::unique_ptr<FileSystem> fs;
  std::unique_ptr<Env> env;
  std::shared_ptr<const Kb> kb;
  Os os = Os::linux;
  bool live = true;  // false under --root or for another OS
  std::string root;  // "" for the real system
  std::string env_source = "process environment";
};

// The OS dlenv was built for (and runs on).
Os this_host_os();

// The names --os takes (linux, windows): parsed here, completed by cli/completion.h.
std::vector<std::string> os_names();

// The most an --env-file may hold (a whole process environment is at most a few MiB:
// ARG_MAX); a longer one is an error that says so.
inline constexpr size_t kMaxEnvFileBytes = 8u << 20;

// Errors: an --os other than linux|windows, a --root that is not a directory, an
// unreadable --env-file or one longer than kMaxEnvFileBytes, a knowledge base that does not load.
// Under --root without
// --env-file the environment is empty (nothing of the host leaks in).
Result<SystemView> open_system_view(const std::string& root, const std::string& os_name,
                                    const std::string& env_file, const std::string& kb_dir);

}  // namespace dlenv
