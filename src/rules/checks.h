// The checks of the rules layer. Each is a function in a file named for what it checks,
// registered by its entry there (a Check: name, what it checks, the function, the ids it may
// report, the facts it reads); the check table (rules/check_table.cc) lists the entries in
// evaluation order. A check reads facts and the KB and appends findings built by make_finding();
// it never looks at another check's findings (rules/resolve.h merges and supersedes them).
// Internal to the rules layer.
#pragma once

#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

struct RuleContext {
  const Facts& f;
  const Kb& kb;
  Os os;
};

// The parts of Facts (probe/facts.h) a check may read, as bits of Check::reads.
namespace fact_area {
inline constexpr unsigned host = 1u << 0;            // Facts::host
inline constexpr unsigned driver = 1u << 1;          // Facts::driver
inline constexpr unsigned gpus = 1u << 2;            // Facts::gpus, Facts::gpu_count
inline constexpr unsigned toolkits = 1u << 3;        // Facts::toolkits
inline constexpr unsigned cudnn = 1u << 4;           // Facts::cudnn
inline constexpr unsigned env = 1u << 5;             // Facts::env
inline constexpr unsigned python = 1u << 6;          // Facts::python
inline constexpr unsigned system = 1u << 7;          // Facts::system
inline constexpr unsigned windows = 1u << 8;         // Facts::windows
inline constexpr unsigned loader = 1u << 9;          // Facts::loader
inline constexpr unsigned changes = 1u << 10;        // Facts::interrupted_changes
inline constexpr unsigned live_failures = 1u << 11;  // Facts::live_failures
}  // namespace fact_area

using CheckFn = void (*)(const RuleContext&, std::vector<Finding>&);

struct Check {
  std::string_view name;         // the function
  std::string_view checks;       // what it checks, in words
  CheckFn run;                   // nullptr: reported by `dlenv verify` (the gpu layer)
  std::vector<FindingId> emits;  // every id it may report
  unsigned reads = 0;            // fact_area bits
  // It may also report any id an error signature of the catalog names (kErrorSignatures).
  bool reports_signature_ids = false;
};

// Whether `check` may report `id` (its emits, or a signature's id when it reports those).
bool check_may_report(const Check& check, std::string_view id);
// Every id `check` may report, each once.
std::vector<FindingId> ids_reported_by(const Check& check);

namespace checks {

// Each check's entry, defined at the end of the file that defines the check.
// conda_checks.cc
extern const Check conda_cpu_pytorch_entry;
extern const Check conda_vs_system_entry;
extern const Check conda_virtual_cuda_entry;
// container_checks.cc
extern const Check image_needs_newer_driver_entry;
extern const Check shm_small_entry;
extern const Check loses_gpu_entry;
extern const Check docker_no_gpu_runtime_entry;
extern const Check toolkit_cannot_find_nvml_entry;
// cudnn_checks.cc
extern const Check cudnn_header_mismatch_entry;
extern const Check cudnn_vs_toolkit_entry;
extern const Check cudnn_mixed_entry;
extern const Check cudnn_old_cuda_new_gpu_entry;
extern const Check cudnn_not_initialized_entry;
// cudnn_completeness_checks.cc
extern const Check loader_cudnn_incomplete_entry;
extern const Check loader_win_cudnn8_sublibraries_entry;
extern const Check loader_win_zlibwapi_entry;
extern const Check win_cudnn_incomplete_entry;
extern const Check win_zlibwapi_entry;
// cupy_checks.cc
extern const Check cupy_multiple_entry;
extern const Check cupy_major_entry;
// datacenter_driver_checks.cc
extern const Check fabric_manager_entry;
extern const Check forward_compat_entry;
// driver_checks.cc
extern const Check no_driver_entry;
extern const Check module_not_loaded_entry;
extern const Check nouveau_entry;
extern const Check version_mismatch_entry;
extern const Check device_nodes_entry;
extern const Check visible_devices_entry;
extern const Check compute_mode_entry;
extern const Check windows_no_driver_entry;
// gpu_architecture_checks.cc
extern const Check torch_gpu_arch_entry;
extern const Check tf_archs_entry;
// ide_checks.cc
extern const Check ide_vs_shell_entry;
extern const Check ide_interpreter_stale_entry;
// jax_checks.cc
extern const Check jax_cpu_only_entry;
extern const Check jax_ld_library_path_entry;
extern const Check xla_cuda_files_entry;
// kernel_checks.cc
extern const Check secure_boot_entry;
extern const Check xid79_entry;
// libcuda_stub_checks.cc
extern const Check loader_libcuda_stub_entry;
extern const Check stub_loaded_entry;
extern const Check loader_preload_stub_entry;
// live_probe_checks.cc
extern const Check live_probe_failures_entry;
// loader_model_checks.cc
extern const Check wrong_bitness_entry;
extern const Check cudnn_mixed_127_entry;
extern const Check py38_path_entry;
extern const Check ld_library_path_tokens_entry;
// onnxruntime_checks.cc
extern const Check ort_both_entry;
extern const Check ort_cuda_libraries_entry;
// paddle_checks.cc
extern const Check paddle_cpu_entry;
extern const Check paddle_cudnn_entry;
// python_cudnn_checks.cc
extern const Check loader_framework_cudnn_mix_entry;
extern const Check loader_cudnn_not_found_entry;
extern const Check pip_vs_system_cudnn_entry;
extern const Check loader_preload_cudnn_entry;
extern const Check wheel_pins_entry;
extern const Check torch_deep_cudnn_entry;
// python_deep_checks.cc
extern const Check deep_results_entry;
// python_wheel_checks.cc
extern const Check python_version_unsupported_entry;
extern const Check wheel_tags_entry;
extern const Check win_32bit_python_entry;
extern const Check nvjitlink_cusparse_entry;
extern const Check ctranslate2_cudnn_entry;
// tensorflow_checks.cc
extern const Check tf_gpu_package_entry;
extern const Check win_tf_after_210_entry;
extern const Check tf_gpu_libraries_entry;
extern const Check tf_cuda_drivers_entry;
extern const Check tf_cudnn_minor_entry;
extern const Check tf_tensorrt_entry;
// toolkit_checks.cc
extern const Check toolkit_vs_driver_entry;
extern const Check toolkits_disagree_entry;
extern const Check nvcc_vs_smi_entry;
extern const Check gpu_vs_toolkits_entry;
extern const Check cuda_home_unset_entry;
extern const Check toolkit_change_interrupted_entry;
extern const Check host_compiler_entry;
// torch_checks.cc
extern const Check torch_cpu_build_entry;
extern const Check torch_companions_mixed_entry;
extern const Check torch_driver_too_old_entry;
extern const Check toolkit_vs_torch_entry;
extern const Check extension_abi_entry;
extern const Check cublas_pin_entry;
// windows_framework_checks.cc
extern const Check win_tf_libraries_entry;
extern const Check win_paddle_dso_entry;
extern const Check win_ctranslate2_cudnn9_entry;
// windows_path_checks.cc
extern const Check win_cuda_path_entry;
extern const Check win_path_not_reloaded_entry;
extern const Check win_special_chars_entry;
// windows_runtime_checks.cc
extern const Check win_vcredist_entry;
extern const Check win_msvc_too_old_entry;
extern const Check win_libomp140_entry;
extern const Check win_duplicate_openmp_entry;
// wsl_checks.cc
extern const Check wsl1_entry;
extern const Check wsl_linux_driver_entry;
extern const Check wsl_unversioned_entry;
extern const Check wsl_not_symlink_entry;
extern const Check wsl_blocked_entry;
extern const Check wsl_no_windows_driver_entry;

}  // namespace checks
}  // namespace dlenv
