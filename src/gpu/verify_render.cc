// Peaks lookup and the text/JSON forms of a verify result.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "gpu/verify.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {

std::optional<GpuPeaks> gpu_peaks(const Kb& kb, const std::string& gpu_name) {
  auto text = kb.file_text("gpu_peaks.json");
  if (!text) return std::nullopt;
  try {
    auto doc = nlohmann::json::parse(*text);
    const nlohmann::json* best = nullptr;
    for (const auto& g : doc.at("gpus")) {
      if (to_lower(g.at("name").get<std::string>()) == to_lower(gpu_name)) best = &g;
    }
    if (!best) return std::nullopt;
    GpuPeaks p;
    p.fp32 = best->value("fp32", 0.0);
    p.tf32 = best->value("tf32", 0.0);
    p.fp16 = best->value("fp16", 0.0);
    p.bf16 = best->value("bf16", 0.0);
    p.fp8 = best->value("fp8", 0.0);
    p.memory_gbs = best->value("memory_gbs", 0.0);
    p.source = best->value("source", "");
    p.confirmed = best->value("confirmed", false);
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

// A number with `decimals` digits after the point (no format strings from variables).
std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pad_left(std::string s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string check_text(const CheckResult& c) {
  if (c.checked == 0) return "not checked";
  if (c.ok()) return "ok (" + std::to_string(c.checked) + " checked)";
  return "WRONG: " + std::to_string(c.bad) + "/" + std::to_string(c.checked) + " (" + c.first_bad +
         ")";
}

nlohmann::ordered_json check_json(const CheckResult& c) {
  return {{"checked", c.checked},
          {"bad", c.bad},
          {"max_abs_err", c.max_abs_err},
          {"tolerance_rel", c.tolerance.rel},
          {"tolerance_abs", c.tolerance.abs},
          {"first_bad", c.first_bad},
          {"ok", c.ok()}};
}

std::string opt_count(const std::optional<uint64_t>& v) {
  return v ? std::to_string(*v) : std::string("?");
}

// "compute mode default, 0 other processes, ECC on: 0 uncorrected / 0 corrected (run: +0/+0)".
std::string health_text(const GpuHealth& b, const std::optional<GpuHealth>& a) {
  std::string s = "compute mode " + (b.compute_mode.empty() ? std::string("?") : b.compute_mode);
  if (b.compute_processes) s += ", " + std::to_string(*b.compute_processes) + " other process(es)";
  if (!b.ecc_enabled) {
    s += ", ECC ?";
  } else if (!*b.ecc_enabled) {
    s += ", ECC off";
  } else {
    s += ", ECC on: " + opt_count(b.ecc_uncorrected_volatile) + " uncorrected / " +
         opt_count(b.ecc_corrected_volatile) + " corrected since the driver loaded";
    if (a && a->ecc_uncorrected_volatile && b.ecc_uncorrected_volatile &&
        a->ecc_corrected_volatile && b.ecc_corrected_volatile) {
      s += " (this run: +" +
           std::to_string(*a->ecc_uncorrected_volatile - *b.ecc_uncorrected_volatile) + "/+" +
           std::to_string(*a->ecc_corrected_volatile - *b.ecc_corrected_volatile) + ")";
    }
  }
  if (b.remap_pending.value_or(false)) s += ", row remap pending";
  return s;
}

nlohmann::ordered_json health_json(const GpuHealth& h) {
  auto opt = [](const auto& v) -> nlohmann::ordered_json {
    if (v) return *v;
    return nullptr;
  };
  return {{"compute_mode", h.compute_mode},
          {"compute_processes", opt(h.compute_processes)},
          {"ecc_enabled", opt(h.ecc_enabled)},
          {"ecc_uncorrected_volatile", opt(h.ecc_uncorrected_volatile)},
          {"ecc_corrected_volatile", opt(h.ecc_corrected_volatile)},
          {"remap_pending", opt(h.remap_pending)},
          {"remap_failed", opt(h.remap_failed)},
          {"source", h.source}};
}

std::string problems_text(const VerifyResult& r) {
  std::string s;
  for (const auto& p : r.problems) {
    s += "[" + p.severity + "] " + p.id + " — " + p.text + "\n";
    if (!p.fix.empty()) s += "    fix: " + p.fix + "\n";
  }
  return s;
}

}  // namespace

std::string render_verify_text(const VerifyResult& r) {
  std::string s = "dlenv verify\n\n";
  if (!r.stopped_during.empty()) {
    s += "  stopped during \"" + r.stopped_during + "\", after " +
         std::to_string(r.step_ms.empty() ? 0 : r.step_ms.size() - 1) + " finished step(s)\n\n";
    return s + problems_text(r);
  }
  s +=
      "  libcuda   " + (r.cuda_library.empty() ? std::string("not loaded") : r.cuda_library) + "\n";
  if (r.driver_cuda_version) {
    s += "  driver    CUDA " + Version::from_cuda_int(r.driver_cuda_version).str() + "\n";
  }
  if (!r.cublas_library.empty()) {
    s +=
        "  cuBLAS    " + r.cublas_library + " (version " + std::to_string(r.cublas_version) + ")\n";
    s += "  cuBLASLt  " + r.cublaslt_library + "\n";
  }
  if (!r.cudnn_library.empty()) {
    s += "  cuDNN     " + r.cudnn_library + " (version " + std::to_string(r.cudnn_version) + ")\n";
  }
  s += "  CPU GEMM  " + num(r.cpu_gemm_gflops, 1) + " GFLOP/s fp32 (" +
       std::to_string(r.cpu_gemm_n) + "³, " + std::to_string(r.cpu_threads) + " threads)\n";
  for (const auto& d : r.devices) {
    s += "\nGPU " + std::to_string(d.index) + ": " + d.name + "  cc " + d.compute_capability.str() +
         "  " + human_bytes(d.memory_bytes) + "  context " + num(d.context_ms, 1) + " ms\n";
    if (d.health_before) s += "  health    " + health_text(*d.health_before, d.health_after) + "\n";
    for (const auto& b : d.bandwidth) {
      s += "  copy " + b.name + std::string(b.name.size() < 24 ? 24 - b.name.size() : 1, ' ');
      if (!b.error.empty()) {
        s += "FAILED: " + b.error + "\n";
        continue;
      }
      s += pad_left(num(b.gbs, 1), 8) + " GB/s";
      if (b.peak_gbs > 0) s += "   (memory peak " + num(b.peak_gbs, 0) + " GB/s)";
      s += "\n";
    }
    for (const auto& g : d.gemm) {
      std::string label = std::string("  GEMM ") + dtype_name(g.type) +
                          (g.out_type != g.type ? std::string("→") + dtype_name(g.out_type) : "") +
                          " " + std::to_string(g.m) + "³";
      s += label + std::string(label.size() < 23 ? 23 - label.size() : 1, ' ');
      if (!g.skipped.empty()) {
        s += "skipped: " + g.skipped + "\n";
        continue;
      }
      if (!g.error.empty()) {
        s += "FAILED: " + g.error + "\n";
        continue;
      }
      s += pad_left(num(g.tflops, 1), 8) + " TFLOP/s";
      if (g.peak_tflops > 0)
        s += "  " + pad_left(num(100.0 * g.tflops / g.peak_tflops, 0), 3) + "% of peak";
      if (r.cpu_gemm_gflops > 0)
        s += "  " + pad_left(num(g.tflops * 1000.0 / r.cpu_gemm_gflops, 0), 6) + "× CPU";
      s += "  result " + check_text(g.small_check) + ", " + check_text(g.large_check) + "\n";
    }
    for (const auto& n : d.dnn) {
      std::string label =
          "  " + n.op + (n.layout.empty() ? "" : " " + n.layout) + " " + dtype_name(n.type);
      s += label + std::string(label.size() < 34 ? 34 - label.size() : 1, ' ');
      if (!n.error.empty()) {
        s += "FAILED: " + n.error + " [" + n.sublibrary + "]\n";
        continue;
      }
      if (n.gbs > 0) {
        s += pad_left(num(n.gbs, 0), 8) + " GB/s   ";
        if (n.peak > 0) s += "  " + pad_left(num(100.0 * n.gbs / n.peak, 0), 3) + "% of peak";
      } else {
        s += pad_left(num(n.tflops, 1), 8) + " TFLOP/s";
        if (n.peak > 0) s += "  " + pad_left(num(100.0 * n.tflops / n.peak, 0), 3) + "% of peak";
      }
      s += "  result " + check_text(n.check) + "  " + n.shape;
      if (!n.algo.empty()) s += " " + n.algo;
      s += "\n";
    }
  }
  s += "\n";
  if (r.problems.empty()) return s + "All checks passed: the GPU computes correct results.\n";
  return s + problems_text(r);
}

std::string render_verify_json(const VerifyResult& r) {
  nlohmann::ordered_json j;
  j["schema"] = "dlenv.verify/1";
  j["libraries"] = {{"cuda", r.cuda_library},         {"cublas", r.cublas_library},
                    {"cublaslt", r.cublaslt_library}, {"cublas_version", r.cublas_version},
                    {"cudnn", r.cudnn_library},       {"cudnn_version", r.cudnn_version}};
  j["driver_cuda_version"] = r.driver_cuda_version;
  j["no_gpu"] = r.no_gpu;
  j["cpu"] = {{"gemm_gflops", r.cpu_gemm_gflops}, {"n", r.cpu_gemm_n}, {"threads", r.cpu_threads}};
  j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : r.devices) {
    nlohmann::ordered_json dj;
    dj["index"] = d.index;
    dj["name"] = d.name;
    dj["compute_capability"] = d.compute_capability.str();
    dj["memory_bytes"] = d.memory_bytes;
    dj["pci_bus_id"] = d.pci_bus_id;
    dj["context_ms"] = d.context_ms;
    dj["health_before"] = d.health_before ? health_json(*d.health_before) : nullptr;
    dj["health_after"] = d.health_after ? health_json(*d.health_after) : nullptr;
    dj["bandwidth"] = nlohmann::ordered_json::array();
    for (const auto& b : d.bandwidth) {
      dj["bandwidth"].push_back({{"name", b.name},
                                 {"bytes", b.bytes},
                                 {"iterations", b.iterations},
                                 {"ms", b.ms},
                                 {"gbs", b.gbs},
                                 {"peak_gbs", b.peak_gbs},
                                 {"error", b.error}});
    }
    dj["gemm"] = nlohmann::ordered_json::array();
    for (const auto& g : d.gemm) {
      dj["gemm"].push_back({{"dtype", dtype_name(g.type)},
                            {"out_dtype", dtype_name(g.out_type)},
                            {"library", g.library},
                            {"skipped", g.skipped},
                            {"m", g.m},
                            {"n", g.n},
                            {"k", g.k},
                            {"iterations", g.iterations},
                            {"ms", g.ms},
                            {"tflops", g.tflops},
                            {"peak_tflops", g.peak_tflops},
                            {"small_check", check_json(g.small_check)},
                            {"large_check", check_json(g.large_check)},
                            {"error", g.error}});
    }
    dj["dnn"] = nlohmann::ordered_json::array();
    for (const auto& n : d.dnn) {
      dj["dnn"].push_back({{"op", n.op},
                           {"layout", n.layout},
                           {"dtype", dtype_name(n.type)},
                           {"shape", n.shape},
                           {"algo", n.algo},
                           {"sublibrary", n.sublibrary},
                           {"iterations", n.iterations},
                           {"ms", n.ms},
                           {"tflops", n.tflops},
                           {"gbs", n.gbs},
                           {"peak", n.peak},
                           {"check", check_json(n.check)},
                           {"error", n.error}});
    }
    j["devices"].push_back(dj);
  }
  j["problems"] = nlohmann::ordered_json::array();
  for (const auto& p : r.problems) {
    j["problems"].push_back(
        {{"id", p.id}, {"severity", p.severity}, {"text", p.text}, {"fix", p.fix}});
  }
  j["wall_ms"] = r.wall_ms;
  j["timing_ms"] = r.timing_ms;
  j["step_ms"] = nlohmann::ordered_json::array();
  for (const auto& [step, ms] : r.step_ms) j["step_ms"].push_back({{"step", step}, {"ms", ms}});
  j["stopped_during"] = r.stopped_during;
  return json_text(j, 2) + "\n";
}

}  // namespace dlenv
