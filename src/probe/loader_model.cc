// The Linux loader model (see loader_model.h). The search order is data: a
// list of (rule, directory) built per request, walked in order; the first file
// of the right ELF class and machine wins, later usable copies are recorded as
// shadowed, unusable ones as rejected.
#include "probe/loader_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

// How long the walk polls for a lookup it waits on before it sleeps: waking a sleeping
// thread costs ~50 us on a VM (the H200 machine is one), longer than most lookups. Only
// the walk's own thread polls: idle pool threads that polled competed for the queue's lock
// with the walk submitting work, and for the CPUs with the threads doing it (H200 run 13).
constexpr auto kSpin = std::chrono::microseconds(400);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Worker threads for one walk (the lookups of the walk and the symbol check and, in the
// background, the symbol tables and the cuDNN string scans). The threads start one another,
// so that the walk does not wait for sixteen clone() calls; they are joined when the pool
// goes (tasks not yet started then are dropped: their futures report a broken promise, and
// nobody waits on them). Background tasks run only when no other task is queued.
// Without threads (TaskPool(false)), submit() runs the task at once on the calling thread
// and submit_all() drops its tasks: they are lookups running ahead, which the walk does
// itself when no thread has taken them.
class TaskPool {
 public:
  explicit TaskPool(bool threads) : threads_wanted_(threads ? hardware_threads() : 0) {}
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;
  ~TaskPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    // A starting thread may still add the next one: join until none is left.
    for (size_t k = 0;; ++k) {
      std::thread t;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (k >= threads_.size()) break;
        t = std::move(threads_[k]);
      }
      t.join();
    }
  }

  static size_t hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }
  // The threads that work for the walk, its own included.
  size_t size() const { return std::max<size_t>(threads_wanted_, 1); }

  // Starts the threads now rather than at the first task (they start one another).
  void start() {
    if (threads_wanted_ == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (threads_.empty()) threads_.emplace_back([this] { work(); });
  }

  template <class F>
  std::future<std::invoke_result_t<F>> submit(F f, bool background = false) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::move(f));
    auto future = task->get_future();
    if (threads_wanted_ == 0) {
      (*task)();
      return future;
    }
    std::vector<std::function<void()>> one;
    one.emplace_back([task] { (*task)(); });
    push(std::move(one), background);
    return future;
  }

  // Queues tasks that return nothing under one lock and wakes every idle thread once: a
  // requester's lookups go out together.
  void submit_all(std::vector<std::function<void()>> tasks) {
    if (threads_wanted_ != 0) push(std::move(tasks), false);
  }

  // Waits until every task submitted so far has run (or been dropped by a stop).
  void wait_idle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return stop_ || (queued_ == 0 && running_ == 0); });
  }

 private:
  void push(std::vector<std::function<void()>> tasks, bool background) {
    if (tasks.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& q = background ? background_ : queue_;
      for (auto& t : tasks) q.push_back(std::move(t));
      queued_ += tasks.size();
      if (threads_.empty()) threads_.emplace_back([this] { work(); });
    }
    if (tasks.size() == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
  }

  void work() {
    {
      // Each new thread starts two more: sixteen in four rounds of clone().
      std::lock_guard<std::mutex> lock(mutex_);
      for (int k = 0; k < 2 && !stop_ && threads_.size() < threads_wanted_; ++k) {
        threads_.emplace_back([this] { work(); });
      }
    }
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty() || !background_.empty(); });
        if (stop_) return;
        auto& q = queue_.empty() ? background_ : queue_;
        job = std::move(q.front());
        q.pop_front();
        --queued_;
        ++running_;
      }
      job();
      bool idle = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        idle = --running_ == 0 && queued_ == 0;
      }
      if (idle) idle_.notify_all();
    }
  }

  const size_t threads_wanted_;  // 0: none, tasks run on the caller's thread
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> queue_, background_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  size_t queued_ = 0, running_ = 0;
};

// A memo shared by the pool's threads: each value is computed once, by the first thread
// that asks (others asking meanwhile wait for it: the lookups that start together all want
// the same few directories), and never changes or moves once stored.
template <class V>
class SharedMemo {
 public:
  template <class F>
  const V& get(const std::string& key, F compute) {
    Entry* e = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      e = &map_[key];  // node-based: the entry stays where it is
    }
    std::call_once(e->once, [&] { e->value = compute(); });
    return e->value;
  }

 private:
  struct Entry {
    std::once_flag once;
    V value{};
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> map_;
};

// A file, for LoaderFileCache's parsed ELF files: device and inode (hard links are one
// file), with size and modification time (a file rewritten in place is another).
struct FileKey {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime = 0, mtime_nsec = 0;
  bool versions = false;  // parsed with ElfParseOptions::versions
  bool operator==(const FileKey&) const = default;
};

struct FileKeyHash {
  size_t operator()(const FileKey& k) const {
    uint64_t h = k.device * 0x9e3779b97f4a7c15ULL;
    for (uint64_t v : {k.inode, k.size, static_cast<uint64_t>(k.mtime),
                       static_cast<uint64_t>(k.mtime_nsec), uint64_t{k.versions}}) {
      h = (h ^ v) * 0x100000001b3ULL;
    }
    return static_cast<size_t>(h);
  }
};

// Records LoadTraceSpans from any thread, when on.
class Tracer {
 public:
  Tracer(bool on, Clock::time_point start) : on_(on), start_(start) {
    if (on_) threads_.emplace(std::this_thread::get_id(), 0);
  }
  bool on() const { return on_; }
  void add(std::string what, Clock::time_point a, Clock::time_point b) {
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const int t = threads_.emplace(std::this_thread::get_id(), static_cast<int>(threads_.size()))
                      .first->second;
    spans_.push_back({std::move(what), t, ms_between(start_, a), ms_between(start_, b)});
  }
  std::vector<LoadTraceSpan> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::stable_sort(spans_.begin(), spans_.end(),
                     [](const auto& x, const auto& y) { return x.start_ms < y.start_ms; });
    return std::move(spans_);
  }

 private:
  const bool on_;
  const Clock::time_point start_;
  std::mutex mutex_;
  std::map<std::thread::id, int> threads_;
  std::vector<LoadTraceSpan> spans_;
};

constexpr size_t kMaxObjects = 4096;
constexpr size_t kMaxListedSymbols = 8;

struct SearchDir {
  SearchRule rule;
  std::string dir;
  std::string detail;  // "DT_RUNPATH of libx.so: $ORIGIN:/opt/x" (the chosen copy's rule_detail)
  std::string label;   // "DT_RUNPATH of libx.so" (the list of directories searched)
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
      : fs_(fs),
        kb_(kb),
        s_(s),
        files_(s.files && &s.files->fs() == &fs ? s.files : std::make_shared<LoaderFileCache>(fs)),
        start_(Clock::now()),
        tracer_(s.trace, start_) {}

  Result<LoadTree> run(const std::string& file_or_name) {
    const auto start = start_;
    pool_.start();  // while the root is opened
    // The knowledge base parses its library-name table on the first query: have a pool
    // thread pay for it now rather than the walk at its first NVIDIA library.
    if (s_.companions) {
      pool_.submit([this] {
        const auto t0 = Clock::now();
        (void)nvidia_runtime_companions(kb_, "libcudnn.so.9", Os::linux, "");
        tracer_.add("kb library names", t0, Clock::now());
      });
    }
    LoadedObject root;
    root.name = file_or_name;
    if (file_or_name.find('/') != std::string::npos) {
      auto st = files_->stat(file_or_name);
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
    const auto t_root = Clock::now();
    auto mapped = root.path ? open_elf(*root.path) : Result<Opened>(fail(""));
    if (root.path && !mapped) return std::unexpected(mapped.error());
    tracer_.add("open " + file_or_name, t_root, Clock::now());
    if (root.path) {
      cls_is64_ = mapped->elf.is_64;
      machine_ = mapped->elf.machine;
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
      search(tree_.objects[0], request_for(file_or_name, -1));
      if (tree_.objects[0].path) {
        auto m = open_elf(*tree_.objects[0].path);
        if (!m) return std::unexpected(m.error());
        accept(0, std::move(*m));
      }
    }
    // Breadth-first, as ld.so maps DT_NEEDED entries. The companions found in
    // cuDNN's read-only data come after the walk, as the dlopen calls that load
    // them come after the process started: their scans run meanwhile. The
    // searches and opens themselves run ahead on the pool (see prefetch_children);
    // what each request resolves to is decided here, in load order.
    std::deque<int> queue{0};
    auto add_children = [&](int i, std::vector<std::pair<std::string, std::string>>& wanted) {
      for (auto& [name, note] : wanted) {
        LoadedObject o;
        o.name = name;
        o.parent = i;
        o.companion = !note.empty();
        o.companion_note = note;
        requested_.insert(name);
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
        auto wanted = wanted_of(i, /*commit=*/true);
        add_children(i, wanted);
      }
      if (scans_.empty() || tree_.objects.size() >= kMaxObjects) break;
      const auto t0 = Clock::now();
      auto scans = std::move(scans_);
      scans_.clear();
      std::vector<std::pair<int, std::vector<std::string>>> found;
      for (auto& [i, scan] : scans) found.emplace_back(i, scan.get());
      scan_wait_ms_ += ms_between(t0, Clock::now());
      tracer_.add("wait scans", t0, Clock::now());
      std::vector<std::pair<int, std::vector<std::pair<std::string, std::string>>>> wanted_by;
      for (auto& [i, refs] : found) {
        std::vector<std::pair<std::string, std::string>> wanted;
        for (const auto& ref : refs) {
          wanted.emplace_back(ref, ref.starts_with("libnvrtc")
                                       ? "cuDNN compiles run-time kernels with NVRTC (dlopen)"
                                       : "cuDNN calls cuBLASLt through dlopen");
        }
        std::erase_if(wanted, [&](const auto& w) { return has_child(i, w.first); });
        std::vector<std::function<void()>> batch;
        for (const auto& w : wanted) prefetch(w.first, i, batch);
        pool_.submit_all(std::move(batch));
        wanted_by.emplace_back(i, std::move(wanted));
      }
      for (auto& [i, wanted] : wanted_by) add_children(i, wanted);
    }
    tree_.object_limit = kMaxObjects;
    tree_.truncated = tree_.objects.size() >= kMaxObjects && (!queue.empty() || !scans_.empty());
    const auto walked = Clock::now();
    tree_.timing_ms["walk"] = ms_between(start, walked) - scan_wait_ms_;
    tree_.timing_ms["companion_scan_wait"] = scan_wait_ms_;
    // Summed over the pool's threads: with the lookups running ahead, they overlap the walk.
    tree_.timing_ms["walk_search"] = static_cast<double>(search_ns_.load()) / 1e6;
    tree_.timing_ms["walk_open"] = static_cast<double>(open_ns_.load()) / 1e6;
    tree_.timing_ms["walk_wait"] = wait_ms_;  // part of "walk": waiting for a lookup's result
    if (s_.symbols) check_symbols();
    const auto symbols = Clock::now();
    tree_.timing_ms["symbols"] = ms_between(walked, symbols);
    check_families();
    tree_.timing_ms["families"] = ms_between(symbols, Clock::now());
    tree_.timing_ms["total"] = ms_between(start, Clock::now());
    tree_.trace = tracer_.take();
    for (auto& o : tree_.objects) {
      if (o.severity == LoadSeverity::error) ++tree_.errors;
      if (o.severity == LoadSeverity::warning) ++tree_.warnings;
    }
    return std::move(tree_);
  }

  // Lets the pool's remaining tasks finish (lookups nobody took do nothing); the threads
  // then wait, idle, until the Modeler goes.
  void quiesce() {
    for (auto& [name, a] : ahead_) a->claimed.store(true);
    pool_.wait_idle();
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
  // sonames it dlopens (megabytes per sub-library), in spans searched on the pool's
  // threads in the background. Each span's pages are populated in one call first:
  // faulting them in one by one, or reading them into a fresh buffer, costs several
  // times more on a VM (the H200 machine is one).
  RodataScan start_scan(const std::string& path, const std::shared_ptr<MappedFile>& mapped) {
    constexpr uint64_t kMinSpan = uint64_t{1} << 20;
    constexpr size_t kPerSpan = 16;  // results per span before the merge cuts them
    RodataScan scan;
    const ByteView bytes = mapped->bytes();
    const auto ranges = elf_readonly_ranges(bytes);
    uint64_t total = 0;
    for (const auto& r : ranges) total += r.second;
    const uint64_t span = std::max<uint64_t>(kMinSpan, total / pool_.size() + 1);
    for (const auto& [offset, size] : ranges) {
      for (uint64_t at = offset; at < offset + size; at += span) {
        const ElfSpan part{at, std::min(at + span, offset + size)};
        scan.add(pool_.submit(
            [&tracer = tracer_, path, mapped, bytes, part] {
              const auto t0 = Clock::now();
              if (auto p = bytes.sub(part.begin, part.end - part.begin)) mapped->prefetch(*p);
              auto found = elf_find_strings(bytes, RodataScan::prefixes(), kPerSpan, part);
              if (tracer.on()) {
                tracer.add(fmt::format("scan {} [{:#x}, {:#x})", path_basename(path), part.begin,
                                       part.end),
                           t0, Clock::now());
              }
              return found;
            },
            /*background=*/true));
      }
    }
    return scan;
  }

  // What start_reads started for a file.
  struct Reads {
    std::optional<std::future<TableRead>> table;
    std::optional<RodataScan> scan;
  };

  // A file mapped and parsed (see open_elf), with its reads started.
  struct Opened {
    std::shared_ptr<MappedFile> mapped;
    ElfInfo elf;
    Reads reads;
  };

  // Maps and parses a file and starts its reads (start_reads: as soon as it is opened,
  // they are ready sooner than if the walk started them when it takes the file); any
  // thread. Symbols are looked up in place (ElfSymbolTable), never copied: libtorch_cpu.so
  // alone exports ~250,000.
  // The parse itself comes from the shared LoaderFileCache (once per file); the file is
  // mapped here only when its reads need it.
  Result<Opened> open_elf(const std::string& path) {
    auto e = files_->elf(path, s_.symbols);
    if (!e) return std::unexpected(e.error());
    if (!*e) return fail(fmt::format("{}: not an ELF file", path));
    std::shared_ptr<MappedFile> mapped;
    Reads reads;
    if (s_.symbols || scanned(path)) {
      auto m = fs_.map_file(path);
      if (!m) return fail(fmt::format("{}: cannot read: {}", path, m.error().message));
      mapped = std::move(*m);
      reads = start_reads(path, mapped);
    }
    return Opened{std::move(mapped), **e, std::move(reads)};
  }

  // Whether a file's read-only data is scanned for the companions it dlopens.
  bool scanned(const std::string& path) const {
    return s_.companions && s_.companion_strings && path_basename(path).starts_with("libcudnn");
  }

  // Starts a file's symbol table read and, for cuDNN, its string scan, in the background;
  // any thread.
  Reads start_reads(const std::string& path, const std::shared_ptr<MappedFile>& mapped) {
    Reads reads;
    if (s_.symbols) {
      // The imports of libtorch_cpu.so and libtorch_cuda.so are tens of thousands of
      // entries to page in.
      reads.table = pool_.submit(
          [&tracer = tracer_, mapped, path] {
            const auto t0 = Clock::now();
            TableRead r;
            auto t = ElfSymbolTable::read(mapped->bytes(), path,
                                          [&m = *mapped](ByteView part) { m.prefetch(part); });
            if (!t) {
              r.error = t.error().message;
            } else if (*t) {
              r.table = std::move(**t);
              r.mapped = mapped;
            }
            if (tracer.on()) tracer.add("table " + path_basename(path), t0, Clock::now());
            return r;
          },
          /*background=*/true);
    }
    if (scanned(path)) reads.scan = start_scan(path, mapped);
    return reads;
  }

  void init_defaults() {
    const std::string trip = triplet_for(machine_, cls_is64_);
    platform_ = s_.platform.empty() ? platform_for(machine_) : s_.platform;
    if (!s_.lib.empty()) {
      lib_ = s_.lib;
    } else if (!trip.empty() && files_->is_dir("/usr/lib/" + trip)) {
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

  // What object i loads: its DT_NEEDED entries, then its run-time companions, as
  // {name, companion note}. `commit`: as in add_companions.
  std::vector<std::pair<std::string, std::string>> wanted_of(int i, bool commit) {
    std::vector<std::pair<std::string, std::string>> wanted;
    for (const auto& n : tree_.objects[static_cast<size_t>(i)].elf->needed) {
      wanted.emplace_back(n, "");
    }
    if (s_.companions) add_companions(i, wanted, commit);
    return wanted;
  }

  // The NVIDIA companions object i loads at run time (dlopen), as names. libcuda.so.1 goes
  // to the first object that loads the driver; `commit`: object i is that one, if it does.
  void add_companions(int i, std::vector<std::pair<std::string, std::string>>& wanted,
                      bool commit) {
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
    auto known = companions_of_.find(soname);  // asked twice per object: when taken, when walked
    if (known == companions_of_.end()) {
      known = companions_of_.emplace(soname, nvidia_runtime_companions(kb_, soname, Os::linux, ""))
                  .first;
    }
    for (const auto& c : known->second) add(c.name, c.note);
    if (!libcuda_added_ && loads_cuda_driver(soname, Os::linux) &&
        !soname.starts_with("libcuda.")) {
      if (commit) libcuda_added_ = true;
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

  // The real path of a candidate (LoaderFileCache::real_path): the candidates of one walk,
  // and of the walks sharing the cache, share a few directories, and resolving each path
  // from the root costs a readlink per component
  // (/opt/x/.venv/lib/python3.12/site-packages/...). Any thread.
  const std::string& real_of(const std::string& path) {
    return files_->real_path(path);
  }

  // Whether a search directory exists, asked once per directory (as ld.so remembers the
  // directories it found missing): most glibc-hwcaps ones do not.
  bool dir_exists(const std::string& dir) {
    return files_->is_dir(dir);
  }

  // The names in a directory, read once; nullptr when it cannot be read.
  const std::unordered_set<std::string>* listing(const std::string& dir) {
    return files_->listing(dir);
  }

  // Object i's file is chosen and opened: it is loaded; its reads start and the
  // lookups of what it needs run ahead.
  void accept(int i, Opened opened) {
    const auto t0 = Clock::now();
    auto& o = tree_.objects[static_cast<size_t>(i)];
    o.real_path = real_of(*o.path);
    o.version = version_from_file_name(path_basename(o.real_path));
    o.elf = std::move(opened.elf);
    if (o.elf->soname) loaded_[*o.elf->soname] = i;
    loaded_[o.name] = i;
    loaded_[*o.path] = i;
    if (opened.reads.table) tables_.emplace(i, std::move(*opened.reads.table));
    if (opened.reads.scan) scans_.emplace(i, std::move(*opened.reads.scan));
    prefetch_children(i);
    if (tracer_.on()) tracer_.add("accept " + display(i), t0, Clock::now());
  }

  // What one search is given: everything it needs from the tree, taken on the
  // walk's thread, so that the search itself can run on any.
  struct Request {
    std::string name;
    int requester = -1;
    std::string origin;  // the requester's directory: $ORIGIN of a name with a '/'
    std::string who;     // " (needed by libx.so.1)", or empty for the root
    std::shared_ptr<const std::vector<SearchDir>> dirs;  // shared by one requester's lookups
  };

  Request request_for(const std::string& name, int requester) {
    Request r;
    r.name = name;
    r.requester = requester;
    if (requester >= 0) {
      r.origin = path_dirname(tree_.objects[static_cast<size_t>(requester)].path.value_or("/"));
      r.who = fmt::format(" (needed by {})", display(requester));
    }
    if (name.find('/') == std::string::npos) {
      auto& list = search_lists_[requester];
      if (!list) list = std::make_shared<const std::vector<SearchDir>>(search_list(requester));
      r.dirs = list;
    }
    return r;
  }

  // One search and the open of the file it picks; any thread. `o` carries the
  // search's fields (searched, shadowed, rejected, the choice, or why none).
  struct Lookup {
    LoadedObject o;
    std::optional<Opened> opened;
  };

  Lookup lookup(const Request& r) {
    Lookup l;
    l.o.name = r.name;
    const auto t0 = Clock::now();
    search(l.o, r);
    const auto t1 = Clock::now();
    search_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    if (!l.o.path) {
      if (tracer_.on()) tracer_.add("lookup " + r.name + " (not found)", t0, t1);
      return l;
    }
    auto opened = open_elf(*l.o.path);
    const auto t2 = Clock::now();
    open_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
    if (tracer_.on()) tracer_.add("lookup " + r.name, t0, t2);
    if (!opened) {
      l.o.problem = opened.error().message;
      l.o.severity = LoadSeverity::error;
    } else {
      l.opened = std::move(*opened);
    }
    return l;
  }

  // Adds to `batch` the task that looks up `name` as requested by object `requester`,
  // unless it is loaded or was requested before: then the walk will find it loaded (the
  // object that asked first is also the first in load order), or look it up itself.
  void prefetch(const std::string& name, int requester, std::vector<std::function<void()>>& batch) {
    if (loaded_.contains(name) || !requested_.insert(name).second) return;
    if (std::find(s_.preloaded.begin(), s_.preloaded.end(), name) != s_.preloaded.end()) return;
    auto a = std::make_shared<Ahead>();
    a->request = request_for(name, requester);
    a->result = a->promise.get_future();
    batch.push_back([this, a] {
      if (a->claimed.exchange(true)) return;
      a->promise.set_value(lookup(a->request));
      a->done.store(true, std::memory_order_release);
    });
    ahead_.emplace(name, std::move(a));
  }

  // The DT_NEEDED entries go out first: the companions need the knowledge base, which the
  // first NVIDIA library may still be waiting for (see run()).
  void prefetch_children(int i) {
    std::vector<std::function<void()>> batch;
    for (const auto& n : tree_.objects[static_cast<size_t>(i)].elf->needed) prefetch(n, i, batch);
    pool_.submit_all(std::move(batch));
    if (!s_.companions) return;
    std::vector<std::pair<std::string, std::string>> wanted;
    add_companions(i, wanted, /*commit=*/false);
    batch.clear();
    for (const auto& w : wanted) prefetch(w.first, i, batch);
    pool_.submit_all(std::move(batch));
  }

  // The directories a lookup from `requester` searches before the cache and the default
  // directories. For the root's own lookup by name (requester -1) the requester is the
  // dlopen caller, when one is set; the caller also ends every loading chain.
  std::vector<SearchDir> search_list(int requester) const {
    std::vector<SearchDir> dirs;
    auto add_list = [&](SearchRule rule, const std::string& list, const std::string& origin,
                        const std::string& label) {
      for (const auto& d : split(list, ':')) {
        if (d.empty()) continue;
        if (origin.empty() && d.find("ORIGIN") != std::string::npos) continue;
        dirs.push_back({rule, expand_dst(d, origin, lib_, platform_), label + ": " + list, label});
      }
    };
    auto origin_of = [&](int l) {
      return path_dirname(tree_.objects[static_cast<size_t>(l)].path.value_or("/"));
    };
    const auto& caller = s_.dlopen_caller;
    const std::string caller_origin = caller ? path_dirname(caller->path) : "";
    const std::string caller_name = caller ? path_basename(caller->path) : "";
    const LoadedObject* req =
        requester >= 0 ? &tree_.objects[static_cast<size_t>(requester)] : nullptr;
    const bool req_has_runpath =
        req ? req->elf && req->elf->runpath : caller && caller->runpath.has_value();
    if (!req_has_runpath) {
      for (int l = requester; l >= 0; l = tree_.objects[static_cast<size_t>(l)].parent) {
        const auto& lo = tree_.objects[static_cast<size_t>(l)];
        if (!lo.elf || !lo.elf->rpath || lo.elf->runpath) continue;
        add_list(SearchRule::rpath, *lo.elf->rpath, origin_of(l),
                 fmt::format("DT_RPATH of {}{}", display(l),
                             l == requester ? "" : " (inherited along the loading chain)"));
      }
      if (caller && caller->rpath && !caller->runpath) {
        add_list(SearchRule::rpath, *caller->rpath, caller_origin,
                 fmt::format("DT_RPATH of {}{}", caller_name,
                             req ? " (inherited: it called dlopen)" : ""));
      }
    }
    for (const auto& d : s_.ld_library_path) {
      if (!d.empty()) {
        dirs.push_back({SearchRule::ld_library_path, expand_dst(d, "", lib_, platform_),
                        "LD_LIBRARY_PATH", "LD_LIBRARY_PATH"});
      }
    }
    if (req_has_runpath && req) {
      add_list(SearchRule::runpath, *req->elf->runpath, origin_of(requester),
               "DT_RUNPATH of " + display(requester));
    } else if (req_has_runpath) {
      add_list(SearchRule::runpath, *caller->runpath, caller_origin,
               "DT_RUNPATH of " + caller_name);
    }
    return dirs;
  }

  // Whether `path` is an ELF of our class and machine, else why not: what ld.so
  // checks before it takes a candidate (the header is read, not mapped).
  std::optional<std::string> unusable(const std::string& path) const {
    const LoaderFileCache::Header& h = files_->header(path);
    if (!h.error.empty()) return h.error;
    if (h.is_64 != cls_is64_ || h.machine != machine_) {
      return fmt::format("ELF {} {}, needed {} {}", class_name(h.is_64),
                         elf_machine_name(h.machine), class_name(cls_is64_),
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
    auto st = files_->stat(path);
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

  // Any thread: reads nothing of the tree but `r`.
  void search(LoadedObject& o, const Request& r) {
    std::set<std::string> seen_real;
    if (o.name.find('/') != std::string::npos) {
      const std::string p = expand_dst(o.name, r.origin, lib_, platform_);
      o.searched.push_back(p);
      consider(o, p, SearchRule::path, "the name contains a '/'", seen_real);
    } else {
      for (const auto& d : *r.dirs) {
        o.searched.push_back(d.dir + "  (" + d.label + ")");
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
    const std::string& who = r.who;
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
        if (auto st = files_->stat(p); st && st->type == FileType::regular && !unusable(p)) {
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
    Lookup l;
    if (auto a = ahead_.find(o.name);
        a != ahead_.end() && a->second->request.requester == requester) {
      // Not started yet (the pool is busy, or still starting): the walk does it itself.
      if (!a->second->claimed.exchange(true)) {
        l = lookup(a->second->request);
      } else {
        const auto t0 = Clock::now();
        for (const auto until = t0 + kSpin;
             !a->second->done.load(std::memory_order_acquire) && Clock::now() < until;) {
          cpu_relax();
        }
        l = a->second->result.get();
        wait_ms_ += ms_between(t0, Clock::now());
        if (tracer_.on()) tracer_.add("wait " + o.name, t0, Clock::now());
      }
      ahead_.erase(a);
    } else {
      l = lookup(request_for(o.name, requester));
    }
    // The object keeps its place in the tree (name, parent, companion); the rest is the search's.
    auto& o2 = tree_.objects[static_cast<size_t>(i)];
    o2.searched = std::move(l.o.searched);
    o2.shadowed = std::move(l.o.shadowed);
    o2.rejected = std::move(l.o.rejected);
    o2.path = std::move(l.o.path);
    o2.rule = l.o.rule;
    o2.rule_detail = std::move(l.o.rule_detail);
    o2.missing = l.o.missing;
    o2.wrong_class = l.o.wrong_class;
    o2.problem = std::move(l.o.problem);
    o2.severity = l.o.severity;
    if (l.opened) accept(i, std::move(*l.opened));
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
    tracer_.add("wait tables", t0, Clock::now());
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
      constexpr size_t kChunk = 256;
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
          const auto began = Clock::now();
          Item& item = work[w];
          const auto& imports = symbols_.at(item.object).second.imports();
          // An object's imports come from a few libraries, interleaved: the providers of
          // the last hits are tried first, most recent first, then all of them in order.
          std::array<size_t, 4> recent{};
          size_t known = 0;
          for (size_t m = item.begin; m < item.end; ++m) {
            const auto& imp = imports[m];
            if (imp.weak) continue;
            const uint32_t hash = ElfSymbolTable::gnu_hash(imp.name);  // once, not per provider
            size_t hit = providers.size();
            for (size_t r = 0; r < known && hit == providers.size(); ++r) {
              if (providers[recent[r]]->defines(imp.name, hash)) hit = recent[r];
            }
            for (size_t k = 0; k < providers.size() && hit == providers.size(); ++k) {
              if (std::find(recent.begin(), recent.begin() + static_cast<ptrdiff_t>(known), k) ==
                      recent.begin() + static_cast<ptrdiff_t>(known) &&
                  providers[k]->defines(imp.name, hash)) {
                hit = k;
              }
            }
            if (hit == providers.size()) {
              item.missing.emplace_back(imp.name);
              continue;
            }
            // Move (or add) the hit to the front.
            auto end = recent.begin() + static_cast<ptrdiff_t>(known);
            auto at = std::find(recent.begin(), end, hit);
            if (at == end) {
              if (known < recent.size()) ++known;
              at = recent.begin() + static_cast<ptrdiff_t>(known) - 1;
            }
            std::rotate(recent.begin(), at, at + 1);
            recent[0] = hit;
          }
          if (tracer_.on()) {
            tracer_.add(
                fmt::format("symbols {} [{}, {})", display(item.object), item.begin, item.end),
                began, Clock::now());
          }
        }
      };
      const size_t helpers = std::min<size_t>(work.size(), pool_.size()) - (work.empty() ? 0 : 1);
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
  // Shared by the lookups on the pool, and by the walks given the same cache.
  const std::shared_ptr<LoaderFileCache> files_;
  std::atomic<int64_t> search_ns_{0}, open_ns_{0};  // summed over the lookups
  // Lookups running ahead of the walk, by name, with the object that requested them; run
  // by whichever of the pool and the walk claims it first.
  struct Ahead {
    Request request;
    std::atomic<bool> claimed{false};
    std::atomic<bool> done{false};  // the result is set
    std::promise<Lookup> promise;
    std::future<Lookup> result;
  };
  std::unordered_map<std::string, std::shared_ptr<Ahead>> ahead_;
  std::unordered_set<std::string> requested_;  // every name looked up or prefetched
  std::unordered_map<std::string, std::vector<RuntimeCompanion>> companions_of_;  // by soname
  // The search list of each requester (its chain and the settings do not change).
  std::unordered_map<int, std::shared_ptr<const std::vector<SearchDir>>> search_lists_;
  double scan_wait_ms_ = 0;  // waiting, after the walk, for the string scans
  double wait_ms_ = 0;       // waiting, in the walk, for a lookup that ran ahead
  std::map<int, std::future<TableRead>> tables_;  // being read, by object
  std::map<int, std::pair<std::shared_ptr<MappedFile>, ElfSymbolTable>> symbols_;
  bool libcuda_added_ = false;
  const Clock::time_point start_;
  Tracer tracer_;
  TaskPool pool_{s_.parallel_lookups};  // last: destroyed (joined) first
};

}  // namespace

struct LoaderFileCache::State {
  explicit State(const FileSystem& f) : fs(f) {}
  const FileSystem& fs;
  SharedMemo<std::optional<FileStat>> stats;
  SharedMemo<std::string> real_paths, real_dirs;
  SharedMemo<std::optional<std::unordered_set<std::string>>> listings;
  SharedMemo<Header> headers;
  std::mutex elf_mutex;
  std::unordered_map<FileKey, std::shared_ptr<const ElfInfo>, FileKeyHash> elves;
  std::unordered_set<FileKey, FileKeyHash> not_elf;
  std::atomic<uint64_t> n_stats{0}, n_listings{0}, n_headers{0}, n_parses{0};
};

LoaderFileCache::LoaderFileCache(const FileSystem& fs) : state_(std::make_unique<State>(fs)) {}
LoaderFileCache::~LoaderFileCache() = default;

const FileSystem& LoaderFileCache::fs() const {
  return state_->fs;
}

std::optional<FileStat> LoaderFileCache::stat(const std::string& path) {
  return state_->stats.get(path, [&] {
    ++state_->n_stats;
    return state_->fs.stat(path);
  });
}

bool LoaderFileCache::is_dir(const std::string& path) {
  auto st = stat(path);
  return st && st->type == FileType::directory;
}

const std::string& LoaderFileCache::real_path(const std::string& path) {
  return state_->real_paths.get(path, [&] {
    const FileSystem& fs = state_->fs;
    // A link to a name in its own directory ("libx.so.9 -> libx.so.9.1") is followed here,
    // up to 8 deep; anything else is FileSystem::real_path's.
    std::string p = path;
    for (int depth = 0;; ++depth) {
      const std::string dir = path_dirname(p);
      const std::string base = path_basename(p);
      auto ls = fs.lstat(p);
      if (!ls || dir.empty() || dir == p || base.empty() || base == "." || base == ".." ||
          depth > 8) {
        auto rp = fs.real_path(p);
        return rp ? *rp : p;
      }
      const std::string& real_dir = state_->real_dirs.get(dir, [&] {
        auto rp = fs.real_path(dir);
        return rp ? *rp : dir;
      });
      if (ls->type != FileType::symlink) return path_join(real_dir, base);
      auto target = fs.read_link(p);
      if (!target || target->empty() || target->find('/') != std::string::npos) {
        auto rp = fs.real_path(p);
        return rp ? *rp : p;
      }
      p = path_join(real_dir, *target);
    }
  });
}

const std::unordered_set<std::string>* LoaderFileCache::listing(const std::string& dir) {
  const auto& names = state_->listings.get(dir, [&] {
    ++state_->n_listings;
    std::optional<std::unordered_set<std::string>> out;
    if (auto entries = state_->fs.list_dir(dir)) {
      out.emplace();
      for (auto& e : *entries) out->insert(std::move(e.name));
    }
    return out;
  });
  return names ? &*names : nullptr;
}

const LoaderFileCache::Header& LoaderFileCache::header(const std::string& path) {
  return state_->headers.get(path, [&] {
    ++state_->n_headers;
    Header h;
    auto head = state_->fs.read_head(path, 64);
    if (!head) {
      h.error = "cannot read: " + head.error().message;
      return h;
    }
    auto e = parse_elf_header(ByteView(*head), path);
    if (!e) {
      h.error = "corrupt: " + e.error().message;
    } else if (!*e) {
      h.error = "not an ELF file";
    } else {
      h.is_64 = (*e)->is_64;
      h.machine = (*e)->machine;
    }
    return h;
  });
}

Result<std::shared_ptr<const ElfInfo>> LoaderFileCache::elf(const std::string& path,
                                                            bool versions) {
  std::optional<FileKey> key;
  if (auto st = stat(path); st && st->type == FileType::regular && st->inode != 0) {
    key = FileKey{st->device, st->inode, st->size, st->mtime, st->mtime_nsec, versions};
    std::lock_guard<std::mutex> lock(state_->elf_mutex);
    if (auto it = state_->elves.find(*key); it != state_->elves.end()) return it->second;
    if (state_->not_elf.contains(*key)) return std::shared_ptr<const ElfInfo>();
  }
  // Two threads asking for one new file both parse it (the first result is kept): cheaper
  // than making one wait, and rare (the walks ask for a file once).
  auto m = state_->fs.map_file(path);
  if (!m) return fail(fmt::format("{}: cannot read: {}", path, m.error().message));
  ++state_->n_parses;
  auto e = parse_elf((*m)->bytes(), path, ElfParseOptions{.versions = versions});
  if (!e) return std::unexpected(e.error());
  std::shared_ptr<const ElfInfo> info;
  if (*e) info = std::make_shared<const ElfInfo>(std::move(**e));
  if (key) {
    std::lock_guard<std::mutex> lock(state_->elf_mutex);
    if (info) return state_->elves.try_emplace(*key, info).first->second;
    state_->not_elf.insert(*key);
  }
  return info;
}

LoaderFileCache::Counts LoaderFileCache::counts() const {
  return {state_->n_stats.load(), state_->n_listings.load(), state_->n_headers.load(),
          state_->n_parses.load()};
}

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
  auto m = std::make_shared<Modeler>(fs, kb, settings);
  auto tree = m->run(file_or_name);
  if (tree && settings.keep_resources) {
    m->quiesce();  // nothing touches fs, kb or settings once this returns
    tree->resources = std::move(m);
  }
  return tree;
}

}  // namespace dlenv
