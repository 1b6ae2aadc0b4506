// dlenv fleet's renderers: text, Markdown, JSON "dlenv.fleet/1", Prometheus.
#include <algorithm>
#include <string>
#include <vector>

#include "report/fleet.h"
#include "report/internal.h"
#include "report/prometheus_text.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace report_detail;

std::string field_label(std::string_view field) {
  if (field == "driver") return "driver";
  if (field == "cuda_driver") return "CUDA driver API";
  if (field == "kernel_module") return "kernel module";
  if (field == "gpus") return "GPUs";
  if (field == "toolkits") return "CUDA toolkits";
  if (field == "cudnn") return "cuDNN copies";
  if (field == "frameworks") return "frameworks";
  return std::string(field);
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "3 stacks across 64 nodes; 2 reports skipped"
std::string headline(const Fleet& fleet) {
  std::string s = plural(fleet.stacks.size(), "stack", "stacks") + " across " +
                  plural(fleet.nodes.size(), "node", "nodes");
  if (!fleet.skipped.empty()) {
    s += "; " + plural(fleet.skipped.size(), "report", "reports") + " skipped";
  }
  return s;
}

std::string drift_line(const Fleet& fleet) {
  if (fleet.nodes.empty()) return "No report could be read.";
  if (fleet.uniform()) return "Uniform: every node has the same stack.";
  std::vector<std::string> labels;
  for (const auto& f : fleet.drift) labels.push_back(field_label(f));
  return "Not uniform: " + join(labels, ", ") + " differ between stacks (marked *).";
}

std::string stack_title(const Fleet& fleet, size_t k) {
  return "stack " + std::to_string(k + 1) + " (" +
         plural(fleet.stacks[k].nodes.size(), "node", "nodes") + ")";
}

// The cell lines of one field of one stack ("-" for nothing, "unknown" for an empty value).
std::vector<std::string> cell_lines(const FleetStack& s, std::string_view field) {
  std::vector<std::string> out;
  for (const std::string& v : fleet_stack_values(s, field))
    out.push_back(v.empty() ? "unknown" : clean(v));
  if (out.empty()) out.push_back("-");
  return out;
}

bool is_drift(const Fleet& fleet, std::string_view field) {
  return std::find(fleet.drift.begin(), fleet.drift.end(), field) != fleet.drift.end();
}

// Lines of `s` no longer than `width` columns, broken after commas (a hostlist).
std::vector<std::string> wrap_at_commas(const std::string& s, size_t width) {
  std::vector<std::string> out;
  std::string line;
  for (const std::string& part : split(s, ',')) {
    std::string piece = line.empty() ? part : "," + part;
    if (!line.empty() && display_width(line) + display_width(piece) > width) {
      out.push_back(line + ",");
      line = part;
    } else {
      line += piece;
    }
  }
  if (!line.empty() || out.empty()) out.push_back(line);
  return out;
}

// The drift table: a row per field, a column per stack, at most four stacks per block.
void drift_table(const Fleet& fleet, std::string& out) {
  constexpr size_t kPerBlock = 4;
  constexpr size_t kNodesWidth = 40;
  std::vector<std::string> labels{"nodes"};
  for (const auto& f : fleet_stack_fields()) {
    labels.push_back((is_drift(fleet, f) ? "* " : "  ") + field_label(f));
  }
  labels[0] = "  nodes";
  size_t label_width = 0;
  for (const auto& l : labels) label_width = std::max(label_width, display_width(l));
  for (size_t first = 0; first < fleet.stacks.size(); first += kPerBlock) {
    size_t last = std::min(first + kPerBlock, fleet.stacks.size());
    // rows[r][c]: the lines of row r (0: nodes, then the fields) in column c.
    std::vector<std::vector<std::vector<std::string>>> rows;
    std::vector<std::string> titles;
    std::vector<std::vector<std::string>> nodes_row;
    for (size_t k = first; k < last; ++k) {
      titles.push_back(stack_title(fleet, k));
      nodes_row.push_back(wrap_at_commas(fleet.hostlist(fleet.stacks[k].nodes), kNodesWidth));
    }
    rows.push_back(nodes_row);
    for (const auto& f : fleet_stack_fields()) {
      std::vector<std::vector<std::string>> row;
      for (size_t k = first; k < last; ++k) row.push_back(cell_lines(fleet.stacks[k].stack, f));
      rows.push_back(row);
    }
    std::vector<size_t> widths;
    for (size_t c = 0; c < titles.size(); ++c) {
      size_t w = display_width(titles[c]);
      for (const auto& row : rows) {
        for (const auto& line : row[c]) w = std::max(w, display_width(line));
      }
      widths.push_back(w);
    }
    auto emit = [&](const std::string& label, const std::vector<std::string>& cells) {
      std::string line = label + std::string(label_width - display_width(label), ' ');
      for (size_t c = 0; c < cells.size(); ++c) {
        line += "  " + cells[c];
        if (c + 1 < cells.size()) line += std::string(widths[c] - display_width(cells[c]), ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    };
    out += "\n";
    emit("", titles);
    for (size_t r = 0; r < rows.size(); ++r) {
      size_t height = 0;
      for (const auto& cell : rows[r]) height = std::max(height, cell.size());
      for (size_t i = 0; i < height; ++i) {
        std::vector<std::string> cells;
        for (const auto& cell : rows[r]) cells.push_back(i < cell.size() ? cell[i] : "");
        emit(i == 0 ? labels[r] : "", cells);
      }
    }
  }
}

}  // namespace

std::string render_fleet_text(const Fleet& fleet) {
  std::string out = headline(fleet) + "\n" + drift_line(fleet) + "\n";
  if (!fleet.stacks.empty()) drift_table(fleet, out);
  if (!fleet.findings.empty()) {
    out += "\nFindings (" + std::to_string(fleet.findings.size()) +
           "), error first, then those on the fewest nodes:\n";
    size_t id_width = 0;
    for (const auto& f : fleet.findings) id_width = std::max(id_width, display_width(clean(f.id)));
    for (const auto& f : fleet.findings) {
      std::string id = clean(f.id);
      out += "  " + f.severity + std::string(9 - f.severity.size(), ' ') + id +
             std::string(id_width - display_width(id), ' ') + "  " +
             plural(f.nodes.size(), "node:", "nodes:") + " " + fleet.hostlist(f.nodes) + "\n";
      if (!f.title.empty()) out += std::string(11, ' ') + clean(f.title) + "\n";
    }
  }
  if (!fleet.skipped.empty()) {
    out += "\nSkipped " + plural(fleet.skipped.size(), "report", "reports") + ":\n";
    for (const auto& s : fleet.skipped)
      out += "  " + clean(s.source) + ": " + clean(s.reason) + "\n";
  }
  return out;
}

std::string render_fleet_markdown(const Fleet& fleet) {
  std::string out = "## dlenv fleet: " + headline(fleet) + "\n\n" + drift_line(fleet) + "\n";
  if (!fleet.stacks.empty()) {
    out += "\n| |";
    for (size_t k = 0; k < fleet.stacks.size(); ++k) out += " " + stack_title(fleet, k) + " |";
    out += "\n|---|";
    for (size_t k = 0; k < fleet.stacks.size(); ++k) out += "---|";
    out += "\n| nodes |";
    for (const auto& g : fleet.stacks) out += " " + md_text(fleet.hostlist(g.nodes)) + " |";
    out += "\n";
    for (const auto& f : fleet_stack_fields()) {
      out += "| " + std::string(is_drift(fleet, f) ? "\\* " : "") + field_label(f) + " |";
      for (const auto& g : fleet.stacks) {
        std::vector<std::string> cells;
        for (const auto& line : cell_lines(g.stack, f)) cells.push_back(md_text(line));
        out += " " + join(cells, "<br>") + " |";
      }
      out += "\n";
    }
  }
  if (!fleet.findings.empty()) {
    out += "\n| severity | finding | nodes | title |\n|---|---|---|---|\n";
    for (const auto& f : fleet.findings) {
      out += "| " + f.severity + " | " + md_text(f.id) + " | " + md_text(fleet.hostlist(f.nodes)) +
             " (" + std::to_string(f.nodes.size()) + ") | " + md_text(f.title) + " |\n";
    }
  }
  if (!fleet.skipped.empty()) {
    out += "\nSkipped reports:\n\n";
    for (const auto& s : fleet.skipped)
      out += "- " + md_text(s.source) + ": " + md_text(s.reason) + "\n";
  }
  return out;
}

nlohmann::ordered_json fleet_json(const Fleet& fleet, const std::string& tool_version) {
  using json = nlohmann::ordered_json;
  auto names = [&](const std::vector<size_t>& idx) {
    json a = json::array();
    for (size_t i : idx) a.push_back(fleet.nodes[i].name);
    return a;
  };
  auto scalar = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
  json j;
  j["schema"] = kFleetSchema;
  j["tool"] = json{{"version", tool_version}};
  j["summary"] = json{{"nodes", fleet.nodes.size()},
                      {"stacks", fleet.stacks.size()},
                      {"uniform", fleet.uniform()},
                      {"drift", fleet.drift},
                      {"nodes_with_errors", fleet.nodes_with_errors},
                      {"skipped", fleet.skipped.size()}};
  json stacks = json::array();
  for (const auto& g : fleet.stacks) {
    const FleetStack& s = g.stack;
    stacks.push_back(json{{"node_count", g.nodes.size()},
                          {"hostlist", fleet.hostlist(g.nodes)},
                          {"nodes", names(g.nodes)},
                          {"driver", scalar(s.driver)},
                          {"cuda_driver", scalar(s.cuda_driver)},
                          {"kernel_module", scalar(s.kernel_module)},
                          {"gpus", s.gpus},
                          {"toolkits", s.toolkits},
                          {"cudnn", s.cudnn},
                          {"frameworks", s.frameworks}});
  }
  j["stacks"] = stacks;
  json findings = json::array();
  for (const auto& f : fleet.findings) {
    findings.push_back(json{{"id", f.id},
                            {"severity", f.severity},
                            {"title", f.title},
                            {"node_count", f.nodes.size()},
                            {"hostlist", fleet.hostlist(f.nodes)},
                            {"nodes", names(f.nodes)}});
  }
  j["findings"] = findings;
  json nodes = json::array();
  for (const auto& n : fleet.nodes) {
    nodes.push_back(json{{"name", n.name},
                         {"host", scalar(n.host)},
                         {"source", n.source},
                         {"stack", n.stack + 1},
                         {"has_error", n.has_error}});
  }
  j["nodes"] = nodes;
  json skipped = json::array();
  for (const auto& s : fleet.skipped)
    skipped.push_back(json{{"source", s.source}, {"reason", s.reason}});
  j["skipped"] = skipped;
  return j;
}

std::string render_fleet_json(const Fleet& fleet, const std::string& tool_version) {
  return json_text(fleet_json(fleet, tool_version), 2) + "\n";
}

std::string render_fleet_prometheus(const Fleet& fleet) {
  PrometheusWriter w;
  w.gauge("dlenv_fleet_nodes", "Nodes whose report was read.");
  w.sample("dlenv_fleet_nodes", {}, static_cast<double>(fleet.nodes.size()));
  w.gauge("dlenv_fleet_stacks", "Distinct stacks among the nodes (1: uniform).");
  w.sample("dlenv_fleet_stacks", {}, static_cast<double>(fleet.stacks.size()));
  w.gauge("dlenv_fleet_reports_skipped", "Reports that could not be read (invalid, truncated).");
  w.sample("dlenv_fleet_reports_skipped", {}, static_cast<double>(fleet.skipped.size()));
  w.gauge("dlenv_fleet_nodes_with_errors", "Nodes with at least one error finding.");
  w.sample("dlenv_fleet_nodes_with_errors", {}, static_cast<double>(fleet.nodes_with_errors));
  w.gauge("dlenv_fleet_stack_nodes",
          "Nodes of each stack (numbered as in the text output: fewest nodes first), with its "
          "driver, CUDA driver API and kernel module versions.");
  for (size_t k = 0; k < fleet.stacks.size(); ++k) {
    const FleetStack& s = fleet.stacks[k].stack;
    w.sample("dlenv_fleet_stack_nodes",
             {{"stack", std::to_string(k + 1)},
              {"driver", s.driver},
              {"cuda_driver", s.cuda_driver},
              {"kernel_module", s.kernel_module}},
             static_cast<double>(fleet.stacks[k].nodes.size()));
  }
  w.gauge("dlenv_fleet_node_info", "One per node (1): its name and stack number.");
  for (const auto& n : fleet.nodes) {
    w.sample("dlenv_fleet_node_info", {{"node", n.name}, {"stack", std::to_string(n.stack + 1)}},
             1);
  }
  w.gauge("dlenv_fleet_finding_nodes", "Nodes each finding hits, by id and severity.");
  for (const auto& f : fleet.findings) {
    w.sample("dlenv_fleet_finding_nodes", {{"id", f.id}, {"severity", f.severity}},
             static_cast<double>(f.nodes.size()));
  }
  return w.text();
}

}  // namespace dlenv
