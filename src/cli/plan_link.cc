#include "cli/plan_link.h"

#include <map>

#include "actions/plan.h"

namespace dlenv {

void attach_plan_fixes(const Facts& facts, const Kb& kb, std::vector<Finding>& findings) {
  std::map<std::string, std::optional<Plan>> plans;  // one plan per framework
  for (auto& f : findings) {
    // The framework whose build choice fixes it (the catalog's plan_framework).
    const FindingInfo* info = kb.finding(f.id);
    if (!info || info->plan_framework.empty()) continue;
    const std::string& fw = info->plan_framework;
    if (!plans.count(fw)) {
      PlanInputs in;
      auto spec = parse_framework_spec(fw);
      if (!spec) {
        plans[fw] = std::nullopt;
        continue;
      }
      in.frameworks.push_back(*spec);
      plan_inputs_from_facts(facts, /*os_given=*/false, in);
      auto plan = make_plan(in, kb);
      plans[fw] = plan ? std::optional<Plan>(std::move(*plan)) : std::nullopt;
    }
    const auto& plan = plans[fw];
    if (!plan || plan->options.empty() || plan->options[0].frameworks.empty()) continue;
    const PlanOption& best = plan->options[0];
    const FrameworkChoice& c = best.frameworks[0];
    std::string text = "`dlenv plan` for this machine picks " + c.framework + " " + c.version +
                       " (" + c.build + ", CUDA " + best.cuda.str() +
                       "; driver >= " + best.min_driver.str() + ")";
    if (!best.confident) text += " — rests on unconfirmed knowledge-base rows";
    FixStep step;
    step.text = text;
    if (!c.install.empty()) {
      step.command = c.install[0];
      step.shell = facts.host.os && *facts.host.os == "windows" ? "powershell" : "sh";
    }
    f.fix.push_back(std::move(step));
  }
}

}  // namespace dlenv
