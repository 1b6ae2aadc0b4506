// Shared by the cli layer's tests: run the CLI in-process, and a temporary
// sysroot that tests fill with files and links (logical paths under its root).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "util/temp_dir_test_support.h"

namespace dlenv::testing {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliRun run_cli(std::vector<std::string> args) {
  std::vector<const char*> argv = {"dlenv"};
  for (auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliRun r;
  r.code = cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A unique directory under $DLENV_TEST_TMP (else the system temp dir), removed at
// the end. `Self` is the derived builder, so file()/link() chain with its own methods.
template <class Self>
class SysrootBase {
 public:
  explicit SysrootBase(const std::string& prefix) { root_ = make_unique_temp_dir(prefix); }
  ~SysrootBase() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  SysrootBase(const SysrootBase&) = delete;
  SysrootBase& operator=(const SysrootBase&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path at(const std::string& logical) const { return root_ / logical.substr(1); }

  Self& file(const std::string& logical, const std::string& content = "") {
    std::filesystem::create_directories(at(logical).parent_path());
    std::ofstream(at(logical), std::ios::binary) << content;
    // Fixed modes keep the goldens independent of the umask.
    std::filesystem::permissions(at(logical), std::filesystem::perms(0644));
    return self();
  }
  Self& link(const std::string& logical, const std::string& target) {
    std::filesystem::create_directories(at(logical).parent_path());
    std::filesystem::create_symlink(target, at(logical));
    return self();
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  std::filesystem::path root_;
};

// A temporary directory, removed at the end (a sysroot with nothing in it yet).
class TempTree : public SysrootBase<TempTree> {
 public:
  using SysrootBase::SysrootBase;
};

}  // namespace dlenv::testing
