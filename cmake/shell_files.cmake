# Writes dlenv's man page and shell completions under SHARE by running the built dlenv
# (DLENV), which generates them from its command table. Called by the dlenv_shell_files
# target (CMakeLists.txt); packaging installs these paths as they are.
# Optional: -DEMULATOR=<list> runs DLENV through it (dlenv.exe under Wine, for the Windows
# zip's dlenv.ps1), -DONLY=<path under SHARE> writes that one file.
foreach(var DLENV SHARE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "shell_files.cmake: -D${var}=... is required")
  endif()
endforeach()

function(dlenv_write path)
  if(DEFINED ONLY AND NOT path STREQUAL ONLY)
    return()
  endif()
  get_filename_component(dir ${SHARE}/${path} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  execute_process(COMMAND ${EMULATOR} ${DLENV} ${ARGN} OUTPUT_FILE ${SHARE}/${path}.tmp RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`${DLENV} ${ARGN}` failed (${rc})")
  endif()
  file(RENAME ${SHARE}/${path}.tmp ${SHARE}/${path})
endfunction()

dlenv_write(man/man1/dlenv.1 help --man)
dlenv_write(bash-completion/completions/dlenv completion bash)
dlenv_write(zsh/site-functions/_dlenv completion zsh)
dlenv_write(fish/vendor_completions.d/dlenv.fish completion fish)
dlenv_write(powershell/dlenv.ps1 completion powershell)
