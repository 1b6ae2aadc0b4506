#include "platform/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace dlenv {

void for_each_range(size_t count, const std::function<void(size_t, size_t)>& fn,
                    size_t min_per_thread) {
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()),
                                          count / std::max<size_t>(1, min_per_thread));
  if (threads <= 1) {
    if (count) fn(0, count);
    return;
  }
  const size_t per = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t b = per; b < count; b += per) pool.emplace_back(fn, b, std::min(count, b + per));
  fn(0, std::min(count, per));
  for (auto& th : pool) th.join();
}

}  // namespace dlenv
