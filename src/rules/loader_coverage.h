// What the loader models decided: questions about the facts (f.loader, filled by
// probe/loader_facts.cc) that several checks ask, so that a check working from file
// metadata or a directory scan steps aside where a loader model has the answer. These read
// facts only, never another check's findings (that is the resolver's: rules/resolve.h).
#pragma once

#include <string>
#include <string_view>

#include "probe/facts.h"

namespace dlenv {

// A framework's load context (kinds "framework" / "framework-dlopen") that the model ran.
bool framework_context(const LoadContext& c);
// The model resolved some libcudnn* file for the frameworks of environment `e`.
bool loader_resolves_cudnn(const Facts& f, const PythonEnv& e);
// The model looked for libcudnn.so.N (found or not) for `e`'s frameworks (only `framework`'s
// when given).
bool loader_looks_for_libcudnn(const Facts& f, const PythonEnv& e, std::string_view framework = "");
// The model resolved dlopen("libcuda.so.1") for a by-name or a framework context.
bool loader_resolves_libcuda(const Facts& f);
// The cudnn64_8.dll a Windows context loads (by-name: its root; extension contexts: the first
// cudnn64_8.dll they load); nullptr when none.
const ResolvedLib* cudnn8_dll_loaded_by(const LoadContext& ctx);
// Some Windows context loads the cuDNN 8 copy whose main DLL is `library`.
bool loader_loads_win_cudnn8(const Facts& f, const std::string& library);

}  // namespace dlenv
