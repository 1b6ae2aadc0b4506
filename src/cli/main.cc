// dlenv: thin main; everything lives in the cli layer.
#include <unistd.h>

#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  int code = dlenv::cli_main(argc, argv, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
  std::cout.flush();
  return code;
}
