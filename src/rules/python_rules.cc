// Rules over Python environments and frameworks (issue: "cuda available: False").
#include "rules/rules.h"

namespace dlenv {

const std::vector<Rule>& python_rules() {
  static const std::vector<Rule> table = {};
  return table;
}

}  // namespace dlenv
