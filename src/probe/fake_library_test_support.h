// Shared by the probe tests that drive the real symbol tables against fake vendor
// libraries (tests/fixtures/*.c) compiled at test time.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "platform/process.h"

namespace dlenv::testing {

// $DLENV_TEST_TMP (else /tmp)/<tag>-fakes-<pid>: one directory per test process.
inline std::string fake_root(const std::string& tag) {
  const char* t = std::getenv("DLENV_TEST_TMP");
  std::string base = (t && *t) ? t : "/tmp";
  return base + "/" + tag + "-fakes-" + std::to_string(::getpid());
}

// Removes a fake_root once every test has run (register once per tag).
class RemoveFakesAtExit : public ::testing::Environment {
 public:
  explicit RemoveFakesAtExit(std::string tag) : tag_(std::move(tag)) {}
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(fake_root(tag_), ec);
  }

 private:
  std::string tag_;
};

// Compiles tests/fixtures/<fixture> into <fake_root(tag)>/<subdir>/<file_name> (once per
// process). Every variant gets its own path: dlopen caches by path.
inline std::string build_fake_library(const std::string& tag, const std::string& fixture,
                                      const std::string& subdir, const std::string& file_name,
                                      const std::string& define = "") {
  static std::set<std::string> built;
  const std::string dir = fake_root(tag) + "/" + subdir;
  const std::string out = dir + "/" + file_name;
  if (built.count(out)) return out;
  std::filesystem::create_directories(dir);
  const std::string src = std::string(DLENV_SOURCE_DIR) + "/tests/fixtures/" + fixture;
  std::vector<std::string> argv = {DLENV_CXX_COMPILER, "-x", "c", "-shared", "-fPIC", "-Wall",
                                   "-Werror"};
  if (!define.empty()) argv.push_back(define);
  argv.insert(argv.end(), {src, "-o", out});
  auto r = run_process(argv);
  if (!r || r->exit_code != 0) {
    ADD_FAILURE() << "could not compile " << fixture << " into " << out << ": "
                  << (r ? r->err : r.error().message);
    return "";
  }
  built.insert(out);
  return out;
}

// Sets an environment variable (the fakes' behaviour switch) for one test.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~EnvGuard() { ::unsetenv(name_); }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
};

inline std::string canonical_or_same(const std::string& p) {
  std::error_code ec;
  std::filesystem::path c = std::filesystem::canonical(p, ec);
  return ec ? p : c.string();
}

}  // namespace dlenv::testing
