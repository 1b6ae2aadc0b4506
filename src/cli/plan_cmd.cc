#include "cli/plan_cmd.h"

#include <ostream>

#include "actions/plan.h"
#include "cli/cli.h"
#include "kb/kb.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {

int run_plan(const PlanCliOptions& o, std::ostream& out, std::ostream& err) {
  auto kb = o.kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(o.kb_dir);
  if (!kb) {
    err << "dlenv plan: knowledge base: " << kb.error().message << "\n";
    return kExitToolFailed;
  }
  PlanInputs in;
  for (const auto& f : o.frameworks) {
    auto spec = parse_framework_spec(f);
    if (!spec) {
      err << "dlenv plan: " << spec.error().message << "\n";
      return kExitUsage;
    }
    in.frameworks.push_back(*spec);
  }
  if (!o.gpu.empty() && !o.cc.empty()) {
    err << "dlenv plan: give --gpu or --cc, not both\n";
    return kExitUsage;
  }
  if (!o.gpu.empty()) {
    auto g = (*kb)->gpu_by_name(o.gpu);
    if (!g) {
      err << "dlenv plan: --gpu '" << o.gpu
          << "': not in the knowledge base (kb/gpus.json); give its compute capability with "
             "--cc X.Y\n";
      return kExitUsage;
    }
    in.cc = g->compute_capability;
    in.gpu_name = o.gpu;
    in.cc_source = "gpus.json: " + g->name;
  }
  if (!o.cc.empty()) {
    in.cc = Version::parse(o.cc);
    if (!in.cc || in.cc->parts().size() != 2) {
      err << "dlenv plan: --cc '" << o.cc << "': expected a compute capability such as 8.9\n";
      return kExitUsage;
    }
    in.cc_source = "--cc";
  }
  if (!o.driver.empty()) {
    in.driver = Version::parse(o.driver);
    if (!in.driver) {
      err << "dlenv plan: --driver '" << o.driver << "': expected a version such as 535.104.05\n";
      return kExitUsage;
    }
    in.driver_source = "--driver";
  }
  bool os_given = !o.os.empty();
  if (os_given) {
    auto os = parse_plan_os(o.os);
    if (!os) {
      err << "dlenv plan: --os must be one of " << join(plan_os_names(), ", ") << ", not '" << o.os
          << "'\n";
      return kExitUsage;
    }
    in.os = *os;
    in.os_source = "--os";
  }
  if (!o.python.empty()) {
    in.python = Version::parse(o.python);
    if (!in.python) {
      err << "dlenv plan: --python '" << o.python << "': expected a version such as 3.11\n";
      return kExitUsage;
    }
    in.python = in.python->truncated(2);
    in.python_source = "--python";
  }
  bool missing = !in.cc || !in.driver || !os_given || !in.python;
  if (missing && !o.no_probe) {
    auto fs = make_real_filesystem();
    auto env = make_process_env();
#ifdef _WIN32
    Os host = Os::windows;
#else
    Os host = Os::linux;
#endif
    ProbeContext ctx{*fs, *env, **kb, host, true, "process environment"};
    ProbeOptions po;
    Facts facts = collect_facts(ctx, po);
    plan_inputs_from_facts(facts, os_given, in);
  }
  auto plan = make_plan(in, **kb);
  if (!plan) {
    err << "dlenv plan: " << plan.error().message << "\n";
    return kExitToolFailed;
  }
  out << (o.json ? render_plan_json(*plan) : render_plan_text(*plan));
  return plan->conflicts.empty() && !plan->options.empty() ? kExitOk : kExitFindings;
}

}  // namespace dlenv
