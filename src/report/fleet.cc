// dlenv fleet: reading doctor reports and reducing each to its stack and findings.
#include "report/fleet.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "report/report.h"
#include "util/hostlist.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using json = nlohmann::json;

// The parts of a dlenv.report/1 document fleet reads, by their path of object keys (array
// levels left out); everything else is dropped while parsing, so a report's package lists,
// environment and system facts never become objects.
bool wanted(const std::vector<std::string_view>& path) {
  static const std::set<std::string_view> top{"schema", "host",   "driver",   "gpus",   "toolkits",
                                              "cudnn",  "python", "findings", "summary"};
  auto one_of = [](std::string_view k, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), k) != names.end();
  };
  if (path.size() == 1) return top.contains(path[0]);
  const std::string_view root = path[0], key = path[1];
  if (root == "host") return key == "hostname";
  if (root == "driver") return one_of(key, {"version", "kernel_module_version", "cuda_driver_version"});
  if (root == "gpus") return key == "name";
  if (root == "toolkits") return one_of(key, {"version", "active_via"});
  if (root == "cudnn") {
    return one_of(key, {"library_version", "header_version", "live_version", "cuda_major"});
  }
  if (root == "python") {
    return key == "frameworks" && (path.size() == 2 || one_of(path[2], {"name", "version", "cuda"}));
  }
  if (root == "findings") return one_of(key, {"id", "severity", "title"});
  return root == "summary";
}

// Parses a report keeping only what wanted() names. nlohmann's callback reports a
// container's start at the depth of its parent and a key at the depth of its object.
json parse_report(std::string_view text) {
  struct Frame {
    bool array;
    std::string key;
  };
  std::vector<Frame> frames;
  std::vector<std::string_view> path;
  auto cb = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    using E = json::parse_event_t;
    const auto d = static_cast<size_t>(depth);
    if (event == E::object_start || event == E::array_start) {
      frames.resize(d);
      frames.push_back({event == E::array_start, {}});
      return true;
    }
    if (event != E::key || d == 0) return true;
    frames.resize(d);
    frames[d - 1].key = parsed.get<std::string>();
    path.clear();
    for (const Frame& f : frames) {
      if (!f.array) path.push_back(f.key);
    }
    return wanted(path);
  };
  return json::parse(text.begin(), text.end(), cb, true, false);
}

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return {};
}

// A fact object's value ({"value": ..., "source": ...}); "" when unknown.
std::string fact_value(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return {};
  return string_at(*it, "value");
}

// "" or a report's text made safe for one line (control characters and newlines).
std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return std::string(trim(s));
}

std::string parse_error_text(const std::exception& e) {
  std::string what = e.what();
  // "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ..."
  if (auto close = what.find("] "); what.starts_with("[json.exception") && close != what.npos) {
    what = what.substr(close + 2);
  }
  if (what.find("unexpected end of input") != std::string::npos) {
    return "truncated: " + what;
  }
  return "not valid JSON: " + what;
}

FleetStack stack_of(const json& r) {
  FleetStack s;
  const json& d = r.at("driver");
  s.driver = one_line(string_at(d, "version"));
  s.cuda_driver = one_line(fact_value(d, "cuda_driver_version"));
  s.kernel_module = one_line(fact_value(d, "kernel_module_version"));
  std::map<std::string, int> gpu_models;
  if (auto it = r.find("gpus"); it != r.end() && it->is_array()) {
    for (const json& g : *it) {
      std::string name = g.is_object() ? one_line(fact_value(g, "name")) : "";
      ++gpu_models[name.empty() ? "unknown GPU" : name];
    }
  }
  for (const auto& [name, n] : gpu_models) s.gpus.push_back(std::to_string(n) + "x " + name);
  if (auto it = r.find("toolkits"); it != r.end() && it->is_array()) {
    for (const json& t : *it) {
      if (!t.is_object()) continue;
      std::string v = one_line(fact_value(t, "version"));
      auto via = t.find("active_via");
      bool active = via != t.end() && via->is_array() && !via->empty();
      s.toolkits.push_back((v.empty() ? "unknown" : v) + (active ? " (active)" : ""));
    }
  }
  if (auto it = r.find("cudnn"); it != r.end() && it->is_array()) {
    for (const json& c : *it) {
      if (!c.is_object()) continue;
      std::string v;
      for (const char* key : {"live_version", "library_version", "header_version"}) {
        if (v.empty()) v = one_line(fact_value(c, key));
      }
      std::string cuda = one_line(fact_value(c, "cuda_major"));
      s.cudnn.push_back((v.empty() ? "unknown" : v) + (cuda.empty() ? "" : " (CUDA " + cuda + ")"));
    }
  }
  std::set<std::string> frameworks;
  if (auto it = r.find("python"); it != r.end() && it->is_array()) {
    for (const json& e : *it) {
      auto fw = e.is_object() ? e.find("frameworks") : e.end();
      if (!e.is_object() || fw == e.end() || !fw->is_array()) continue;
      for (const json& f : *fw) {
        if (!f.is_object()) continue;
        std::string cuda = one_line(fact_value(f, "cuda"));
        frameworks.insert(one_line(string_at(f, "name")) + " " + one_line(string_at(f, "version")) +
                          (cuda.empty() ? " (CPU or unknown CUDA)" : " (CUDA " + cuda + ")"));
      }
    }
  }
  s.frameworks.assign(frameworks.begin(), frameworks.end());
  std::sort(s.toolkits.begin(), s.toolkits.end());
  std::sort(s.cudnn.begin(), s.cudnn.end());
  return s;
}

int severity_rank(std::string_view s) {
  return s == "error" ? 0 : s == "warning" ? 1 : 2;
}

}  // namespace

std::vector<std::string> fleet_stack_fields() {
  return {"driver", "cuda_driver", "kernel_module", "gpus", "toolkits", "cudnn", "frameworks"};
}

std::vector<std::string> fleet_stack_values(const FleetStack& s, std::string_view field) {
  if (field == "driver") return {s.driver};
  if (field == "cuda_driver") return {s.cuda_driver};
  if (field == "kernel_module") return {s.kernel_module};
  if (field == "gpus") return s.gpus;
  if (field == "toolkits") return s.toolkits;
  if (field == "cudnn") return s.cudnn;
  if (field == "frameworks") return s.frameworks;
  return {};
}

std::string Fleet::hostlist(const std::vector<size_t>& node_indices) const {
  std::vector<std::string> names;
  names.reserve(node_indices.size());
  for (size_t i : node_indices) names.push_back(nodes[i].name);
  return compress_hostlist(names);
}

void FleetBuilder::skip(std::string source, std::string reason) {
  skipped_.push_back({std::move(source), std::move(reason)});
}

void FleetBuilder::add(std::string_view document, std::string_view source,
                       std::string_view fallback_name) {
  json r;
  try {
    r = parse_report(document);
  } catch (const json::exception& e) {
    skip(std::string(source), parse_error_text(e));
    return;
  }
  if (!r.is_object()) {
    skip(std::string(source), "not a dlenv report: the document is not a JSON object");
    return;
  }
  std::string schema = string_at(r, "schema");
  if (schema != kReportSchema) {
    skip(std::string(source),
         schema.empty() ? "not a dlenv report: no \"schema\" (expected " +
                              std::string(kReportSchema) + ")"
                        : "unsupported schema \"" + one_line(schema) + "\" (expected " +
                              std::string(kReportSchema) + ")");
    return;
  }
  for (const char* part : {"driver", "host"}) {
    if (!r.contains(part) || !r[part].is_object()) {
      skip(std::string(source), std::string("incomplete report: no \"") + part + "\" object");
      return;
    }
  }
  if (!r.contains("findings") || !r["findings"].is_array()) {
    skip(std::string(source), "incomplete report: no \"findings\" list");
    return;
  }
  FleetStack stack = stack_of(r);
  auto [it, inserted] = stack_index_.try_emplace(std::move(stack), stacks_.size());
  if (inserted) stacks_.push_back(&it->first);
  const auto node = static_cast<uint32_t>(nodes_.size());
  bool has_error = false;
  for (const json& f : r["findings"]) {
    if (!f.is_object()) continue;
    std::string id = one_line(string_at(f, "id"));
    if (id.empty()) continue;
    std::string severity = string_at(f, "severity");
    if (severity != "error" && severity != "warning") severity = "info";
    has_error = has_error || severity == "error";
    FindingNodes& fn = findings_[id];
    if (fn.nodes.empty()) {
      fn.severity = severity;
      fn.title = one_line(string_at(f, "title"));
    } else if (severity_rank(severity) < severity_rank(fn.severity)) {
      fn.severity = severity;  // the worst any node reports
    }
    if (fn.nodes.empty() || fn.nodes.back() != node) fn.nodes.push_back(node);
  }
  std::string host = one_line(fact_value(r["host"], "hostname"));
  if (host == "<host>") host.clear();  // --redact's placeholder
  nodes_.push_back({std::move(host), std::string(fallback_name), std::string(source), it->second,
                    has_error});
}

Fleet FleetBuilder::finish() && {
  Fleet fleet;
  // Names: the host name, unless several reports share it and their files tell them apart.
  std::unordered_map<std::string, size_t> host_count;
  for (const Pending& p : nodes_) {
    if (!p.host.empty()) ++host_count[p.host];
  }
  std::unordered_map<std::string, size_t> taken;
  fleet.nodes.reserve(nodes_.size());
  for (const Pending& p : nodes_) {
    std::string name = p.host;
    if (name.empty() || ((names_from_files_ || host_count[name] > 1) && !p.fallback.empty())) {
      name = p.fallback;
    }
    if (name.empty()) name = p.source;
    if (size_t n = ++taken[name]; n > 1) name += "#" + std::to_string(n);
    fleet.nodes.push_back({std::move(name), p.host, p.source, p.stack, p.has_error});
    if (p.has_error) ++fleet.nodes_with_errors;
  }
  // Stacks, fewest nodes first (the outliers), then by first node.
  std::vector<std::vector<size_t>> members(stacks_.size());
  for (size_t i = 0; i < fleet.nodes.size(); ++i) members[fleet.nodes[i].stack].push_back(i);
  std::vector<size_t> order(stacks_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return members[a].size() < members[b].size();
  });
  std::vector<size_t> new_index(stacks_.size());
  for (size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = k;
    fleet.stacks.push_back({*stacks_[order[k]], std::move(members[order[k]])});
  }
  for (FleetNode& n : fleet.nodes) n.stack = new_index[n.stack];
  for (const std::string& field : fleet_stack_fields()) {
    for (const FleetStackGroup& g : fleet.stacks) {
      if (fleet_stack_values(g.stack, field) !=
          fleet_stack_values(fleet.stacks.front().stack, field)) {
        fleet.drift.push_back(field);
        break;
      }
    }
  }
  for (auto& [id, fn] : findings_) {
    FleetFinding f{id, fn.severity, fn.title, {}};
    f.nodes.assign(fn.nodes.begin(), fn.nodes.end());
    fleet.findings.push_back(std::move(f));
  }
  std::stable_sort(fleet.findings.begin(), fleet.findings.end(),
                   [](const FleetFinding& a, const FleetFinding& b) {
                     int ra = severity_rank(a.severity), rb = severity_rank(b.severity);
                     if (ra != rb) return ra < rb;
                     return a.nodes.size() < b.nodes.size();
                   });
  fleet.skipped = std::move(skipped_);
  return fleet;
}

// --- Inputs ---------------------------------------------------------------------------

namespace {

std::string file_stem(std::string_view path) {
  std::string base = path_basename(path);
  if (base.ends_with(".json")) base.resize(base.size() - 5);
  return base;
}

// Splits `text` into documents, each starting at a line that begins with '{'.
std::vector<std::string_view> split_documents(std::string_view text) {
  std::vector<std::string_view> docs;
  size_t start = std::string_view::npos;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '{') {
      if (start != std::string_view::npos) docs.push_back(text.substr(start, pos - start));
      start = pos;
    } else if (start == std::string_view::npos && !trim(text.substr(pos, 1)).empty()) {
      start = pos;  // text before the first '{' line: a document of its own (and invalid)
    }
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (start != std::string_view::npos) docs.push_back(text.substr(start));
  return docs;
}

}  // namespace

void add_report_stream(FleetBuilder& builder, std::istream& in, std::string_view source,
                       size_t max_document_bytes) {
  std::string doc;
  bool too_big = false;
  size_t count = 0;
  auto flush = [&] {
    if (doc.empty() && !too_big) return;
    ++count;
    std::string name = std::string(source) + ":" + std::to_string(count);
    if (too_big) {
      builder.skip(name, "larger than " + std::to_string(max_document_bytes >> 20) + " MiB");
    } else if (!trim(doc).empty()) {
      builder.add(doc, name, "");
    } else {
      --count;
    }
    doc.clear();
    too_big = false;
  };
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '{') flush();
    if (too_big) continue;
    if (doc.size() + line.size() + 1 > max_document_bytes) {
      too_big = true;
      doc.clear();
      doc.shrink_to_fit();
      continue;
    }
    doc += line;
    doc += '\n';
  }
  flush();
}

void add_report_path(FleetBuilder& builder, const FileSystem& fs, const std::string& path,
                     size_t max_document_bytes) {
  auto st = fs.stat(path);
  if (!st) {
    builder.skip(path, "no such file or directory");
    return;
  }
  if (st->type == FileType::directory) {
    auto entries = fs.list_dir(path);
    if (!entries) {
      builder.skip(path, entries.error().message);
      return;
    }
    for (const DirEntry& e : *entries) {
      if (!e.name.ends_with(".json")) continue;
      std::string file = path_join(path, e.name);
      if (fs.is_file(file)) add_report_path(builder, fs, file, max_document_bytes);
    }
    return;
  }
  auto text = fs.read_file(path, max_document_bytes);
  if (!text) {
    builder.skip(path, text.error().message);
    return;
  }
  auto docs = split_documents(*text);
  if (docs.empty()) {
    builder.skip(path, "empty file");
    return;
  }
  if (docs.size() == 1) {
    builder.add(docs[0], path, file_stem(path));
    return;
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    builder.add(docs[i], path + ":" + std::to_string(i + 1), "");
  }
}

}  // namespace dlenv
