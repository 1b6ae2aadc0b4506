// `dlenv plan`: framework -> CUDA -> cuDNN -> driver that fit together (actions/plan.h).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dlenv {

struct PlanCliOptions {
  std::vector<std::string> frameworks;  // --framework SPEC (repeatable)
  std::string gpu;                      // --gpu NAME
  std::string cc;                       // --cc X.Y
  std::string driver;                   // --driver VER
  std::string os;                       // --os linux|windows|wsl2
  std::string python;                   // --python X.Y
  bool json = false;
  bool no_probe = false;  // never read this machine; missing inputs stay unknown
  std::string kb_dir;
};

// Exit: 0 a combination fits as asked, 1 conflicts (the way out is printed), 2 usage error,
// 3 the knowledge base could not be read.
int run_plan(const PlanCliOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlenv
