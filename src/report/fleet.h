// `dlenv fleet`: many nodes' doctor reports (schema dlenv.report/1) merged into one answer:
// the nodes grouped by identical stack (driver, CUDA driver API, kernel module, GPU models,
// toolkits, cuDNN copies, framework builds), each finding with the nodes it hits, and the
// reports that could not be read. Streaming: each report is parsed, reduced to its stack and
// findings, and dropped, so memory grows with the number of nodes, not with report sizes.
// The renderers (text, Markdown, JSON "dlenv.fleet/1", Prometheus) only build strings.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "platform/filesystem.h"

namespace dlenv {

inline constexpr const char* kFleetSchema = "dlenv.fleet/1";

// What makes two nodes "the same". Each list is sorted; an empty string is "unknown".
struct FleetStack {
  std::string driver;                   // "580.95.05"
  std::string cuda_driver;              // CUDA driver API version: "13.0"
  std::string kernel_module;            // /proc/driver/nvidia/version
  std::vector<std::string> gpus;        // "8x NVIDIA H200"
  std::vector<std::string> toolkits;    // "12.4 (active)"
  std::vector<std::string> cudnn;       // "9.1.0 (CUDA 12)", one per copy
  std::vector<std::string> frameworks;  // "torch 2.4.0+cu121 (CUDA 12.1)"
  auto operator<=>(const FleetStack&) const = default;
};

// The fields of FleetStack by name, in table order: "driver", "cuda_driver",
// "kernel_module", "gpus", "toolkits", "cudnn", "frameworks".
std::vector<std::string> fleet_stack_fields();
// A field's values (one element for the scalar fields; empty string: unknown).
std::vector<std::string> fleet_stack_values(const FleetStack& s, std::string_view field);

struct FleetNode {
  std::string name;    // the report's host name, else the file name (see FleetBuilder)
  std::string host;    // host.hostname of the report ("" unknown or redacted)
  std::string source;  // where the report came from: "reports/gpu001.json", "stdin:3"
  size_t stack = 0;    // index into Fleet::stacks
  bool has_error = false;
};

struct FleetStackGroup {
  FleetStack stack;
  std::vector<size_t> nodes;  // indices into Fleet::nodes, in input order
};

struct FleetFinding {
  std::string id;
  std::string severity;  // "error", "warning", "info"
  std::string title;     // as the first node that has it words it
  std::vector<size_t> nodes;
};

struct SkippedReport {
  std::string source;
  std::string reason;
};

struct Fleet {
  std::vector<FleetNode> nodes;
  std::vector<FleetStackGroup> stacks;  // outliers first: fewest nodes first
  std::vector<FleetFinding> findings;   // error > warning > info, then fewest nodes first
  std::vector<SkippedReport> skipped;
  std::vector<std::string> drift;  // the fields whose values differ between stacks
  size_t nodes_with_errors = 0;
  bool uniform() const { return stacks.size() <= 1; }
  // Node names compressed as a Slurm hostlist ("gpu[001-017,020]").
  std::string hostlist(const std::vector<size_t>& node_indices) const;
};

// Collects reports one at a time. A report that is not valid JSON, is truncated, is not
// schema "dlenv.report/1" or lacks the parts fleet reads is skipped with its reason; nothing
// a report holds is fatal.
class FleetBuilder {
 public:
  // names_from_files: every node is named by its `fallback_name` (the file name) where it
  // has one, whatever its host name (pods, whose host name is the pod's name).
  explicit FleetBuilder(bool names_from_files = false);
  ~FleetBuilder();
  FleetBuilder(const FleetBuilder&) = delete;
  FleetBuilder& operator=(const FleetBuilder&) = delete;
  // One report document. `source` names it in messages; `fallback_name` is the node name
  // when the report has no usable host name (redacted to "<host>", unknown) or shares its
  // host name with other reports (containers, several slurmd or pods on one machine): the
  // file's name without ".json" for a file of one report, else "" (then `source`).
  // Documents are queued (at most 256 or 8 MiB) and parsed on the hardware threads a batch
  // at a time; the results are merged in the order they were added.
  void add(std::string_view document, std::string_view source, std::string_view fallback_name);
  void skip(std::string source, std::string reason);
  // Names the nodes, orders stacks and findings, finds the drifting fields.
  Fleet finish() &&;

  struct Parsed;  // one report reduced to its stack and findings (fleet.cc)

 private:
  static constexpr size_t kQueuedReports = 256;
  static constexpr size_t kQueuedBytes = size_t{8} << 20;
  struct Queued {
    std::string document, source, fallback;
  };
  struct Pending {
    std::string host, fallback, source;
    uint32_t stack;
    bool has_error;
  };
  struct FindingNodes {
    std::string severity, title;
    std::vector<uint32_t> nodes;
  };
  bool names_from_files_;
  std::vector<Pending> nodes_;
  std::map<FleetStack, uint32_t> stack_index_;
  std::vector<const FleetStack*> stacks_;         // by index, pointing into stack_index_'s keys
  std::map<std::string, FindingNodes> findings_;  // by id
  std::vector<SkippedReport> skipped_;
  std::vector<Queued> queued_;
  size_t queued_bytes_ = 0;
  void parse_queued();
  void merge(Parsed&& p, Queued& q);
};

// The reports of one input, one document at a time, read in 64 KiB chunks. A document
// starts at a line whose first character is '{' (`dlenv doctor --json` concatenated, or JSON
// Lines) or at `{"schema":` anywhere (a report glued to a truncated one that lacks its last
// newline) and runs to the next start; each is parsed on its own, so a truncated one is
// skipped and the next read. A document larger than `max_document_bytes` is skipped without
// being kept.
void add_report_stream(FleetBuilder& builder, std::istream& in, std::string_view source,
                       size_t max_document_bytes);
// FILE: its documents (read whole, at most `max_document_bytes`); DIR: every "*.json" file
// in it (not recursive), in name order. An unreadable path is skipped, named.
void add_report_path(FleetBuilder& builder, const FileSystem& fs, const std::string& path,
                     size_t max_document_bytes);

// Plain text: "3 stacks across 64 nodes", the drift table (fields x stacks, changed fields
// marked '*'), the findings with their nodes, the skipped reports.
std::string render_fleet_text(const Fleet& fleet);
std::string render_fleet_markdown(const Fleet& fleet);
// Schema "dlenv.fleet/1" (docs/json-schema.md).
nlohmann::ordered_json fleet_json(const Fleet& fleet, const std::string& tool_version);
std::string render_fleet_json(const Fleet& fleet, const std::string& tool_version);
// dlenv_fleet_* gauges (docs/json-schema.md, "Prometheus metrics").
std::string render_fleet_prometheus(const Fleet& fleet);

}  // namespace dlenv
