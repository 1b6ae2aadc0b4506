// Closed value sets of options, attached where the option is declared: the parse check
// and the shell completions (cli/completion.h) read the same list.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dlenv {

using ChoiceList = std::function<std::vector<std::string>()>;

class Choices {
 public:
  // `values` are the accepted values (listed lazily: explain's ids need the knowledge base).
  // With `checked`, parsing refuses anything else (a usage error naming the closest value);
  // without, they are only offered to the completion (a finding id also accepts a pasted
  // error, a framework spec takes a version after the name).
  CLI::Option* attach(CLI::Option* option, ChoiceList values, bool checked = true);
  // The values of `option`; empty for an option without a closed set.
  std::vector<std::string> of(const CLI::Option* option) const;

 private:
  std::map<const CLI::Option*, ChoiceList> lists_;
};

}  // namespace dlenv
