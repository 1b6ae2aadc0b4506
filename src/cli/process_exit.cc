// See process_exit.h.
#include "cli/process_exit.h"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace dlenv {

namespace {

std::atomic<bool> g_enabled{false};
std::atomic<bool> g_kept{false};

// Never destroyed: what it holds goes with the process.
std::vector<std::shared_ptr<void>>& kept() {
  static auto* v = new std::vector<std::shared_ptr<void>>();
  return *v;
}

std::mutex& kept_mutex() {
  static auto* m = new std::mutex();
  return *m;
}

}  // namespace

void enable_exit_without_teardown() {
  g_enabled = true;
}

void keep_until_exit(std::shared_ptr<void> resources) {
  if (!resources) return;
  if (!g_enabled) return;  // released here, as the caller's last reference goes
  std::lock_guard<std::mutex> lock(kept_mutex());
  kept().push_back(std::move(resources));
  g_kept = true;
}

bool exit_without_teardown() {
  return g_kept;
}

}  // namespace dlenv
