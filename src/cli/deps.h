// `dlenv deps` and `dlenv load`: the loader model and a real dlopen, rendered.
#pragma once

#include <iosfwd>
#include <string>

namespace dlenv {

struct DepsOptions {
  std::string target;  // FILE (with a '/') or a library NAME
  bool flat = false;   // one line per object in load order instead of the tree
  bool json = false;
  std::string root;      // --root DIR
  std::string env_file;  // --env-file FILE (LD_LIBRARY_PATH is read from it)
};

// Exit: 0 everything resolves, 1 something is missing or broken, 2 usage error.
int run_deps(const DepsOptions& options, std::ostream& out, std::ostream& err);

struct LoadOptions {
  std::string target;  // NAME or PATH, given to dlopen as is
  bool json = false;
};

// A real dlopen (RTLD_NOW | RTLD_LOCAL). Exit 0 loaded, 1 failed (with the
// dependency walk that explains it).
int run_load(const LoadOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlenv
