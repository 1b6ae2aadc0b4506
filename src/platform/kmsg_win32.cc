// Windows has no /dev/kmsg.
#include "platform/kmsg.h"

namespace dlenv {

Result<KernelLogRead> read_kernel_ring_buffer(bool (*keep)(const std::string& message),
                                              size_t max_records) {
  (void)keep;
  (void)max_records;
  return fail("/dev/kmsg: not supported on Windows");
}

}  // namespace dlenv
