#include "cli/live_probe_cmd.h"

#include <iostream>
#include <mutex>
#include <string>

#include "cli/kill_point.h"
#include "platform/system.h"
#include "probe/live_isolation.h"

namespace dlenv {

int run_live_probe_child() {
  const LiveLimits limits;
  limit_own_memory(limits.address_space_bytes, limits.data_bytes);
  let_crashes_end_this_process();
  const int fd = take_stdout_for_protocol();
  std::mutex mutex;
  LiveServeHooks hooks;
  hooks.emit = [&](const std::string& line) {
    std::lock_guard lock(mutex);
    const std::string text = line + "\n";
    write_protocol_line(fd, text.data(), static_cast<unsigned long>(text.size()));
  };
  hooks.overrun = [] { kill_this_process(); };
  return serve_live_probes(std::cin, hooks);
}

}  // namespace dlenv
