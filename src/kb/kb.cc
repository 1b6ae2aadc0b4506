// Kb: loads kb/*.json (embedded or from a directory) into typed tables and answers
// the compatibility queries of kb.h. Rows marked "confirmed": false never decide an
// answer on their own: where a confirmed rule exists (the CUDA 13 driver branch) it is
// used instead, and the row's KbRef carries confirmed=false so callers only warn.
#include "kb/kb.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "util/strings.h"

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

constexpr const char* kRequiredFiles[] = {"cuda_driver.json", "cuda_arch.json", "gpus.json",
                                          "cudnn.json",       "libnames.json",  "findings.json"};

// Thrown inside the loader only; load_impl turns it into an Error naming the file.
struct SchemaError {
  std::string message;
};

[[noreturn]] void schema_fail(const std::string& path, const std::string& what) {
  throw SchemaError{path + ": " + what};
}

std::string type_name(const json& j) {
  return j.type_name();
}

const json& member(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) schema_fail(path, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) schema_fail(path, std::string("missing field \"") + key + "\"");
  return *it;
}

const json& array_member(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_array()) schema_fail(path + "." + key, "expected an array, got " + type_name(j));
  return j;
}

std::string get_string(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_string()) schema_fail(path + "." + key, "expected a string, got " + type_name(j));
  return j.get<std::string>();
}

std::string get_string_or(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) schema_fail(path + "." + key, "expected a string, got " + type_name(*it));
  return it->get<std::string>();
}

std::optional<std::string> get_opt_string(const json& obj, const char* key,
                                          const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) schema_fail(path + "." + key, "expected a string, got " + type_name(*it));
  return it->get<std::string>();
}

bool is_version_text(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (s[i + 1] == '.') return false;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

// A whole-string dotted version ("525.60.13").
Version strict_version(const std::string& text, const std::string& path) {
  auto v = Version::parse(text);
  if (!is_version_text(text) || !v) schema_fail(path, "expected a version, got \"" + text + "\"");
  return *v;
}

Version get_version(const json& obj, const char* key, const std::string& path) {
  return strict_version(get_string(obj, key, path), path + "." + key);
}

std::optional<Version> get_opt_version(const json& obj, const char* key, const std::string& path) {
  auto s = get_opt_string(obj, key, path);
  if (!s) return std::nullopt;
  return strict_version(*s, path + "." + key);
}

int get_int(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_number_integer()) {
    schema_fail(path + "." + key, "expected an integer, got " + type_name(j));
  }
  return j.get<int>();
}

bool get_bool(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_boolean()) schema_fail(path + "." + key, "expected true/false, got " + type_name(j));
  return j.get<bool>();
}

std::vector<std::string> get_strings(const json& obj, const char* key, const std::string& path,
                                     bool required = true) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) schema_fail(path, std::string("missing field \"") + key + "\"");
    return out;
  }
  if (!it->is_array()) schema_fail(path + "." + key, "expected an array, got " + type_name(*it));
  for (size_t i = 0; i < it->size(); ++i) {
    const json& e = (*it)[i];
    if (!e.is_string()) {
      schema_fail(path + "." + key + "[" + std::to_string(i) + "]", "expected a string");
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

KbRef get_ref(const json& obj, const std::string& path) {
  KbRef ref;
  ref.source = get_string(obj, "source", path);
  if (!starts_with(ref.source, "https://") && !starts_with(ref.source, "http://")) {
    schema_fail(path + ".source", "expected an http(s) URL, got \"" + ref.source + "\"");
  }
  ref.confirmed = get_bool(obj, "confirmed", path);
  return ref;
}

std::string idx(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// "12.0-12.2", "12.x", "11.8", "10.1.105", "13" -> inclusive major.minor bounds.
std::pair<Version, Version> parse_cuda_range(const std::string& text, const std::string& path) {
  auto side = [&](std::string_view s, bool high) -> Version {
    std::string t(trim(s));
    if (ends_with(t, ".x")) {
      Version m = strict_version(t.substr(0, t.size() - 2), path);
      if (m.parts().size() != 1) schema_fail(path, "bad CUDA range \"" + text + "\"");
      return high ? Version{m.major(), 99} : Version{m.major(), 0};
    }
    Version v = strict_version(t, path);
    if (v.parts().size() == 1) return high ? Version{v.major(), 99} : Version{v.major(), 0};
    return v.truncated(2);
  };
  auto dash = text.find('-');
  if (dash == std::string::npos) return {side(text, false), side(text, true)};
  return {side(std::string_view(text).substr(0, dash), false),
          side(std::string_view(text).substr(dash + 1), true)};
}

// cuDNN release ranges: "7.6.4-7.6.5", "8.4-8.7", "9.21.0". A side with fewer components
// covers every longer version under it ("8.7" covers 8.7.0.84).
struct VersionRange {
  Version lo, hi;
  bool contains(const Version& v) const {
    return lo <= v.truncated(lo.parts().size()) && v.truncated(hi.parts().size()) <= hi;
  }
};

VersionRange parse_release_range(const std::string& text, const std::string& path) {
  auto dash = text.find('-');
  if (dash == std::string::npos) {
    Version v = strict_version(std::string(trim(text)), path);
    return {v, v};
  }
  VersionRange r{strict_version(std::string(trim(std::string_view(text).substr(0, dash))), path),
                 strict_version(std::string(trim(std::string_view(text).substr(dash + 1))), path)};
  if (r.hi < r.lo) schema_fail(path, "empty range \"" + text + "\"");
  return r;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = digits[v & 0xf];
    v >>= 4;
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return to_lower(a) == to_lower(b);
}

// ---------------------------------------------------------------------------------------
// GPU name normalisation: lower case, "(...)" dropped, '_' -> ' ', spaces collapsed,
// "nvidia "/"geforce "/"tesla " prefixes dropped, then trailing memory / form-factor
// tokens ("80gb", "hbm3", "pcie", "sxm5", "nvl") dropped.
bool is_suffix_token(std::string_view t) {
  if (t.empty()) return false;
  if (t == "pcie" || t == "nvl" || t == "smx") return true;
  auto digits_then = [&](std::string_view suffix) {
    if (!ends_with(t, suffix) || t.size() == suffix.size()) return false;
    for (char c : t.substr(0, t.size() - suffix.size())) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (digits_then("gb") || digits_then("g")) return true;
  auto prefix_then_digits = [&](std::string_view prefix, bool allow_e) {
    if (!starts_with(t, prefix)) return false;
    std::string_view rest = t.substr(prefix.size());
    if (allow_e && !rest.empty() && rest.back() == 'e') rest.remove_suffix(1);
    for (char c : rest) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  return prefix_then_digits("hbm", true) || prefix_then_digits("sxm", false);
}

std::string normalize_gpu_name(std::string_view name) {
  std::string s;
  int depth = 0;
  for (char c : to_lower(name)) {
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (depth) --depth;
    } else if (!depth) {
      s += (c == '_' || c == '\t') ? ' ' : c;
    }
  }
  std::string out;
  for (char c : s) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  for (bool again = true; again;) {
    again = false;
    for (std::string_view p : {"nvidia ", "geforce ", "tesla "}) {
      if (starts_with(out, p)) {
        out.erase(0, p.size());
        again = true;
      }
    }
  }
  for (;;) {
    auto cut = out.find_last_of(" -");
    if (cut == std::string::npos) break;
    if (!is_suffix_token(std::string_view(out).substr(cut + 1))) break;
    out.erase(cut);
    while (!out.empty() && (out.back() == ' ' || out.back() == '-')) out.pop_back();
  }
  return out;
}

// ---------------------------------------------------------------------------------------
struct ToolkitRow {
  Version toolkit;
  Version cuda;  // major.minor
  std::string label;
  std::optional<int> branch;  // 580 for "R580"
  std::optional<Version> linux_min, windows_min;
  KbRef ref;
  // The floor queries use, per OS (see DriverCudaSupport::driver_floor), and where it
  // came from (this row, the branch rule, or an older row it was clamped to).
  std::optional<Version> eff_linux, eff_windows;
  KbRef eff_ref_linux, eff_ref_windows;
};

struct BranchRow {
  Version cuda;
  std::optional<int> driver_min;
  KbRef ref;
};

struct CompatRow {
  int cuda_major = 0;
  Version branch_min;
  std::optional<Version> linux_min, windows_min;
  KbRef ref;
};

struct ArchRow {
  Version cuda, min_cc, max_cc;
  std::vector<std::string> sass;
  bool sass_confirmed = false;
  KbRef ref;
};

struct FamilyRow {
  std::string name;
  std::vector<Version> ccs;
};

struct GpuRow {
  GpuInfo info;
  std::string key;  // normalised name
};

struct CudnnRelease {
  std::vector<VersionRange> versions;
  std::vector<CudnnBuild> builds;
};

std::optional<int> parse_branch(const std::optional<std::string>& s, const std::string& path) {
  if (!s) return std::nullopt;
  std::string_view t = *s;
  if (!t.empty() && (t.front() == 'R' || t.front() == 'r')) t.remove_prefix(1);
  auto n = parse_int(t);
  if (!n || *n <= 0 || *n > 100000) schema_fail(path, "expected a driver branch like R580");
  return static_cast<int>(*n);
}

class KbImpl final : public Kb {
 public:
  // `files`: name -> text, viewing either `owned` (moved in: its nodes, and so the
  // strings the views point into, keep their addresses) or static data (the
  // embedded KB, which is then neither copied nor touched until a table is used).
  KbImpl(std::map<std::string, std::string_view> files, std::map<std::string, std::string> owned)
      : owned_(std::move(owned)), files_(std::move(files)) {}

  // The tables, each filled by one loader from one file.
  enum class Table : size_t { driver, arch, gpus, cudnn, libnames, findings, archives, count };
  struct TableLoader {
    const char* file;
    void (KbImpl::*load)(const json&);
    bool optional = false;  // a KB directory without the file leaves the table empty
  };
  static const TableLoader& loader(size_t i) {
    static constexpr TableLoader kLoaders[] = {
        {"cuda_driver.json", &KbImpl::load_driver},
        {"cuda_arch.json", &KbImpl::load_arch},
        {"gpus.json", &KbImpl::load_gpus},
        {"cudnn.json", &KbImpl::load_cudnn},
        {"libnames.json", &KbImpl::load_libnames},
        {"findings.json", &KbImpl::load_findings},
        {"cudnn_archives.json", &KbImpl::load_archives, true},
    };
    static_assert(std::size(kLoaders) == static_cast<size_t>(Table::count));
    return kLoaders[i];
  }

  // Eager: every table now. Throws SchemaError naming `origin` + the file and the row.
  // Lazy (the embedded KB, validated by kb_test): each table is parsed on its first
  // query, so a command pays only for the tables it uses (`deps` reads libnames only).
  void load(const std::map<std::string, json>& docs, const std::string& origin, bool lazy) {
    lazy_ = lazy;
    if (lazy) return;
    for (size_t i = 0; i < static_cast<size_t>(Table::count); ++i) {
      const TableLoader& l = loader(i);
      if (l.optional && !docs.count(l.file)) continue;
      try {
        (this->*l.load)(docs.at(l.file));
      } catch (const SchemaError& e) {
        throw SchemaError{origin + l.file + ": " + e.message};
      } catch (const json::exception& e) {
        throw SchemaError{origin + l.file + ": " + e.what()};
      }
    }
  }

  // --- queries -------------------------------------------------------------------------
  std::optional<DriverCudaSupport> max_cuda_for_driver(const Version& driver,
                                                       Os os) const override {
    ensure(Table::driver);
    const ToolkitRow* best = nullptr;
    for (const auto& row : toolkits_) {
      const auto& floor = os == Os::linux ? row.eff_linux : row.eff_windows;
      if (floor && *floor <= driver) best = &row;
    }
    if (!best) return std::nullopt;
    DriverCudaSupport out;
    out.max_cuda = best->cuda;
    out.toolkit_label = best->label;
    out.ref = os == Os::linux ? best->eff_ref_linux : best->eff_ref_windows;
    out.driver_floor = os == Os::linux ? *best->eff_linux : *best->eff_windows;
    for (const auto& c : compat_) {
      if (compat_floor(c, os) <= driver) out.minor_compat_majors.push_back(c.cuda_major);
    }
    return out;
  }

  std::optional<Version> min_driver_for_cuda(const Version& cuda, Os os,
                                             bool minor_compat) const override {
    ensure(Table::driver);
    std::optional<Version> table;
    const Version c2 = cuda.truncated(2);
    if (cuda.parts().size() > 2) {
      for (const auto& row : toolkits_) {
        if (row.toolkit == cuda) table = os == Os::linux ? row.eff_linux : row.eff_windows;
      }
    }
    if (!table) {
      for (const auto& row : toolkits_) {
        if (row.cuda != c2) continue;
        const auto& f = os == Os::linux ? row.eff_linux : row.eff_windows;
        if (f) {
          table = f;  // rows ascend, so the first is the release's lowest (GA) floor
          break;
        }
      }
    }
    if (minor_compat) {
      for (const auto& c : compat_) {
        if (c.cuda_major != cuda.major()) continue;
        Version f = compat_floor(c, os);
        if (!table || f < *table) table = f;
      }
    }
    return table;
  }

  std::optional<ArchSupport> arch_support(const Version& cuda) const override {
    ensure(Table::arch);
    const Version c2 = cuda.truncated(2);
    const ArchRow* best = nullptr;
    for (const auto& row : arch_) {
      if (row.cuda <= c2) best = &row;
    }
    if (!best) return std::nullopt;
    ArchSupport out;
    out.cuda = best->cuda;
    out.min_cc = best->min_cc;
    out.max_cc = best->max_cc;
    out.sass_targets = best->sass;
    out.ref = best->ref;
    out.sass_targets_confirmed = best->sass_confirmed;
    return out;
  }

  std::string architecture_name(const Version& cc) const override {
    ensure(Table::arch);
    const Version c2 = cc.truncated(2);
    const FamilyRow* nearest = nullptr;
    Version nearest_cc;
    for (const auto& f : families_) {
      for (const auto& v : f.ccs) {
        if (v == c2) return f.name;
        if (v.major() == c2.major() && v < c2 && (!nearest || nearest_cc < v)) {
          nearest = &f;
          nearest_cc = v;
        }
      }
    }
    return nearest ? nearest->name : std::string();
  }

  std::optional<GpuInfo> gpu_by_name(std::string_view name) const override {
    ensure(Table::gpus);
    const std::string q = normalize_gpu_name(name);
    if (q.empty()) return std::nullopt;
    const GpuRow* best = nullptr;
    for (const auto& g : gpus_) {
      const std::string& k = g.key;
      if (k.empty() || k.size() > q.size() || q.compare(0, k.size(), k) != 0) continue;
      if (q.size() > k.size()) {
        char next = q[k.size()];
        if (next != ' ' && next != '-' && next != '/') continue;
      }
      if (!best || k.size() > best->key.size()) best = &g;
    }
    if (!best) return std::nullopt;
    return best->info;
  }

  std::vector<CudnnBuild> cudnn_builds(const Version& cudnn) const override {
    ensure(Table::cudnn);
    for (const auto& r : cudnn_) {
      for (const auto& v : r.versions) {
        if (v.contains(cudnn)) return r.builds;
      }
    }
    // Not listed: the nearest older release of the same major, marked unconfirmed.
    const CudnnRelease* best = nullptr;
    Version best_hi;
    for (const auto& r : cudnn_) {
      for (const auto& v : r.versions) {
        if (v.hi.major() != cudnn.major() || !(v.hi < cudnn)) continue;
        if (!best || best_hi < v.hi) {
          best = &r;
          best_hi = v.hi;
        }
      }
    }
    if (!best) return {};
    std::vector<CudnnBuild> out = best->builds;
    for (auto& b : out) {
      b.ref.confirmed = false;
      std::string inferred = "cuDNN " + cudnn.str() + " is not in the KB; builds of the nearest " +
                             "older release " + best_hi.str();
      b.note = b.note.empty() ? inferred : inferred + "; " + b.note;
    }
    return out;
  }

  std::vector<std::string> cudnn_library_files(int cudnn_major, Os os) const override {
    ensure(Table::cudnn);
    auto it = cudnn_files_.find(cudnn_major);
    if (it == cudnn_files_.end()) return {};
    return os == Os::linux ? it->second.first : it->second.second;
  }

  std::optional<std::string> library_file_name(std::string_view library, int cuda_major,
                                               Os os) const override {
    const LibraryInfo* info = library_info(library, cuda_major);
    if (!info) return std::nullopt;
    const auto& names = os == Os::linux ? info->linux_names : info->windows_names;
    if (names.empty()) return std::nullopt;
    return names.front();
  }

  std::optional<std::pair<std::string, int>> library_from_file_name(
      std::string_view file_name) const override {
    const LibraryInfo* info = library_info_for_file(file_name);
    if (!info) return std::nullopt;
    int major = 0;
    if (info->own_major) {
      major = *info->own_major;
    } else if (!info->cuda_majors.empty()) {
      major = *std::min_element(info->cuda_majors.begin(), info->cuda_majors.end());
    }
    return std::make_pair(info->library, major);
  }

  // A row answers for `major` when it is the library's own major (cudnn 9, nccl 2), one of
  // its CUDA majors, or when it is tied to no major at all (the driver's libcuda).
  const LibraryInfo* library_info(std::string_view library, int major) const override {
    ensure(Table::libnames);
    for (const auto& l : libs_) {
      if (!iequals(l.library, library)) continue;
      bool any = l.cuda_majors.empty() && !l.own_major;
      if (any || (l.own_major && *l.own_major == major) ||
          std::find(l.cuda_majors.begin(), l.cuda_majors.end(), major) != l.cuda_majors.end()) {
        return &l;
      }
    }
    return nullptr;
  }

  const LibraryInfo* library_info_for_file(std::string_view file_name) const override {
    ensure(Table::libnames);
    const std::string_view base = file_name_of(file_name);
    if (base.empty()) return nullptr;
    // 1. exact SONAME / case-insensitive DLL name.
    for (const auto& l : libs_) {
      for (const auto& n : l.linux_names) {
        if (n == base) return &l;
      }
      for (const auto& n : l.windows_names) {
        if (iequals(n, base)) return &l;
      }
    }
    // 2. a longer Linux name: "libcublasLt.so.12.4.5.8" -> "libcublasLt.so.12",
    //    "libcudart.so.11.8.89" -> "libcudart.so.11.0" (same library and first number).
    auto so = base.find(".so.");
    if (so == std::string_view::npos) return nullptr;
    std::string_view stem = base.substr(0, so + 4);
    std::string_view rest = base.substr(so + 4);
    if (!is_version_text(rest)) return nullptr;
    std::string_view first = rest.substr(0, rest.find('.'));
    for (const auto& l : libs_) {
      for (const auto& n : l.linux_names) {
        std::string_view nv = n;
        auto nso = nv.find(".so.");
        if (nso == std::string_view::npos || nv.substr(0, nso + 4) != stem) continue;
        std::string_view nrest = nv.substr(nso + 4);
        if (nrest.substr(0, nrest.find('.')) == first) return &l;
      }
    }
    return nullptr;
  }

  // Parses table `t` on first use when lazy. A table that fails to parse stays
  // empty (the embedded tables cannot: kb_test loads them eagerly).
  void ensure(Table t) const {
    if (!lazy_) return;
    const auto i = static_cast<size_t>(t);
    std::call_once(once_[i], [this, i] {
      auto* self = const_cast<KbImpl*>(this);
      auto it = files_.find(loader(i).file);
      if (it == files_.end()) return;
      try {
        (self->*loader(i).load)(json::parse(it->second));
      } catch (const std::exception&) {
        self->clear(static_cast<Table>(i));
      } catch (const SchemaError&) {
        self->clear(static_cast<Table>(i));
      }
    });
  }

  void clear(Table t) {
    switch (t) {
      case Table::driver: toolkits_.clear(), branches_.clear(), compat_.clear(); break;
      case Table::arch: arch_.clear(), families_.clear(); break;
      case Table::gpus: gpus_.clear(); break;
      case Table::cudnn: cudnn_.clear(), cudnn_files_.clear(); break;
      case Table::libnames: libs_.clear(); break;
      case Table::findings: findings_.clear(); break;
      case Table::archives: archives_.clear(); break;
      case Table::count: break;
    }
  }

  const FindingInfo* finding(std::string_view id) const override {
    ensure(Table::findings);
    for (const auto& f : findings_) {
      if (f.id == id) return &f;
    }
    return nullptr;
  }
  const std::vector<FindingInfo>& findings() const override {
    ensure(Table::findings);
    return findings_;
  }

  const CudnnArchive* cudnn_archive_by_sha256(std::string_view sha256) const override {
    ensure(Table::archives);
    for (const auto& a : archives_) {
      if (a.sha256 == sha256) return &a;
    }
    return nullptr;
  }
  const CudnnArchive* cudnn_archive_by_file(std::string_view file_name) const override {
    ensure(Table::archives);
    for (const auto& a : archives_) {
      if (a.file == file_name) return &a;
    }
    return nullptr;
  }

  std::string describe() const override {
    std::string all;
    std::vector<std::string> parts;
    for (const auto& [name, text] : files_) {
      parts.push_back(name + "@" + hex64(fnv1a(text)).substr(0, 12));
      all += name;
      all += '\0';
      all += text;
      all += '\0';
    }
    return "kb " + hex64(fnv1a(all)).substr(0, 12) + " (" + join(parts, ", ") + ")";
  }

  NewestReleases newest_releases() const override {
    ensure(Table::driver);
    ensure(Table::cudnn);
    NewestReleases out;
    for (const auto& row : toolkits_) {
      if (!out.cuda_toolkit || *out.cuda_toolkit < row.toolkit) out.cuda_toolkit = row.toolkit;
    }
    for (const auto& rel : cudnn_) {
      for (const auto& range : rel.versions) {
        if (!out.cudnn || *out.cudnn < range.hi) out.cudnn = range.hi;
      }
    }
    return out;
  }

  std::vector<std::string> file_names() const override {
    std::vector<std::string> out;
    for (const auto& [name, text] : files_) out.push_back(name);
    return out;
  }

  std::optional<std::string> file_text(std::string_view name) const override {
    auto it = files_.find(std::string(name));
    if (it == files_.end()) return std::nullopt;
    return std::string(it->second);
  }

 private:
  static Version compat_floor(const CompatRow& c, Os os) {
    const auto& exact = os == Os::linux ? c.linux_min : c.windows_min;
    return exact ? *exact : c.branch_min;
  }

  void load_driver(const json& doc) {
    const std::string base = "toolkit_driver";
    const json& rows = array_member(doc, "toolkit_driver", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx(base, i);
      const json& r = rows[i];
      ToolkitRow t;
      t.toolkit = get_version(r, "toolkit", p);
      t.cuda = get_version(r, "cuda", p);
      if (t.cuda.parts().size() != 2 || t.toolkit.truncated(2) != t.cuda) {
        schema_fail(p + ".cuda", "must be the toolkit's major.minor");
      }
      t.label = get_string(r, "label", p);
      t.branch = parse_branch(get_opt_string(r, "branch", p), p + ".branch");
      t.linux_min = get_opt_version(r, "linux_min", p);
      t.windows_min = get_opt_version(r, "windows_min", p);
      t.ref = get_ref(r, p);
      if (!toolkits_.empty() && !(toolkits_.back().toolkit < t.toolkit)) {
        schema_fail(p + ".toolkit", "rows must ascend by toolkit without duplicates");
      }
      toolkits_.push_back(std::move(t));
    }
    const json& br = array_member(doc, "branches", "");
    for (size_t i = 0; i < br.size(); ++i) {
      const std::string p = idx("branches", i);
      BranchRow b;
      b.cuda = get_version(br[i], "cuda", p);
      b.driver_min = parse_branch(get_opt_string(br[i], "branch", p), p + ".branch");
      b.ref = get_ref(br[i], p);
      branches_.push_back(std::move(b));
    }
    const json& mv = array_member(doc, "minor_version_compatibility", "");
    for (size_t i = 0; i < mv.size(); ++i) {
      const std::string p = idx("minor_version_compatibility", i);
      CompatRow c;
      c.cuda_major = get_int(mv[i], "cuda_major", p);
      c.branch_min = get_version(mv[i], "branch_min", p);
      c.linux_min = get_opt_version(mv[i], "linux_min", p);
      c.windows_min = get_opt_version(mv[i], "windows_min", p);
      c.ref = get_ref(mv[i], p);
      compat_.push_back(std::move(c));
    }
    std::sort(compat_.begin(), compat_.end(),
              [](const CompatRow& a, const CompatRow& b) { return a.cuda_major < b.cuda_major; });
    compute_effective_floors(Os::linux);
    compute_effective_floors(Os::windows);
  }

  // The branch rule for a row: its own "branch" (R590 -> 590), confirmed when the
  // branches table confirms that CUDA minor's branch (or the row itself is confirmed).
  std::optional<std::pair<Version, KbRef>> branch_rule(const ToolkitRow& row) const {
    if (!row.branch) return std::nullopt;
    KbRef ref = row.ref;
    for (const auto& b : branches_) {
      if (b.cuda == row.cuda && b.driver_min == row.branch && (b.ref.confirmed || !ref.confirmed)) {
        ref = b.ref;
      }
    }
    return std::make_pair(Version{*row.branch}, ref);
  }

  void compute_effective_floors(Os os) {
    std::optional<Version> prev;
    KbRef prev_ref;
    for (auto& row : toolkits_) {
      const auto& exact = os == Os::linux ? row.linux_min : row.windows_min;
      auto rule = branch_rule(row);
      std::optional<Version> floor;
      KbRef ref = row.ref;
      if (exact && (row.ref.confirmed || !rule || !rule->second.confirmed)) {
        floor = exact;  // confirmed value, or the only data there is (ref says unconfirmed)
      } else if (rule) {
        floor = rule->first;  // N/A in NVIDIA's table, or an unconfirmed exact value
        ref = rule->second;
      }
      if (floor && prev && *floor < *prev) {  // never below an older toolkit
        floor = prev;
        ref = prev_ref;
      }
      if (floor) {
        prev = floor;
        prev_ref = ref;
      }
      (os == Os::linux ? row.eff_linux : row.eff_windows) = floor;
      (os == Os::linux ? row.eff_ref_linux : row.eff_ref_windows) = ref;
    }
  }

  void load_arch(const json& doc) {
    const json& rows = array_member(doc, "toolkits", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("toolkits", i);
      ArchRow a;
      a.cuda = get_version(rows[i], "cuda", p);
      a.min_cc = get_version(rows[i], "min_cc", p);
      a.max_cc = get_version(rows[i], "max_cc", p);
      a.sass = get_strings(rows[i], "sass_targets", p);
      a.sass_confirmed = get_bool(rows[i], "sass_targets_confirmed", p);
      a.ref = get_ref(rows[i], p);
      if (a.max_cc < a.min_cc) schema_fail(p, "min_cc > max_cc");
      if (!arch_.empty() && !(arch_.back().cuda < a.cuda)) {
        schema_fail(p + ".cuda", "rows must ascend by CUDA version without duplicates");
      }
      arch_.push_back(std::move(a));
    }
    const json& fams = array_member(doc, "architectures", "");
    for (size_t i = 0; i < fams.size(); ++i) {
      const std::string p = idx("architectures", i);
      FamilyRow f;
      f.name = get_string(fams[i], "architecture", p);
      for (const auto& s : get_strings(fams[i], "compute_capabilities", p)) {
        f.ccs.push_back(strict_version(s, p + ".compute_capabilities"));
      }
      get_ref(fams[i], p);
      families_.push_back(std::move(f));
    }
  }

  void load_gpus(const json& doc) {
    const json& rows = array_member(doc, "gpus", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("gpus", i);
      GpuRow g;
      g.info.name = get_string(rows[i], "name", p);
      g.info.compute_capability = get_version(rows[i], "compute_capability", p);
      g.info.segment = get_string(rows[i], "segment", p);
      g.info.ref = get_ref(rows[i], p);
      g.key = normalize_gpu_name(g.info.name);
      if (g.key.empty()) schema_fail(p + ".name", "empty after normalisation");
      gpus_.push_back(std::move(g));
    }
  }

  void load_cudnn(const json& doc) {
    const json& rows = array_member(doc, "releases", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("releases", i);
      const json& r = rows[i];
      CudnnRelease rel;
      for (const auto& s : get_strings(r, "cudnn", p)) {
        rel.versions.push_back(parse_release_range(s, p + ".cudnn"));
      }
      if (rel.versions.empty()) schema_fail(p + ".cudnn", "no versions");
      KbRef ref = get_ref(r, p);
      const json& builds = array_member(r, "builds", p);
      for (size_t j = 0; j < builds.size(); ++j) {
        const std::string bp = idx(p + ".builds", j);
        const json& b = builds[j];
        CudnnBuild cb;
        auto range = parse_cuda_range(get_string(b, "cuda", bp), bp + ".cuda");
        cb.cuda_min = range.first;
        cb.cuda_max = range.second;
        if (cb.cuda_max < cb.cuda_min) schema_fail(bp + ".cuda", "empty range");
        cb.ref = ref;
        cb.driver_linux_min = get_opt_version(b, "driver_linux_min", bp);
        cb.driver_windows_min = get_opt_version(b, "driver_windows_min", bp);
        for (const auto& s : get_strings(b, "compute_capability", bp, false)) {
          cb.compute_capabilities.push_back(strict_version(s, bp + ".compute_capability"));
        }
        cb.note = get_string_or(b, "note", bp);
        rel.builds.push_back(std::move(cb));
      }
      cudnn_.push_back(std::move(rel));
    }
    const json& files = member(doc, "library_files_by_major", "");
    if (!files.is_object()) schema_fail("library_files_by_major", "expected an object");
    for (const auto& [key, value] : files.items()) {
      const std::string p = "library_files_by_major." + key;
      auto major = parse_int(key);
      if (!major) schema_fail(p, "key must be a cuDNN major");
      get_ref(value, p);
      cudnn_files_[static_cast<int>(*major)] = {get_strings(value, "linux", p),
                                                get_strings(value, "windows", p)};
    }
  }

  void load_libnames(const json& doc) {
    const json& rows = array_member(doc, "libraries", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("libraries", i);
      const json& r = rows[i];
      LibraryInfo l;
      l.library = get_string(r, "library", p);
      const json& majors = array_member(r, "cuda_majors", p);
      for (const auto& m : majors) {
        if (!m.is_number_integer()) schema_fail(p + ".cuda_majors", "expected integers");
        l.cuda_majors.push_back(m.get<int>());
      }
      if (r.contains("own_major")) l.own_major = get_int(r, "own_major", p);
      l.linux_names = get_strings(r, "linux", p);
      l.windows_names = get_strings(r, "windows", p);
      l.note = get_string_or(r, "note", p);
      l.ref = get_ref(r, p);
      libs_.push_back(std::move(l));
    }
  }

  void load_findings(const json& doc) {
    const json& rows = array_member(doc, "findings", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("findings", i);
      const json& r = rows[i];
      FindingInfo f;
      f.id = get_string(r, "id", p);
      f.section = get_string(r, "section", p);
      f.title = get_string(r, "title", p);
      f.platforms = get_string(r, "platforms", p);
      f.error_text = get_strings(r, "error_text", p);
      f.cause = get_string(r, "cause", p);
      f.signals = get_strings(r, "signals", p);
      f.fix = get_strings(r, "fix", p);
      f.sources = get_strings(r, "sources", p);
      f.confidence = get_string_or(r, "confidence", p);
      f.error_note = get_string_or(r, "error_note", p);
      f.catalog_key = get_string_or(r, "catalog_key", p);
      f.severity = get_string(r, "severity", p);
      if (f.severity != "error" && f.severity != "warning" && f.severity != "info") {
        schema_fail(p + ".severity", "expected error, warning or info");
      }
      f.layer = get_string(r, "layer", p);
      f.plan_framework = get_string_or(r, "plan_framework", p);
      static const std::set<std::string> kLayers = {"driver", "gpu", "toolkit", "cudnn",
                                                    "python", "env", "host"};
      if (!kLayers.count(f.layer)) schema_fail(p + ".layer", "unknown layer \"" + f.layer + "\"");
      for (const auto& seen : findings_) {  // not finding(): that would re-enter the lazy load
        if (seen.id == f.id) schema_fail(p + ".id", "duplicate id \"" + f.id + "\"");
      }
      findings_.push_back(std::move(f));
    }
  }

  void load_archives(const json& doc) {
    const json& rows = array_member(doc, "archives", "");
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string p = idx("archives", i);
      const json& r = rows[i];
      CudnnArchive a;
      a.file = get_string(r, "file", p);
      a.cudnn = get_version(r, "cudnn", p);
      a.cuda_major = get_int(r, "cuda_major", p);
      a.platform = get_string(r, "platform", p);
      a.sha256 = get_string(r, "sha256", p);
      if (a.sha256.size() != 64 ||
          a.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
        schema_fail(p + ".sha256", "expected 64 lower-case hex digits");
      }
      if (a.file.find_first_of("/\\") != std::string::npos) {
        schema_fail(p + ".file", "expected a file name, not a path");
      }
      a.note = get_string_or(r, "note", p);
      a.ref = get_ref(r, p);
      for (const auto& seen : archives_) {
        if (seen.sha256 == a.sha256) schema_fail(p + ".sha256", "duplicate digest");
        if (seen.file == a.file) schema_fail(p + ".file", "duplicate file \"" + a.file + "\"");
      }
      archives_.push_back(std::move(a));
    }
  }

  std::map<std::string, std::string> owned_;
  std::map<std::string, std::string_view> files_;
  std::vector<ToolkitRow> toolkits_;
  std::vector<BranchRow> branches_;
  std::vector<CompatRow> compat_;
  std::vector<ArchRow> arch_;
  std::vector<FamilyRow> families_;
  std::vector<GpuRow> gpus_;
  std::vector<CudnnRelease> cudnn_;
  std::map<int, std::pair<std::vector<std::string>, std::vector<std::string>>> cudnn_files_;
  std::vector<LibraryInfo> libs_;
  std::vector<FindingInfo> findings_;
  std::vector<CudnnArchive> archives_;
  bool lazy_ = false;
  mutable std::array<std::once_flag, static_cast<size_t>(Table::count)> once_;
};

// `origin` prefixes file names in messages ("kb/" for a directory, "" for in-memory).
// `lazy`: each table is parsed on its first query (KbImpl::ensure).
// `files` views `owned` or static data (see KbImpl).
Result<std::shared_ptr<const Kb>> load_impl(std::map<std::string, std::string_view> files,
                                            std::map<std::string, std::string> owned,
                                            const std::string& origin, bool lazy = false) {
  for (const char* required : kRequiredFiles) {
    if (!files.count(required)) {
      return fail(origin + required + ": required knowledge-base file is missing");
    }
  }
  std::map<std::string, json> docs;
  if (!lazy) {  // lazy: each table is parsed on its first query (KbImpl::ensure)
    for (const auto& [name, text] : files) {
      try {
        json doc = json::parse(text);
        if (!doc.is_object()) return fail(origin + name + ": expected a JSON object at the top");
        auto schema = doc.find("schema");
        if (schema == doc.end() || !schema->is_number_integer() || schema->get<int>() != 1) {
          return fail(origin + name + ": unsupported or missing \"schema\" (expected 1)");
        }
        docs.emplace(name, std::move(doc));
      } catch (const json::parse_error& e) {
        return fail(origin + name + ": invalid JSON at byte " + std::to_string(e.byte) + ": " +
                    e.what());
      }
    }
  }
  auto kb = std::make_shared<KbImpl>(std::move(files), std::move(owned));
  try {
    kb->load(docs, origin, lazy);
  } catch (const SchemaError& e) {
    return fail(e.message);
  }
  return std::shared_ptr<const Kb>(std::move(kb));
}

Result<std::shared_ptr<const Kb>> load_owned(std::map<std::string, std::string> owned,
                                             const std::string& origin) {
  std::map<std::string, std::string_view> views;
  for (const auto& [name, text] : owned) views.emplace(name, text);
  return load_impl(std::move(views), std::move(owned), origin);
}

}  // namespace

Result<std::shared_ptr<const Kb>> Kb::load_files(const std::map<std::string, std::string>& files) {
  return load_owned(files, "");
}

Result<std::shared_ptr<const Kb>> Kb::load_embedded() {
  static const Result<std::shared_ptr<const Kb>> cached = [] {
    std::map<std::string, std::string_view> files;
    for (std::size_t i = 0; i < kb_embedded::file_count && kb_embedded::files[i].name; ++i) {
      const auto& f = kb_embedded::files[i];
      files.emplace(f.name, std::string_view(f.data, f.size));
    }
    return load_impl(std::move(files), {}, "embedded kb/", /*lazy=*/true);
  }();
  return cached;
}

Result<std::shared_ptr<const Kb>> Kb::load_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return fail(dir + ": not a knowledge-base directory");
  std::map<std::string, std::string> files;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return fail(dir + ": cannot list: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return fail(dir + ": cannot list: " + ec.message());
    const fs::path& p = it->path();
    if (p.extension() != ".json" || !it->is_regular_file(ec)) continue;
    std::ifstream in(p, std::ios::binary);
    if (!in) return fail(p.string() + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return fail(p.string() + ": read error");
    files.emplace(p.filename().string(), ss.str());
  }
  return load_owned(std::move(files), ends_with(dir, "/") ? dir : dir + "/");
}

}  // namespace dlenv
