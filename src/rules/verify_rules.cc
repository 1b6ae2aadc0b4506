// Ids that `dlenv verify` reports (it runs real work on the GPU, so these come from
// results, not from facts): listed here so `dlenv explain` and docs/findings.md know
// them. Their checks live in the gpu layer; the table entries have none.
#include "rules/rules.h"

namespace dlenv {

const std::vector<Rule>& verify_rules() {
  static const std::vector<Rule> table = {
      {{"verify-wrong-result", "gpu", Severity::error,
        "The GPU computed a wrong result (dlenv verify)",
        "An operation run by `dlenv verify` (a GEMM, a convolution, an activation or an RNN) "
        "returned values that differ from the CPU reference by more than the tolerance of its "
        "data type. Causes: a failing GPU or memory (ECC errors), unstable clocks or overclocking, "
        "a driver bug, or a CUDA library built for another GPU generation.",
        "Check `nvidia-smi -q -d ECC,CLOCK` and the kernel log for Xid errors; reset clocks; "
        "update the driver; rerun `dlenv verify --full`. A repeatable wrong result on one GPU only "
        "points at the hardware."},
       nullptr},
      {{"verify-ecc-errors", "gpu", Severity::error,
        "The GPU reports ECC errors or pending memory repairs (dlenv verify)",
        "`dlenv verify` reads NVML before and after its work on each GPU: uncorrectable ECC "
        "errors counted since the driver loaded, new ones during the run (results from that GPU "
        "cannot be trusted), corrected errors that rise, and row remappings that wait for a GPU "
        "reset or that failed (the memory has a fault it could not retire).",
        "Check `nvidia-smi -q -d ECC,ROW_REMAPPER` and the kernel log for Xid 48/63/64/94/95; "
        "reset the GPU when idle (`nvidia-smi -i N -r` as root) or reboot; a GPU whose "
        "uncorrectable count keeps rising, or with a failed remapping, needs service."},
       nullptr},
      {{"verify-cuda-error", "gpu", Severity::error, "A CUDA call failed during dlenv verify",
        "A CUDA driver API or cuBLAS call returned an error that has no more specific finding. "
        "The message names the call and the CUDA error.",
        "Run `dlenv doctor` for the driver and library picture; the error name in the message "
        "(CUDA_ERROR_*, CUBLAS_STATUS_*) says what failed."},
       nullptr},
      {{"verify-out-of-memory", "gpu", Severity::error,
        "The GPU ran out of memory during dlenv verify",
        "Allocating the buffers of a verify step failed: other processes hold most of the GPU's "
        "memory, or the GPU is small for the --full problem sizes.",
        "See who holds memory with `nvidia-smi`; close them, or run `dlenv verify --quick`."},
       nullptr},
      {{"verify-cublas-not-loadable", "gpu", Severity::error, "cuBLAS could not be loaded",
        "`dlenv verify` found no loadable libcublas/libcublasLt for the driver's CUDA major in the "
        "chosen place (the Python wheels, the toolkit, --libs DIR or the loader's path).",
        "Install cuBLAS (the CUDA toolkit or the nvidia-cublas wheel) or point `--libs` at the "
        "directory that holds it; `dlenv load libcublas.so.N` explains why a copy does not load."},
       nullptr},
      {{"verify-cudnn-not-loadable", "gpu", Severity::error, "cuDNN could not be loaded",
        "`dlenv verify` found no loadable libcudnn.so.9 / .8 in the chosen place, or the library "
        "lacks an entry point verify needs.",
        "Install cuDNN (`dlenv cudnn install`, the nvidia-cudnn wheel, or the distribution "
        "package), point `--libs` at its directory, or skip these checks with `--no-cudnn`; "
        "`dlenv load libcudnn.so.9` explains why a copy does not load."},
       nullptr},
      {{"verify-cudnn-error", "gpu", Severity::error, "A cuDNN call failed during dlenv verify",
        "A cuDNN call returned a status that has no more specific finding (a missing sub-library "
        "is `cudnn-sublibrary-missing`, an architecture mismatch "
        "`cudnn-execution-failed-old-cuda-on-new-gpu`). The message names the call, the status "
        "and the cuDNN sub-library the operation lives in.",
        "Run `dlenv doctor` (cuDNN copies, versions, CUDA major) and `dlenv load` on the named "
        "sub-library; reinstall cuDNN from one release if the copies are mixed."},
       nullptr},
      {{"verify-crashed", "gpu", Severity::error,
        "The GPU work of dlenv verify crashed or stopped answering",
        "`dlenv verify` runs its GPU work in a child process; that process died by a signal "
        "(SIGSEGV, SIGBUS, SIGABRT: inside the driver, cuBLAS or cuDNN) or did not finish within "
        "--timeout and was stopped. The message names the step it was in and the last thing it "
        "printed.",
        "Run `dlenv doctor` to see whether the libraries fit the driver and each other; pick "
        "other copies with --libs, leave cuDNN out with --no-cudnn; for a hang, look for Xid "
        "errors in the kernel log (`sudo dmesg | grep -i xid`) and at `nvidia-smi`."},
       nullptr},
  };
  return table;
}

}  // namespace dlenv
