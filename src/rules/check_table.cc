#include "rules/check_table.h"

#include <algorithm>

namespace dlenv {

// Every check, in evaluation order: one line each (its entry is defined beside the check).
#define DLENV_CHECKS(X)             \
  X(no_driver)                      \
  X(windows_no_driver)              \
  X(module_not_loaded)              \
  X(nouveau)                        \
  X(version_mismatch)               \
  X(loader_libcuda_stub)            \
  X(stub_loaded)                    \
  X(loader_preload_stub)            \
  X(device_nodes)                   \
  X(visible_devices)                \
  X(launch_blocking)                \
  X(compute_mode)                   \
  X(toolkit_vs_driver)              \
  X(toolkits_disagree)              \
  X(nvcc_vs_smi)                    \
  X(gpu_vs_toolkits)                \
  X(cuda_home_unset)                \
  X(toolkit_change_interrupted)     \
  X(cudnn_header_mismatch)          \
  X(cudnn_vs_toolkit)               \
  X(loader_cudnn_incomplete)        \
  X(cudnn_mixed)                    \
  X(torch_cpu_build)                \
  X(torch_companions_mixed)         \
  X(torch_driver_too_old)           \
  X(torch_gpu_arch)                 \
  X(python_version_unsupported)     \
  X(tf_gpu_package)                 \
  X(jax_cpu_only)                   \
  X(jax_ld_library_path)            \
  X(paddle_cpu)                     \
  X(ort_both)                       \
  X(cupy_multiple)                  \
  X(cupy_major)                     \
  X(ctranslate2_cudnn)              \
  X(loader_framework_cudnn_mix)     \
  X(pip_vs_system_cudnn)            \
  X(loader_preload_cudnn)           \
  X(ide_vs_shell)                   \
  X(ide_interpreter_stale)          \
  X(win_32bit_python)               \
  X(win_tf_after_210)               \
  X(tf_gpu_libraries)               \
  X(ort_cuda_libraries)             \
  X(paddle_cudnn)                   \
  X(loader_cudnn_not_found)         \
  X(wheel_pins)                     \
  X(torch_deep_cudnn)               \
  X(nvjitlink_cusparse)             \
  X(conda_cpu_pytorch)              \
  X(conda_vs_system)                \
  X(conda_virtual_cuda)             \
  X(toolkit_vs_torch)               \
  X(extension_abi)                  \
  X(wheel_tags)                     \
  X(tf_cuda_drivers)                \
  X(tf_cudnn_minor)                 \
  X(tf_tensorrt)                    \
  X(tf_archs)                       \
  X(xla_cuda_files)                 \
  X(live_probe_failures)            \
  X(wsl1)                           \
  X(wsl_linux_driver)               \
  X(wsl_unversioned)                \
  X(wsl_not_symlink)                \
  X(wsl_blocked)                    \
  X(wsl_no_windows_driver)          \
  X(image_needs_newer_driver)       \
  X(shm_small)                      \
  X(loses_gpu)                      \
  X(docker_no_gpu_runtime)          \
  X(toolkit_cannot_find_nvml)       \
  X(secure_boot)                    \
  X(xid79)                          \
  X(host_compiler)                  \
  X(cudnn_old_cuda_new_gpu)         \
  X(cudnn_not_initialized)          \
  X(win_tf_libraries)               \
  X(loader_win_cudnn8_sublibraries) \
  X(win_cudnn_incomplete)           \
  X(loader_win_zlibwapi)            \
  X(win_zlibwapi)                   \
  X(win_vcredist)                   \
  X(win_msvc_too_old)               \
  X(win_libomp140)                  \
  X(win_duplicate_openmp)           \
  X(win_cuda_path)                  \
  X(win_path_not_reloaded)          \
  X(win_special_chars)              \
  X(win_paddle_dso)                 \
  X(win_ctranslate2_cudnn9)         \
  X(wrong_bitness)                  \
  X(cudnn_mixed_127)                \
  X(py38_path)                      \
  X(ld_library_path_tokens)         \
  X(fabric_manager)                 \
  X(forward_compat)                 \
  X(cublas_pin)                     \
  X(deep_results)

namespace checks {
#define DLENV_DECLARE_ENTRY(name) extern const Check name##_entry;
DLENV_CHECKS(DLENV_DECLARE_ENTRY)
#undef DLENV_DECLARE_ENTRY
}  // namespace checks

const std::vector<Check>& check_table() {
#define DLENV_LIST_ENTRY(name) checks::name##_entry,
  static const std::vector<Check> table = {DLENV_CHECKS(DLENV_LIST_ENTRY)};
#undef DLENV_LIST_ENTRY
  return table;
}

std::vector<FindingId> ids_reported_by(const Check& check) {
  std::vector<FindingId> ids = check.emits;
  if (check.reports_signature_ids) {
    for (const ErrorSignature& s : kErrorSignatures) ids.push_back(s.id);
  }
  std::vector<FindingId> once;
  for (FindingId id : ids) {
    if (std::find(once.begin(), once.end(), id) == once.end()) once.push_back(id);
  }
  return once;
}

bool check_may_report(const Check& check, std::string_view id) {
  const auto ids = ids_reported_by(check);
  return std::any_of(ids.begin(), ids.end(), [&](FindingId e) { return finding_name(e) == id; });
}

std::vector<CheckOutput> run_checks(const Facts& facts, const Kb& kb, Os os) {
  const RuleContext c{facts, kb, os};
  std::vector<CheckOutput> out;
  out.reserve(check_table().size());
  for (const Check& check : check_table()) {
    CheckOutput o{&check, {}};
    check.run(c, o.findings);
    out.push_back(std::move(o));
  }
  return out;
}

Facts facts_limited_to(const Facts& facts, unsigned areas) {
  Facts f;
  f.tool_version = facts.tool_version;
  f.rooted = facts.rooted;
  f.root = facts.root;
  f.timing = facts.timing;
  if (areas & fact_area::host) f.host = facts.host;
  if (areas & fact_area::driver) f.driver = facts.driver;
  if (areas & fact_area::gpus) {
    f.gpus = facts.gpus;
    f.gpu_count = facts.gpu_count;
  }
  if (areas & fact_area::toolkits) f.toolkits = facts.toolkits;
  if (areas & fact_area::cudnn) f.cudnn = facts.cudnn;
  if (areas & fact_area::env) f.env = facts.env;
  if (areas & fact_area::python) f.python = facts.python;
  if (areas & fact_area::system) f.system = facts.system;
  if (areas & fact_area::windows) f.windows = facts.windows;
  if (areas & fact_area::loader) f.loader = facts.loader;
  if (areas & fact_area::changes) f.interrupted_changes = facts.interrupted_changes;
  if (areas & fact_area::live_failures) f.live_failures = facts.live_failures;
  return f;
}

}  // namespace dlenv
