#pragma once
// `dlenv --version`: what a bug report needs to know about the binary itself.
#include <string>

namespace dlenv {

class Kb;

// "dlenv 0.1.0\ncommit ...\nknowledge base ...\nruns on ...\n". `kb` may be null (the
// knowledge base could not be loaded): the line says so.
std::string version_text(const Kb* kb);

// The project version from CMake's project() ("0.1.0").
const char* version_number();

// The first line alone ("dlenv 0.1.0"): the project version from CMake's project().
std::string version_line();

}  // namespace dlenv
