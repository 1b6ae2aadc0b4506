// The --deep helpers of python_common.h: what the rules read of the libraries a
// framework process reported loaded, for Linux (/proc/self/maps) and Windows (the
// module list) alike.
#include <cctype>

#include "rules/python_common.h"
#include "util/strings.h"

namespace dlenv::pyrules {
namespace {

bool windows_path(std::string_view p) {
  return p.find('\\') != std::string_view::npos ||
         (p.size() >= 2 && p[1] == ':' && std::isalpha(static_cast<unsigned char>(p[0])));
}

std::string file_name(std::string_view p, bool win) {
  const auto slash = p.find_last_of(win ? "/\\" : "/");
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

}  // namespace

bool deep_windows(const PythonEnv& e) {
  if (!e.deep) return false;
  for (const auto& p : e.deep->loaded_libraries) {
    if (windows_path(p)) return true;
  }
  return false;
}

std::vector<std::string> deep_loaded(const PythonEnv& e, std::string_view family) {
  std::vector<std::string> out;
  if (!e.deep) return out;
  const bool win = deep_windows(e);
  const std::string fam = to_lower(family);
  for (const auto& p : e.deep->loaded_libraries) {
    const std::string b = to_lower(file_name(p, win));
    // libcublas.so.12, libcublasLt.so.12 / cublas64_12.dll, cublasLt64_12.dll,
    // cudnn_ops64_9.dll: the family's name starts the file name.
    if ((!win && b.starts_with("lib" + fam)) ||
        (win && b.starts_with(fam) && b.ends_with(".dll"))) {
      out.push_back(p);
    }
  }
  return out;
}

std::string deep_loaded_source(const PythonEnv& e) {
  return (deep_windows(e) ? "the module list of " : "/proc/self/maps of ") + env_name(e);
}

}  // namespace dlenv::pyrules
