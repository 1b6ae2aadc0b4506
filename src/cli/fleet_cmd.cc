#include "cli/fleet_cmd.h"

#include <iostream>

#include "cli/cli.h"
#include "cli/version_info.h"
#include "report/fleet.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// A report larger than this is skipped (a doctor report is tens of KiB; with --deep and
// many environments, a few MiB).
constexpr size_t kMaxReportBytes = 64u << 20;

struct FleetOptions {
  std::vector<std::string> inputs;
  bool json = false;
  bool markdown = false;
  bool prometheus = false;
  bool allow_drift = false;
  std::string name_from = "host";
};

std::vector<std::string> name_sources() {
  return {"host", "file"};
}

int run_fleet(const FleetOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
  FleetBuilder builder(o.name_from == "file");
  auto fs = make_real_filesystem();
  for (const std::string& input : o.inputs) {
    if (input == "-") {
      add_report_stream(builder, in, "stdin", kMaxReportBytes);
    } else {
      add_report_path(builder, *fs, input, kMaxReportBytes);
    }
  }
  Fleet fleet = std::move(builder).finish();
  if (o.json) {
    out << render_fleet_json(fleet, version_number());
  } else if (o.markdown) {
    out << render_fleet_markdown(fleet);
  } else if (o.prometheus) {
    out << render_fleet_prometheus(fleet);
  } else {
    out << render_fleet_text(fleet);
  }
  if (fleet.nodes.empty()) {
    err << "dlenv fleet: no report could be read from " << join(o.inputs, ", ") << "\n";
    return kExitToolFailed;
  }
  if (fleet.nodes_with_errors > 0) return kExitFindings;
  if (!fleet.uniform() && !o.allow_drift) return kExitFindings;
  return kExitOk;
}

}  // namespace

CommandRunner add_fleet_command(CLI::App& app, Choices& choices, std::istream& in,
                                std::ostream& out, std::ostream& err) {
  auto o = std::make_shared<FleetOptions>();
  auto* fleet = app.add_subcommand(
      "fleet",
      "Merge the `dlenv doctor --json` reports of many nodes: nodes grouped by identical stack, "
      "the drift between stacks, each finding with the nodes it hits (exit 1 on an error "
      "finding or when the stacks differ)");
  fleet
      ->add_option("reports", o->inputs,
                   "Report files, a directory of *.json reports, or - for reports on standard "
                   "input (concatenated, or one per line)")
      ->required()
      ->type_name("FILE|DIR|-");
  auto* json = fleet->add_flag("--json", o->json, "Machine-readable (schema dlenv.fleet/1)");
  auto* md = fleet->add_flag("--markdown", o->markdown, "Markdown, to paste into an issue")
                 ->excludes(json);
  fleet->add_flag("--prometheus", o->prometheus, "Prometheus text format (dlenv_fleet_* gauges)")
      ->excludes(json)
      ->excludes(md);
  choices.attach(
      fleet
          ->add_option("--name-from", o->name_from,
                       "Node names: host (the report's host name; the file name where it is "
                       "redacted or shared by several reports) or file (the file name, e.g. "
                       "Kubernetes pods)")
          ->type_name("host|file"),
      name_sources);
  fleet->add_flag("--allow-drift", o->allow_drift,
                  "Exit 0 when the stacks differ (error findings still exit 1)");
  return [=, &in, &out, &err]() -> std::optional<int> {
    if (!*fleet) return std::nullopt;
    return run_fleet(*o, in, out, err);
  };
}

}  // namespace dlenv
