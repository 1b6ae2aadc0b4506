#include "report/fleet.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/report.h"
#include "report/report_test_support.h"
#include "util/strings.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

// A doctor report of the test machine with another host name, driver and cuDNN.
std::string report_of(const std::string& host, const std::string& driver = "580.95.05",
                      bool with_error = true, int indent = -1) {
  Facts f = h200_facts();
  f.host.hostname = Fact<std::string>::known(host, "/proc/sys/kernel/hostname");
  f.driver.nvml_driver_version = Fact<std::string>::known(driver, "nvmlSystemGetDriverVersion");
  auto findings = h200_findings();
  if (!with_error) findings.pop_back();  // the error is the last one
  return report_json(f, findings).dump(indent) + "\n";
}

TEST(FleetBuilder, GroupsNodesByStackOutliersFirst) {
  FleetBuilder b;
  for (int i = 1; i <= 6; ++i) {
    std::string host = "gpu00" + std::to_string(i);
    b.add(report_of(host, i == 4 ? "570.86.15" : "580.95.05", i == 4), host + ".json", host);
  }
  Fleet fleet = std::move(b).finish();
  ASSERT_EQ(fleet.nodes.size(), 6u);
  ASSERT_EQ(fleet.stacks.size(), 2u);
  EXPECT_FALSE(fleet.uniform());
  EXPECT_EQ(fleet.stacks[0].stack.driver, "570.86.15");  // the outlier first
  EXPECT_EQ(fleet.hostlist(fleet.stacks[0].nodes), "gpu004");
  EXPECT_EQ(fleet.hostlist(fleet.stacks[1].nodes), "gpu[001-003,005-006]");
  EXPECT_EQ(fleet.drift, (std::vector<std::string>{"driver"}));
  EXPECT_EQ(fleet.stacks[1].stack.gpus, (std::vector<std::string>{"1x NVIDIA H200"}));
  EXPECT_EQ(fleet.stacks[1].stack.toolkits, (std::vector<std::string>{"13.0.2 (active)"}));
  EXPECT_EQ(fleet.stacks[1].stack.cudnn,
            (std::vector<std::string>{"9.14.0 (CUDA 13)", "9.19.0.56 (CUDA 13)"}));
  EXPECT_EQ(fleet.stacks[1].stack.cuda_driver, "13.0");
  // Findings: the error (on one node) first, then by how few nodes they hit.
  ASSERT_EQ(fleet.findings.size(), 3u);
  EXPECT_EQ(fleet.findings[0].id, "cudnn-mixed-versions");
  EXPECT_EQ(fleet.hostlist(fleet.findings[0].nodes), "gpu004");
  EXPECT_EQ(fleet.findings[1].severity, "warning");
  EXPECT_EQ(fleet.findings[1].nodes.size(), 6u);
  EXPECT_EQ(fleet.nodes_with_errors, 1u);
}

TEST(FleetBuilder, BadReportsAreNamedSkippedCountedNeverFatal) {
  FleetBuilder b;
  std::string good = report_of("gpu001");
  b.add(good, "gpu001.json", "gpu001");
  b.add(good.substr(0, good.size() / 2), "cut.json", "cut");
  b.add("not json at all", "text.json", "text");
  b.add(R"({"schema": "dlenv.report/2", "findings": []})", "future.json", "future");
  b.add(R"({"hello": 1})", "other.json", "other");
  b.add(R"({"schema": "dlenv.report/1", "host": {}, "driver": {}})", "partial.json", "partial");
  b.add("[1, 2]", "array.json", "array");
  Fleet fleet = std::move(b).finish();
  EXPECT_EQ(fleet.nodes.size(), 1u);
  ASSERT_EQ(fleet.skipped.size(), 6u);
  EXPECT_EQ(fleet.skipped[0].source, "cut.json");
  EXPECT_TRUE(fleet.skipped[0].reason.starts_with("truncated")) << fleet.skipped[0].reason;
  EXPECT_TRUE(fleet.skipped[1].reason.starts_with("not valid JSON")) << fleet.skipped[1].reason;
  EXPECT_NE(fleet.skipped[2].reason.find("unsupported schema \"dlenv.report/2\""),
            std::string::npos);
  EXPECT_NE(fleet.skipped[3].reason.find("no \"schema\""), std::string::npos);
  EXPECT_NE(fleet.skipped[4].reason.find("no \"findings\""), std::string::npos);
  EXPECT_NE(fleet.skipped[5].reason.find("not a JSON object"), std::string::npos);
  std::string text = render_fleet_text(fleet);
  EXPECT_NE(text.find("1 stack across 1 node; 6 reports skipped"), std::string::npos) << text;
  EXPECT_NE(text.find("  cut.json: truncated"), std::string::npos) << text;
}

TEST(FleetBuilder, ManyBatchesKeepInputOrder) {
  // More reports than one parsing batch holds, bad ones and skips in between: nodes and
  // skipped reports come out in the order they went in.
  FleetBuilder b;
  std::string good = report_of("x");
  std::vector<std::string> expect_nodes, expect_skipped;
  for (int i = 0; i < 700; ++i) {
    std::string name = "n" + std::to_string(i);
    if (i % 97 == 5) {
      b.add(good.substr(0, 100), name + ".json", name);
      expect_skipped.push_back(name + ".json");
    } else if (i % 211 == 7) {
      b.skip(name + ".json", "unreadable");
      expect_skipped.push_back(name + ".json");
    } else {
      b.add(report_of(name, i % 3 ? "580.95.05" : "570.86.15"), name + ".json", name);
      expect_nodes.push_back(name);
    }
  }
  Fleet fleet = std::move(b).finish();
  std::vector<std::string> names, skipped;
  for (const auto& n : fleet.nodes) names.push_back(n.name);
  for (const auto& s : fleet.skipped) skipped.push_back(s.source);
  EXPECT_EQ(names, expect_nodes);
  EXPECT_EQ(skipped, expect_skipped);
  ASSERT_EQ(fleet.stacks.size(), 2u);
  EXPECT_EQ(fleet.stacks[0].stack.driver, "570.86.15");
  EXPECT_EQ(fleet.stacks[0].nodes.size() + fleet.stacks[1].nodes.size(), expect_nodes.size());
}

TEST(FleetBuilder, NodeNamesFromHostElseFile) {
  FleetBuilder b;
  // Redacted host names: the file names.
  b.add(report_of("<host>"), "r/a17.json", "a17");
  // One host name for several reports (several slurmd on one machine): the file names.
  b.add(report_of("vm"), "r/gpu001.json", "gpu001");
  b.add(report_of("vm"), "r/gpu002.json", "gpu002");
  // The same host twice without file names: numbered.
  b.add(report_of("h1"), "stdin:1", "");
  b.add(report_of("h1"), "stdin:2", "");
  b.add(report_of("solo"), "r/whatever.json", "whatever");
  Fleet fleet = std::move(b).finish();
  std::vector<std::string> names;
  for (const auto& n : fleet.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a17", "gpu001", "gpu002", "h1", "h1#2", "solo"}));
  EXPECT_EQ(fleet.nodes[0].host, "");
  EXPECT_EQ(fleet.nodes[1].host, "vm");
}

TEST(FleetStream, ConcatenatedDocumentsAndJsonLines) {
  std::string pretty =
      report_of("p1", "580.95.05", true, 2) + report_of("p2", "580.95.05", true, 2);
  std::string cut = report_of("p3", "580.95.05", true, 2);
  cut.resize(cut.size() / 3);
  std::string lines = report_of("l1") + report_of("l2");
  std::istringstream in(pretty + cut + lines + "\n\n");
  FleetBuilder b;
  add_report_stream(b, in, "stdin", 64u << 20);
  Fleet fleet = std::move(b).finish();
  std::vector<std::string> names;
  for (const auto& n : fleet.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"p1", "p2", "l1", "l2"}));
  ASSERT_EQ(fleet.skipped.size(), 1u);
  EXPECT_EQ(fleet.skipped[0].source, "stdin:3");
  EXPECT_TRUE(fleet.skipped[0].reason.starts_with("truncated")) << fleet.skipped[0].reason;
}

TEST(FleetStream, GluedReportFoundAcrossReadChunks) {
  // A report cut inside a string, whose last line lacks its newline, glued by `cat` to the
  // next report so that the next one's `{"schema":` straddles the 64 KiB read chunks; then
  // two compact reports on one line.
  std::string cut = R"({"schema": "dlenv.report/1", "host": {"hostname": ")";
  cut.append((64u << 10) - 5 - cut.size(), 'x');
  std::string second = report_of("l2");
  second.pop_back();  // its newline
  std::istringstream in(cut + report_of("l1") + second + report_of("l3"));
  FleetBuilder b;
  add_report_stream(b, in, "stdin", 64u << 20);
  Fleet fleet = std::move(b).finish();
  std::vector<std::string> names;
  for (const auto& n : fleet.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"l1", "l2", "l3"}));
  ASSERT_EQ(fleet.skipped.size(), 1u);
  EXPECT_EQ(fleet.skipped[0].source, "stdin:1");
  EXPECT_TRUE(fleet.skipped[0].reason.starts_with("truncated")) << fleet.skipped[0].reason;
}

TEST(FleetStream, OversizedDocumentSkipped) {
  std::istringstream in(report_of("big", "580.95.05", true, 2) + report_of("small"));
  FleetBuilder b;
  add_report_stream(b, in, "stdin", 4096);
  Fleet fleet = std::move(b).finish();
  ASSERT_EQ(fleet.skipped.size(), 2u);  // both are larger than 4 KiB
  EXPECT_NE(fleet.skipped[0].reason.find("larger than"), std::string::npos);
}

TEST(FleetPaths, DirectoryOfReports) {
  auto dir = testing::make_unique_temp_dir("fleet");
  for (const char* host : {"n01", "n02", "n03"}) {
    std::ofstream(dir / (std::string(host) + ".json"))
        << report_of("<host>", "580.95.05", false, 2);
  }
  std::ofstream(dir / "n04.json") << "{\"schema\": \"dlenv.report/1\", \"host\": {";
  std::ofstream(dir / "notes.txt") << "not a report";
  FleetBuilder b;
  auto fs = make_real_filesystem();
  add_report_path(b, *fs, dir.string(), 64u << 20);
  add_report_path(b, *fs, (dir / "missing.json").string(), 64u << 20);
  Fleet fleet = std::move(b).finish();
  EXPECT_EQ(fleet.hostlist(fleet.stacks.at(0).nodes), "n[01-03]");
  ASSERT_EQ(fleet.skipped.size(), 2u);
  EXPECT_EQ(fleet.skipped[0].source, path_join(dir.string(), "n04.json"));  // "/" on Windows too
  EXPECT_NE(fleet.skipped[1].reason.find("no such file"), std::string::npos);
  EXPECT_TRUE(fleet.uniform());
  EXPECT_EQ(fleet.nodes_with_errors, 0u);
  std::filesystem::remove_all(dir);
}

Fleet three_stacks() {
  FleetBuilder b;
  for (int i = 1; i <= 10; ++i) {
    char host[16];
    std::snprintf(host, sizeof host, "gpu%03d", i);
    std::string driver = i == 7 ? "550.54.15" : i >= 9 ? "570.86.15" : "580.95.05";
    b.add(report_of(host, driver, i == 7), std::string(host) + ".json", host);
  }
  return std::move(b).finish();
}

TEST(FleetRender, TextTable) {
  std::string text = render_fleet_text(three_stacks());
  EXPECT_TRUE(text.starts_with("3 stacks across 10 nodes\nNot uniform: driver differ")) << text;
  size_t s1 = text.find("stack 1 (1 node)"), s2 = text.find("stack 2 (2 nodes)"),
         s3 = text.find("stack 3 (7 nodes)");
  EXPECT_TRUE(s1 < s2 && s2 < s3 && s3 < text.find('\n', s1)) << text;  // one header line
  EXPECT_NE(text.find("gpu007"), std::string::npos);
  EXPECT_NE(text.find("gpu[009-010]"), std::string::npos);
  EXPECT_NE(text.find("gpu[001-006,008]"), std::string::npos);
  EXPECT_NE(text.find("* driver"), std::string::npos);
  EXPECT_NE(text.find("  error    cudnn-mixed-versions      1 node: gpu007"), std::string::npos)
      << text;
  for (const auto& line : split_lines(text)) {
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "[" << line << "]";
  }
}

TEST(FleetRender, JsonSchema) {
  auto j = fleet_json(three_stacks(), "0.1.0");
  EXPECT_EQ(j["schema"], "dlenv.fleet/1");
  EXPECT_EQ(j["summary"]["nodes"], 10);
  EXPECT_EQ(j["summary"]["stacks"], 3);
  EXPECT_EQ(j["summary"]["uniform"], false);
  EXPECT_EQ(j["summary"]["drift"], nlohmann::json::array({"driver"}));
  EXPECT_EQ(j["summary"]["nodes_with_errors"], 1);
  EXPECT_EQ(j["stacks"][0]["hostlist"], "gpu007");
  EXPECT_EQ(j["stacks"][2]["nodes"].size(), 7u);
  EXPECT_EQ(j["stacks"][0]["driver"], "550.54.15");
  EXPECT_EQ(j["findings"][0]["id"], "cudnn-mixed-versions");
  EXPECT_EQ(j["nodes"][6]["name"], "gpu007");
  EXPECT_EQ(j["nodes"][6]["stack"], 1);
}

TEST(FleetRender, MarkdownTable) {
  std::string md = render_fleet_markdown(three_stacks());
  EXPECT_NE(md.find("## dlenv fleet: 3 stacks across 10 nodes"), std::string::npos) << md;
  EXPECT_NE(md.find("| nodes | gpu007 | gpu\\[009-010\\] | gpu\\[001-006,008\\] |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| \\* driver | 550.54.15 | 570.86.15 | 580.95.05 |"), std::string::npos) << md;
}

}  // namespace
}  // namespace dlenv
