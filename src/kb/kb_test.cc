#include "kb/kb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

namespace dlenv::kb_embedded {
struct File {
  const char* name;
  const char* data;
  std::size_t size;
};
extern const File files[];
extern const std::size_t file_count;
}  // namespace dlenv::kb_embedded

namespace dlenv {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::shared_ptr<const Kb> kb() {
  auto r = Kb::load_embedded();
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : nullptr;
}

std::map<std::string, std::string> embedded_texts() {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < kb_embedded::file_count; ++i) {
    out.emplace(kb_embedded::files[i].name,
                std::string(kb_embedded::files[i].data, kb_embedded::files[i].size));
  }
  return out;
}

json embedded_json(const std::string& name) {
  auto texts = embedded_texts();
  auto it = texts.find(name);
  EXPECT_NE(it, texts.end()) << name;
  return it == texts.end() ? json() : json::parse(it->second);
}

Version V(std::string_view s) {
  auto v = Version::parse(s);
  EXPECT_TRUE(v.has_value()) << s;
  return v.value_or(Version{});
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  const char* env = std::getenv("DLENV_TEST_TMP");
  fs::path base = env && *env ? fs::path(env) : fs::temp_directory_path() / "dlenv-kb-test";
  fs::path dir = base / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool is_http_url(const json& j) {
  if (!j.is_string()) return false;
  std::string s = j.get<std::string>();
  return (s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0) && s.size() > 10 &&
         s.find(' ') == std::string::npos;
}

// ------------------------------------------------------------------------------------
TEST(KbEmbedded, ParsesAndHasEveryFile) {
  ASSERT_GE(kb_embedded::file_count, 9u);
  EXPECT_EQ(kb_embedded::files[kb_embedded::file_count].name, nullptr);
  auto texts = embedded_texts();
  for (const char* f :
       {"cuda_driver.json", "cuda_arch.json", "gpus.json", "cudnn.json", "libnames.json",
        "findings.json", "pytorch.json", "tensorflow.json", "others.json"}) {
    EXPECT_TRUE(texts.count(f)) << f;
  }
  auto k = kb();
  ASSERT_TRUE(k);
  EXPECT_FALSE(k->findings().empty());
  EXPECT_NE(k->describe().find("cuda_driver.json@"), std::string::npos) << k->describe();
  ASSERT_TRUE(k->file_text("pytorch.json").has_value());
  EXPECT_EQ(*k->file_text("pytorch.json"), texts["pytorch.json"]);
  EXPECT_FALSE(k->file_text("nope.json").has_value());
}

// The newest releases are the maxima of the raw rows, whatever order the rows are in.
TEST(KbEmbedded, NewestReleasesAreTheMaximaOfTheTables) {
  std::vector<Version> cudas, cudnns;
  const json driver = embedded_json("cuda_driver.json"), cudnn_doc = embedded_json("cudnn.json");
  for (const auto& row : driver["toolkit_driver"]) {
    cudas.push_back(V(row["toolkit"].get<std::string>()));
  }
  for (const auto& row : cudnn_doc["releases"]) {
    for (const auto& text : row["cudnn"]) {
      std::string s = text.get<std::string>();
      auto dash = s.find('-');
      cudnns.push_back(V(dash == std::string::npos ? s : s.substr(dash + 1)));
    }
  }
  ASSERT_FALSE(cudas.empty() || cudnns.empty());
  const Version cuda = *std::max_element(cudas.begin(), cudas.end());
  const Version cudnn = *std::max_element(cudnns.begin(), cudnns.end());
  auto k = kb();
  ASSERT_TRUE(k);
  auto newest = k->newest_releases();
  ASSERT_TRUE(newest.cuda_toolkit && newest.cudnn);
  EXPECT_EQ(newest.cuda_toolkit->str(), cuda.str());
  EXPECT_EQ(newest.cudnn->str(), cudnn.str());
  EXPECT_GE(*newest.cuda_toolkit, V("13.0"));
}

// ---- invariants over the raw tables ---------------------------------------------------
struct Table {
  const char* file;
  const char* key;
};
const Table kRowTables[] = {
    {"cuda_driver.json", "toolkit_driver"},
    {"cuda_driver.json", "branches"},
    {"cuda_driver.json", "minor_version_compatibility"},
    {"cuda_driver.json", "rules"},
    {"cuda_arch.json", "toolkits"},
    {"cuda_arch.json", "architectures"},
    {"cuda_arch.json", "rules"},
    {"gpus.json", "gpus"},
    {"cudnn.json", "releases"},
    {"cudnn.json", "version_macro"},
    {"cudnn.json", "pip_wheels"},
    {"libnames.json", "libraries"},
    {"cudnn_archives.json", "archives"},
};

TEST(KbInvariants, EveryRowHasSourceAndConfirmed) {
  for (const auto& t : kRowTables) {
    json doc = embedded_json(t.file);
    ASSERT_TRUE(doc.contains(t.key)) << t.file << " " << t.key;
    const json& rows = doc[t.key];
    ASSERT_TRUE(rows.is_array()) << t.file << " " << t.key;
    ASSERT_FALSE(rows.empty()) << t.file << " " << t.key;
    for (size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE(std::string(t.file) + " " + t.key + "[" + std::to_string(i) + "]");
      ASSERT_TRUE(rows[i].is_object());
      EXPECT_TRUE(rows[i].contains("source") && is_http_url(rows[i]["source"]));
      EXPECT_TRUE(rows[i].contains("confirmed") && rows[i]["confirmed"].is_boolean());
    }
  }
}

// Anywhere in any file except findings: an object with a source has a boolean confirmed and
// vice versa, and the source is an http(s) URL.
void walk_sources(const json& j, const std::string& path, std::vector<std::string>& bad) {
  if (j.is_object()) {
    bool has_source = j.contains("source"), has_confirmed = j.contains("confirmed");
    if (has_source != has_confirmed) bad.push_back(path + ": source without confirmed or back");
    if (has_source && !is_http_url(j["source"])) bad.push_back(path + ".source: not a URL");
    if (has_confirmed && !j["confirmed"].is_boolean()) bad.push_back(path + ".confirmed");
    for (const auto& [k, v] : j.items()) walk_sources(v, path + "." + k, bad);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      walk_sources(j[i], path + "[" + std::to_string(i) + "]", bad);
  }
}

TEST(KbInvariants, SourcesEverywhere) {
  for (const auto& [name, text] : embedded_texts()) {
    if (name == "findings.json") continue;
    json doc = json::parse(text);
    EXPECT_EQ(doc.value("schema", 0), 1) << name;
    std::vector<std::string> bad;
    walk_sources(doc, name, bad);
    EXPECT_TRUE(bad.empty()) << bad.front();
  }
}

TEST(KbInvariants, ToolkitDriverTable) {
  json doc = embedded_json("cuda_driver.json");
  const json& rows = doc["toolkit_driver"];
  std::optional<Version> prev_toolkit, prev_linux, prev_windows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    SCOPED_TRACE("toolkit_driver[" + std::to_string(i) + "] " + r.value("toolkit", ""));
    Version tk = V(r["toolkit"].get<std::string>());
    EXPECT_EQ(tk.truncated(2), V(r["cuda"].get<std::string>()));
    if (prev_toolkit) {
      EXPECT_LT(*prev_toolkit, tk) << "sorted, no duplicate toolkit versions";
    }
    prev_toolkit = tk;
    for (auto [key, prev] : {std::pair{"linux_min", &prev_linux}, {"windows_min", &prev_windows}}) {
      if (r[key].is_null()) continue;
      Version f = V(r[key].get<std::string>());
      if (*prev) {
        EXPECT_LE(**prev, f) << key << " floors must not decrease as CUDA increases";
      }
      *prev = f;
    }
    // A floor is either given or there is a driver branch to fall back to.
    EXPECT_TRUE(!r["linux_min"].is_null() || r["branch"].is_string());
    EXPECT_TRUE(!r["windows_min"].is_null() || r["branch"].is_string());
  }
}

TEST(KbInvariants, ArchRows) {
  json doc = embedded_json("cuda_arch.json");
  std::optional<Version> prev;
  std::regex sm("^sm_[0-9]+[af]?$");
  for (const auto& r : doc["toolkits"]) {
    SCOPED_TRACE(r["cuda"].get<std::string>());
    Version cuda = V(r["cuda"].get<std::string>());
    if (prev) {
      EXPECT_LT(*prev, cuda);
    }
    prev = cuda;
    EXPECT_LE(V(r["min_cc"].get<std::string>()), V(r["max_cc"].get<std::string>()));
    for (const auto& t : r["sass_targets"]) EXPECT_TRUE(std::regex_match(t.get<std::string>(), sm));
    EXPECT_TRUE(r["sass_targets_confirmed"].is_boolean());
  }
  for (const auto& f : doc["architectures"]) {
    for (const auto& cc : f["compute_capabilities"]) {
      EXPECT_EQ(kb()->architecture_name(V(cc.get<std::string>())), f["architecture"]);
    }
  }
}

TEST(KbInvariants, CudnnBuildRangesDoNotOverlapWithinARelease) {
  auto k = kb();
  json doc = embedded_json("cudnn.json");
  for (const auto& r : doc["releases"]) {
    for (const auto& v : r["cudnn"]) {
      std::string text = v.get<std::string>();
      SCOPED_TRACE("cuDNN " + text);
      Version lo = V(text.substr(0, text.find('-')));
      auto builds = k->cudnn_builds(lo);
      ASSERT_EQ(builds.size(), r["builds"].size());
      for (size_t i = 0; i < builds.size(); ++i) {
        EXPECT_LE(builds[i].cuda_min, builds[i].cuda_max);
        EXPECT_EQ(builds[i].ref.confirmed, r["confirmed"].get<bool>());
        for (size_t j = i + 1; j < builds.size(); ++j) {
          bool disjoint =
              builds[i].cuda_max < builds[j].cuda_min || builds[j].cuda_max < builds[i].cuda_min;
          EXPECT_TRUE(disjoint) << builds[i].cuda_min.str() << "-" << builds[i].cuda_max.str()
                                << " vs " << builds[j].cuda_min.str() << "-"
                                << builds[j].cuda_max.str();
        }
      }
    }
  }
}

TEST(KbInvariants, EveryGpuParsesAndFindsItself) {
  auto k = kb();
  json doc = embedded_json("gpus.json");
  std::set<std::string> segments = {"data_center", "workstation_consumer", "jetson"};
  for (const auto& g : doc["gpus"]) {
    std::string name = g["name"].get<std::string>();
    SCOPED_TRACE(name);
    std::string cc = g["compute_capability"].get<std::string>();
    EXPECT_TRUE(std::regex_match(cc, std::regex("^[0-9]+\\.[0-9]+$")));
    EXPECT_TRUE(segments.count(g["segment"].get<std::string>()));
    auto info = k->gpu_by_name(name);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->compute_capability, V(cc));
  }
}

TEST(KbInvariants, LibraryNamesAreUnambiguousPerMajor) {
  json doc = embedded_json("libnames.json");
  std::set<std::pair<std::string, int>> seen;
  for (const auto& l : doc["libraries"]) {
    std::string lib = l["library"].get<std::string>();
    std::vector<int> majors;
    if (l.contains("own_major")) majors.push_back(1000 + l["own_major"].get<int>());
    if (!l.contains("own_major")) {
      for (const auto& m : l["cuda_majors"]) majors.push_back(m.get<int>());
    }
    for (int m : majors) EXPECT_TRUE(seen.insert({lib, m}).second) << lib << " " << m;
    EXPECT_FALSE(l["linux"].empty() && l["windows"].empty()) << lib;
  }
}

std::set<std::string> catalog_ids(const fs::path& catalog) {
  std::set<std::string> ids;
  std::istringstream in(read_file(catalog));
  std::regex head("^### [A-Z][0-9]+\\. `([^`]+)`.*$");
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, head)) ids.insert(m[1]);
  }
  return ids;
}

TEST(KbInvariants, Findings) {
  auto k = kb();
  std::regex id_re("^[a-z0-9][a-z0-9.-]*$");
  std::set<std::string> ids, catalog_entries;
  for (const auto& f : k->findings()) {
    SCOPED_TRACE(f.id);
    EXPECT_TRUE(std::regex_match(f.id, id_re));
    EXPECT_TRUE(ids.insert(f.id).second) << "duplicate id";
    EXPECT_FALSE(f.title.empty());
    EXPECT_EQ(f.title.find('\n'), std::string::npos);
    EXPECT_FALSE(f.cause.empty());
    EXPECT_FALSE(f.fix.empty());
    for (const auto& step : f.fix) EXPECT_FALSE(step.empty());
    for (const auto& s : f.sources) EXPECT_TRUE(is_http_url(json(s))) << s;
    // The failure catalog's entries (failures.md) name their section and sources; dlenv's
    // own checks (no catalog key) need neither.
    if (!f.catalog_key.empty()) {
      catalog_entries.insert(f.id);
      EXPECT_FALSE(f.section.empty());
      EXPECT_FALSE(f.sources.empty());
    }
    EXPECT_EQ(k->finding(f.id), &f);
  }
  EXPECT_EQ(k->finding("no-such-finding"), nullptr);

  fs::path catalog = fs::path(DLENV_SOURCE_DIR) / ".." / "shared" / "reference" / "failures.md";
  if (!fs::exists(catalog)) GTEST_SKIP() << catalog << " not present";
  EXPECT_EQ(catalog_entries, catalog_ids(catalog));
}

// ---- queries ---------------------------------------------------------------------------
struct MaxCudaCase {
  const char* driver;
  Os os;
  const char* max_cuda;  // nullptr: none
  std::vector<int> compat;
  bool confirmed;
};

TEST(KbQueries, MaxCudaForDriver) {
  auto k = kb();
  const MaxCudaCase cases[] = {
      {"580.95.05", Os::linux, "13.0", {11, 12, 13}, true},
      {"580.65.06", Os::linux, "13.0", {11, 12, 13}, true},
      {"580.65.05", Os::linux, "12.9", {11, 12}, true},
      {"535.104.05", Os::linux, "12.2", {11, 12}, true},
      {"535.54.03", Os::linux, "12.2", {11, 12}, true},
      {"525.60.13", Os::linux, "12.0", {11, 12}, true},
      {"525.60.12", Os::linux, "11.8", {11}, true},
      {"470.82.01", Os::linux, "11.4", {11}, true},
      {"470.42.01", Os::linux, "11.4", {11}, true},
      {"450.51.06", Os::linux, "11.0", {}, true},
      {"410.48", Os::linux, "10.0", {}, true},
      {"390.1", Os::linux, nullptr, {}, true},
      {"550.54.15", Os::linux, "12.4", {11, 12}, true},
      {"590.44.01", Os::linux, "13.1", {11, 12, 13}, true},
      // 13.1 U1's exact floor (590.48.01) is unconfirmed: the confirmed branch rule decides,
      // never below the confirmed 13.1 GA floor.
      {"590.45.00", Os::linux, "13.1", {11, 12, 13}, true},
      {"590.40.00", Os::linux, "13.0", {11, 12, 13}, true},
      {"595.10", Os::linux, "13.2", {11, 12, 13}, true},
      {"610.43.02", Os::linux, "13.3", {11, 12, 13}, true},
      // 13.4: NVIDIA publishes only the branch (R615); confirmed.
      {"615.10", Os::linux, "13.4", {11, 12, 13}, true},
      {"999.99", Os::linux, "13.4", {11, 12, 13}, true},
      // Windows: N/A floors for 13.x fall back to the branch rule.
      {"551.61", Os::windows, "12.4", {11, 12}, true},
      {"576.57", Os::windows, "12.9", {11, 12}, true},
      {"580.88", Os::windows, "13.0", {11, 12, 13}, true},
      {"591.44", Os::windows, "13.1", {11, 12, 13}, true},
      {"527.41", Os::windows, "12.0", {11, 12}, true},
      {"472.50", Os::windows, "11.4", {11}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.driver) + (c.os == Os::linux ? " linux" : " windows"));
    auto r = k->max_cuda_for_driver(V(c.driver), c.os);
    if (!c.max_cuda) {
      EXPECT_FALSE(r.has_value());
      continue;
    }
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->max_cuda, V(c.max_cuda));
    EXPECT_EQ(r->minor_compat_majors, c.compat);
    EXPECT_EQ(r->ref.confirmed, c.confirmed);
    EXPECT_FALSE(r->toolkit_label.empty());
    EXPECT_LE(r->driver_floor, V(c.driver));
  }
  auto r = k->max_cuda_for_driver(V("535.104.05"), Os::linux);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->toolkit_label, "CUDA 12.2 Update 2");
  EXPECT_EQ(r->driver_floor, V("535.104.05"));
  r = k->max_cuda_for_driver(V("580.88"), Os::windows);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->driver_floor, Version{580});
}

// Without the branch table's confirmation, an unconfirmed exact floor is the only data:
// it decides, and the answer says it is unconfirmed.
TEST(KbQueries, MaxCudaForDriverUnconfirmedFloor) {
  auto files = embedded_texts();
  json d = json::parse(files["cuda_driver.json"]);
  for (auto& b : d["branches"]) {
    if (b["cuda"] == "13.2") b["confirmed"] = false;
  }
  files["cuda_driver.json"] = d.dump();
  auto k = Kb::load_files(files);
  ASSERT_TRUE(k.has_value()) << k.error().message;
  auto r = (*k)->max_cuda_for_driver(V("595.50"), Os::linux);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->max_cuda, V("13.2"));
  EXPECT_EQ(r->driver_floor, V("595.45.04"));
  EXPECT_FALSE(r->ref.confirmed);
  r = (*k)->max_cuda_for_driver(V("595.10"), Os::linux);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->max_cuda, V("13.1"));
  EXPECT_EQ((*k)->min_driver_for_cuda(V("13.2"), Os::linux, false), V("595.45.04"));
}

struct MinDriverCase {
  const char* cuda;
  Os os;
  bool minor_compat;
  const char* driver;  // nullptr: none
};

TEST(KbQueries, MinDriverForCuda) {
  auto k = kb();
  const MinDriverCase cases[] = {
      {"12.4", Os::linux, false, "550.54.14"},   {"12.4", Os::linux, true, "525.60.13"},
      {"12.4.1", Os::linux, false, "550.54.15"}, {"12.4", Os::windows, false, "551.61"},
      {"12.4", Os::windows, true, "527.41"},     {"12.0", Os::linux, false, "525.60.13"},
      {"11.8", Os::linux, false, "520.61.05"},   {"11.8", Os::linux, true, "450.80.02"},
      {"11.8", Os::windows, false, "520.06"},    {"13.0", Os::linux, false, "580.65.06"},
      {"13.0", Os::windows, false, "580"},       {"13.1", Os::windows, false, "590"},
      {"13.2", Os::linux, false, "595"},  // unconfirmed exact floor -> branch rule
      {"13.4", Os::linux, false, "615"},         {"13.2", Os::linux, true, "580.65.06"},
      {"13.9", Os::linux, true, "580.65.06"},    {"13.9", Os::linux, false, nullptr},
      {"12.7", Os::linux, false, nullptr},       {"10.2", Os::linux, false, "440.33"},
      {"10.2", Os::linux, true, "440.33"},       {"9.0", Os::linux, true, nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.cuda) + (c.os == Os::linux ? " linux" : " windows") +
                 (c.minor_compat ? " compat" : ""));
    auto r = k->min_driver_for_cuda(V(c.cuda), c.os, c.minor_compat);
    if (!c.driver) {
      EXPECT_FALSE(r.has_value()) << r.value_or(Version{}).str();
      continue;
    }
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, V(c.driver));
    EXPECT_EQ(r->parts().size(), V(c.driver).parts().size());
  }
}

TEST(KbQueries, ArchSupport) {
  auto k = kb();
  struct Case {
    const char* cuda;
    const char* row;
    const char* min_cc;
    const char* max_cc;
  };
  const Case cases[] = {
      {"13.0", "13.0", "7.5", "12.1"},  {"11.8", "11.8", "3.5", "9.0"},
      {"12.0", "12.0", "5.0", "9.0"},   {"12.7", "12.6", "5.0", "9.0"},
      {"12.4.1", "12.4", "5.0", "9.0"}, {"13.4", "13.0", "7.5", "12.1"},
      {"10.0", "10.0", "3.0", "7.5"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cuda);
    auto a = k->arch_support(V(c.cuda));
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->cuda, V(c.row));
    EXPECT_EQ(a->min_cc, V(c.min_cc));
    EXPECT_EQ(a->max_cc, V(c.max_cc));
  }
  auto a12 = k->arch_support(V("12.0"));
  ASSERT_TRUE(a12);
  EXPECT_NE(std::find(a12->sass_targets.begin(), a12->sass_targets.end(), "sm_90"),
            a12->sass_targets.end());
  EXPECT_TRUE(a12->ref.confirmed);
  EXPECT_FALSE(a12->sass_targets_confirmed);
  EXPECT_FALSE(k->arch_support(V("12.6"))->ref.confirmed);
  EXPECT_FALSE(k->arch_support(V("9.2")).has_value());
}

TEST(KbQueries, ArchitectureName) {
  auto k = kb();
  const std::pair<const char*, const char*> cases[] = {
      {"9.0", "Hopper"},     {"8.9", "Ada Lovelace"}, {"8.6", "Ampere"},     {"8.0", "Ampere"},
      {"7.5", "Turing"},     {"7.0", "Volta"},        {"7.2", "Volta"},      {"6.1", "Pascal"},
      {"5.2", "Maxwell"},    {"3.7", "Kepler"},       {"10.0", "Blackwell"}, {"12.0", "Blackwell"},
      {"12.1", "Blackwell"}, {"8.8", "Ampere"},       {"2.0", ""},           {"7.5.0", "Turing"},
  };
  for (const auto& [cc, name] : cases) EXPECT_EQ(k->architecture_name(V(cc)), name) << cc;
}

TEST(KbQueries, GpuByName) {
  auto k = kb();
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA H200", "9.0"},
      {"NVIDIA GeForce RTX 4090", "8.9"},
      {"Tesla V100-SXM2-16GB", "7.0"},
      {"NVIDIA A100-SXM4-80GB", "8.0"},
      {"NVIDIA H100 80GB HBM3", "9.0"},
      {"NVIDIA H100 PCIe", "9.0"},
      {"NVIDIA H100-SXM5-80GB", "9.0"},
      {"nvidia geforce rtx 4070 ti super", "8.9"},
      {"NVIDIA GeForce RTX 5090", "12.0"},
      {"NVIDIA GeForce GTX 1080 Ti", "6.1"},
      {"Tesla T4", "7.5"},
      {"Tesla P100-PCIE-16GB", "6.0"},
      {"NVIDIA A10", "8.6"},
      {"NVIDIA A100 80GB PCIe", "8.0"},
      {"NVIDIA L40S", "8.9"},
      {"NVIDIA L4", "8.9"},
      {"NVIDIA RTX 6000 Ada Generation", "8.9"},
      {"Quadro RTX 6000", "7.5"},
      {"NVIDIA TITAN X (Pascal)", "6.1"},
      {"NVIDIA GeForce GTX TITAN X", "5.2"},
      {"NVIDIA GB10", "12.1"},
      {"NVIDIA GH200 480GB", "9.0"},
  };
  for (const auto& [name, cc] : cases) {
    SCOPED_TRACE(name);
    auto g = k->gpu_by_name(name);
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->compute_capability, V(cc));
    EXPECT_FALSE(g->ref.source.empty());
  }
  auto h200 = k->gpu_by_name("NVIDIA H200");
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->name, "NVIDIA H200");
  EXPECT_EQ(h200->segment, "data_center");
  EXPECT_FALSE(k->gpu_by_name("NVIDIA H800")->ref.confirmed);
  for (const char* unknown : {"", "NVIDIA", "Radeon RX 7900", "NVIDIA A1000X", "NVIDIA H1000"}) {
    EXPECT_FALSE(k->gpu_by_name(unknown).has_value()) << unknown;
  }
}

std::set<std::pair<std::string, std::string>> ranges(const std::vector<CudnnBuild>& builds) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& b : builds) out.insert({b.cuda_min.str(), b.cuda_max.str()});
  return out;
}

TEST(KbQueries, CudnnBuilds) {
  auto k = kb();
  using S = std::set<std::pair<std::string, std::string>>;
  EXPECT_EQ(ranges(k->cudnn_builds(V("8.9.7"))), (S{{"11.0", "11.99"}, {"12.0", "12.99"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("8.9.7.29"))), (S{{"11.0", "11.99"}, {"12.0", "12.99"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("8.9.5"))), (S{{"11.0", "11.8"}, {"12.0", "12.2"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("9.0.0"))), (S{{"11.0", "11.8"}, {"12.0", "12.3"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("9.5.1"))), (S{{"11.0", "11.8"}, {"12.0", "12.6"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("9.10.2"))), (S{{"11.8", "11.8"}, {"12.0", "12.9"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("9.17.0"))), (S{{"12.0", "12.9"}, {"13.0", "13.1"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("9.21.1"))), (S{{"12.0", "12.99"}, {"13.0", "13.99"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("8.5.0"))), (S{{"10.2", "10.2"}, {"11.0", "11.99"}}));
  EXPECT_EQ(ranges(k->cudnn_builds(V("7.6.5"))).size(), 5u);
  EXPECT_TRUE(k->cudnn_builds(V("6.0.21")).empty());
  EXPECT_TRUE(k->cudnn_builds(V("10.0.0")).empty());

  // 9.19.0 is not listed: the nearest older release (9.17.0) answers, unconfirmed.
  auto b919 = k->cudnn_builds(V("9.19.0"));
  std::set<int> majors;
  for (const auto& b : b919) {
    majors.insert(b.cuda_min.major());
    EXPECT_EQ(b.cuda_min.major(), b.cuda_max.major());
    EXPECT_FALSE(b.ref.confirmed);
    EXPECT_NE(b.note.find("9.17.0"), std::string::npos) << b.note;
  }
  EXPECT_EQ(majors, (std::set<int>{12, 13}));

  auto b917 = k->cudnn_builds(V("9.17.0"));
  ASSERT_EQ(b917.size(), 2u);
  EXPECT_TRUE(b917[0].ref.confirmed);
  EXPECT_EQ(b917[0].driver_linux_min, V("580.65.06"));
  EXPECT_FALSE(b917[0].driver_windows_min.has_value());
  EXPECT_EQ(b917[0].compute_capabilities.front(), V("7.5"));
  auto b895 = k->cudnn_builds(V("8.9.5"));
  ASSERT_EQ(b895.size(), 2u);
  EXPECT_EQ(b895[0].driver_windows_min, V("527.41"));
}

TEST(KbQueries, CudnnLibraryFiles) {
  auto k = kb();
  auto l9 = k->cudnn_library_files(9, Os::linux);
  ASSERT_EQ(l9.size(), 8u);
  EXPECT_EQ(l9.front(), "libcudnn.so.9");
  auto w8 = k->cudnn_library_files(8, Os::windows);
  ASSERT_EQ(w8.size(), 7u);
  EXPECT_EQ(w8.front(), "cudnn64_8.dll");
  EXPECT_NE(std::find(w8.begin(), w8.end(), "cudnn_cnn_infer64_8.dll"), w8.end());
  EXPECT_EQ(k->cudnn_library_files(7, Os::linux), std::vector<std::string>{"libcudnn.so.7"});
  EXPECT_TRUE(k->cudnn_library_files(6, Os::linux).empty());
}

TEST(KbQueries, LibraryFileNames) {
  auto k = kb();
  struct Case {
    const char* lib;
    int major;
    Os os;
    const char* file;  // nullptr: none
  };
  const Case cases[] = {
      {"cublasLt", 12, Os::linux, "libcublasLt.so.12"},
      {"cublasLt", 12, Os::windows, "cublasLt64_12.dll"},
      {"cudart", 11, Os::windows, "cudart64_110.dll"},
      {"cudart", 11, Os::linux, "libcudart.so.11.0"},
      {"cudart", 13, Os::linux, "libcudart.so.13"},
      {"cublas", 13, Os::windows, "cublas64_13.dll"},
      {"cufft", 12, Os::linux, "libcufft.so.11"},
      {"curand", 12, Os::linux, "libcurand.so.10"},
      {"cusolver", 12, Os::linux, "libcusolver.so.11"},
      {"cusparse", 13, Os::windows, "cusparse64_12.dll"},
      {"nvrtc", 12, Os::windows, "nvrtc64_120_0.dll"},
      {"nvrtc", 11, Os::linux, "libnvrtc.so.11.2"},
      {"nvJitLink", 12, Os::linux, "libnvJitLink.so.12"},
      {"nvjitlink", 13, Os::windows, "nvJitLink_130_0.dll"},
      {"cudnn", 9, Os::linux, "libcudnn.so.9"},
      {"cudnn", 8, Os::windows, "cudnn64_8.dll"},
      {"nccl", 12, Os::linux, "libnccl.so.2"},
      {"nccl", 2, Os::linux, "libnccl.so.2"},
      {"nccl", 12, Os::windows, nullptr},
      {"cuda", 12, Os::linux, "libcuda.so.1"},
      {"cuda", 13, Os::windows, "nvcuda.dll"},
      {"nvJitLink", 11, Os::linux, nullptr},
      {"cudnn", 12, Os::linux, nullptr},
      {"nosuchlib", 12, Os::linux, nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.lib) + " " + std::to_string(c.major));
    auto f = k->library_file_name(c.lib, c.major, c.os);
    if (!c.file) {
      EXPECT_FALSE(f.has_value()) << *f;
      continue;
    }
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(*f, c.file);
  }
}

TEST(KbQueries, LibraryFromFileName) {
  auto k = kb();
  const std::tuple<const char*, const char*, int> cases[] = {
      {"libcublasLt.so.12", "cublasLt", 12},
      {"cublasLt64_12.dll", "cublasLt", 12},
      {"CUBLASLT64_12.DLL", "cublasLt", 12},
      {"cudart64_110.dll", "cudart", 11},
      {"libcudart.so.11.0", "cudart", 11},
      {"libcudart.so.12", "cudart", 12},
      {"libcublas.so.11", "cublas", 11},
      {"cufft64_10.dll", "cufft", 11},
      {"libcusolver.so.11", "cusolver", 11},  // CUDA 11 and 12: the lowest
      {"libcusparse.so.12", "cusparse", 12},
      {"nvrtc64_112_0.dll", "nvrtc", 11},
      {"libnvJitLink.so.13", "nvJitLink", 13},
      {"libcudnn.so.9", "cudnn", 9},
      {"cudnn64_8.dll", "cudnn", 8},
      {"libnccl.so.2", "nccl", 2},
      {"libcuda.so.1", "cuda", 0},
      {"/usr/local/cuda/lib64/libcublasLt.so.12", "cublasLt", 12},
      {"C:\\CUDA\\bin\\cublas64_12.dll", "cublas", 12},
      {"libcublasLt.so.12.4.5.8", "cublasLt", 12},
      {"libcudart.so.11.8.89", "cudart", 11},
  };
  for (const auto& [file, lib, major] : cases) {
    SCOPED_TRACE(file);
    auto r = k->library_from_file_name(file);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->first, lib);
    EXPECT_EQ(r->second, major);
  }
  for (const char* unknown : {"", "libfoo.so.1", "libcublasLt.so", "libcublasLt.so.99", "x.dll"}) {
    EXPECT_FALSE(k->library_from_file_name(unknown).has_value()) << unknown;
  }
  const LibraryInfo* cus = k->library_info_for_file("libcusolver.so.11");
  ASSERT_NE(cus, nullptr);
  EXPECT_TRUE(cus->ref.confirmed);
  const LibraryInfo* cr10 = k->library_info("cudart", 10);
  ASSERT_NE(cr10, nullptr);
  EXPECT_FALSE(cr10->ref.confirmed);

  // Round trip for every name in the table.
  json doc = embedded_json("libnames.json");
  for (const auto& l : doc["libraries"]) {
    for (const char* key : {"linux", "windows"}) {
      for (const auto& n : l[key]) {
        auto r = k->library_from_file_name(n.get<std::string>());
        ASSERT_TRUE(r.has_value()) << n;
        EXPECT_EQ(r->first, l["library"].get<std::string>()) << n;
      }
    }
  }
}

TEST(KbQueries, FindingLookup) {
  auto k = kb();
  const FindingInfo* f = k->finding("nvml-driver-library-mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->section, "B. Linux driver, kernel module and device access");
  ASSERT_FALSE(f->error_text.empty());
  EXPECT_EQ(f->error_text.front(), "Failed to initialize NVML: Driver/library version mismatch");
  EXPECT_GE(f->fix.size(), 2u);
  const FindingInfo* low = k->finding("win-install-path-special-chars");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->confidence, "lower");
}

// ---- loading ---------------------------------------------------------------------------
TEST(KbLoad, DirOfRepoEqualsEmbedded) {
  auto dir = Kb::load_dir(std::string(DLENV_SOURCE_DIR) + "/kb");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  auto emb = kb();
  EXPECT_EQ((*dir)->describe(), emb->describe());
  for (const auto& [name, text] : embedded_texts()) {
    EXPECT_EQ((*dir)->file_text(name), text) << name;
  }
  EXPECT_EQ((*dir)->findings().size(), emb->findings().size());
  auto a = (*dir)->max_cuda_for_driver(V("535.104.05"), Os::linux);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->max_cuda, V("12.2"));
}

TEST(KbLoad, BrokenJsonNamesTheFile) {
  fs::path dir = temp_dir("broken");
  for (const auto& [name, text] : embedded_texts()) std::ofstream(dir / name) << text;
  std::ofstream(dir / "gpus.json", std::ios::trunc)
      << "{\n  \"schema\": 1,\n  \"gpus\": [\n    {,\n";
  auto r = Kb::load_dir(dir.string());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("gpus.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("line 4"), std::string::npos) << r.error().message;
}

TEST(KbLoad, MissingRequiredFileIsNamed) {
  fs::path dir = temp_dir("missing");
  for (const auto& [name, text] : embedded_texts()) {
    if (name != "cudnn.json") std::ofstream(dir / name) << text;
  }
  auto r = Kb::load_dir(dir.string());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("cudnn.json"), std::string::npos) << r.error().message;
  EXPECT_FALSE(Kb::load_dir((dir / "nope").string()).has_value());
}

TEST(KbLoad, SchemaErrorsNameFileAndRow) {
  auto files = embedded_texts();
  json d = json::parse(files["cuda_driver.json"]);
  d["toolkit_driver"][3]["linux_min"] = 5;
  files["cuda_driver.json"] = d.dump();
  auto r = Kb::load_files(files);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("cuda_driver.json"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("toolkit_driver[3].linux_min"), std::string::npos)
      << r.error().message;

  files = embedded_texts();
  json g = json::parse(files["gpus.json"]);
  g["gpus"][0].erase("confirmed");
  files["gpus.json"] = g.dump();
  r = Kb::load_files(files);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("gpus.json: gpus[0]"), std::string::npos) << r.error().message;

  files = embedded_texts();
  json t = json::parse(files["cuda_driver.json"]);
  std::swap(t["toolkit_driver"][0], t["toolkit_driver"][1]);
  files["cuda_driver.json"] = t.dump();
  EXPECT_FALSE(Kb::load_files(files).has_value());

  files = embedded_texts();
  files.erase("findings.json");
  r = Kb::load_files(files);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("findings.json"), std::string::npos);
}

TEST(KbQueries, CudnnArchivesByDigestAndByName) {
  const std::string file = "cudnn-linux-x86_64-9.17.0.29_cuda13-archive.tar.xz";
  const CudnnArchive* a = kb()->cudnn_archive_by_file(file);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->cudnn, V("9.17.0.29"));
  EXPECT_EQ(a->cuda_major, 13);
  EXPECT_EQ(a->platform, "linux-x86_64");
  EXPECT_TRUE(a->ref.confirmed);
  EXPECT_EQ(a->sha256, "455f15075493c82a1a8850aae6120f3fa6f7e457cbef56c1cb2e0a618b5b509e");
  EXPECT_EQ(kb()->cudnn_archive_by_sha256(a->sha256), a);
  EXPECT_EQ(kb()->cudnn_archive_by_sha256(std::string(64, '0')), nullptr);
  EXPECT_EQ(kb()->cudnn_archive_by_file("cudnn-linux-x86_64-9.17.0.29_cuda13-archive.zip"),
            nullptr);
  // Optional file: a KB directory without it loads, and knows no archive.
  auto files = embedded_texts();
  files.erase("cudnn_archives.json");
  auto r = Kb::load_files(files);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)->cudnn_archive_by_file(file), nullptr);
}

TEST(KbLoad, CudnnArchiveRowsAreChecked) {
  for (const auto& [field, value, expect] : std::vector<std::tuple<std::string, json, std::string>>{
           {"sha256", "ABC", "archives[2].sha256: expected 64 lower-case hex digits"},
           {"file", "redist/cudnn.tar.xz", "archives[2].file: expected a file name"},
           {"cuda_major", "13", "archives[2]"}}) {
    auto files = embedded_texts();
    json d = json::parse(files["cudnn_archives.json"]);
    d["archives"][2][field] = value;
    files["cudnn_archives.json"] = d.dump();
    auto r = Kb::load_files(files);
    ASSERT_FALSE(r.has_value()) << field;
    EXPECT_NE(r.error().message.find("cudnn_archives.json"), std::string::npos);
    EXPECT_NE(r.error().message.find(expect), std::string::npos) << r.error().message;
  }
  auto files = embedded_texts();
  json d = json::parse(files["cudnn_archives.json"]);
  d["archives"][3]["sha256"] = d["archives"][1]["sha256"];
  files["cudnn_archives.json"] = d.dump();
  auto r = Kb::load_files(files);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("archives[3].sha256: duplicate digest"), std::string::npos)
      << r.error().message;
}

TEST(KbLoad, LoadFilesMatchesEmbedded) {
  auto r = Kb::load_files(embedded_texts());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)->describe(), kb()->describe());
  // The embedded KB parses each table on first use; every table answers as the
  // eagerly loaded one does (an empty lazy table would fail these).
  const Kb& eager = **r;
  const Kb& lazy = *kb();
  EXPECT_EQ(lazy.max_cuda_for_driver(V("580.65.06"), Os::linux)->max_cuda,
            eager.max_cuda_for_driver(V("580.65.06"), Os::linux)->max_cuda);
  EXPECT_EQ(lazy.arch_support(V("12.8"))->max_cc, eager.arch_support(V("12.8"))->max_cc);
  EXPECT_EQ(lazy.architecture_name(V("9.0")), "Hopper");
  EXPECT_EQ(lazy.gpu_by_name("NVIDIA H200")->compute_capability,
            eager.gpu_by_name("NVIDIA H200")->compute_capability);
  EXPECT_EQ(lazy.cudnn_builds(V("9.1.0")).size(), eager.cudnn_builds(V("9.1.0")).size());
  EXPECT_FALSE(lazy.cudnn_builds(V("9.1.0")).empty());
  EXPECT_EQ(lazy.cudnn_library_files(9, Os::linux), eager.cudnn_library_files(9, Os::linux));
  EXPECT_EQ(lazy.library_file_name("cublasLt", 12, Os::linux), "libcublasLt.so.12");
  EXPECT_EQ(lazy.findings().size(), eager.findings().size());
}

}  // namespace
}  // namespace dlenv
