// Foreign code runs in a child process. Every live probe that loads a user's library (NVML,
// libcuda, each cuDNN copy) and `dlenv load` run in one child: dlenv itself started in its
// hidden probe mode (`dlenv __live-probe`), fed requests on its standard input and answering
// on its standard output in protocol version kLiveProtocolVersion (one JSON object a line,
// each with "v"). The child checks a file named by path with the ELF/PE pre-check before it
// loads it, caps its own memory, and ends itself when a step overruns its time. A crash, a
// signal, a timeout, an early exit or garbage becomes a LiveProbeFailure naming the library;
// the steps after it run in a fresh child, and the report is still produced.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/dynamic_library.h"
#include "platform/process.h"
#include "probe/cuda_driver.h"
#include "probe/facts.h"
#include "probe/nvml.h"

namespace dlenv {

constexpr int kLiveProtocolVersion = 1;
// The hidden subcommand the child runs (argv[1]); the CLI serves it.
constexpr const char* kLiveProbeCommand = "__live-probe";

// One thing the child does.
struct LiveRequest {
  enum class Kind { nvml, cuda_driver, cudnn, load };
  Kind kind = Kind::nvml;
  std::vector<std::string> candidates;  // nvml, cuda_driver: names or paths, in order
  std::string target;                   // cudnn: the copy's host path; load: a name or path
};

// cudnnGetVersion (and cudnnGetCudartVersion) of one copy loaded by its path.
struct CudnnLiveAnswer {
  Fact<Version> version;
  Fact<int> cuda_major;  // from cudnnGetCudartVersion; not-found when it has none
};

// dlenv load: the real dlopen/LoadLibrary of a name or path.
struct LoadAnswer {
  bool loaded = false;
  std::string path;      // the file the loader mapped
  std::string error;     // the loader's message (or the pre-check's) when not loaded
  int error_code = 0;    // Windows: GetLastError of the failed load
  bool refused = false;  // the pre-check refused the file: it was never loaded
  std::string version;   // from the library's own version call, when it has one
  std::string version_call;
};

// Everything the child answered, and what it did instead where it failed.
struct LiveAnswers {
  std::optional<NvmlSnapshot> nvml;
  std::optional<CudaDriverSnapshot> cuda;
  std::vector<std::optional<CudnnLiveAnswer>> cudnn;  // by cudnn request, in order
  std::optional<LoadAnswer> load;
  std::vector<LiveProbeFailure> failures;
  int children = 0;  // processes started (1 unless one failed)
};

struct LiveLimits {
  std::chrono::milliseconds step_timeout{5000};  // one request, in the child
  // The most finish() waits, respawns included (a child stuck in the kernel is left behind).
  std::chrono::milliseconds total{9000};
  uint64_t address_space_bytes = 64ull << 30;  // RLIMIT_AS of the child
  uint64_t data_bytes = 4ull << 30;            // RLIMIT_DATA (Windows: committed memory)
};

// The parent's side. start() spawns the child at once (`argv`: dlenv's own binary and
// kLiveProbeCommand); request() hands it work while it runs (the file probes go on
// meanwhile); finish() closes its input, waits, and starts fresh children for the steps a
// failed one left. Never throws; a child that cannot start is a failure of every step.
class LiveProbeSession {
 public:
  LiveProbeSession(std::vector<std::string> argv, LiveLimits limits);
  ~LiveProbeSession();
  LiveProbeSession(const LiveProbeSession&) = delete;
  LiveProbeSession& operator=(const LiveProbeSession&) = delete;

  void request(LiveRequest r);
  LiveAnswers finish();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// argv of the child: the program set_live_probe_program named, else $DLENV_LIVE_PROBE_PROGRAM
// (the test binaries get the built dlenv so: they are not dlenv themselves), else this
// executable (/proc/self/exe, GetModuleFileNameW) when its file name starts with "dlenv",
// else the program the process was started as (set_live_probe_invocation: a chroot without
// /proc, or a run through an explicit loader, `ld.so dlenv ...`, where /proc/self/exe is the
// loader); then kLiveProbeCommand. Empty when none applies (every live step then fails,
// saying so).
std::vector<std::string> live_probe_argv();
// The dlenv program itself, chosen as above (empty when none applies): the program the
// live-probe child and verify's isolated run start.
std::string dlenv_program();
void set_live_probe_program(std::string path);
// argv[0] of the dlenv process and the working directory then, when argv[0] is relative;
// a name without '/' is looked up on $PATH, as the shell did.
void set_live_probe_invocation(std::string argv0);

// Reads the child's standard output: which steps began, which answered (filled into
// `answers`), and what a child that ended with `how` (e.g. "crashed with SIGBUS") did to the
// step it was in. Returns the index of the first step with no answer (requests.size() when
// every step answered). Garbage lines are failures of the step they interrupt.
// How a child that crashed ended: "SIGSEGV", "exception 0xc0000005 (access violation)";
// empty when it was not a crash (an exit status, a timeout).
std::string crash_text(const ProcessResult& r);

size_t read_live_output(const std::string& out, const std::vector<LiveRequest>& requests,
                        size_t first_step, const std::string& how, LiveAnswers& answers);

// Fills a cuDNN copy's live version (and CUDA major, when the files did not tell) from the
// child's answer.
void apply_cudnn_live(CudnnCopy& c, const CudnnLiveAnswer& a);

// One sentence for a finding: "libcudnn.so.9 at /opt/x/libcudnn.so.9 crashed the loader with
// SIGBUS: the file is truncated (...)"; a refused file: "... was not loaded: <problem>".
std::string describe_live_failure(const LiveProbeFailure& f);

// --- The child's side (the CLI's hidden subcommand) ---------------------------------------

struct LiveServeHooks {
  std::function<void(const std::string& line)> emit;  // one protocol line, written at once
  // Called from a watchdog thread when a step overruns its timeout, after its line was
  // emitted: it must end the process at once.
  std::function<void()> overrun;
};

// Serves requests from `in` until end of file. Returns 0, or 2 for a malformed request.
int serve_live_probes(std::istream& in, const LiveServeHooks& hooks);

// The library's own version call, chosen by its file name (cudnnGetVersion,
// cublasLtGetVersion, cublasGetProperty, cudaRuntimeGetVersion, ncclGetVersion,
// nvrtcVersion, cuDriverGetVersion). nullopt when none is known or it fails.
struct LibraryVersionCall {
  std::string call;
  std::string version;
};
std::optional<LibraryVersionCall> library_version_call(const DynamicLibrary& lib,
                                                       const std::string& file_name);

// The pre-check on the file at `host_path` (ELF, or PE on Windows): what is wrong with it,
// or nullopt when it looks loadable (or cannot be read: the loader then says why).
std::optional<std::string> library_file_problem(const std::string& host_path);

}  // namespace dlenv
