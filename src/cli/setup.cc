#include "cli/setup.h"

#include <fstream>
#include <string>

#include "util/strings.h"

namespace dlenv {

Os this_host_os() {
#ifdef _WIN32
  return Os::windows;
#else
  return Os::linux;
#endif
}

std::vector<std::string> os_names() {
  return {"linux", "windows"};
}

Result<SystemView> open_system_view(const std::string& root, const std::string& os_name,
                                    const std::string& env_file, const std::string& kb_dir) {
  SystemView s;
  const Os host = this_host_os();
  s.os = host;
  if (!os_name.empty()) {
    const auto names = os_names();  // in the order of the Os enum
    if (os_name == names[0]) {
      s.os = Os::linux;
    } else if (os_name == names[1]) {
      s.os = Os::windows;
    } else {
      return fail("--os must be " + join(names, " or ") + ", not '" + os_name + "'");
    }
  }
  if (!root.empty()) {
    if (!make_real_filesystem()->is_dir(root)) return fail("--root " + root + ": not a directory");
    s.fs = make_rooted_filesystem(root);
    s.root = root;
  } else {
    s.fs = make_real_filesystem();
  }
  if (!env_file.empty()) {
    // Read as given (a pipe such as <(env) works), but never more than the limit:
    // `--env-file /dev/zero` stops there with a message.
    std::ifstream in(env_file, std::ios::binary);
    if (!in) return fail("--env-file " + env_file + ": cannot open the file");
    std::string text;
    char chunk[65536];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
      text.append(chunk, static_cast<size_t>(in.gcount()));
      if (text.size() > kMaxEnvFileBytes) {
        return fail("--env-file " + env_file + ": longer than " + std::to_string(kMaxEnvFileBytes) +
                    " bytes (the limit for an environment file); not read");
      }
    }
    if (in.bad()) return fail("--env-file " + env_file + ": read error");
    auto vars = parse_env_file(text, env_file);
    if (!vars) return std::unexpected(vars.error());
    s.env = make_map_env(std::move(*vars));
    s.env_source = "--env-file " + env_file;
  } else if (!root.empty()) {
    s.env = make_map_env({});
    s.env_source = "empty environment (--root without --env-file)";
  } else {
    s.env = make_process_env();
  }
  auto kb = kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(kb_dir);
  if (!kb) return fail("knowledge base: " + kb.error().message);
  s.kb = *kb;
  s.live = root.empty() && s.os == host;
  return s;
}

}  // namespace dlenv
