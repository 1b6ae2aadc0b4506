// dlenv fleet: reading doctor reports and reducing each to its stack and findings.
#include "report/fleet.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "platform/parallel.h"
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
  if (root == "driver")
    return one_of(key, {"version", "kernel_module_version", "cuda_driver_version"});
  if (root == "gpus") return key == "name";
  if (root == "toolkits") return one_of(key, {"version", "active_via"});
  if (root == "cudnn") {
    return one_of(key, {"library_version", "header_version", "live_version", "cuda_major"});
  }
  if (root == "python") {
    return key == "frameworks" &&
           (path.size() == 2 || one_of(path[2], {"name", "version", "cuda"}));
  }
  if (root == "findings") return one_of(key, {"id", "severity", "title"});
  return root == "summary";
}

// Builds the parts of a report that wanted() names, straight from the parser's events: the
// rest is lexed and dropped without becoming a value. A syntax error is kept (message and
// byte position) rather than thrown.
class ReportSax final : public json::json_sax_t {
 public:
  json result;
  std::string error;      // "" when the document parsed
  size_t error_byte = 0;  // nlohmann's position: from 1, size + 1 past the end

  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override { return value(v); }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool string(string_t& v) override { return value(std::move(v)); }
  bool binary(binary_t&) override { return value(nullptr); }  // not produced by JSON text
  bool start_object(size_t) override { return open(json::value_t::object); }
  bool start_array(size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (skip_depth_ > 0) return true;
    key_ = std::move(k);
    path_.assign(keys_.begin(), keys_.end());
    path_.push_back(key_);
    skip_next_ = !wanted(path_);
    return true;
  }
  bool parse_error(size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error = e.what();
    error_byte = position;
    return false;
  }

 private:
  struct Frame {
    json* node;
    bool keyed;  // entered under a key (its key is on keys_)
  };
  // Where the next value goes: the document, the open array's end or the open object's key.
  json* slot() {
    if (frames_.empty()) return &result;
    json* top = frames_.back().node;
    if (top->is_array()) return &top->emplace_back();
    return &(*top)[key_];
  }
  template <typename V>
  bool value(V&& v) {
    if (skip_depth_ > 0) return true;
    if (skip_next_) {
      skip_next_ = false;
      return true;
    }
    *slot() = json(std::forward<V>(v));
    return true;
  }
  bool open(json::value_t type) {
    if (skip_depth_ > 0 || skip_next_) {
      skip_next_ = false;
      ++skip_depth_;
      return true;
    }
    const bool keyed = !frames_.empty() && frames_.back().node->is_object();
    json* node = slot();
    *node = json(type);
    if (keyed) keys_.push_back(key_);
    frames_.push_back({node, keyed});
    return true;
  }
  bool close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    if (frames_.empty()) return true;
    if (frames_.back().keyed) keys_.pop_back();
    frames_.pop_back();
    return true;
  }

  std::vector<Frame> frames_;
  std::vector<std::string> keys_;  // the object keys down to the open container
  std::vector<std::string_view> path_;
  std::string key_;
  bool skip_next_ = false;
  size_t skip_depth_ = 0;
};

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

// Why `document` is not JSON, from the parser's message and position. An error where the
// input ran out (past the last non-blank byte: inside a string, a number, an open object) is
// a truncated report, as left by a node that died while writing it; any other is "not valid
// JSON".
std::string parse_error_text(std::string what, size_t byte, std::string_view document) {
  // "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error ..."
  if (auto close = what.find("] "); what.starts_with("[json.exception") && close != what.npos) {
    what = what.substr(close + 2);
  }
  const size_t last = document.find_last_not_of(" \t\r\n");
  // `byte` counts from 1; reading past the end gives size + 1.
  if (last == std::string_view::npos || byte > last + 1) return "truncated: " + what;
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

// One report reduced to what fleet keeps, or why it was skipped; made on any thread.
struct FleetBuilder::Parsed {
  struct Finding {
    std::string id, severity, title;
  };
  std::string skip_reason;  // "" when the report was read
  FleetStack stack;
  std::string host;
  std::vector<Finding> findings;
  bool has_error = false;
};

namespace {

FleetBuilder::Parsed parse_node(std::string_view document) {
  FleetBuilder::Parsed p;
  ReportSax sax;
  json::sax_parse(document.begin(), document.end(), &sax);
  if (!sax.error.empty()) {
    p.skip_reason = parse_error_text(std::move(sax.error), sax.error_byte, document);
    return p;
  }
  const json& r = sax.result;
  if (!r.is_object()) {
    p.skip_reason = "not a dlenv report: the document is not a JSON object";
    return p;
  }
  std::string schema = string_at(r, "schema");
  if (schema != kReportSchema) {
    p.skip_reason = schema.empty() ? "not a dlenv report: no \"schema\" (expected " +
                                         std::string(kReportSchema) + ")"
                                   : "unsupported schema \"" + one_line(schema) + "\" (expected " +
                                         std::string(kReportSchema) + ")";
    return p;
  }
  for (const char* part : {"driver", "host"}) {
    if (!r.contains(part) || !r[part].is_object()) {
      p.skip_reason = std::string("incomplete report: no \"") + part + "\" object";
      return p;
    }
  }
  if (!r.contains("findings") || !r["findings"].is_array()) {
    p.skip_reason = "incomplete report: no \"findings\" list";
    return p;
  }
  p.stack = stack_of(r);
  for (const json& f : r["findings"]) {
    if (!f.is_object()) continue;
    std::string id = one_line(string_at(f, "id"));
    if (id.empty()) continue;
    std::string severity = string_at(f, "severity");
    if (severity != "error" && severity != "warning") severity = "info";
    p.has_error = p.has_error || severity == "error";
    p.findings.push_back({std::move(id), std::move(severity), one_line(string_at(f, "title"))});
  }
  p.host = one_line(fact_value(r["host"], "hostname"));
  if (p.host == "<host>") p.host.clear();  // --redact's placeholder
  return p;
}

}  // namespace

FleetBuilder::FleetBuilder(bool names_from_files) : names_from_files_(names_from_files) {}
FleetBuilder::~FleetBuilder() = default;

void FleetBuilder::skip(std::string source, std::string reason) {
  parse_queued();  // keeps the skipped reports in input order
  skipped_.push_back({std::move(source), std::move(reason)});
}

void FleetBuilder::add(std::string_view document, std::string_view source,
                       std::string_view fallback_name) {
  queued_bytes_ += document.size();
  queued_.push_back({std::string(document), std::string(source), std::string(fallback_name)});
  if (queued_.size() >= kQueuedReports || queued_bytes_ >= kQueuedBytes) parse_queued();
}

void FleetBuilder::parse_queued() {
  if (queued_.empty()) return;
  std::vector<Parsed> parsed(queued_.size());
  for_each_range(
      queued_.size(),
      [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) parsed[i] = parse_node(queued_[i].document);
      },
      16);
  for (size_t i = 0; i < parsed.size(); ++i) merge(std::move(parsed[i]), queued_[i]);
  queued_.clear();
  queued_bytes_ = 0;
}

void FleetBuilder::merge(Parsed&& p, Queued& q) {
  if (!p.skip_reason.empty()) {
    skipped_.push_back({std::move(q.source), std::move(p.skip_reason)});
    return;
  }
  auto [it, inserted] = stack_index_.try_emplace(std::move(p.stack), stacks_.size());
  if (inserted) stacks_.push_back(&it->first);
  const auto node = static_cast<uint32_t>(nodes_.size());
  for (Parsed::Finding& f : p.findings) {
    FindingNodes& fn = findings_[f.id];
    if (fn.nodes.empty()) {
      fn.severity = f.severity;
      fn.title = std::move(f.title);
    } else if (severity_rank(f.severity) < severity_rank(fn.severity)) {
      fn.severity = f.severity;  // the worst any node reports
    }
    if (fn.nodes.empty() || fn.nodes.back() != node) fn.nodes.push_back(node);
  }
  nodes_.push_back(
      {std::move(p.host), std::move(q.fallback), std::move(q.source), it->second, p.has_error});
}

Fleet FleetBuilder::finish() && {
  parse_queued();
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
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return members[a].size() < members[b].size(); });
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

// Cuts a byte stream into report documents, fed in chunks of any size. A document starts at
// a '{' that begins a line (`dlenv doctor --json`, pretty or JSON Lines) or at `{"schema":`
// anywhere on a line: a compact report glued to the end of a truncated one, as `cat` leaves
// it when a report lacks its last newline. Those bytes cannot occur inside a JSON string
// (its quotes would be escaped) and no object in a report but the top one has a "schema".
// Text before the first document is a document of its own (and not a report). A document
// larger than `max_bytes` is dropped as it is read and handed on as too big.
class DocumentSplitter {
 public:
  using Emit = std::function<void(std::string_view document, bool too_big)>;
  DocumentSplitter(size_t max_bytes, Emit emit) : max_bytes_(max_bytes), emit_(std::move(emit)) {}

  void feed(std::string_view chunk) { scan(chunk, false); }
  void finish() {
    scan({}, true);
    end_document();
  }

 private:
  static constexpr std::string_view kMarker = R"({"schema":)";

  void scan(std::string_view chunk, bool last) {
    std::string joined;
    if (!held_.empty()) {
      joined = std::move(held_) + std::string(chunk);
      held_.clear();
      chunk = joined;
    }
    size_t pos = 0;
    while (pos < chunk.size()) {
      // (find_first_of("{\n") calls memchr once per byte.)
      const auto hit = std::find_if(chunk.begin() + static_cast<ptrdiff_t>(pos), chunk.end(),
                                    [](char c) { return c == '{' || c == '\n'; });
      const size_t next =
          hit == chunk.end() ? std::string_view::npos : static_cast<size_t>(hit - chunk.begin());
      if (next == std::string_view::npos) {
        append(chunk.substr(pos));
        line_start_ = false;
        return;
      }
      if (next > pos) {
        append(chunk.substr(pos, next - pos));
        line_start_ = false;
      }
      if (chunk[next] == '\n') {
        append("\n");
        line_start_ = true;
        pos = next + 1;
        continue;
      }
      bool starts = line_start_;
      if (!starts) {
        std::string_view rest = chunk.substr(next);
        if (!last && rest.size() < kMarker.size() && kMarker.starts_with(rest)) {
          held_ = std::string(rest);  // may be a marker cut by the chunk's end
          return;
        }
        starts = rest.starts_with(kMarker);
      }
      if (starts) end_document();
      append("{");
      line_start_ = false;
      pos = next + 1;
    }
  }

  void append(std::string_view bytes) {
    if (too_big_) return;
    if (doc_.size() + bytes.size() > max_bytes_) {
      too_big_ = true;
      doc_.clear();
      doc_.shrink_to_fit();
      return;
    }
    doc_.append(bytes);
  }

  void end_document() {
    if (too_big_) {
      emit_({}, true);
    } else if (!trim(doc_).empty()) {
      emit_(doc_, false);
    }
    doc_.clear();
    too_big_ = false;
  }

  size_t max_bytes_;
  Emit emit_;
  std::string doc_;
  std::string held_;
  bool too_big_ = false;
  bool line_start_ = true;
};

std::string too_big_reason(size_t max_bytes) {
  return "larger than " + human_bytes(max_bytes) + ", not read";
}

}  // namespace

void add_report_stream(FleetBuilder& builder, std::istream& in, std::string_view source,
                       size_t max_document_bytes) {
  size_t count = 0;
  DocumentSplitter splitter(max_document_bytes, [&](std::string_view doc, bool too_big) {
    std::string name = std::string(source) + ":" + std::to_string(++count);
    if (too_big) {
      builder.skip(std::move(name), too_big_reason(max_document_bytes));
    } else {
      builder.add(doc, name, "");
    }
  });
  std::vector<char> buffer(64 << 10);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    splitter.feed(std::string_view(buffer.data(), got));
  }
  splitter.finish();
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
  // A file of one report names its node after the file; several are numbered "path:N". The
  // first document waits until the second shows whether there are several.
  std::string first;
  size_t count = 0;
  auto add = [&](std::string_view doc, bool too_big, size_t n) {
    std::string name = path + ":" + std::to_string(n);
    if (too_big) {
      builder.skip(std::move(name), too_big_reason(max_document_bytes));
    } else {
      builder.add(doc, name, "");
    }
  };
  bool first_too_big = false;
  DocumentSplitter splitter(max_document_bytes, [&](std::string_view doc, bool too_big) {
    if (++count == 1) {
      first = std::string(doc);
      first_too_big = too_big;
      return;
    }
    if (count == 2) add(first, first_too_big, 1);
    add(doc, too_big, count);
  });
  splitter.feed(*text);
  splitter.finish();
  if (count == 0) builder.skip(path, "empty file");
  if (count == 1 && first_too_big) builder.skip(path, too_big_reason(max_document_bytes));
  if (count == 1 && !first_too_big) builder.add(first, path, file_stem(path));
}

}  // namespace dlenv
