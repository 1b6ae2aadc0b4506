// Work split over the machine's hardware threads (verify's host-side numerics, `dlenv fleet`'s
// report parsing).
#pragma once

#include <cstddef>
#include <functional>

namespace dlenv {

// Calls fn(begin, end) on disjoint ranges covering [0, count), on up to the machine's
// hardware threads, each range at least `min_per_thread` long (inline when count is
// smaller); returns when every range is done.
void for_each_range(size_t count, const std::function<void(size_t, size_t)>& fn,
                    size_t min_per_thread = size_t{1} << 16);

}  // namespace dlenv
