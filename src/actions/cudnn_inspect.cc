#include "actions/cudnn_inspect.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using nlohmann::json;

bool glob_match(const std::string& pattern, const std::string& s) {
  // Only '*' (any run of characters), enough for the manifest's optional entries.
  size_t p = 0, i = 0, star = std::string::npos, mark = 0;
  while (i < s.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pattern.size() && pattern[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool is_cudnn_name(const std::string& base) {
  return starts_with(base, "cudnn") || starts_with(base, "libcudnn");
}

// Where a distribution file goes in a toolkit (empty: not installed).
std::string destination(const std::string& path, SourceEntryType type, Os os) {
  if (type != SourceEntryType::file && type != SourceEntryType::symlink) return "";
  const std::string base = path_basename(path);
  if (!is_cudnn_name(base)) return "";
  const std::string dir = path_dirname(path);
  if (dir == "include") return "include/" + base;
  if (os == Os::linux) {
    if (dir == "lib" || dir == "lib64") return "lib64/" + base;
  } else {
    if (dir == "bin") return "bin/" + base;
    if (dir == "lib/x64" || dir == "lib") return "lib/x64/" + base;
  }
  return "";
}

// The CUDA major from a cuBLAS/cuBLASLt/cudart file name ("libcublasLt.so.12", "cublas64_11.dll").
std::optional<std::pair<std::string, int>> cuda_lib(const Kb& kb, const std::string& name) {
  auto lib = kb.library_from_file_name(name);
  if (lib && (lib->first == "cublas" || lib->first == "cublasLt" || lib->first == "cudart") &&
      lib->second > 0) {
    return lib;
  }
  return std::nullopt;
}

// read_files for the library files `want` picks, except that a file whose first
// bytes are not `magic` is reported to `not_library` and never gathered: a file
// posing as a library (a run of zeros, a sparse-file bomb) costs no memory.
Result<void> read_libraries(
    const CudnnSource& source, std::string_view magic,
    const std::function<void(const SourceEntry&)>& not_library,
    const std::function<bool(const SourceEntry&)>& want,
    const std::function<Result<void>(const SourceEntry&, std::string_view)>& visit) {
  std::string data;
  bool skip = false;
  return source.stream_files(
      want, [&](const SourceEntry& e, uint64_t offset, std::string_view piece) -> Result<void> {
        if (offset == 0) {
          data.clear();
          skip = false;
        }
        if (skip) return {};
        data.append(piece);
        const bool done = offset + piece.size() == e.size;
        if (data.size() < magic.size() && !done) return {};
        if (!starts_with(data, magic)) {
          skip = true;
          data.clear();
          data.shrink_to_fit();
          not_library(e);
          return {};
        }
        return done ? visit(e, data) : Result<void>{};
      });
}

// "cublasLt64_12.dll" strings in a DLL's bytes (cuDNN 9 loads cuBLASLt by name).
std::vector<std::string> find_dll_names(std::string_view bytes, const std::string& prefix) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = bytes.find(prefix, pos)) != std::string_view::npos && out.size() < 4) {
    size_t end = pos + prefix.size();
    while (end < bytes.size() && end - pos < 64 && bytes[end] >= '0' && bytes[end] <= '9') ++end;
    if (end > pos + prefix.size() && bytes.substr(end, 4) == ".dll") {
      std::string s(bytes.substr(pos, end + 4 - pos));
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
    pos = end;
  }
  return out;
}

struct ManifestRow {
  std::string label;
  std::vector<std::string> files;
  std::vector<std::string> optional;
  KbRef ref;
};

std::optional<ManifestRow> find_manifest(const Kb& kb, const std::string& os,
                                         const std::optional<Version>& version,
                                         std::vector<std::string>& warnings) {
  auto text = kb.file_text("cudnn_manifests.json");
  if (!text) {
    warnings.push_back("the knowledge base has no cudnn_manifests.json: completeness not checked");
    return std::nullopt;
  }
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("manifests") || !doc["manifests"].is_array()) {
    warnings.push_back("cudnn_manifests.json is not valid: completeness not checked");
    return std::nullopt;
  }
  if (!version) return std::nullopt;
  const json* best = nullptr;
  bool best_exact = false;
  for (const auto& row : doc["manifests"]) {
    if (!row.is_object() || row.value("os", "") != os) continue;
    std::string v = row.value("cudnn", "");
    auto rv = Version::parse(v);
    if (!rv) continue;
    bool exact = rv->parts().size() > 1;
    if (exact) {
      // An exact row matches the same version (the build number only when both have one).
      size_t n = std::min(rv->parts().size(), version->parts().size());
      if (n < 3 || rv->truncated(n) != version->truncated(n)) continue;
    } else if (rv->major() != version->major()) {
      continue;
    }
    if (!best || (exact && !best_exact)) {
      best = &row;
      best_exact = exact;
    }
  }
  if (!best) return std::nullopt;
  ManifestRow m;
  const std::string v3 = version->truncated(3).str();
  auto expand = [&](std::string s) {
    for (size_t p; (p = s.find("{V}")) != std::string::npos;) s.replace(p, 3, v3);
    return s;
  };
  for (const auto& f : best->value("files", json::array())) {
    if (f.is_string()) m.files.push_back(expand(f.get<std::string>()));
  }
  for (const auto& f : best->value("optional", json::array())) {
    if (f.is_string()) m.optional.push_back(expand(f.get<std::string>()));
  }
  m.ref.source = best->value("source", "");
  m.ref.confirmed = best->value("confirmed", false);
  std::string cv = best->value("cudnn", "");
  m.label = fmt::format("cuDNN {}{} {}", cv, best_exact ? "" : ".x", os);
  return m;
}

}  // namespace

std::optional<Version> parse_cudnn_version_header(const std::string& text) {
  auto macro = [&](std::string_view name) -> std::optional<long long> {
    for (const auto& line : split_lines(text)) {
      std::string_view l = trim(line);
      if (!starts_with(l, "#")) continue;
      l = trim(l.substr(1));
      if (!starts_with(l, "define")) continue;
      l = trim(l.substr(6));
      if (!starts_with(l, name)) continue;
      std::string_view rest = l.substr(name.size());
      if (rest.empty() || (rest[0] != ' ' && rest[0] != '\t')) continue;
      if (auto v = parse_int(trim(rest))) return v;
    }
    return std::nullopt;
  };
  auto major = macro("CUDNN_MAJOR"), minor = macro("CUDNN_MINOR"),
       patch = macro("CUDNN_PATCHLEVEL");
  if (!major || !minor || *major < 0 || *major > 1000 || *minor < 0 || *minor > 1000) {
    return std::nullopt;
  }
  return Version{static_cast<int>(*major), static_cast<int>(*minor),
                 static_cast<int>(patch.value_or(0))};
}

std::optional<CudnnArchiveName> parse_cudnn_archive_name(const std::string& file_name) {
  static const std::regex modern(
      R"(cudnn-(linux|windows)-(x86_64|sbsa|aarch64|ppc64le)-(\d+\.\d+\.\d+(?:\.\d+)?)_cuda(\d+)(?:\.\d+)?-archive.*)");
  static const std::regex legacy(
      R"(cudnn-(\d+)\.(\d+)-(linux|windows\d*)-(x64|aarch64sbsa|ppc64le)-v(\d+\.\d+\.\d+(?:\.\d+)?).*)");
  std::smatch m;
  CudnnArchiveName n;
  if (std::regex_match(file_name, m, modern)) {
    n.os = m[1].str();
    n.platform = m[1].str() + "-" + m[2].str();
    n.version = Version::parse(m[3].str());
    n.cuda_major = static_cast<int>(parse_int(m[4].str()).value_or(0));
    return n;
  }
  if (std::regex_match(file_name, m, legacy)) {
    n.os = starts_with(m[3].str(), "windows") ? "windows" : "linux";
    n.platform = n.os + "-" + (m[4].str() == "x64" ? "x86_64" : m[4].str());
    n.version = Version::parse(m[5].str());
    n.cuda_major = static_cast<int>(parse_int(m[1].str()).value_or(0));
    return n;
  }
  return std::nullopt;
}

Result<CudnnDistInfo> inspect_cudnn(const CudnnSource& source, const Kb& kb) {
  CudnnDistInfo info;
  info.source = source.description();
  info.file_name = source.file_name();
  auto name = parse_cudnn_archive_name(info.file_name);

  // Platform: the file name, else what the files are (.dll vs .so).
  bool has_dll = false, has_so = false;
  for (const auto& e : source.entries()) {
    if (ends_with(to_lower(e.path), ".dll")) has_dll = true;
    if (contains(e.path, ".so")) has_so = true;
  }
  if (name) {
    info.platform = Fact<std::string>::known(name->platform, "file name " + info.file_name);
    info.os = name->os == "windows" ? Os::windows : Os::linux;
    if ((info.os == Os::windows && has_so && !has_dll) ||
        (info.os == Os::linux && has_dll && !has_so)) {
      info.errors.push_back(fmt::format("the file name says {} but the libraries are {}",
                                        name->platform, has_dll ? ".dll files" : ".so files"));
    }
  } else if (has_dll || has_so) {
    info.os = has_dll ? Os::windows : Os::linux;
    info.platform =
        Fact<std::string>::known(has_dll ? "windows-x86_64" : "linux",
                                 has_dll ? "contains .dll files" : "contains .so files");
  } else {
    info.platform = Fact<std::string>::unknown(FactStatus::not_found,
                                               "no .so or .dll files and no NVIDIA archive name");
  }

  // Version: cudnn_version.h (cudnn.h for cuDNN 7), the build number from the name.
  std::optional<Version> header;
  std::string header_path;
  for (const char* h : {"include/cudnn_version.h", "include/cudnn.h"}) {
    const SourceEntry* e = source.find(h);
    if (!e || e->type != SourceEntryType::file) continue;
    auto text = source.read(h);
    if (!text) return std::unexpected(text.error());
    if ((header = parse_cudnn_version_header(*text))) {
      header_path = h;
      break;
    }
  }
  if (header) {
    if (name && name->version && name->version->truncated(3) == header->truncated(3)) {
      info.version =
          Fact<Version>::known(*name->version, header_path + " (build number from the file name)");
    } else {
      info.version = Fact<Version>::known(*header, header_path);
      if (name && name->version) {
        info.errors.push_back(fmt::format(
            "{} says cuDNN {} but the file name says {}: the archive was repacked or renamed",
            header_path, header->str(), name->version->str()));
      }
    }
  } else {
    info.version = Fact<Version>::unknown(
        FactStatus::not_found, "no include/cudnn_version.h with CUDNN_MAJOR/CUDNN_MINOR macros",
        info.source);
    info.errors.push_back(
        "no include/cudnn_version.h with version macros: this is not a complete cuDNN "
        "distribution (download the archive again from https://developer.nvidia.com/cudnn)");
  }

  // Files and their destinations; unexpected ones are never installed.
  for (const auto& e : source.entries()) {
    if (e.type == SourceEntryType::directory) continue;
    CudnnDistFile f{e.path,       destination(e.path, e.type, info.os), e.type, e.mode, e.size,
                    e.link_target};
    ++info.file_count;
    std::string base = path_basename(e.path);
    bool license =
        starts_with(to_lower(base), "license") || starts_with(to_lower(base), "nvidia_sla");
    if (f.dest.empty() && !license) info.unexpected.push_back(e.path);
    if (e.type == SourceEntryType::hardlink) {
      info.warnings.push_back(e.path + " is a hard link: it is not installed");
    }
    info.files.push_back(std::move(f));
  }
  // Library versions in Linux file names must agree with the header.
  if (header && info.os == Os::linux) {
    static const std::regex so_re(R"(libcudnn[a-z_]*\.so\.(\d+\.\d+\.\d+))");
    std::set<std::string> seen;
    for (const auto& f : info.files) {
      std::smatch m;
      std::string base = path_basename(f.path);
      if (std::regex_match(base, m, so_re) && m[1].str() != header->truncated(3).str() &&
          seen.insert(base).second) {
        info.errors.push_back(fmt::format("{} is version {} but {} says {}: mixed versions", f.path,
                                          m[1].str(), header_path, header->truncated(3).str()));
      }
    }
  }

  // CUDA major: the file name, then the libraries' cuBLAS / cuBLASLt.
  std::map<int, std::string> lib_majors;
  auto r = read_libraries(
      source,
      info.os == Os::windows ? std::string_view("MZ")
                             : std::string_view("\x7f"
                                                "ELF"),
      [&](const SourceEntry& e) {
        info.errors.push_back(
            e.path +
            (info.os == Os::windows ? " is not a valid PE DLL" : " is not a valid ELF library") +
            ": it does not start like one");
      },
      [&](const SourceEntry& e) {
        std::string base = path_basename(e.path);
        return is_cudnn_name(base) &&
               (info.os == Os::windows ? ends_with(to_lower(base), ".dll") : contains(base, ".so"));
      },
      [&](const SourceEntry& e, std::string_view data) -> Result<void> {
        ByteView bytes(data);
        if (info.os == Os::linux) {
          auto elf = parse_elf(bytes, e.path);
          if (!elf || !*elf) {
            info.errors.push_back(e.path + " is not a valid ELF library" +
                                  (elf ? "" : ": " + elf.error().message));
            return {};
          }
          for (const auto& n : (**elf).needed) {
            if (auto lib = cuda_lib(kb, n)) lib_majors.emplace(lib->second, e.path + " needs " + n);
          }
          for (const auto& s : elf_find_strings(bytes, "libcublasLt.so.", 4)) {
            if (auto lib = cuda_lib(kb, s)) lib_majors.emplace(lib->second, e.path + " loads " + s);
          }
        } else {
          auto pe = parse_pe(bytes, e.path);
          if (!pe || !*pe) {
            info.errors.push_back(e.path + " is not a valid PE DLL" +
                                  (pe ? "" : ": " + pe.error().message));
            return {};
          }
          for (const auto* list : {&(**pe).imports, &(**pe).delay_imports}) {
            for (const auto& imp : *list) {
              if (auto lib = cuda_lib(kb, imp.dll)) {
                lib_majors.emplace(lib->second, e.path + " imports " + imp.dll);
              }
            }
          }
          for (const char* prefix : {"cublasLt64_", "cublas64_"}) {
            for (const auto& s : find_dll_names(data, prefix)) {
              if (auto lib = cuda_lib(kb, s))
                lib_majors.emplace(lib->second, e.path + " loads " + s);
            }
          }
        }
        return {};
      });
  if (!r) return std::unexpected(r.error());
  for (const auto& [major, why] : lib_majors) info.cuda_evidence.push_back(why);
  if (name && name->cuda_major) {
    info.cuda_evidence.insert(
        info.cuda_evidence.begin(),
        fmt::format("file name ({}: _cuda{})", info.file_name, *name->cuda_major));
    info.cuda_major = Fact<int>::known(*name->cuda_major, "file name " + info.file_name);
    for (const auto& [major, why] : lib_majors) {
      if (major != *name->cuda_major) {
        info.errors.push_back(fmt::format("the file name says CUDA {} but {} (CUDA {})",
                                          *name->cuda_major, why, major));
      }
    }
  } else if (lib_majors.size() == 1) {
    info.cuda_major = Fact<int>::known(lib_majors.begin()->first, lib_majors.begin()->second);
  } else if (lib_majors.size() > 1) {
    info.cuda_major =
        Fact<int>::unknown(FactStatus::error, "the libraries need different CUDA majors");
    info.errors.push_back("the libraries need cuBLAS of different CUDA majors: " +
                          join(info.cuda_evidence, "; "));
  } else {
    info.cuda_major = Fact<int>::unknown(
        FactStatus::not_found, "no _cudaN in the file name and no cuBLAS/cuBLASLt reference");
  }

  // Completeness against the manifest; the main library files are always required.
  std::optional<Version> v = info.version ? std::optional<Version>(*info.version) : std::nullopt;
  std::set<std::string> have;
  for (const auto& f : info.files) have.insert(f.path);
  auto m = find_manifest(kb, info.os == Os::windows ? "windows" : "linux", v, info.warnings);
  std::set<std::string> listed;
  if (m) {
    info.manifest = m->label;
    info.manifest_ref = m->ref;
    info.manifest_files = m->files.size();
    for (const auto& f : m->files) {
      listed.insert(f);
      if (!have.count(f)) info.missing.push_back(f);
    }
    for (const auto& f : info.files) {
      if (listed.count(f.path) || f.dest.empty()) continue;
      bool optional = std::any_of(m->optional.begin(), m->optional.end(),
                                  [&](const std::string& p) { return glob_match(p, f.path); });
      if (!optional) info.extra.push_back(f.path);
    }
  } else if (v) {
    info.warnings.push_back(fmt::format(
        "no manifest for cuDNN {} on {} in the knowledge base: completeness checked only "
        "for the library files",
        v->str(), info.os == Os::windows ? "windows" : "linux"));
  }
  if (v) {
    for (const auto& lib : kb.cudnn_library_files(v->major(), info.os)) {
      std::string p = (info.os == Os::windows ? "bin/" : "lib/") + lib;
      bool present = have.count(p) || (info.os == Os::linux && have.count("lib64/" + lib));
      if (!present) {
        info.errors.push_back(fmt::format(
            "{} is missing: cuDNN {} cannot load without it (kb cudnn.json library_files_by_major)",
            p, v->major()));
        if (!listed.count(p) &&
            std::find(info.missing.begin(), info.missing.end(), p) == info.missing.end()) {
          info.missing.push_back(p);
        }
      }
    }
  }
  if (m && !m->ref.confirmed && (!info.missing.empty() || !info.extra.empty())) {
    info.warnings.push_back(info.manifest +
                            " is a derived (unconfirmed) file list: differences from it are "
                            "reported, not treated as damage");
  }
  return info;
}

ArchiveDigestCheck check_archive_digest(const Kb& kb, const std::string& file_name,
                                        const std::string& sha256) {
  ArchiveDigestCheck c;
  c.match = kb.cudnn_archive_by_sha256(sha256);
  if (const CudnnArchive* named = kb.cudnn_archive_by_file(file_name);
      named && named->sha256 != sha256) {
    c.named = named;
  }
  return c;
}

std::string archive_digest_mismatch(const CudnnArchive& named, const std::string& sha256) {
  return fmt::format(
      "the file carries the name of NVIDIA's {} but its SHA-256 is {}, not the {} NVIDIA "
      "published ({}{}): the download is damaged or is not NVIDIA's file; download it again",
      named.file, sha256, named.sha256, named.ref.source,
      named.ref.confirmed ? "" : "; a digest this KB has not confirmed");
}

std::string known_archive_text(const CudnnArchive& a) {
  return fmt::format("NVIDIA's {} ({}{})", a.file, a.ref.source,
                     a.ref.confirmed ? "" : "; unconfirmed");
}

void add_archive_digest(CudnnDistInfo& info, const Kb& kb, const std::string& sha256) {
  info.sha256 = sha256;
  const ArchiveDigestCheck c = check_archive_digest(kb, info.file_name, sha256);
  if (c.match) info.known_archive = *c.match;
  if (c.named) {
    (c.named->ref.confirmed ? info.errors : info.warnings)
        .push_back(archive_digest_mismatch(*c.named, sha256));
  }
}

std::string render_cudnn_inspect_text(const CudnnDistInfo& i) {
  std::string o;
  o += fmt::format("cuDNN distribution: {}\n", i.source);
  if (!i.sha256.empty()) o += fmt::format("  sha256:     {}\n", i.sha256);
  if (const auto& k = i.known_archive) {
    o += "              = " + known_archive_text(*k) + "\n";
  }
  auto fact = [](const auto& f, auto show) {
    return f ? fmt::format("{}  ({})", show(*f), f.source) : "unknown (" + f.reason + ")";
  };
  o += fmt::format("  version:    {}\n", fact(i.version, [](const Version& v) { return v.str(); }));
  o += fmt::format("  platform:   {}\n", fact(i.platform, [](const std::string& s) { return s; }));
  o += fmt::format("  CUDA major: {}\n",
                   fact(i.cuda_major, [](int m) { return std::to_string(m); }));
  for (const auto& e : i.cuda_evidence) o += "    - " + e + "\n";
  if (!i.manifest.empty()) {
    o += fmt::format("  manifest:   {} ({} files, {}; {})\n", i.manifest, i.manifest_files,
                     i.manifest_ref.confirmed ? "confirmed" : "unconfirmed", i.manifest_ref.source);
  }
  o += fmt::format("  files:      {} ({} to install)\n", i.file_count,
                   std::count_if(i.files.begin(), i.files.end(),
                                 [](const CudnnDistFile& f) { return !f.dest.empty(); }));
  auto list = [&](const char* title, const std::vector<std::string>& v) {
    if (v.empty()) return;
    o += fmt::format("  {} ({}):\n", title, v.size());
    for (const auto& s : v) o += "    " + s + "\n";
  };
  list("missing", i.missing);
  list("extra (not in the manifest; installed)", i.extra);
  list("unexpected (not cuDNN's; never installed)", i.unexpected);
  for (const auto& e : i.errors) o += "  error: " + e + "\n";
  for (const auto& w : i.warnings) o += "  warning: " + w + "\n";
  o += i.complete() ? "  result: complete\n"
                    : (i.errors.empty() ? "  result: incomplete\n" : "  result: damaged\n");
  return o;
}

namespace {
template <class T, class F>
json fact_json(const Fact<T>& f, F value) {
  if (f) return json{{"value", value(*f)}, {"source", f.source}};
  return json{{"status", fact_status_name(f.status)}, {"reason", f.reason}, {"source", f.source}};
}
}  // namespace

std::string render_cudnn_inspect_json(const CudnnDistInfo& i) {
  json files = json::array();
  for (const auto& f : i.files) {
    json j{{"path", f.path},
           {"type", source_entry_type_name(f.type)},
           {"mode", f.mode},
           {"size", f.size}};
    j["dest"] = f.dest.empty() ? json(nullptr) : json(f.dest);
    if (!f.link_target.empty()) j["link_target"] = f.link_target;
    files.push_back(std::move(j));
  }
  json doc{{"schema", "dlenv.cudnn-inspect/1"},
           {"source", i.source},
           {"file_name", i.file_name},
           {"sha256", i.sha256.empty() ? json(nullptr) : json(i.sha256)},
           {"known_archive", i.known_archive ? json{{"file", i.known_archive->file},
                                                    {"cudnn", i.known_archive->cudnn.str()},
                                                    {"cuda_major", i.known_archive->cuda_major},
                                                    {"platform", i.known_archive->platform},
                                                    {"source", i.known_archive->ref.source},
                                                    {"confirmed", i.known_archive->ref.confirmed}}
                                             : json(nullptr)},
           {"os", i.os == Os::windows ? "windows" : "linux"},
           {"platform", fact_json(i.platform, [](const std::string& s) { return s; })},
           {"version", fact_json(i.version, [](const Version& v) { return v.str(); })},
           {"cuda_major", fact_json(i.cuda_major, [](int m) { return m; })},
           {"cuda_evidence", i.cuda_evidence},
           {"manifest", i.manifest.empty() ? json(nullptr)
                                           : json{{"name", i.manifest},
                                                  {"files", i.manifest_files},
                                                  {"source", i.manifest_ref.source},
                                                  {"confirmed", i.manifest_ref.confirmed}}},
           {"file_count", i.file_count},
           {"missing", i.missing},
           {"extra", i.extra},
           {"unexpected", i.unexpected},
           {"errors", i.errors},
           {"warnings", i.warnings},
           {"complete", i.complete()},
           {"files", files}};
  return json_text(doc, 2) + "\n";
}

}  // namespace dlenv
