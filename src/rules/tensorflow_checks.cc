// TensorFlow: the removed tensorflow-gpu package, native Windows after 2.10, the CUDA libraries
// it dlopens, a driver it cannot find, its cuDNN minor and TensorRT.
#include <algorithm>
#include <map>
#include <set>

#include "kb/error_signature.h"
#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace checks {

using namespace pyrules;
namespace py = pyrules;

void tf_gpu_package(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* p = pkg(e, "tensorflow-gpu");
    if (!p) continue;
    Finding x = make_finding(FindingId::tensorflow_gpu_package_removed, Severity::warning,
                             "tensorflow-gpu " + p->version + " in " + env_name(e) +
                                 " is the discontinued package name");
    x.evidence.push_back(pkg_ev(*p));
    x.evidence.push_back(
        ev("since Dec 2022 tensorflow-gpu on PyPI is an empty package that "
           "fails to install; tensorflow itself has GPU support",
           "failure catalog D20"));
    x.fix.push_back(step("replace it",
                         pip(e) + " uninstall -y tensorflow-gpu && " + pip(e) +
                             (c.os == Os::windows ? " install \"tensorflow<2.11\""
                                                  : " install 'tensorflow[and-cuda]'"),
                         &c));
    x.fix.push_back(step("and change tensorflow-gpu to tensorflow in requirements files"));
    out.push_back(std::move(x));
  }
}

void win_tf_after_210(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* tf = fw(e, "tensorflow");
    if (!tf) continue;
    auto v = Version::parse(tf->version);
    if (!v || *v < Version{2, 11}) continue;
    Finding x = make_finding(FindingId::win_tf_gpu_after_2_10,
                             gpu_present(c.f) ? Severity::error : Severity::warning,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no GPU support on native Windows (2.10 was the last)");
    if (const auto* p = pkg(e, tf->package)) x.evidence.push_back(pkg_ev(*p));
    x.fix.push_back(step("run TensorFlow in WSL2 with the Linux GPU build",
                         "wsl -- python3 -m pip install 'tensorflow[and-cuda]'", &c));
    x.fix.push_back(
        step("or stay native with TensorFlow 2.10 (Python <= 3.10, CUDA 11.2, cuDNN 8.1)",
             pip(e) + " install \"tensorflow<2.11\"", &c));
    out.push_back(std::move(x));
  }
}

void tf_gpu_libraries(const Ctx& c, Findings& out) {
  if (c.os != Os::linux || !gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* tf = fw(e, "tensorflow");
    if (!tf || !tf->cuda_build.ok() || !*tf->cuda_build || !tf->cuda) continue;
    auto cuda = Version::parse(*tf->cuda);
    auto cudnn = tf->cudnn ? Version::parse(*tf->cudnn) : std::nullopt;
    if (!cuda) continue;
    Available a = available_libs(c, e);
    std::vector<std::string> missing;
    if (!a.cudart.contains(cuda->major()))
      missing.push_back("CUDA " + std::to_string(cuda->major()) + " runtime");
    // Where the loader model resolved (or missed) TF's libcudnn.so.N, it decides: a miss is
    // libcudnn8-not-found, with the directories searched (one finding per cause).
    if (cudnn && !a.cudnn.contains(cudnn->major()) &&
        !loader_looks_for_libcudnn(c.f, e, "tensorflow"))
      missing.push_back("cuDNN " + std::to_string(cudnn->major()));
    if (missing.empty()) continue;
    Finding x =
        make_finding(FindingId::tf_cannot_dlopen_gpu_libraries, Severity::error,
                     "TensorFlow " + tf->version + " in " + env_name(e) + " will not find " +
                         join(missing, " and ") + ": it falls back to the CPU");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(
        ev("built for CUDA " + *tf->cuda + (tf->cudnn ? ", cuDNN " + *tf->cudnn : std::string()),
           tf->cuda.source));
    for (auto& h : a.evidence) x.evidence.push_back(std::move(h));
    if (a.evidence.empty())
      x.evidence.push_back(ev("no CUDA runtime or cuDNN found anywhere", e.prefix));
    std::string base = tf->version.substr(0, tf->version.find('+'));
    x.fix.push_back(step("install TensorFlow with its CUDA wheels",
                         pip(e) + " install 'tensorflow[and-cuda]==" + base + "'", &c));
    out.push_back(std::move(x));
  }
}

void tf_cuda_drivers(const Ctx& c, Findings& out) {
  if (c.os != Os::linux || !gpu_present(c.f)) return;
  if (!c.f.driver.libcuda_files.empty() || c.f.driver.libcuda_library.ok()) return;
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf) continue;
    Finding x = make_finding(FindingId::tf_could_not_find_cuda_drivers, Severity::error,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " will print 'Could not find cuda drivers on your machine': no "
                                 "libcuda.so.1 is on the loader path");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("CUDA build (CUDA " + (tf->cuda ? *tf->cuda : std::string("?")) + ")",
                            tf->cuda_build.source));
    x.evidence.push_back(ev("no libcuda.so* found by the loader configuration",
                            "ld.so.cache, LD_LIBRARY_PATH, default directories"));
    x.fix.push_back(
        step("install the NVIDIA driver's user-space libraries (libcuda.so.1) and run "
             "ldconfig; in a container, start it with --gpus all"));
    out.push_back(std::move(x));
  }
}

void tf_cudnn_minor(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || !tf->cudnn) continue;
    auto built = Version::parse(*tf->cudnn);
    if (!built || built->parts().size() < 2) continue;  // only "8" or "9": nothing to compare
    std::optional<Version> best;
    std::string where;
    for (const auto& p : e.packages) {
      if (!starts_with(p.name, "nvidia-cudnn-cu")) continue;
      auto v = Version::parse(p.version);
      if (v && v->major() == built->major() && (!best || *best < *v)) {
        best = v;
        where = p.source;
      }
    }
    for (const auto& copy : c.f.cudnn) {
      if (copy.major != built->major() || !copy.library_version) continue;
      if (!best || *best < *copy.library_version) {
        best = *copy.library_version;
        where = copy.library;
      }
    }
    if (!best || !(best->truncated(2) < built->truncated(2))) continue;
    Finding x =
        make_finding(FindingId::tf_cudnn_failed_to_initialize, Severity::warning,
                     "TensorFlow " + tf->version + " in " + env_name(e) + " was built with cuDNN " +
                         built->str() + ", but the newest cuDNN " + std::to_string(built->major()) +
                         " here is " + best->str() +
                         ": cuDNN fails to initialize ('Failed to get convolution algorithm')");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("built with cuDNN " + *tf->cudnn, tf->cudnn.source));
    x.evidence.push_back(ev("cuDNN " + best->str(), where));
    x.fix.push_back(
        step("install cuDNN " + built->truncated(2).str() +
                 " or newer of the same "
                 "major",
             pip(e) + " install -U \"nvidia-cudnn-cu" +
                 std::to_string(
                     Version::parse(tf->cuda ? *tf->cuda : "12").value_or(Version{12}).major()) +
                 ">=" + built->truncated(2).str() + "\"",
             &c));
    out.push_back(std::move(x));
  }
}

void tf_tensorrt(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || !tf->tensorrt_build.ok() || !*tf->tensorrt_build) continue;
    std::set<int> majors;
    std::string where;
    for (const auto& l : e.cuda_libs) {
      if (l.library == "nvinfer") {
        majors.insert(l.major);
        where = l.path;
      }
    }
    // TensorFlow 2.x TF-TRT is built against TensorRT 8.
    if (majors.empty() || majors.contains(8)) continue;
    Finding x = make_finding(FindingId::tf_trt_not_found, Severity::info,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " looks for TensorRT 8 (libnvinfer.so.8) but the tensorrt wheel "
                                 "provides libnvinfer.so." +
                                 std::to_string(*majors.rbegin()) +
                                 ": 'TF-TRT Warning: Could not find TensorRT'");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(ev("is_tensorrt_build = True", tf->tensorrt_build.source));
    x.evidence.push_back(ev("libnvinfer.so." + std::to_string(*majors.rbegin()), where));
    x.fix.push_back(step("harmless unless you use TF-TRT; for TF-TRT install TensorRT 8",
                         pip(e) + " install \"tensorrt==8.6.1\"", &c));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check tf_gpu_package_entry{"tf_gpu_package",
                                        "the removed tensorflow-gpu package",
                                        tf_gpu_package,
                                        {FindingId::tensorflow_gpu_package_removed},
                                        fact_area::python};
extern const Check win_tf_after_210_entry{"win_tf_after_210",
                                          "TensorFlow > 2.10 on native Windows",
                                          win_tf_after_210,
                                          {FindingId::win_tf_gpu_after_2_10},
                                          fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check tf_gpu_libraries_entry{"tf_gpu_libraries",
                                          "the CUDA libraries TensorFlow dlopens",
                                          tf_gpu_libraries,
                                          {FindingId::tf_cannot_dlopen_gpu_libraries},
                                          fact_area::cudnn | fact_area::driver | fact_area::gpus |
                                              fact_area::loader | fact_area::python |
                                              fact_area::toolkits};
extern const Check tf_cuda_drivers_entry{"tf_cuda_drivers",
                                         "TensorFlow without a driver",
                                         tf_cuda_drivers,
                                         {FindingId::tf_could_not_find_cuda_drivers},
                                         fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check tf_cudnn_minor_entry{"tf_cudnn_minor",
                                        "TensorFlow's cuDNN minor",
                                        tf_cudnn_minor,
                                        {FindingId::tf_cudnn_failed_to_initialize},
                                        fact_area::cudnn | fact_area::python};
extern const Check tf_tensorrt_entry{"tf_tensorrt",
                                     "TensorFlow's TensorRT",
                                     tf_tensorrt,
                                     {FindingId::tf_trt_not_found},
                                     fact_area::python};

}  // namespace checks
}  // namespace dlenv
