// dlenv: thin main; everything lives in the cli layer.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "cli/process_exit.h"
#include "cli/safe_output.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  dlenv::protect_standard_fds();
  dlenv::enable_exit_without_teardown();
  if (argc > 0) dlenv::remember_invocation(argv[0]);
  int code = dlenv::cli_main(argc, argv, dlenv::standard_out(), dlenv::standard_err(),
                             isatty(STDOUT_FILENO) != 0);
  // A write error (now, at the flush, or earlier) is exit 3; a closed pipe is SIGPIPE.
  code = dlenv::finish_output(code);
  // Every output is written; what a command kept (cli/process_exit.h) goes with the process.
  if (dlenv::exit_without_teardown()) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
