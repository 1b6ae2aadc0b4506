#include "cli/choices.h"

#include <algorithm>

#include "cli/suggest.h"
#include "util/strings.h"

namespace dlenv {

CLI::Option* Choices::attach(CLI::Option* option, ChoiceList values, bool checked) {
  if (checked) {
    // An empty description keeps the help line as written where the option is declared.
    option->check(CLI::Validator(
        [values](std::string& value) -> std::string {
          auto all = values();
          if (std::find(all.begin(), all.end(), value) != all.end()) return {};
          std::string msg = "'" + value + "' is not one of " + join(all, ", ");
          if (auto near = closest_name(value, all)) msg += "; did you mean `" + *near + "`?";
          return msg;
        },
        "", "choices"));
  }
  lists_[option] = std::move(values);
  return option;
}

std::vector<std::string> Choices::of(const CLI::Option* option) const {
  auto it = lists_.find(option);
  return it == lists_.end() ? std::vector<std::string>{} : it->second();
}

}  // namespace dlenv
