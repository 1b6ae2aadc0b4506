#include "cli/kill_point.h"

#include <cstdlib>

#include "util/strings.h"

namespace dlenv {

std::unique_ptr<FileWriter> make_cli_file_writer(const std::string& root) {
  auto writer = make_file_writer(root);
  const char* at = std::getenv("DLENV_KILL_AT");
  auto n = at ? parse_int(at) : std::nullopt;
  if (!n || *n <= 0) return writer;
  return std::make_unique<FaultInjectingWriter>(std::move(writer), static_cast<int>(*n),
                                                [] { kill_this_process(); });
}

}  // namespace dlenv
