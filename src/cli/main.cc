// dlenv: thin main; everything lives in the cli layer.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/cli.h"
#include "cli/process_exit.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  dlenv::enable_exit_without_teardown();
  int code = dlenv::cli_main(argc, argv, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
  std::cout.flush();
  std::cerr.flush();
  if (dlenv::exit_without_teardown()) {
    // Every output is written; what a command kept (cli/process_exit.h) goes with the process.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
