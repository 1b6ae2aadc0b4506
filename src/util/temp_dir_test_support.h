// Tests only: a fresh directory under $DLENV_TEST_TMP (else the system temp dir),
// portable where mkdtemp is not (mingw/Windows). create_directory() fails on an
// existing name, so two processes never get the same one.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

namespace dlenv::testing {

inline std::filesystem::path make_unique_temp_dir(const std::string& prefix) {
  namespace fs = std::filesystem;
  const char* base = std::getenv("DLENV_TEST_TMP");
  fs::path dir = base && *base ? fs::path(base) : fs::temp_directory_path();
  fs::create_directories(dir);
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = dir / (prefix + "-" + std::to_string(gen() % 1000000000ULL));
    if (fs::create_directory(p)) return fs::canonical(p);
  }
  throw std::runtime_error("cannot create a unique directory under " + dir.string());
}

}  // namespace dlenv::testing
