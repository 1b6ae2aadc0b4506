// The Debian/Ubuntu package database (/var/lib/dpkg/status): installed packages
// and their versions, for the probes that need to know what a package installed.
#include "probe/system_probe.h"
#include "util/strings.h"

namespace dlenv {

std::optional<std::vector<DpkgPackage>> read_dpkg_status(
    const FileSystem& fs, const std::function<bool(std::string_view)>& keep) {
  auto db = fs.read_file(kDpkgStatus, 64u << 20);
  if (!db) return std::nullopt;
  std::vector<DpkgPackage> out;
  DpkgPackage pkg;
  bool installed = false;
  auto flush = [&] {
    if (installed && !pkg.name.empty() && keep(pkg.name)) out.push_back(pkg);
    pkg = {};
    installed = false;
  };
  for (const auto& line : split_lines(*db)) {
    if (trim(line).empty()) {
      flush();
    } else if (starts_with(line, "Package:")) {
      pkg.name = std::string(trim(std::string_view(line).substr(8)));
    } else if (starts_with(line, "Version:")) {
      pkg.version = std::string(trim(std::string_view(line).substr(8)));
    } else if (starts_with(line, "Status:")) {
      // "Status: install ok installed"; "deinstall ok config-files" is removed.
      installed = ends_with(trim(line), " installed");
    }
  }
  flush();
  return out;
}

std::string dpkg_upstream_version(std::string_view version) {
  if (auto colon = version.find(':'); colon != std::string_view::npos) {
    version = version.substr(colon + 1);  // epoch
  }
  if (auto dash = version.rfind('-'); dash != std::string_view::npos) {
    version = version.substr(0, dash);  // Debian revision
  }
  return std::string(version);
}

}  // namespace dlenv
