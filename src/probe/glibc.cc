// The C library's version from files: glibc >= 2.34 ships libc.so.6 as the real
// file (its DT_VERDEF table names every GLIBC_2.N it provides); older glibc ships
// libc-2.N.so with libc.so.6 a link to it. Never runs ldd.
#include "binfmt/elf.h"
#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {

Fact<std::string> probe_glibc(const ProbeContext& ctx, const LoaderConfig& loader) {
  if (ctx.os != Os::linux) {
    return Fact<std::string>::unknown(FactStatus::not_supported, "not Linux");
  }
  std::vector<std::string> candidates;
  if (loader.cache) {
    if (const auto* e = loader.cache->find("libc.so.6")) candidates.push_back(e->path);
  }
  for (const char* p :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/lib64/libc.so.6", "/usr/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6",
        "/usr/lib/aarch64-linux-gnu/libc.so.6", "/lib/libc.so.6", "/usr/lib/libc.so.6"}) {
    candidates.push_back(p);
  }
  const auto& fs = ctx.fs;
  for (const auto& path : candidates) {
    if (!fs.exists(path)) continue;
    std::string real = fs.real_path(path).value_or(path);
    // libc-2.17.so: the version is in the name.
    std::string base = path_basename(real);
    if (starts_with(base, "libc-") && ends_with(base, ".so")) {
      if (auto v = Version::parse(base.substr(5, base.size() - 8))) {
        return Fact<std::string>::known(v->str(), "file name " + real);
      }
    }
    auto mapped = fs.map_file(real);
    if (!mapped) continue;
    ElfParseOptions o;
    o.symbols = true;
    auto elf = parse_elf((*mapped)->bytes(), real, o);
    if (!elf || !*elf) continue;
    std::optional<Version> best;
    for (const auto& d : (**elf).version_defs) {
      if (!starts_with(d, "GLIBC_2.")) continue;
      auto v = Version::parse(std::string_view(d).substr(6));
      if (v && (!best || *best < *v)) best = v;
    }
    if (best) {
      return Fact<std::string>::known(best->str(), "version definitions (DT_VERDEF) of " + real);
    }
  }
  return Fact<std::string>::unknown(FactStatus::not_found,
                                    "no libc.so.6 with GLIBC_2.N versions or libc-2.N.so name",
                                    candidates.empty() ? "" : candidates.front());
}

}  // namespace dlenv
