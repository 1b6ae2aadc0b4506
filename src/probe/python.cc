// Python environments without running Python: interpreters from PATH, --python,
// VIRTUAL_ENV, conda and pyenv; their site-packages; the dist-info of the
// frameworks and NVIDIA wheels; the build facts the framework packages ship.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "probe/probe.h"
#include "probe/python_gpu.h"
#include "probe/text_formats.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct Candidate {
  std::string interpreter;  // as given (may be a shim or a symlink)
  std::string via;
};

std::string first_line(std::string_view text) {
  auto lines = split_lines(text);
  return lines.empty() ? std::string() : std::string(trim(lines[0]));
}

// "key = value" lines (pyvenv.cfg).
std::map<std::string, std::string> parse_cfg(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& line : split_lines(text)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    out[to_lower(trim(std::string_view(line).substr(0, eq)))] =
        std::string(trim(std::string_view(line).substr(eq + 1)));
  }
  return out;
}

std::string normalise_name(std::string_view n) {
  std::string s = to_lower(n);
  for (auto& ch : s) {
    if (ch == '_' || ch == '.') ch = '-';
  }
  return s;
}

bool wanted_package(const std::string& n) {
  static const std::set<std::string> exact = {
      "torch", "torchvision", "torchaudio", "tensorflow", "tensorflow-gpu", "tensorflow-cpu",
      "tensorflow-intel", "tf-nightly", "jax", "jaxlib", "paddlepaddle", "paddlepaddle-gpu",
      "onnxruntime", "onnxruntime-gpu", "ctranslate2", "cupy", "pytorch-triton", "triton",
      // compiled torch extensions (ABI checks)
      "flash-attn", "xformers", "vllm", "torch-scatter", "torch-sparse", "torch-cluster",
      "torch-spline-conv", "pyg-lib", "detectron2", "mmcv", "apex", "causal-conv1d", "mamba-ssm"};
  return exact.contains(n) || starts_with(n, "nvidia-") || starts_with(n, "cupy-cuda") ||
         starts_with(n, "jax-cuda") || starts_with(n, "tensorflow-") || starts_with(n, "tensorrt");
}

// The string literal assigned to `key` in a Python source file: key = '...' or
// key: Optional[str] = '...'. nullopt when absent; "" when assigned None.
std::optional<std::string> py_assignment(std::string_view text, std::string_view key) {
  for (const auto& line : split_lines(text)) {
    std::string_view l = trim(line);
    if (!starts_with(l, key)) continue;
    std::string_view rest = l.substr(key.size());
    if (rest.empty() || !(rest[0] == ' ' || rest[0] == '=' || rest[0] == ':')) continue;
    auto eq = rest.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = trim(rest.substr(eq + 1));
    if (starts_with(v, "None")) return std::string();
    if (!v.empty() && (v[0] == '\'' || v[0] == '"')) {
      char q = v[0];
      auto end = v.find(q, 1);
      if (end != std::string_view::npos) return std::string(v.substr(1, end - 1));
    }
    return std::string(v);
  }
  return std::nullopt;
}

// 'key': 'value' / 'key': True in a dict literal, or ('key', 'value') in a tuple list
// (tensorflow build_info.py has had both forms).
std::optional<std::string> py_dict_value(std::string_view text, std::string_view key) {
  for (const char q : {'\'', '"'}) {
    std::string needle = std::string(1, q) + std::string(key) + std::string(1, q);
    for (size_t p = text.find(needle); p != std::string_view::npos; p = text.find(needle, p + 1)) {
      std::string_view rest = text.substr(p + needle.size());
      size_t i = 0;
      while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
      if (i >= rest.size() || (rest[i] != ':' && rest[i] != ',')) continue;
      rest = trim(rest.substr(i + 1));
      if (rest.empty()) continue;
      if (rest[0] == '\'' || rest[0] == '"') {
        auto end = rest.find(rest[0], 1);
        if (end != std::string_view::npos) return std::string(rest.substr(1, end - 1));
      }
      size_t n = 0;
      while (n < rest.size() && rest[n] != ',' && rest[n] != '}' && rest[n] != ')' &&
             rest[n] != '\n')
        ++n;
      return std::string(trim(rest.substr(0, n)));
    }
  }
  return std::nullopt;
}

// The quoted strings of a list literal after 'key': ['sm_50', 'compute_80'] -> both.
std::vector<std::string> py_list_value(std::string_view text, std::string_view key) {
  std::vector<std::string> out;
  for (const char q : {'\'', '"'}) {
    std::string needle = std::string(1, q) + std::string(key) + std::string(1, q);
    auto p = text.find(needle);
    if (p == std::string_view::npos) continue;
    auto open = text.find('[', p);
    auto close = open == std::string_view::npos ? open : text.find(']', open);
    if (close == std::string_view::npos) continue;
    std::string_view list = text.substr(open + 1, close - open - 1);
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] != '\'' && list[i] != '"') continue;
      auto end = list.find(list[i], i + 1);
      if (end == std::string_view::npos) break;
      out.emplace_back(list.substr(i + 1, end - i - 1));
      i = end;
    }
    break;
  }
  return out;
}

std::string local_tag(const std::string& version) {
  auto p = version.find('+');
  return p == std::string::npos ? std::string() : version.substr(p + 1);
}

// XML attribute `attr="..."` after position `from` (entities decoded); "" when absent.
std::string xml_attr(std::string_view text, std::string_view attr, size_t from = 0,
                     size_t to = std::string_view::npos) {
  std::string needle = std::string(attr) + "=\"";
  auto p = text.find(needle, from);
  if (p == std::string_view::npos || (to != std::string_view::npos && p >= to)) return "";
  p += needle.size();
  auto end = text.find('"', p);
  if (end == std::string_view::npos) return "";
  std::string v(text.substr(p, end - p));
  const std::pair<const char*, const char*> ents[] = {
      {"&quot;", "\""}, {"&apos;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& [from_s, to_s] : ents) {
    for (size_t q; (q = v.find(from_s)) != std::string::npos;) {
      v.replace(q, std::string_view(from_s).size(), to_s);
    }
  }
  return v;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t q = 0; (q = s.find(from, q)) != std::string::npos; q += to.size()) {
    s.replace(q, from.size(), to);
  }
}

class PythonProbe {
 public:
  PythonProbe(const ProbeContext& ctx, const ProbeOptions& options, const LoaderConfig* loader)
      : ctx_(ctx), fs_(ctx.fs), options_(options), loader_(loader) {}

  std::vector<PythonEnv> run() {
    for (const auto& c : candidates()) add(c);
    return std::move(envs_);
  }
  // Interpreters and their site-packages only (no dist-info, framework or library reads).
  std::vector<PythonEnv> discover() {
    discovery_only_ = true;
    return run();
  }

 private:
  bool windows() const { return ctx_.os == Os::windows; }
  const LoaderConfig& loader() {
    if (loader_) return *loader_;
    if (!own_loader_) own_loader_ = read_loader_config(ctx_);
    return *own_loader_;
  }
  char sep() const { return windows() ? ';' : ':'; }

  std::string interpreter_in(const std::string& prefix) const {
    if (windows()) return path_join(prefix, "python.exe");
    for (const char* n : {"bin/python3", "bin/python"}) {
      std::string p = path_join(prefix, n);
      if (fs_.exists(p)) return p;
    }
    return path_join(prefix, "bin/python3");
  }

  std::string home() const { return ctx_.env.get(windows() ? "USERPROFILE" : "HOME").value_or(""); }

  // The interpreters an IDE runs for a project: PyCharm (.idea/misc.xml names the SDK,
  // the JetBrains options/jdk.table.xml maps it to a home path), VS Code
  // (.vscode/settings.json), and a .venv/venv inside the project.
  void project_candidates(const std::string& dir, std::vector<Candidate>& out) const {
    std::string misc = path_join(dir, ".idea/misc.xml");
    if (auto text = fs_.read_file(misc)) {
      std::string sdk = xml_attr(*text, "project-jdk-name");
      std::string via = "PyCharm project " + dir + " (SDK '" + sdk + "' in " + misc;
      std::string found;
      std::vector<std::string> config_roots;
      if (windows()) {
        if (auto a = ctx_.env.get("APPDATA")) config_roots.push_back(path_join(*a, "JetBrains"));
      } else if (!home().empty()) {
        config_roots.push_back(path_join(
            ctx_.env.get("XDG_CONFIG_HOME").value_or(path_join(home(), ".config")), "JetBrains"));
      }
      for (const auto& root : config_roots) {
        auto products = fs_.list_dir(root);
        if (!products) continue;
        for (const auto& prod : *products) {  // sorted: the newest version comes last
          std::string table = path_join(path_join(root, prod.name), "options/jdk.table.xml");
          auto t = fs_.read_file(table);
          if (!t || sdk.empty()) continue;
          for (size_t p = t->find("<jdk"); p != std::string::npos; p = t->find("<jdk", p + 4)) {
            size_t end = t->find("</jdk>", p);
            auto name_at = t->find("<name ", p);
            if (name_at == std::string::npos || (end != std::string::npos && name_at > end)) {
              continue;
            }
            if (xml_attr(*t, "value", name_at, end) != sdk) continue;
            auto hp = t->find("<homePath ", p);
            if (hp == std::string::npos || (end != std::string::npos && hp > end)) continue;
            std::string h = xml_attr(*t, "value", hp, end);
            replace_all(h, "$USER_HOME$", home());
            replace_all(h, "$PROJECT_DIR$", dir);
            if (!h.empty()) {
              found = h;
              via += ", " + table;
            }
          }
        }
      }
      via += ")";
      if (!found.empty()) {
        out.push_back({found, via});
      } else {
        out.push_back({"", via + ": no jdk.table.xml entry for the SDK"});
      }
    }
    std::string settings = path_join(dir, ".vscode/settings.json");
    if (auto text = fs_.read_file(settings)) {
      auto j = nlohmann::json::parse(*text, nullptr, false, true);
      if (j.is_object()) {
        for (const char* key : {"python.defaultInterpreterPath", "python.pythonPath"}) {
          if (!j.contains(key) || !j[key].is_string()) continue;
          std::string p = j[key].get<std::string>();
          replace_all(p, "${workspaceFolder}", dir);
          replace_all(p, "${userHome}", home());
          if (!p.empty() && p[0] == '~') p = home() + p.substr(1);
          if (!p.empty() && p[0] != '/' && !(p.size() > 1 && p[1] == ':')) p = path_join(dir, p);
          out.push_back({path_normalize(p), "VS Code " + settings + " (" + key + ")"});
          break;
        }
      }
    }
    for (const char* v : {".venv", "venv", "env"}) {
      std::string prefix = path_join(dir, v);
      if (fs_.exists(path_join(prefix, "pyvenv.cfg"))) {
        out.push_back({interpreter_in(prefix), "project " + std::string(v) + " in " + dir});
      }
    }
  }

  std::vector<Candidate> candidates() const {
    std::vector<Candidate> out;
    for (const auto& p : options_.python_paths) out.push_back({p, "--python"});
    if (!options_.project_dir.empty()) project_candidates(options_.project_dir, out);
    if (auto v = ctx_.env.get("VIRTUAL_ENV"); v && !v->empty()) {
      out.push_back({interpreter_in(*v), "VIRTUAL_ENV"});
    }
    if (auto v = ctx_.env.get("CONDA_PREFIX"); v && !v->empty()) {
      out.push_back({interpreter_in(*v), "CONDA_PREFIX (active conda env)"});
    }
    if (auto p = ctx_.env.get("PATH")) {
      std::vector<std::string> names = windows() ? std::vector<std::string>{"python.exe"}
                                                 : std::vector<std::string>{"python3", "python"};
      for (const auto& n : names) {
        for (const auto& dir : split_path_list(*p, sep())) {
          std::string cand = path_join(dir, n);
          if (fs_.is_file(cand)) {
            out.push_back({cand, "PATH (" + n + ")"});
            break;  // the first one is what the shell runs
          }
        }
      }
    }
    // conda: the root of CONDA_EXE, its envs/, and ~/.conda/environments.txt.
    std::vector<std::string> conda_roots;
    if (auto v = ctx_.env.get("CONDA_EXE"); v && !v->empty()) {
      conda_roots.push_back(path_dirname(path_dirname(*v)));
    }
    std::optional<std::string> home = ctx_.env.get(windows() ? "USERPROFILE" : "HOME");
    if (home && !home->empty()) {
      for (const char* d : {"miniconda3", "anaconda3", "miniforge3", "mambaforge"}) {
        std::string r = path_join(*home, d);
        if (fs_.is_dir(path_join(r, "conda-meta"))) conda_roots.push_back(r);
      }
    }
    for (const auto& root : conda_roots) {
      out.push_back({interpreter_in(root), "conda base " + root});
      if (auto entries = fs_.list_dir(path_join(root, "envs"))) {
        for (const auto& e : *entries) {
          out.push_back({interpreter_in(path_join(path_join(root, "envs"), e.name)),
                         "conda env (" + path_join(root, "envs") + ")"});
        }
      }
    }
    if (home && !home->empty()) {
      std::string list = path_join(*home, ".conda/environments.txt");
      if (auto text = fs_.read_file(list)) {
        for (const auto& line : split_lines(*text)) {
          std::string prefix(trim(line));
          if (!prefix.empty()) out.push_back({interpreter_in(prefix), "conda env (" + list + ")"});
        }
      }
      std::string pyenv_root = ctx_.env.get("PYENV_ROOT").value_or(path_join(*home, ".pyenv"));
      if (auto entries = fs_.list_dir(path_join(pyenv_root, "versions"))) {
        for (const auto& e : *entries) {
          out.push_back({interpreter_in(path_join(path_join(pyenv_root, "versions"), e.name)),
                         "pyenv versions (" + path_join(pyenv_root, "versions") + ")"});
        }
      }
    }
    return out;
  }

  // pyenv shims are shell scripts: resolve to the selected version's interpreter.
  std::string resolve_shim(const std::string& interp) const {
    auto p = interp.find("/shims/");
    if (p == std::string::npos || !contains(interp, "pyenv")) return interp;
    std::string root = interp.substr(0, p);
    std::string version = ctx_.env.get("PYENV_VERSION").value_or("");
    if (version.empty()) {
      if (auto text = fs_.read_file(path_join(root, "version"))) version = first_line(*text);
    }
    version = split(version, ':').empty() ? version : split(version, ':')[0];
    if (version.empty() || version == "system") return interp;
    return path_join(path_join(path_join(root, "versions"), version),
                     "bin/" + path_basename(interp));
  }

  void add(const Candidate& c) {
    std::string interp = resolve_shim(c.interpreter);
    if (interp.empty() || !fs_.exists(interp)) {
      if (c.via == "--python" || starts_with(c.via, "PyCharm") || starts_with(c.via, "VS Code")) {
        PythonEnv e;
        e.interpreter =
            Fact<std::string>::unknown(FactStatus::not_found,
                                       c.interpreter.empty() ? "the IDE names no interpreter path"
                                                             : "no such file: " + c.interpreter,
                                       c.via);
        e.found_via.push_back(c.via);
        envs_.push_back(std::move(e));
      }
      return;
    }
    std::string prefix = windows() ? path_dirname(interp) : path_dirname(path_dirname(interp));
    // One environment per interpreter: bin/python and bin/python3 of a venv, /bin/python3 and
    // /usr/bin/python3 (merged /usr) are the same one. A venv's python is a link to the base
    // interpreter, so the key is its real directory plus the real file's name.
    std::string dir = path_dirname(interp);
    std::string key = path_join(fs_.real_path(dir).value_or(dir),
                                path_basename(fs_.real_path(interp).value_or(interp)));
    std::string via = c.via;
    if (interp != c.interpreter) via += " -> " + interp;
    if (auto it = by_prefix_.find(key); it != by_prefix_.end()) {
      auto& fv = envs_[it->second].found_via;
      if (std::find(fv.begin(), fv.end(), via) == fv.end()) fv.push_back(via);
      return;
    }
    PythonEnv e;
    e.interpreter = Fact<std::string>::known(interp, c.via);
    e.prefix = prefix;
    e.found_via.push_back(via);
    describe(e);
    find_site_packages(e);
    if (discovery_only_) {
      by_prefix_[key] = envs_.size();
      envs_.push_back(std::move(e));
      return;
    }
    read_packages(e);
    frameworks(e);
    cuda_libs(e);
    read_conda_meta(fs_, e);
    read_cusparse_needs(fs_, e);
    find_xla_dirs(ctx_, e);
    inspect_framework_libraries(ctx_, loader(), e);
    by_prefix_[key] = envs_.size();
    envs_.push_back(std::move(e));
  }

  void describe(PythonEnv& e) {
    const std::string interp = *e.interpreter;
    std::string cfg_path = path_join(e.prefix, "pyvenv.cfg");
    if (auto text = fs_.read_file(cfg_path)) {
      e.kind = "venv";
      auto cfg = parse_cfg(*text);
      for (const char* k : {"version_info", "version"}) {
        if (cfg.contains(k) && !cfg[k].empty()) {
          e.version = Fact<std::string>::known(cfg[k], cfg_path);
          break;
        }
      }
      venv_home_ = cfg.contains("home") ? cfg["home"] : "";
      venv_system_site_ = cfg.contains("include-system-site-packages") &&
                          to_lower(cfg["include-system-site-packages"]) == "true";
    } else {
      venv_home_.clear();
      venv_system_site_ = false;
      std::string meta = path_join(e.prefix, "conda-meta");
      if (fs_.is_dir(meta)) {
        e.kind = "conda";
        if (auto entries = fs_.list_dir(meta)) {
          for (const auto& x : *entries) {
            if (starts_with(x.name, "python-") && ends_with(x.name, ".json") && x.name.size() > 7 &&
                std::isdigit(static_cast<unsigned char>(x.name[7]))) {
              std::string v = x.name.substr(7);
              v = v.substr(0, v.find('-'));
              e.version = Fact<std::string>::known(v, path_join(meta, x.name));
            }
          }
        }
      } else if (contains(e.prefix, "/.pyenv/versions/") || contains(e.prefix, "pyenv/versions/")) {
        e.kind = "pyenv";
        std::string name = path_basename(e.prefix);
        if (Version::parse(name)) {
          e.version = Fact<std::string>::known(name, "pyenv version directory " + e.prefix);
        }
      } else {
        e.kind = "system";
      }
    }
    if (!e.version && !windows()) {
      // python3 -> python3.12: the version in the link target's name.
      if (auto target = fs_.read_link(interp)) {
        std::string b = path_basename(*target);
        if (starts_with(b, "python") && Version::parse(b.substr(6))) {
          e.version = Fact<std::string>::known(b.substr(6), "symlink " + interp + " -> " + *target);
        }
      }
    }
    if (!e.version && windows()) {
      // python312.dll beside python.exe -> 3.12
      if (auto entries = fs_.list_dir(e.prefix)) {
        for (const auto& x : *entries) {
          std::string n = to_lower(x.name);
          if (starts_with(n, "python3") && ends_with(n, ".dll") && n.size() > 11) {
            std::string digits = n.substr(7, n.size() - 11);
            if (!digits.empty() && parse_int(digits)) {
              e.version = Fact<std::string>::known("3." + digits, path_join(e.prefix, x.name));
            }
          }
        }
      }
    }
    if (!e.version && !windows()) {
      if (auto entries = fs_.list_dir(path_join(e.prefix, "lib"))) {
        for (const auto& x : *entries) {
          if (starts_with(x.name, "python3.") &&
              fs_.is_dir(path_join(path_join(e.prefix, "lib"), x.name + "/site-packages"))) {
            e.version = Fact<std::string>::known(
                x.name.substr(6), "directory " + path_join(path_join(e.prefix, "lib"), x.name));
          }
        }
      }
    }
    if (!e.version) {
      e.version = Fact<std::string>::unknown(
          FactStatus::not_found, "no pyvenv.cfg, conda-meta or lib/python3.X found", e.prefix);
    }
    // Bitness from the executable's header (ELF, or PE for python.exe).
    std::string real = fs_.real_path(interp).value_or(interp);
    if (auto mapped = fs_.map_file(real)) {
      if (windows()) {
        auto pe = parse_pe((*mapped)->bytes(), real);
        if (pe && *pe) {
          e.bits = Fact<int>::known((**pe).is_64 ? 64 : 32, "PE header of " + real);
        } else {
          e.bits = Fact<int>::unknown(FactStatus::error, "not a PE executable", real);
        }
      } else {
        auto elf = parse_elf((*mapped)->bytes(), real);
        if (elf && *elf) {
          e.bits = Fact<int>::known((**elf).is_64 ? 64 : 32, "ELF header of " + real);
        } else {
          e.bits = Fact<int>::unknown(FactStatus::error, "not an ELF executable", real);
        }
      }
    } else {
      e.bits = Fact<int>::unknown(FactStatus::error, mapped.error().message, real);
    }
  }

  std::string major_minor(const PythonEnv& e) const {
    if (!e.version) return "";
    auto v = Version::parse(*e.version);
    if (!v) return "";
    return std::to_string(v->major()) + "." + std::to_string(v->minor());
  }

  void site_dirs_of(const std::string& prefix, const std::string& mm,
                    std::vector<std::string>& out) const {
    if (windows()) {
      out.push_back(path_join(prefix, "Lib/site-packages"));
      return;
    }
    if (!mm.empty()) {
      out.push_back(path_join(prefix, "lib/python" + mm + "/site-packages"));
      if (prefix == "/usr") {
        out.push_back("/usr/local/lib/python" + mm + "/dist-packages");
        out.push_back("/usr/lib/python3/dist-packages");
        out.push_back("/usr/lib/python" + mm + "/dist-packages");
      }
    } else if (auto entries = fs_.list_dir(path_join(prefix, "lib"))) {
      for (const auto& x : *entries) {
        if (starts_with(x.name, "python3")) {
          out.push_back(path_join(path_join(prefix, "lib"), x.name + "/site-packages"));
        }
      }
    }
  }

  void find_site_packages(PythonEnv& e) {
    std::string mm = major_minor(e);
    std::vector<std::string> dirs;
    // User site first: Python puts ~/.local ahead of the system site (not in venvs).
    if (e.kind != "venv" || venv_system_site_) {
      if (auto home = ctx_.env.get("HOME"); home && !home->empty() && !mm.empty() && !windows()) {
        dirs.push_back(path_join(*home, ".local/lib/python" + mm + "/site-packages"));
      }
    }
    site_dirs_of(e.prefix, mm, dirs);
    if (e.kind == "venv" && venv_system_site_ && !venv_home_.empty()) {
      site_dirs_of(windows() ? venv_home_ : path_dirname(venv_home_), mm, dirs);
    }
    std::set<std::string> seen;
    for (const auto& d : dirs) {
      if (fs_.is_dir(d) && seen.insert(fs_.real_path(d).value_or(d)).second) {
        e.site_packages.push_back(d);
      }
    }
  }

  void read_packages(PythonEnv& e) {
    std::set<std::string> seen;
    for (const auto& site : e.site_packages) {
      auto entries = fs_.list_dir(site);
      if (!entries) continue;
      for (const auto& x : *entries) {
        bool dist = ends_with(x.name, ".dist-info");
        bool egg = ends_with(x.name, ".egg-info");
        if (!dist && !egg) continue;
        std::string stem = x.name.substr(0, x.name.size() - 10);
        auto dash = stem.find('-');
        std::string name = normalise_name(stem.substr(0, dash));
        if (!wanted_package(name) || seen.contains(name)) continue;
        seen.insert(name);
        PythonPackage p;
        p.name = name;
        p.location = site;
        if (dash != std::string::npos) {
          std::string v = stem.substr(dash + 1);
          p.version = v.substr(0, v.find('-'));  // egg-info: name-1.0-py3.11
        }
        std::string dir = path_join(site, x.name);
        p.source = dir;
        std::string meta = path_join(dir, dist ? "METADATA" : "PKG-INFO");
        if (auto text = fs_.read_file(meta, 256 * 1024)) {
          p.source = meta;
          DistMetadata m = parse_dist_metadata(*text);
          if (m.name) p.name = normalise_name(*m.name);
          if (m.version) p.version = *m.version;
          for (const std::string& req : m.requires_dist) {
            std::string lreq = to_lower(req);
            if (starts_with(lreq, "nvidia-")) p.requires_nvidia.push_back(req);
            if (starts_with(lreq, "torch") &&
                (lreq.size() == 5 ||
                 std::string_view("=<>!~ ;(").find(lreq[5]) != std::string_view::npos)) {
              p.requires_torch.push_back(req);
            }
          }
        }
        if (auto inst = fs_.read_file(path_join(dir, "INSTALLER"), 4096)) {
          p.installer = first_line(*inst);
        }
        if (dist) {
          std::string wheel = path_join(dir, "WHEEL");
          if (auto w = fs_.read_file(wheel, 65536)) {
            p.wheel_source = wheel;
            for (const auto& line : split_lines(*w)) {
              if (starts_with(line, "Tag: ")) p.wheel_tags.emplace_back(trim(line.substr(5)));
            }
          }
        }
        if (auto du = fs_.read_file(path_join(dir, "direct_url.json"), 65536)) {
          if (auto url = py_dict_value(*du, "url")) p.direct_url = *url;
        }
        e.packages.push_back(std::move(p));
      }
    }
  }

  static const PythonPackage* pkg(const PythonEnv& e, std::string_view name) {
    for (const auto& p : e.packages) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }

  void frameworks(PythonEnv& e) {
    if (const auto* p = pkg(e, "torch")) {
      FrameworkFacts f;
      f.name = "torch";
      f.package = p->name;
      f.version = p->version;
      f.local_tag = local_tag(p->version);
      std::string vp = path_join(p->location, "torch/version.py");
      if (auto text = fs_.read_file(vp, 65536)) {
        if (auto v = py_assignment(*text, "__version__"); v && !v->empty()) {
          f.version = *v;
          f.local_tag = local_tag(*v);
        }
        auto cuda = py_assignment(*text, "cuda");
        auto hip = py_assignment(*text, "hip");
        if (cuda && !cuda->empty()) {
          f.cuda = Fact<std::string>::known(*cuda, vp);
          f.cuda_build = Fact<bool>::known(true, vp);
        } else if (cuda) {
          f.cuda = Fact<std::string>::unknown(FactStatus::not_found, "cuda = None", vp);
          f.cuda_build = Fact<bool>::known(false, vp);
          if (hip && !hip->empty()) f.local_tag = f.local_tag.empty() ? "rocm" : f.local_tag;
        }
      } else {
        f.cuda = Fact<std::string>::unknown(FactStatus::not_found, "no torch/version.py", vp);
      }
      if (const auto* c = pkg(e, "nvidia-cudnn-cu13") ? pkg(e, "nvidia-cudnn-cu13")
                                                      : pkg(e, "nvidia-cudnn-cu12")) {
        f.cudnn = Fact<std::string>::known(c->version, c->source);
      }
      for (const char* comp : {"torchvision", "torchaudio"}) {
        if (const auto* q = pkg(e, comp)) f.cuda_packages.push_back(q->name + " " + q->version);
      }
      e.frameworks.push_back(std::move(f));
    }
    for (const char* tfname :
         {"tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tf-nightly"}) {
      const auto* p = pkg(e, tfname);
      if (!p) continue;
      FrameworkFacts f;
      f.name = "tensorflow";
      f.package = p->name;
      f.version = p->version;
      f.local_tag = local_tag(p->version);
      std::string bi = path_join(p->location, "tensorflow/python/platform/build_info.py");
      if (auto text = fs_.read_file(bi, 65536)) {
        if (auto v = py_dict_value(*text, "cuda_version"); v && !v->empty()) {
          f.cuda = Fact<std::string>::known(*v, bi);
        }
        if (auto v = py_dict_value(*text, "cudnn_version"); v && !v->empty()) {
          f.cudnn = Fact<std::string>::known(*v, bi);
        }
        if (auto v = py_dict_value(*text, "is_cuda_build")) {
          f.cuda_build = Fact<bool>::known(*v == "True", bi);
        }
        if (auto v = py_dict_value(*text, "is_tensorrt_build")) {
          f.tensorrt_build = Fact<bool>::known(*v == "True", bi);
        }
        f.cuda_archs = py_list_value(*text, "cuda_compute_capabilities");
      } else if (p->name != "tensorflow-gpu") {
        f.cuda = Fact<std::string>::unknown(FactStatus::not_found, "no build_info.py", bi);
      }
      for (const auto& q : e.packages) {
        if (starts_with(q.name, "nvidia-")) f.cuda_packages.push_back(q.name + " " + q.version);
      }
      e.frameworks.push_back(std::move(f));
      break;
    }
    const auto* jax = pkg(e, "jax");
    const auto* jaxlib = pkg(e, "jaxlib");
    if (jax || jaxlib) {
      FrameworkFacts f;
      f.name = "jax";
      f.package = jax ? "jax" : "jaxlib";
      f.version = jax ? jax->version : jaxlib->version;
      if (jaxlib) f.local_tag = local_tag(jaxlib->version);
      bool gpu = contains(f.local_tag, "cuda");
      for (const auto& q : e.packages) {
        if (starts_with(q.name, "jax-cuda")) {
          f.cuda_packages.push_back(q.name + " " + q.version);
          gpu = true;
          // jax-cuda12-plugin -> "12"
          std::string major = q.name.substr(8, q.name.find('-', 8) - 8);
          if (!f.cuda) f.cuda = Fact<std::string>::known(major, q.source);
        }
      }
      if (jaxlib && !f.cuda && contains(f.local_tag, "cuda")) {
        std::string t = f.local_tag.substr(f.local_tag.find("cuda") + 4);
        f.cuda = Fact<std::string>::known(t.substr(0, t.find('.')), jaxlib->source);
      }
      f.cuda_build = Fact<bool>::known(
          gpu, jaxlib ? jaxlib->source + " + jax-cuda* plugin packages" : "jax-cuda* packages");
      e.frameworks.push_back(std::move(f));
    }
    const auto* pd = pkg(e, "paddlepaddle-gpu");
    const auto* pc = pkg(e, "paddlepaddle");
    if (pd || pc) {
      FrameworkFacts f;
      f.name = "paddle";
      const auto* p = pd ? pd : pc;
      f.package = p->name;
      f.version = p->version;
      f.local_tag = local_tag(p->version);
      if (pd) f.cuda_packages.push_back(pd->name + " " + pd->version);
      if (pc) f.cuda_packages.push_back(pc->name + " " + pc->version);
      std::string vf = path_join(p->location, "paddle/version/__init__.py");
      if (auto text = fs_.read_file(vf, 65536)) {
        if (auto v = py_assignment(*text, "with_gpu")) {
          f.cuda_build = Fact<bool>::known(*v == "ON" || *v == "True", vf);
        }
        if (auto v = py_assignment(*text, "cuda_version"); v && !v->empty() && *v != "False") {
          f.cuda = Fact<std::string>::known(*v, vf);
          if (!f.cuda_build.ok()) f.cuda_build = Fact<bool>::known(true, vf + " (cuda_version)");
        } else if (v && *v == "False" && !f.cuda_build.ok()) {
          f.cuda_build = Fact<bool>::known(false, vf + " (cuda_version = 'False')");
        }
        if (auto v = py_assignment(*text, "with_pip_cuda_libraries")) {
          f.pip_cuda_libraries = *v == "ON";
        }
        if (auto v = py_assignment(*text, "cudnn_version"); v && !v->empty() && *v != "False") {
          f.cudnn = Fact<std::string>::known(*v, vf);
        }
      }
      e.frameworks.push_back(std::move(f));
    }
    const auto* og = pkg(e, "onnxruntime-gpu");
    const auto* oc = pkg(e, "onnxruntime");
    if (og || oc) {
      FrameworkFacts f;
      f.name = "onnxruntime";
      const auto* p = og ? og : oc;
      f.package = p->name;
      f.version = p->version;
      if (og) f.cuda_packages.push_back(og->name + " " + og->version);
      if (oc) f.cuda_packages.push_back(oc->name + " " + oc->version);
      std::string prov =
          path_join(p->location, windows() ? "onnxruntime/capi/onnxruntime_providers_cuda.dll"
                                           : "onnxruntime/capi/libonnxruntime_providers_cuda.so");
      f.cuda_build = Fact<bool>::known(fs_.exists(prov), prov);
      e.frameworks.push_back(std::move(f));
    }
    std::vector<const PythonPackage*> cupys;
    for (const auto& q : e.packages) {
      if (q.name == "cupy" || starts_with(q.name, "cupy-cuda")) cupys.push_back(&q);
    }
    if (!cupys.empty()) {
      FrameworkFacts f;
      f.name = "cupy";
      f.package = cupys[0]->name;
      f.version = cupys[0]->version;
      for (const auto* q : cupys) f.cuda_packages.push_back(q->name + " " + q->version);
      if (starts_with(f.package, "cupy-cuda")) {
        std::string digits;
        for (char ch : f.package.substr(9)) {
          if (std::isdigit(static_cast<unsigned char>(ch))) digits += ch;
        }
        // cupy-cuda12x -> 12; cupy-cuda117 -> 11 (three digits: major + minor)
        std::string major = digits.size() == 3 ? digits.substr(0, 2) : digits;
        if (digits.size() == 3 && digits[0] != '1') major = digits.substr(0, 1);
        f.cuda = Fact<std::string>::known(major, cupys[0]->source + " (package name)");
        f.cuda_build = Fact<bool>::known(true, cupys[0]->source + " (package name)");
      }
      e.frameworks.push_back(std::move(f));
    }
    if (const auto* p = pkg(e, "ctranslate2")) {
      FrameworkFacts f;
      f.name = "ctranslate2";
      f.package = p->name;
      f.version = p->version;
      e.frameworks.push_back(std::move(f));
    }
  }

  // "libcudnn.so.9" -> 9 for lib "cudnn"; nullopt for any other name (libcudnn.so.9.1.0,
  // libcudnn_ops.so.9).
  static std::optional<int> soname_major(const std::string& name, const std::string& lib) {
    std::string stem = "lib" + lib + ".so.";
    if (!starts_with(name, stem)) return std::nullopt;
    std::string rest = name.substr(stem.size());
    if (rest.empty() || rest.find('.') != std::string::npos) return std::nullopt;
    return static_cast<int>(parse_int(rest).value_or(0));
  }
  // The Windows DLL of `lib`, case-insensitively: "cudnn64_9.dll" -> 9, "cudart64_110.dll"
  // -> 11 (CUDA 11.0), "cublasLt64_12.dll" -> 12, "nvJitLink_120_0.dll" -> 12; nullopt for
  // sub-libraries (cudnn_ops64_9.dll) and other names.
  static std::optional<int> windows_dll_major(const std::string& name, const std::string& lib) {
    const std::string n = to_lower(name);
    const std::string l = to_lower(lib);
    std::string rest;
    if (starts_with(n, l + "64_")) {
      rest = n.substr(l.size() + 3);
    } else if (l == "nvjitlink" && starts_with(n, l + "_")) {
      rest = n.substr(l.size() + 1);
    } else {
      return std::nullopt;
    }
    if (!rest.ends_with(".dll")) return std::nullopt;
    rest.resize(rest.size() - 4);
    const std::string digits = rest.substr(0, rest.find('_'));  // nvJitLink_120_0 -> 120
    if (digits.empty() || digits.size() > 3 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    if (rest.size() > digits.size() && l != "nvjitlink" && l != "nvrtc") return std::nullopt;
    const int v = static_cast<int>(parse_int(digits).value_or(0));
    return digits.size() == 3 ? v / 10 : v;
  }

  void cuda_libs(PythonEnv& e) {
    static const std::vector<std::pair<std::string, std::string>> libs = {
        {"cudnn", "nvidia-cudnn"},         {"cudart", "nvidia-cuda-runtime"},
        {"cublas", "nvidia-cublas"},       {"cublasLt", "nvidia-cublas"},
        {"nvJitLink", "nvidia-nvjitlink"}, {"nccl", "nvidia-nccl"},
        {"cusparse", "nvidia-cusparse"},   {"cufft", "nvidia-cufft"},
        {"curand", "nvidia-curand"},       {"nvinfer", "tensorrt"}};
    for (const auto& site : e.site_packages) {
      std::string nv = path_join(site, "nvidia");
      std::vector<std::string> libdirs;
      if (auto subs = fs_.list_dir(nv)) {
        for (const auto& s : *subs) {
          libdirs.push_back(path_join(path_join(nv, s.name), windows() ? "bin" : "lib"));
        }
      }
      libdirs.push_back(path_join(site, "tensorrt_libs"));  // the tensorrt-libs wheel
      // Windows torch wheels carry their own cuDNN/cuBLAS/cudart DLLs in torch\lib.
      const std::string torch_lib = path_join(path_join(site, "torch"), "lib");
      if (windows()) libdirs.push_back(torch_lib);
      for (const auto& libdir : libdirs) {
        auto files = fs_.list_dir(libdir);
        if (!files) continue;
        for (const auto& file : *files) {
          for (const auto& [lib, pkg_prefix] : libs) {
            auto major =
                windows() ? windows_dll_major(file.name, lib) : soname_major(file.name, lib);
            if (!major) continue;
            PythonLibCopy c;
            c.library = lib;
            c.major = *major;
            c.path = path_join(libdir, file.name);
            if (libdir == torch_lib) {
              if (const auto* t = pkg(e, "torch")) {
                c.package = t->name;
                c.version = t->version;
              }
              e.cuda_libs.push_back(std::move(c));
              continue;
            }
            for (const auto& p : e.packages) {
              if (starts_with(p.name, pkg_prefix + "-cu") || p.name == pkg_prefix) {
                c.package = p.name;
                c.version = p.version;
              }
            }
            e.cuda_libs.push_back(std::move(c));
          }
        }
      }
    }
  }

  const ProbeContext& ctx_;
  const FileSystem& fs_;
  const ProbeOptions& options_;
  const LoaderConfig* loader_;
  std::optional<LoaderConfig> own_loader_;
  std::vector<PythonEnv> envs_;
  std::map<std::string, size_t> by_prefix_;
  std::string venv_home_;
  bool venv_system_site_ = false;
  bool discovery_only_ = false;
};

}  // namespace

std::vector<PythonEnv> probe_python(const ProbeContext& ctx, const ProbeOptions& options,
                                    const LoaderConfig* loader) {
  return PythonProbe(ctx, options, loader).run();
}

std::vector<std::string> python_site_packages(const ProbeContext& ctx,
                                              const ProbeOptions& options) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& e : PythonProbe(ctx, options, nullptr).discover()) {
    for (const auto& d : e.site_packages) {
      if (seen.insert(ctx.fs.real_path(d).value_or(d)).second) out.push_back(d);
    }
  }
  return out;
}

}  // namespace dlenv
