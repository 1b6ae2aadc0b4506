// The checks of the rules layer. Each is a function in a file named for what it checks,
// registered by its entry there (a Check: name, what it checks, the function, the ids it may
// report, the facts it reads), `const Check <function>_entry{...}` in namespace dlenv::checks;
// the check table (rules/check_table.cc) lists the entries in evaluation order. A check reads facts
// and the KB and appends findings built by make_finding(); it never looks at another check's
// findings (rules/resolve.h merges and supersedes them). Internal to the rules layer.
#pragma once

#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

struct RuleContext {
  const Facts& f;
  const Kb& kb;
  Os os;
};

// The parts of Facts (probe/facts.h) a check may read, as bits of Check::reads.
namespace fact_area {
inline constexpr unsigned host = 1u << 0;            // Facts::host
inline constexpr unsigned driver = 1u << 1;          // Facts::driver
inline constexpr unsigned gpus = 1u << 2;            // Facts::gpus, Facts::gpu_count
inline constexpr unsigned toolkits = 1u << 3;        // Facts::toolkits
inline constexpr unsigned cudnn = 1u << 4;           // Facts::cudnn
inline constexpr unsigned env = 1u << 5;             // Facts::env
inline constexpr unsigned python = 1u << 6;          // Facts::python
inline constexpr unsigned system = 1u << 7;          // Facts::system
inline constexpr unsigned windows = 1u << 8;         // Facts::windows
inline constexpr unsigned loader = 1u << 9;          // Facts::loader
inline constexpr unsigned changes = 1u << 10;        // Facts::interrupted_changes
inline constexpr unsigned live_failures = 1u << 11;  // Facts::live_failures
}  // namespace fact_area

using CheckFn = void (*)(const RuleContext&, std::vector<Finding>&);

struct Check {
  std::string_view name;         // the function
  std::string_view checks;       // what it checks, in words
  CheckFn run;                   // the check
  std::vector<FindingId> emits;  // every id it may report
  unsigned reads = 0;            // fact_area bits
  // It may also report any id an error signature of the catalog names (kErrorSignatures).
  bool reports_signature_ids = false;
};

// Whether `check` may report `id` (its emits, or a signature's id when it reports those).
bool check_may_report(const Check& check, std::string_view id);
// Every id `check` may report, each once.
std::vector<FindingId> ids_reported_by(const Check& check);

}  // namespace dlenv
