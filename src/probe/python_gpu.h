// The GPU side of a Python environment, read from files (helpers of probe/python.cc):
// conda-meta records, the CUDA libraries the frameworks' GPU parts link against and
// where the loader finds them, cuSPARSE's nvJitLink needs, XLA's libdevice/ptxas.
#pragma once

#include "probe/probe.h"

namespace dlenv {

// conda-meta/*.json of a conda environment: the CUDA/framework packages, from the
// record file names (name-version-build.json).
void read_conda_meta(const FileSystem& fs, PythonEnv& e);

// Fills FrameworkFacts::needed for ONNX Runtime (its CUDA provider's DT_NEEDED / PE
// imports) and PaddlePaddle (the cuDNN it opens by name), resolved with `loader`.
void inspect_framework_libraries(const ProbeContext& ctx, const LoaderConfig& loader, PythonEnv& e);

// PythonLibCopy::needs_nvjitlink for cuSPARSE copies (undefined __nvJitLink*_M_N symbols).
void read_cusparse_needs(const FileSystem& fs, PythonEnv& e);

// Directories XLA could take libdevice.10.bc and ptxas from (JAX, TensorFlow only).
void find_xla_dirs(const ProbeContext& ctx, PythonEnv& e);

}  // namespace dlenv
