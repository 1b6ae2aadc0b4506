# The layering test of one layer (ctest layering.LAYER): with exactly the include directories
# the build gives that layer's library (INCLUDES), a header of every layer in ALLOWED must
# compile, and including a header of any layer in FORBIDDEN must fail because the compiler
# finds no such file -- not for any other reason, so a broken header cannot pass for a
# layering error.
#   cmake -DCXX=... -DINCLUDES=a;b -DLAYER=probe -DALLOWED=util;kb -DFORBIDDEN=rules;cli
#         -DWORK=dir -P check_layering.cmake
cmake_minimum_required(VERSION 3.25)

# One header each layer has (what a wrong-way include would name).
set(header_util util/version.h)
set(header_platform platform/filesystem.h)
set(header_binfmt binfmt/elf.h)
set(header_kb kb/kb.h)
set(header_probe probe/facts.h)
set(header_rules rules/finding.h)
set(header_actions actions/plan.h)
set(header_report report/report.h)
set(header_gpu gpu/verify.h)
set(header_cli cli/cli.h)

set(flags -std=c++23 -fsyntax-only)
foreach(dir ${INCLUDES})
  list(APPEND flags -I${dir})
endforeach()
file(MAKE_DIRECTORY ${WORK})

# The right way: every allowed layer's header compiles with these directories.
set(src "")
foreach(l ${ALLOWED})
  string(APPEND src "#include \"${header_${l}}\"\n")
endforeach()
string(APPEND src "int main() { return 0; }\n")
file(WRITE ${WORK}/${LAYER}_allowed.cc "${src}")
execute_process(COMMAND ${CXX} ${flags} ${WORK}/${LAYER}_allowed.cc
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${LAYER}: the headers of the layers it may use (${ALLOWED}) do not "
                      "compile with its include directories:\n${err}")
endif()

# The wrong way: each forbidden layer's header is not found.
set(checked 0)
foreach(l ${FORBIDDEN})
  set(h ${header_${l}})
  file(WRITE ${WORK}/${LAYER}_includes_${l}.cc "#include \"${h}\"\nint main() { return 0; }\n")
  execute_process(COMMAND ${CXX} ${flags} ${WORK}/${LAYER}_includes_${l}.cc
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${LAYER} can include ${h}: ${LAYER} must not see the ${l} layer")
  endif()
  string(FIND "${err}" "${h}: No such file or directory" gcc_says)
  string(FIND "${err}" "'${h}' file not found" clang_says)
  if(gcc_says EQUAL -1 AND clang_says EQUAL -1)
    message(FATAL_ERROR "${LAYER} including ${h} failed, but not because the file is out of "
                        "reach:\n${err}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "${LAYER}: ${checked} layers out of reach, ${ALLOWED} in reach")
