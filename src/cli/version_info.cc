#include "cli/version_info.h"

#include "build_info.h"  // generated each build: DLENV_GIT_COMMIT
#include "kb/kb.h"

#ifndef DLENV_VERSION
#define DLENV_VERSION "0.0.0-dev"
#endif

namespace dlenv {
namespace {

// What the binary needs to start, as built.
std::string platform_line() {
#if defined(_WIN32)
  return "Windows x86-64 (static: no DLLs besides the system's)";
#elif defined(DLENV_GLIBC_BASELINE)
  // The release build: the bullseye sysroot (tests/package checks the symbol versions).
  return "Linux x86-64, glibc >= " DLENV_GLIBC_BASELINE " (libstdc++ linked in)";
#elif defined(__GLIBC__)
  // A development build needs the glibc it was built with.
  return "Linux x86-64, glibc >= " + std::to_string(__GLIBC__) + "." +
         std::to_string(__GLIBC_MINOR__) + " (built against this machine's glibc)";
#else
  return "Linux";
#endif
}

}  // namespace

const char* version_number() {
  return DLENV_VERSION;
}

std::string version_line() {
  return std::string("dlenv ") + DLENV_VERSION;
}

std::string version_text(const Kb* kb) {
  std::string out = version_line() + "\n";
  out += "commit:         " DLENV_GIT_COMMIT "\n";
  out += "knowledge base: ";
  if (!kb) {
    out += "could not be loaded\n";
  } else {
    auto newest = kb->newest_releases();
    out += "newest CUDA " + (newest.cuda_toolkit ? newest.cuda_toolkit->str() : "?") + ", cuDNN " +
           (newest.cudnn ? newest.cudnn->str() : "?");
    // "kb 0123456789ab (file@hash, ...)": the content hash names this exact KB.
    std::string id = kb->describe();
    out += " (" + id.substr(0, id.find(" (")) + ")\n";
  }
  out += "runs on:        " + platform_line() + "\n";
  return out;
}

}  // namespace dlenv
