#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "report/fleet.h"
#include "report/prometheus_text.h"
#include "report/report.h"
#include "report/report_test_support.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

using report_detail::prometheus_label_value;

TEST(PrometheusText, LabelValuesEscapedAndValidUtf8) {
  EXPECT_EQ(prometheus_label_value("plain 1.2"), "plain 1.2");
  EXPECT_EQ(prometheus_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(prometheus_label_value("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(prometheus_label_value("bad\xFF"), "bad\xEF\xBF\xBD");
  EXPECT_EQ(prometheus_label_value("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(prometheus_label_value("\xED\xA0\x80"),                           // a surrogate
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(prometheus_label_value("cut\xE2\x82"), "cut\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(PrometheusText, FamiliesAndSamples) {
  report_detail::PrometheusWriter w;
  w.gauge("x_info", "Help with a \\ and\na newline.");
  w.sample("x_info", {{"a", "1"}, {"b", "q\""}}, 1);
  w.sample("x_seconds", {}, 0.25);
  EXPECT_EQ(w.text(),
            "# HELP x_info Help with a \\\\ and\\na newline.\n# TYPE x_info gauge\n"
            "x_info{a=\"1\",b=\"q\\\"\"} 1\nx_seconds 0.25\n");
}

TEST(PrometheusDoctor, EveryFamilyOfTheNode) {
  std::string m = render_prometheus(h200_facts(), h200_findings(), 1796000000);
  EXPECT_NE(m.find("dlenv_info{driver=\"580.95.05\",cuda_driver=\"13.0\",kernel_module="
                   "\"580.95.05\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("dlenv_gpu_info{index=\"0\",name=\"NVIDIA H200\",uuid=\"GPU-3f1c2a9e-7b4d-"
                   "4e21-9c0a-5d8e6f7a1b2c\",cc=\"9.0\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("dlenv_toolkit_info{version=\"13.0.2\",path=\"/usr/local/cuda-13.0\","
                   "active=\"true\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("dlenv_cudnn_info{version=\"9.14.0\",cuda_major=\"13\",path=\"/usr/lib/"
                   "x86_64-linux-gnu/libcudnn.so.9.14.0\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("dlenv_finding{id=\"cudnn-mixed-versions\",severity=\"error\"} 1\n"),
            std::string::npos);
  EXPECT_NE(m.find("dlenv_findings{severity=\"warning\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("dlenv_probe_seconds{probe=\"gpus\"} 0.0155\n"), std::string::npos) << m;
  EXPECT_NE(m.find("dlenv_report_timestamp_seconds 1796000000\n"), std::string::npos) << m;
  // Every family has its HELP and TYPE.
  for (const char* family : {"dlenv_info", "dlenv_gpu_info", "dlenv_toolkit_info",
                             "dlenv_cudnn_info", "dlenv_framework_info", "dlenv_finding",
                             "dlenv_probe_seconds", "dlenv_report_timestamp_seconds"}) {
    EXPECT_NE(m.find(std::string("# TYPE ") + family + " gauge\n"), std::string::npos) << family;
  }
}

TEST(PrometheusDoctor, RedactsUuidsAndHomePaths) {
  Facts f = h200_facts();
  Redactor redact(f, "ana", "/home/ana");
  std::string m = render_prometheus(f, h200_findings(), 0, &redact);
  EXPECT_EQ(m.find("GPU-3f1c2a9e"), std::string::npos) << m;
  EXPECT_EQ(m.find("/home/ana"), std::string::npos) << m;
}

// promtool (Debian package prometheus, installed by scripts/install-deps.sh --fleet) checks
// the format and the naming conventions.
void expect_promtool_accepts(const std::string& metrics, const std::string& name) {
  if (std::system("promtool --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh --fleet installs the "
                    "Debian package prometheus); the format is still checked above";
  }
  auto dir = testing::make_unique_temp_dir("promtool");
  std::filesystem::path file = dir / (name + ".prom");
  std::filesystem::path log = dir / "promtool.log";
  std::ofstream(file, std::ios::binary) << metrics;
  std::string cmd =
      "promtool check metrics < '" + file.string() + "' > '" + log.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << "promtool check metrics:\n" << out << "\n--- metrics:\n" << metrics;
  EXPECT_EQ(out, "") << "promtool lint:\n" << out;
  std::filesystem::remove_all(dir);
}

TEST(PrometheusDoctor, PromtoolAcceptsHostileValues) {
  Facts f = h200_facts();
  f.toolkits[0].root = "/opt/cuda \"quoted\"\\back\nslash\xFF";
  f.gpus[0].name = Fact<std::string>::known("GPU with \"quotes\"", "test");
  expect_promtool_accepts(render_prometheus(f, h200_findings(), 1796000000), "doctor");
}

TEST(PrometheusFleet, PromtoolAcceptsTheFleetMetrics) {
  FleetBuilder b;
  Facts f = h200_facts();
  for (const char* host : {"gpu001", "gpu002", "gpu\"3\""}) {
    f.host.hostname = Fact<std::string>::known(host, "test");
    b.add(report_json(f, h200_findings()).dump(), host, "");
  }
  b.skip("bad.json", "truncated");
  Fleet fleet = std::move(b).finish();
  std::string m = render_fleet_prometheus(fleet);
  EXPECT_NE(m.find("dlenv_fleet_nodes 3\n"), std::string::npos) << m;
  EXPECT_NE(m.find("dlenv_fleet_reports_skipped 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("dlenv_fleet_finding_nodes{id=\"cudnn-mixed-versions\",severity=\"error\"} 3\n"),
            std::string::npos)
      << m;
  expect_promtool_accepts(m, "fleet");
}

}  // namespace
}  // namespace dlenv
