// `dlenv plan`: choose a framework build, CUDA, cuDNN and driver that fit together,
// from the framework tables of the knowledge base (pytorch.json, tensorflow.json,
// others.json) plus the driver/arch tables. Pure: inputs in, a Plan out; the CLI
// fills missing inputs from the probe (plan_inputs_from_facts) and prints.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "util/result.h"
#include "util/version.h"

namespace dlenv {

enum class PlanOs { linux, windows, wsl2 };
const char* plan_os_name(PlanOs os);  // "linux", "windows", "wsl2"
std::optional<PlanOs> parse_plan_os(std::string_view name);
std::vector<std::string> plan_os_names();  // every plan_os_name, in enum order

// "torch", "torch==1.13.1", "tensorflow>=2.10", "paddlepaddle-gpu==2.4", "jax", ...
struct FrameworkSpec {
  std::string name;  // canonical: torch, tensorflow, paddlepaddle-gpu, jax, onnxruntime-gpu, cupy
  std::string op;    // "", "==", ">=", "<=", ">", "<"
  std::optional<Version> version;
  std::string text;  // as given
};
Result<FrameworkSpec> parse_framework_spec(std::string_view text);
// The canonical framework names parse_framework_spec accepts (it also takes aliases such as
// pytorch, tf, paddle, ort), in the order of its table.
std::vector<std::string> plan_framework_names();

struct PlanInputs {
  std::vector<FrameworkSpec> frameworks;  // empty: torch
  std::optional<Version> cc;              // GPU compute capability
  std::string gpu_name;                   // when given by name (or probed)
  std::optional<Version> driver;
  PlanOs os = PlanOs::linux;
  std::optional<Version> python;
  // Where each input came from: "--cc", "gpus.json (--gpu ...)", "probe: NVML", "not known".
  std::string cc_source, driver_source, os_source, python_source;
};

// Fills the inputs that are not set from probed facts (first visible GPU, driver,
// host OS / WSL2, Python of the first environment). `os_given` keeps the OS as set.
void plan_inputs_from_facts(const Facts& facts, bool os_given, PlanInputs& in);

struct FrameworkChoice {
  std::string framework;         // canonical name
  std::string version;           // "1.13", "2.10.0", "2.4.x"
  std::string build;             // "cu117", "post117", "jax[cuda12]", "cupy-cuda12x", "cuda11.8"
  std::string cuda;              // the CUDA it is built for ("11.7", "12.x", "11.2-11.8")
  std::string cudnn;             // bundled or required cuDNN ("8.5.0.96", "8.1", "9.x"; "" none)
  bool bundles_runtime = false;  // pip wheels bring their own CUDA runtime / cuDNN
  std::vector<std::string> install;  // exact commands
  bool confirmed = true;
  std::vector<std::string> sources;
  std::vector<std::string> notes;
};

struct PlanDecision {
  std::string choice;      // "torch 2.0 cu118"
  std::string constraint;  // what decided it
};

struct PlanOption {
  std::vector<FrameworkChoice> frameworks;
  Version cuda;                 // shared CUDA (major.minor) the option runs on
  int cudnn_major = 0;          // shared cuDNN major (0: none needed)
  bool needs_toolkit = false;   // a separate CUDA toolkit + cuDNN install is needed
  std::string toolkit;          // "11.2" when needed
  std::string cudnn;            // cuDNN to install when needed ("8.1")
  Version min_driver;           // hard floor (minor-version compatibility where it applies)
  Version recommended_driver;   // the toolkit's own floor
  std::string container_image;  // nvidia/cuda:...; a naming pattern
  bool container_confirmed = false;
  bool confident = true;                 // false: rests on unconfirmed KB rows
  std::vector<std::string> unconfirmed;  // which rows / assumptions
  std::vector<PlanDecision> decisions;
};

struct Plan {
  PlanInputs inputs;
  std::vector<PlanOption> options;     // best first; empty when nothing fits
  std::vector<std::string> conflicts;  // one sentence each, with the way out
  // When the request could not be met, the plan for the way out (e.g. torch>=2.0).
  std::vector<std::string> relaxed_to;  // the specs used instead ("torch>=2.0")
  std::vector<std::string> notes;
};

// Never fails for a request the KB cannot meet (that is a conflict); fails only when the
// framework tables themselves cannot be read (the message names the file and row).
Result<Plan> make_plan(const PlanInputs& inputs, const Kb& kb);

std::string render_plan_text(const Plan& plan, size_t max_alternatives = 3);
std::string render_plan_json(const Plan& plan);  // schema dlenv.plan/1

}  // namespace dlenv
