#include "rules/check_table.h"

#include <algorithm>

namespace dlenv {

const std::vector<Check>& check_table() {
  static const std::vector<Check> table = {
      checks::no_driver_entry,
      checks::windows_no_driver_entry,
      checks::module_not_loaded_entry,
      checks::nouveau_entry,
      checks::version_mismatch_entry,
      checks::loader_libcuda_stub_entry,
      checks::stub_loaded_entry,
      checks::loader_preload_stub_entry,
      checks::device_nodes_entry,
      checks::visible_devices_entry,
      checks::compute_mode_entry,
      checks::toolkit_vs_driver_entry,
      checks::toolkits_disagree_entry,
      checks::nvcc_vs_smi_entry,
      checks::gpu_vs_toolkits_entry,
      checks::cuda_home_unset_entry,
      checks::toolkit_change_interrupted_entry,
      checks::cudnn_header_mismatch_entry,
      checks::cudnn_vs_toolkit_entry,
      checks::loader_cudnn_incomplete_entry,
      checks::cudnn_mixed_entry,
      checks::torch_cpu_build_entry,
      checks::torch_companions_mixed_entry,
      checks::torch_driver_too_old_entry,
      checks::torch_gpu_arch_entry,
      checks::python_version_unsupported_entry,
      checks::tf_gpu_package_entry,
      checks::jax_cpu_only_entry,
      checks::jax_ld_library_path_entry,
      checks::paddle_cpu_entry,
      checks::ort_both_entry,
      checks::cupy_multiple_entry,
      checks::cupy_major_entry,
      checks::ctranslate2_cudnn_entry,
      checks::loader_framework_cudnn_mix_entry,
      checks::pip_vs_system_cudnn_entry,
      checks::loader_preload_cudnn_entry,
      checks::ide_vs_shell_entry,
      checks::ide_interpreter_stale_entry,
      checks::win_32bit_python_entry,
      checks::win_tf_after_210_entry,
      checks::tf_gpu_libraries_entry,
      checks::ort_cuda_libraries_entry,
      checks::paddle_cudnn_entry,
      checks::loader_cudnn_not_found_entry,
      checks::wheel_pins_entry,
      checks::torch_deep_cudnn_entry,
      checks::nvjitlink_cusparse_entry,
      checks::conda_cpu_pytorch_entry,
      checks::conda_vs_system_entry,
      checks::conda_virtual_cuda_entry,
      checks::toolkit_vs_torch_entry,
      checks::extension_abi_entry,
      checks::wheel_tags_entry,
      checks::tf_cuda_drivers_entry,
      checks::tf_cudnn_minor_entry,
      checks::tf_tensorrt_entry,
      checks::tf_archs_entry,
      checks::xla_cuda_files_entry,
      checks::live_probe_failures_entry,
      checks::wsl1_entry,
      checks::wsl_linux_driver_entry,
      checks::wsl_unversioned_entry,
      checks::wsl_not_symlink_entry,
      checks::wsl_blocked_entry,
      checks::wsl_no_windows_driver_entry,
      checks::image_needs_newer_driver_entry,
      checks::shm_small_entry,
      checks::loses_gpu_entry,
      checks::docker_no_gpu_runtime_entry,
      checks::toolkit_cannot_find_nvml_entry,
      checks::secure_boot_entry,
      checks::xid79_entry,
      checks::host_compiler_entry,
      checks::cudnn_old_cuda_new_gpu_entry,
      checks::cudnn_not_initialized_entry,
      checks::win_tf_libraries_entry,
      checks::loader_win_cudnn8_sublibraries_entry,
      checks::win_cudnn_incomplete_entry,
      checks::loader_win_zlibwapi_entry,
      checks::win_zlibwapi_entry,
      checks::win_vcredist_entry,
      checks::win_msvc_too_old_entry,
      checks::win_libomp140_entry,
      checks::win_duplicate_openmp_entry,
      checks::win_cuda_path_entry,
      checks::win_path_not_reloaded_entry,
      checks::win_special_chars_entry,
      checks::win_paddle_dso_entry,
      checks::win_ctranslate2_cudnn9_entry,
      checks::wrong_bitness_entry,
      checks::cudnn_mixed_127_entry,
      checks::py38_path_entry,
      checks::ld_library_path_tokens_entry,
      checks::fabric_manager_entry,
      checks::forward_compat_entry,
      checks::cublas_pin_entry,
      checks::deep_results_entry,
  };
  return table;
}

bool check_may_report(const Check& check, std::string_view id) {
  for (FindingId e : check.emits) {
    if (finding_name(e) == id) return true;
  }
  if (check.reports_signature_ids) {
    for (const ErrorSignature& s : kErrorSignatures) {
      if (finding_name(s.id) == id) return true;
    }
  }
  return false;
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

std::vector<CheckOutput> run_checks(const Facts& facts, const Kb& kb, Os os) {
  const RuleContext c{facts, kb, os};
  std::vector<CheckOutput> out;
  out.reserve(check_table().size());
  for (const Check& check : check_table()) {
    if (!check.run) continue;
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
