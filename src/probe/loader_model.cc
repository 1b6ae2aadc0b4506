// The Linux loader model (see loader_model.h). The search order is data: a
// list of (rule, directory) built per request, walked in order; the first file
// of the right ELF class and machine wins, later usable copies are recorded as
// shadowed, unusable ones as rejected.
#include "probe/loader_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "probe/nvidia_companions.h"
#include "util/strings.h"

namespace dlenv {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Worker threads for one walk (the cuDNN string scans, the symbol tables, the
// symbol check), started by the first task and joined when the pool goes (tasks not yet started
// then are dropped: their futures report a broken promise, and nobody waits on them).
class TaskPool {
 public:
  TaskPool() = default;
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;
  ~TaskPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  static size_t size() { return std::max(1u, std::thread::hardware_concurrency()); }

  template <class F>
  std::future<std::invoke_result_t<F>> submit(F f) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::move(f));
    auto future = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back([task] { (*task)(); });
      if (threads_.empty()) {
        for (size_t i = 0; i < size(); ++i) threads_.emplace_back([this] { work(); });
      }
    }
    wake_.notify_one();
    return future;
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

constexpr size_t kMaxObjects = 4096;
constexpr size_t kMaxListedSymbols = 8;

struct SearchDir {
  SearchRule rule;
  std::string dir;
  std::string detail;  // "DT_RUNPATH of libx.so"
};

std::string triplet_for(uint16_t machine, bool is64) {
  switch (machine) {
    case 62: return is64 ? "x86_64-linux-gnu" : "x86_64-linux-gnux32";
    case 3: return "i386-linux-gnu";
    case 183: return "aarch64-linux-gnu";
    case 40: return "arm-linux-gnueabihf";
    case 21: return "powerpc64le-linux-gnu";
    case 22: return "s390x-linux-gnu";
    case 243: return "riscv64-linux-gnu";
    default: return "";
  }
}

std::string platform_for(uint16_t machine) {
  switch (machine) {
    case 62: return "x86_64";
    case 3: return "i686";
    case 183: return "aarch64";
    default: return elf_machine_name(machine);
  }
}

std::string class_name(bool is64) {
  return is64 ? "64-bit" : "32-bit";
}

// Version from a real file name: "libcudnn_ops.so.9.1.0" -> "9.1.0" (only when
// it has at least two components; "libfoo.so.9" says nothing beyond the soname).
std::string version_from_file_name(std::string_view base) {
  const size_t p = base.find(".so.");
  if (p == std::string_view::npos) return "";
  std::string v(base.substr(p + 4));
  if (std::count(v.begin(), v.end(), '.') < 1) return "";
  return v;
}

// Library family for the mixed-versions check: every cuDNN sub-library is one
// family, cuBLAS and cuBLASLt are one.
std::string family_of(std::string_view base) {
  if (base.starts_with("libcudnn")) return "cuDNN";
  if (base.starts_with("libcublas")) return "cuBLAS";
  return "";
}

class Modeler {
 public:
  Modeler(const FileSystem& fs, const Kb& kb, const LinuxLoaderSettings& s)
      : fs_(fs), kb_(kb), s_(s) {}

  Result<LoadTree> run(const std::string& file_or_name) {
    const auto start = Clock::now();
    LoadedObject root;
    root.name = file_or_name;
    if (file_or_name.find('/') != std::string::npos) {
      auto st = fs_.stat(file_or_name);
      if (!st) {
        return fail(
            fmt::format("{}: no such file (give a path to an ELF file, or a library "
                        "name such as libcudnn.so.9)",
                        file_or_name));
      }
      root.path = file_or_name;
      root.rule = SearchRule::path;
      root.rule_detail = "given on the command line";
    }
    auto mapped = root.path ? open_elf(*root.path, 0) : Result<ElfInfo>(fail(""));
    if (root.path && !mapped) return std::unexpected(mapped.error());
    if (root.path) {
      cls_is64_ = mapped->is_64;
      machine_ = mapped->machine;
    } else {
#if defined(__x86_64__)
      cls_is64_ = true, machine_ = 62;
#elif defined(__aarch64__)
      cls_is64_ = true, machine_ = 183;
#else
      cls_is64_ = sizeof(void*) == 8, machine_ = 0;
#endif
    }
    init_defaults();
    tree_.objects.push_back(std::move(root));
    if (tree_.objects[0].path) {
      accept(0, std::move(*mapped));
    } else {
      search(0, -1);
      if (tree_.objects[0].path) {
        auto m = open_elf(*tree_.objects[0].path, 0);
        if (!m) return std::unexpected(m.error());
        accept(0, std::move(*m));
      }
    }
    // Breadth-first, as ld.so maps DT_NEEDED entries. The companions found in
    // cuDNN's read-only data come after the walk, as the dlopen calls that load
    // them come after the process started: their scans run meanwhile.
    std::deque<int> queue{0};
    auto add_children = [&](int i, std::vector<std::pair<std::string, std::string>>& wanted) {
      for (auto& [name, note] : wanted) {
        LoadedObject o;
        o.name = name;
        o.parent = i;
        o.companion = !note.empty();
        o.companion_note = note;
        tree_.objects.push_back(std::move(o));
        const int c = static_cast<int>(tree_.objects.size() - 1);
        tree_.objects[static_cast<size_t>(i)].children.push_back(c);
        resolve(c, i);
        if (tree_.objects[static_cast<size_t>(c)].path &&
            tree_.objects[static_cast<size_t>(c)].same_as < 0) {
          queue.push_back(c);
        }
      }
    };
    for (;;) {
      while (!queue.empty() && tree_.objects.size() < kMaxObjects) {
        const int i = queue.front();
        queue.pop_front();
        if (!tree_.objects[static_cast<size_t>(i)].elf) continue;
        std::vector<std::pair<std::string, std::string>> wanted;  // name, companion note
        for (const auto& n : tree_.objects[static_cast<size_t>(i)].elf->needed) {
          wanted.emplace_back(n, "");
        }
        if (s_.companions) add_companions(i, wanted);
        add_children(i, wanted);
      }
      if (scans_.empty() || tree_.objects.size() >= kMaxObjects) break;
      const auto t0 = Clock::now();
      auto scans = std::move(scans_);
      scans_.clear();
      std::vector<std::pair<int, std::vector<std::string>>> found;
      for (auto& [i, scan] : scans) found.emplace_back(i, scan.get());
      scan_wait_ms_ += ms_between(t0, Clock::now());
      for (auto& [i, refs] : found) {
        std::vector<std::pair<std::string, std::string>> wanted;
        for (const auto& ref : refs) {
          wanted.emplace_back(ref, ref.starts_with("libnvrtc")
                                       ? "cuDNN compiles run-time kernels with NVRTC (dlopen)"
                                       : "cuDNN calls cuBLASLt through dlopen");
        }
        std::erase_if(wanted, [&](const auto& w) { return has_child(i, w.first); });
        add_children(i, wanted);
      }
    }
    const auto walked = Clock::now();
    tree_.timing_ms["walk"] = ms_between(start, walked) - scan_wait_ms_;
    tree_.timing_ms["companion_scan_wait"] = scan_wait_ms_;
    tree_.timing_ms["walk_search"] = search_ms_;  // parts of "walk"
    tree_.timing_ms["walk_open"] = open_ms_;
    if (s_.symbols) check_symbols();
    const auto symbols = Clock::now();
    tree_.timing_ms["symbols"] = ms_between(walked, symbols);
    check_families();
    tree_.timing_ms["families"] = ms_between(symbols, Clock::now());
    tree_.timing_ms["total"] = ms_between(start, Clock::now());
    for (auto& o : tree_.objects) {
      if (o.severity == LoadSeverity::error) ++tree_.errors;
      if (o.severity == LoadSeverity::warning) ++tree_.warnings;
    }
    return std::move(tree_);
  }

 private:
  // A cuDNN library's read-only data scan, split into spans searched in parallel.
  class RodataScan {
   public:
    using Found = std::vector<std::vector<std::string>>;  // per prefix
    void add(std::future<Found> part) { parts_.push_back(std::move(part)); }
    // The bare sonames found ("libnvrtc.so.13"), in file order; waits for the parts.
    std::vector<std::string> get() {
      std::vector<std::string> refs;
      std::vector<std::string> seen;
      for (auto& part : parts_) {
        const Found found = part.get();
        for (size_t k = 0; k < found.size() && k < prefixes().size(); ++k) {
          for (const auto& s : found[k]) {
            const std::string& p = prefixes()[k];
            // Only a bare soname, not a longer message.
            if (s.size() > p.size() &&
                s.find_first_not_of("0123456789.", p.size()) == std::string::npos &&
                std::find(seen.begin(), seen.end(), s) == seen.end()) {
              seen.push_back(s);
              refs.push_back(s);
            }
          }
        }
      }
      parts_.clear();
      return refs;
    }
    static const std::vector<std::string>& prefixes() {
      static const std::vector<std::string> p = {"libcublasLt.so.", "libnvrtc.so."};
      return p;
    }

   private:
    std::vector<std::future<Found>> parts_;
  };

  struct TableRead {
    std::shared_ptr<MappedFile> mapped;  // alive for the table's views into it
    std::optional<ElfSymbolTable> table;
    std::string error;  // the dynamic symbol table is corrupt
  };

  // Starts the scan of a cuDNN library's read-only data for the cuBLASLt/NVRTC
  // sonames it dlopens (megabytes per sub-library). The data is read through the file system in
  // windows (see elf_find_strings_read), not faulted in from the mapping, which only supplies the
  // headers; spans of it are searched on the pool's threads.
  RodataScan start_scan(const std::string& path, const std::shared_ptr<MappedFile>& mapped) {
    constexpr uint64_t kMinSpan = uint64_t{1} << 20;
    constexpr size_t kPerSpan = 16;  // results per span before the merge cuts them
    RodataScan scan;
    const auto ranges = elf_readonly_ranges(mapped->bytes());
    uint64_t total = 0;
    for (const auto& r : ranges) total += r.second;
    const uint64_t span = std::max<uint64_t>(kMinSpan, total / TaskPool::size() + 1);
    for (const auto& [offset, size] : ranges) {
      for (uint64_t at = offset; at < offset + size; at += span) {
        const ElfSpan part{at, std::min(at + span, offset + size)};
        scan.add(pool_.submit([&fs = fs_, path, mapped, part] {
          auto reader = fs.open_reader(path);
          if (!reader) return RodataScan::Found(RodataScan::prefixes().size());
          auto read_at = [&r = **reader](uint64_t off, std::span<char> buffer) -> size_t {
            auto n = r.read_at(off, buffer);
            return n ? *n : 0;
          };
          const size_t window =
              static_cast<size_t>(std::min<uint64_t>(part.end - part.begin, 1u << 20));
          return elf_find_strings_read(mapped->bytes(), RodataScan::prefixes(), kPerSpan, read_at,
                                       window, part);
        }));
      }
    }
    return scan;
  }

  // Maps and parses object `index`'s file; starts its symbol table read and, for
  // cuDNN, its string scan.
  Result<ElfInfo> open_elf(const std::string& path, int index) {
    auto m = fs_.map_file(path);
    if (!m) return fail(fmt::format("{}: cannot read: {}", path, m.error().message));
    // Symbols are looked up in place (ElfSymbolTable), never copied: libtorch_cpu.so
    // alone exports ~250,000.
    auto e = parse_elf((*m)->bytes(), path, ElfParseOptions{.versions = s_.symbols});
    if (!e) return std::unexpected(e.error());
    if (!*e) return fail(fmt::format("{}: not an ELF file", path));
    std::shared_ptr<MappedFile> mapped(std::move(*m));
    if (s_.symbols) {
      // Read on the pool while the walk goes on: the imports of libtorch_cpu.so
      // and libtorch_cuda.so are tens of thousands of entries to page in.
      tables_.emplace(index, pool_.submit([mapped, path] {
        TableRead r;
        auto t = ElfSymbolTable::read(mapped->bytes(), path,
                                      [&m = *mapped](ByteView part) { m.prefetch(part); });
        if (!t) {
          r.error = t.error().message;
        } else if (*t) {
          r.table = std::move(**t);
          r.mapped = mapped;
        }
        return r;
      }));
    }
    const std::string base = path_basename(path);
    if (s_.companions && s_.companion_strings && base.starts_with("libcudnn")) {
      scans_.emplace(index, start_scan(path, mapped));
    }
    return std::move(**e);
  }

  void init_defaults() {
    const std::string trip = triplet_for(machine_, cls_is64_);
    platform_ = s_.platform.empty() ? platform_for(machine_) : s_.platform;
    if (!s_.lib.empty()) {
      lib_ = s_.lib;
    } else if (!trip.empty() && fs_.is_dir("/usr/lib/" + trip)) {
      lib_ = "lib/" + trip;
    } else {
      lib_ = cls_is64_ ? "lib64" : "lib";
    }
    if (!s_.default_dirs.empty()) {
      defaults_ = s_.default_dirs;
    } else {
      if (!trip.empty()) {
        defaults_.push_back("/lib/" + trip);
        defaults_.push_back("/usr/lib/" + trip);
      }
      if (cls_is64_) {
        defaults_.push_back("/lib64");
        defaults_.push_back("/usr/lib64");
      }
      defaults_.push_back("/lib");
      defaults_.push_back("/usr/lib");
    }
  }

  std::string display(int i) const {
    const auto& o = tree_.objects[static_cast<size_t>(i)];
    if (o.elf && o.elf->soname) return *o.elf->soname;
    return path_basename(o.path.value_or(o.name));
  }

  // The NVIDIA companions object i loads at run time (dlopen), as names.
  void add_companions(int i, std::vector<std::pair<std::string, std::string>>& wanted) {
    const auto& o = tree_.objects[static_cast<size_t>(i)];
    const std::string base = path_basename(o.path.value_or(o.name));
    const std::string soname = o.elf && o.elf->soname ? *o.elf->soname : base;
    auto add = [&](const std::string& name, const std::string& note) {
      for (const auto& w : wanted) {
        if (w.first == name) return;
      }
      if (name == soname) return;
      wanted.emplace_back(name, note);
    };
    for (const auto& c : nvidia_runtime_companions(kb_, soname, Os::linux, "")) add(c.name, c.note);
    if (!libcuda_added_ && loads_cuda_driver(soname, Os::linux) &&
        !soname.starts_with("libcuda.")) {
      libcuda_added_ = true;
      const auto d = cuda_driver_companion(soname, Os::linux);
      add(d.name, d.note);
    }
  }

  // Whether object i already has a child named `name` (or is itself that soname).
  bool has_child(int i, const std::string& name) const {
    const auto& o = tree_.objects[static_cast<size_t>(i)];
    if (o.elf && o.elf->soname == name) return true;
    for (int c : o.children) {
      if (tree_.objects[static_cast<size_t>(c)].name == name) return true;
    }
    return false;
  }

  // fs_.real_path with the directory part remembered: the candidates of one
  // walk share a few directories, and resolving each path from the root costs
  // a readlink per component (/opt/x/.venv/lib/python3.12/site-packages/...).
  std::string real_of(const std::string& path, int depth = 0) {
    if (auto it = real_paths_.find(path); it != real_paths_.end()) return it->second;
    std::string real = path;
    const std::string dir = path_dirname(path);
    const std::string base = path_basename(path);
    auto ls = fs_.lstat(path);
    if (!ls || dir.empty() || dir == path || base.empty() || base == "." || base == ".." ||
        depth > 8) {
      auto rp = fs_.real_path(path);
      real = rp ? *rp : path;
    } else {
      auto d = real_dirs_.find(dir);
      if (d == real_dirs_.end()) {
        auto rp = fs_.real_path(dir);
        d = real_dirs_.emplace(dir, rp ? *rp : dir).first;
      }
      if (ls->type != FileType::symlink) {
        real = path_join(d->second, base);
      } else if (auto target = fs_.read_link(path);
                 target && !target->empty() && target->find('/') == std::string::npos) {
        real = real_of(path_join(d->second, *target), depth + 1);  // "libx.so.9 -> libx.so.9.1"
      } else {
        auto rp = fs_.real_path(path);
        real = rp ? *rp : path;
      }
    }
    real_paths_.emplace(path, real);
    return real;
  }

  // Whether a search directory exists, asked once per directory per walk (as ld.so
  // remembers the directories it found missing): most glibc-hwcaps ones do not.
  bool dir_exists(const std::string& dir) {
    auto it = dir_exists_.find(dir);
    if (it == dir_exists_.end()) it = dir_exists_.emplace(dir, fs_.is_dir(dir)).first;
    return it->second;
  }

  // The names in a directory, read once per walk; nullptr when it cannot be read.
  const std::unordered_set<std::string>* listing(const std::string& dir) {
    auto it = listings_.find(dir);
    if (it == listings_.end()) {
      std::optional<std::unordered_set<std::string>> names;
      if (auto entries = fs_.list_dir(dir)) {
        names.emplace();
        for (auto& e : *entries) names->insert(std::move(e.name));
      }
      it = listings_.emplace(dir, std::move(names)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  void accept(int i, ElfInfo info) {
    auto& o = tree_.objects[static_cast<size_t>(i)];
    if (o.path) {
      o.real_path = real_of(*o.path);
      o.version = version_from_file_name(path_basename(o.real_path));
    }
    o.elf = std::move(info);
    if (o.elf->soname) loaded_[*o.elf->soname] = i;
    loaded_[o.name] = i;
    if (o.path) loaded_[*o.path] = i;
  }

  std::vector<SearchDir> search_list(int requester) const {
    std::vector<SearchDir> dirs;
    auto add_list = [&](SearchRule rule, const std::string& list, int owner,
                        const std::string& detail) {
      const std::string origin =
          owner >= 0 ? path_dirname(tree_.objects[static_cast<size_t>(owner)].path.value_or("/"))
                     : "";
      for (const auto& d : split(list, ':')) {
        if (d.empty()) continue;
        if (owner < 0 && d.find("ORIGIN") != std::string::npos) continue;
        dirs.push_back({rule, expand_dst(d, origin, lib_, platform_), detail});
      }
    };
    const LoadedObject* req =
        requester >= 0 ? &tree_.objects[static_cast<size_t>(requester)] : nullptr;
    const bool req_has_runpath = req && req->elf && req->elf->runpath;
    if (!req_has_runpath) {
      for (int l = requester; l >= 0; l = tree_.objects[static_cast<size_t>(l)].parent) {
        const auto& lo = tree_.objects[static_cast<size_t>(l)];
        if (!lo.elf || !lo.elf->rpath || lo.elf->runpath) continue;
        add_list(SearchRule::rpath, *lo.elf->rpath, l,
                 fmt::format("DT_RPATH of {}{}: {}", display(l),
                             l == requester ? "" : " (inherited along the loading chain)",
                             *lo.elf->rpath));
      }
    }
    for (const auto& d : s_.ld_library_path) {
      if (!d.empty()) {
        dirs.push_back(
            {SearchRule::ld_library_path, expand_dst(d, "", lib_, platform_), "LD_LIBRARY_PATH"});
      }
    }
    if (req_has_runpath) {
      add_list(SearchRule::runpath, *req->elf->runpath, requester,
               fmt::format("DT_RUNPATH of {}: {}", display(requester), *req->elf->runpath));
    }
    return dirs;
  }

  // Whether `path` is an ELF of our class and machine, else why not: what ld.so
  // checks before it takes a candidate (the header is read, not mapped).
  std::optional<std::string> unusable(const std::string& path) const {
    auto head = fs_.read_head(path, 64);
    if (!head) return "cannot read: " + head.error().message;
    auto e = parse_elf_header(ByteView(*head), path);
    if (!e) return "corrupt: " + e.error().message;
    if (!*e) return std::string("not an ELF file");
    if ((*e)->is_64 != cls_is64_ || (*e)->machine != machine_) {
      return fmt::format("ELF {} {}, needed {} {}", class_name((*e)->is_64),
                         elf_machine_name((*e)->machine), class_name(cls_is64_),
                         elf_machine_name(machine_));
    }
    return std::nullopt;
  }

  // Files to try for `name` in `dir`: glibc-hwcaps subdirectories first.
  // `listed`: for the directories of RPATH/LD_LIBRARY_PATH/RUNPATH, which each
  // library of a walk is looked for in, the directory is read once and a name it
  // lacks is not stat'ed (a pip layout: six RPATH directories times ~40 names).
  // Default directories (thousands of entries, rarely reached) are stat'ed.
  std::vector<std::string> files_in(const std::string& dir, const std::string& name,
                                    bool listed = false) {
    std::vector<std::string> out;
    if (!dir_exists(dir)) return out;
    for (const auto& h : s_.hwcaps) {
      const std::string sub = path_join(dir, "glibc-hwcaps/" + h);
      if (dir_exists(sub)) out.push_back(path_join(sub, name));
    }
    if (listed) {
      if (const auto* names = listing(dir); names && !names->contains(name)) return out;
    }
    out.push_back(path_join(dir, name));
    return out;
  }

  void consider(LoadedObject& o, const std::string& path, SearchRule rule,
                const std::string& detail, std::set<std::string>& seen_real) {
    auto st = fs_.stat(path);
    if (!st || st->type != FileType::regular) return;
    const std::string real = real_of(path);
    if (!seen_real.insert(real).second) return;  // same file by another path
    if (auto why = unusable(path)) {
      o.rejected.push_back({path, rule, *why});
      return;
    }
    if (!o.path) {
      o.path = path;
      o.rule = rule;
      o.rule_detail = detail;
    } else {
      o.shadowed.push_back({path, rule, detail});
    }
  }

  void search(int i, int requester) {
    auto& o = tree_.objects[static_cast<size_t>(i)];
    std::set<std::string> seen_real;
    if (o.name.find('/') != std::string::npos) {
      const std::string origin =
          requester >= 0
              ? path_dirname(tree_.objects[static_cast<size_t>(requester)].path.value_or("/"))
              : "";
      const std::string p = expand_dst(o.name, origin, lib_, platform_);
      o.searched.push_back(p);
      consider(o, p, SearchRule::path, "the name contains a '/'", seen_real);
    } else {
      for (const auto& d : search_list(requester)) {
        o.searched.push_back(d.dir + "  (" + d.detail + ")");
        for (const auto& f : files_in(d.dir, o.name, /*listed=*/true)) {
          consider(o, f, d.rule, d.detail, seen_real);
        }
      }
      if (s_.cache) {
        o.searched.push_back("/etc/ld.so.cache");
        for (const auto& e : s_.cache->entries) {
          if (e.soname != o.name) continue;
          // ld.so skips cache entries of another ABI by their flags, without
          // opening them: so do we (they are not "rejected" copies).
          if (machine_ == 62 && cls_is64_ && !e.is_64bit_x86()) continue;
          if (unusable(e.path)) continue;
          consider(o, e.path, SearchRule::ld_cache, "/etc/ld.so.cache", seen_real);
        }
      }
      for (const auto& d : defaults_) {
        o.searched.push_back(d + "  (default directory)");
        for (const auto& f : files_in(d, o.name)) {
          consider(o, f, SearchRule::default_dirs, "default directory " + d, seen_real);
        }
      }
    }
    if (o.path) return;
    o.missing = true;
    o.rule = SearchRule::not_found;
    const std::string who =
        requester >= 0 ? fmt::format(" (needed by {})", display(requester)) : std::string();
    if (!o.rejected.empty()) {
      o.wrong_class = true;
      o.problem = fmt::format(
          "{}{}: only unusable copies found: {} ({}). Install the {} {} build of the library.",
          o.name, who, o.rejected[0].path, o.rejected[0].note, class_name(cls_is64_),
          elf_machine_name(machine_));
    } else {
      o.problem = fmt::format("{}{} was not found on the search path", o.name, who);
      // A copy in an ld.so.conf directory the cache does not know: stale cache.
      for (const auto& d : s_.conf_dirs) {
        const std::string p = path_join(d, o.name);
        if (fs_.is_file(p) && !unusable(p)) {
          o.problem += fmt::format(
              "; a copy exists in {} (listed in /etc/ld.so.conf) but /etc/ld.so.cache does not "
              "have it: run `sudo ldconfig`",
              d);
          break;
        }
      }
      if (o.problem.find("ldconfig") == std::string::npos) {
        o.problem +=
            ". Install it, or add its directory to LD_LIBRARY_PATH (or to "
            "/etc/ld.so.conf.d/ and run `sudo ldconfig`)";
      }
    }
    const bool driver = o.name.starts_with("libcuda.so");
    o.severity = driver ? LoadSeverity::warning : LoadSeverity::error;
    if (driver) o.problem += " (no NVIDIA driver on this system? CUDA calls will fail at run time)";
  }

  void resolve(int i, int requester) {
    auto& o = tree_.objects[static_cast<size_t>(i)];
    // Already loaded: by soname, requested name or path.
    auto it = loaded_.find(o.name);
    if (it == loaded_.end() &&
        std::find(s_.preloaded.begin(), s_.preloaded.end(), o.name) != s_.preloaded.end()) {
      o.rule = SearchRule::already_loaded;
      o.rule_detail = "preloaded in the process";
      o.path = o.name;
      o.same_as = -2;
      return;
    }
    if (it != loaded_.end()) {
      o.rule = SearchRule::already_loaded;
      o.same_as = it->second;
      o.path = tree_.objects[static_cast<size_t>(it->second)].path;
      o.real_path = tree_.objects[static_cast<size_t>(it->second)].real_path;
      o.rule_detail = "already loaded as " + display(it->second);
      return;
    }
    const auto t0 = Clock::now();
    search(i, requester);
    const auto t1 = Clock::now();
    search_ms_ += ms_between(t0, t1);
    auto& o2 = tree_.objects[static_cast<size_t>(i)];
    if (!o2.path) return;
    auto p = open_elf(*o2.path, i);
    open_ms_ += ms_between(t1, Clock::now());
    if (!p) {
      o2.problem = p.error().message;
      o2.severity = LoadSeverity::error;
      return;
    }
    accept(i, std::move(*p));
  }

  void check_symbols() {
    const auto t0 = Clock::now();
    for (auto& [i, future] : tables_) {
      TableRead r = future.get();
      auto& o = tree_.objects[static_cast<size_t>(i)];
      if (!r.error.empty()) add_problem(o, r.error);
      if (r.table)
        symbols_.insert_or_assign(i, std::pair(std::move(r.mapped), std::move(*r.table)));
    }
    tables_.clear();
    tree_.timing_ms["symbols_tables_wait"] = ms_between(t0, Clock::now());
    std::map<std::string, const ElfInfo*> by_soname;
    std::vector<const ElfSymbolTable*> providers;
    bool all_found = true;
    for (size_t i = 0; i < tree_.objects.size(); ++i) {
      const auto& o = tree_.objects[i];
      // A missing run-time companion (dlopen'ed separately, e.g. libcuda.so.1)
      // does not make the import-table symbols unresolvable.
      if (o.missing && !o.companion) all_found = false;
      if (!o.elf || o.same_as != -1) continue;
      if (auto it = symbols_.find(static_cast<int>(i)); it != symbols_.end()) {
        providers.push_back(&it->second.second);
      }
      if (o.elf->soname) by_soname[*o.elf->soname] = &*o.elf;
      by_soname[o.name] = &*o.elf;
    }
    // Undefined symbols: meaningful only when every dependency was found. The
    // imports are checked in items of at most kChunk on the pool's threads (the
    // tables are read-only), so that libtorch_cuda.so's tens of thousands spread
    // over all of them; each item's misses are kept apart and joined in table order.
    if (all_found) {
      constexpr size_t kChunk = 2048;
      struct Item {
        int object;
        size_t begin, end;
        std::vector<std::string> missing;
      };
      std::vector<Item> work;
      for (const auto& [i, table] : symbols_) {
        const auto& o = tree_.objects[static_cast<size_t>(i)];
        if (!o.elf || o.same_as != -1) continue;
        const size_t n = table.second.imports().size();
        for (size_t b = 0; b < n; b += kChunk) work.push_back({i, b, std::min(n, b + kChunk), {}});
      }
      std::atomic<size_t> next{0};
      auto worker = [&] {
        for (size_t w = next++; w < work.size(); w = next++) {
          Item& item = work[w];
          const auto& imports = symbols_.at(item.object).second.imports();
          size_t last = 0;  // imports come in runs from one library: try the last hit first
          for (size_t m = item.begin; m < item.end; ++m) {
            const auto& imp = imports[m];
            if (imp.weak) continue;
            bool found = !providers.empty() && providers[last]->defines(imp.name);
            for (size_t k = 0; k < providers.size() && !found; ++k) {
              if (k != last && providers[k]->defines(imp.name)) {
                found = true;
                last = k;
              }
            }
            if (!found) item.missing.emplace_back(imp.name);
          }
        }
      };
      const size_t helpers =
          std::min<size_t>(work.size(), TaskPool::size()) - (work.empty() ? 0 : 1);
      std::vector<std::future<void>> done;
      for (size_t t = 0; t < helpers; ++t) done.push_back(pool_.submit(worker));
      worker();
      for (auto& d : done) d.get();
      for (auto& item : work) {
        auto& miss = tree_.objects[static_cast<size_t>(item.object)].missing_symbols;
        miss.insert(miss.end(), std::make_move_iterator(item.missing.begin()),
                    std::make_move_iterator(item.missing.end()));
      }
    }
    for (size_t i = 0; i < tree_.objects.size(); ++i) {
      auto& o = tree_.objects[i];
      if (!o.elf || o.same_as != -1) continue;
      for (const auto& need : o.elf->version_needs) {
        auto it = by_soname.find(need.file);
        if (it == by_soname.end() || it->second->version_defs.empty()) continue;
        for (const auto& v : need.versions) {
          const auto& defs = it->second->version_defs;
          if (std::find(defs.begin(), defs.end(), v) == defs.end()) {
            o.missing_versions.push_back(fmt::format("{} from {}", v, need.file));
          }
        }
      }
      if (!o.missing_symbols.empty()) {
        std::vector<std::string> shown(
            o.missing_symbols.begin(),
            o.missing_symbols.begin() +
                static_cast<ptrdiff_t>(std::min(o.missing_symbols.size(), kMaxListedSymbols)));
        add_problem(o, fmt::format("{} undefined symbol(s) that no loaded library defines: {}{} "
                                   "(\"undefined symbol\" at load time; a dependency is an older "
                                   "or different build than the one it was linked against)",
                                   o.missing_symbols.size(), join(shown, ", "),
                                   o.missing_symbols.size() > shown.size() ? ", ..." : ""));
      }
      if (!o.missing_versions.empty()) {
        add_problem(o, fmt::format("required symbol versions not provided: {} (\"version `X' not "
                                   "found\"; install a newer build of that library or rebuild "
                                   "against the older one)",
                                   join(o.missing_versions, ", ")));
      }
    }
  }

  void check_families() {
    std::map<std::string, std::map<std::string, std::vector<int>>>
        fam;  // family -> version -> objs
    for (size_t i = 0; i < tree_.objects.size(); ++i) {
      const auto& o = tree_.objects[i];
      if (!o.elf || o.same_as != -1 || o.version.empty()) continue;
      const std::string f = family_of(path_basename(o.real_path));
      if (!f.empty()) fam[f][o.version].push_back(static_cast<int>(i));
    }
    for (const auto& [family, versions] : fam) {
      if (versions.size() < 2) continue;
      std::vector<std::string> parts;
      for (const auto& [v, objs] : versions) {
        for (int i : objs) {
          parts.push_back(fmt::format("{} {}", tree_.objects[static_cast<size_t>(i)].real_path, v));
        }
      }
      const std::string text = fmt::format(
          "{} libraries of different versions are mixed: {}. Install one complete "
          "release and remove the other copies from the search path",
          family, join(parts, "; "));
      for (const auto& [v, objs] : versions) {
        for (int i : objs) {
          auto& o = tree_.objects[static_cast<size_t>(i)];
          o.family_mismatch = text;
          add_problem(o, text);
        }
      }
    }
  }

  static void add_problem(LoadedObject& o, const std::string& text) {
    o.problem = o.problem.empty() ? text : o.problem + "; " + text;
    o.severity = LoadSeverity::error;
  }

  const FileSystem& fs_;
  const Kb& kb_;
  const LinuxLoaderSettings& s_;
  LoadTree tree_;
  bool cls_is64_ = true;
  uint16_t machine_ = 0;
  std::string lib_, platform_;
  std::vector<std::string> defaults_;
  std::map<std::string, int> loaded_;
  std::map<int, RodataScan> scans_;  // started, not yet read, by object
  std::unordered_map<std::string, std::string> real_paths_, real_dirs_;
  std::unordered_map<std::string, bool> dir_exists_;
  std::unordered_map<std::string, std::optional<std::unordered_set<std::string>>> listings_;
  double scan_wait_ms_ = 0;                       // waiting, after the walk, for the string scans
  double search_ms_ = 0, open_ms_ = 0;            // parts of the walk: search lists, map + parse
  std::map<int, std::future<TableRead>> tables_;  // being read, by object
  std::map<int, std::pair<std::shared_ptr<MappedFile>, ElfSymbolTable>> symbols_;
  bool libcuda_added_ = false;
  TaskPool pool_;  // last: destroyed (joined) first
};

}  // namespace

std::string_view search_rule_name(SearchRule rule) {
  switch (rule) {
    case SearchRule::path: return "path";
    case SearchRule::already_loaded: return "already loaded";
    case SearchRule::rpath: return "DT_RPATH";
    case SearchRule::ld_library_path: return "LD_LIBRARY_PATH";
    case SearchRule::runpath: return "DT_RUNPATH";
    case SearchRule::ld_cache: return "ld.so.cache";
    case SearchRule::default_dirs: return "default directory";
    case SearchRule::known_dll: return "KnownDLLs";
    case SearchRule::api_set: return "API set";
    case SearchRule::dll_load_dir: return "DLL load directory";
    case SearchRule::app_dir: return "application directory";
    case SearchRule::user_dirs: return "user directory";
    case SearchRule::system32: return "System32";
    case SearchRule::system16: return "System";
    case SearchRule::windows_dir: return "Windows directory";
    case SearchRule::current_dir: return "current directory";
    case SearchRule::path_env: return "PATH";
    case SearchRule::not_found: return "not found";
  }
  return "?";
}

std::string expand_dst(std::string_view dir, const std::string& origin, const std::string& lib,
                       const std::string& platform) {
  std::string out;
  for (size_t i = 0; i < dir.size();) {
    if (dir[i] != '$') {
      out += dir[i++];
      continue;
    }
    std::string_view rest = dir.substr(i + 1);
    bool matched = false;
    for (const auto& [token, value] :
         {std::pair<std::string_view, const std::string*>{"ORIGIN", &origin},
          {"LIB", &lib},
          {"PLATFORM", &platform}}) {
      const std::string braced = "{" + std::string(token) + "}";
      size_t len = 0;
      if (rest.starts_with(braced)) {
        len = braced.size();
      } else if (rest.starts_with(token)) {
        // $ORIGINX is not $ORIGIN followed by X: the token must end there.
        const size_t e = token.size();
        if (e < rest.size() &&
            (std::isalnum(static_cast<unsigned char>(rest[e])) || rest[e] == '_')) {
          continue;
        }
        len = token.size();
      } else {
        continue;
      }
      out += *value;
      i += 1 + len;
      matched = true;
      break;
    }
    if (!matched) out += dir[i++];
  }
  return path_normalize(out);
}

Result<LoadTree> model_linux_load(const FileSystem& fs, const Kb& kb,
                                  const std::string& file_or_name,
                                  const LinuxLoaderSettings& settings) {
  Modeler m(fs, kb, settings);
  return m.run(file_or_name);
}

}  // namespace dlenv
