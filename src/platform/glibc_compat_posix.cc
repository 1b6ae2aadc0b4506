#include <fcntl.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "platform/glibc_compat.h"
#include "util/version.h"

namespace dlenv {
namespace {

struct Search {
  std::uintptr_t address = 0;
  std::uintptr_t page = 4096;
  std::optional<DlFindObject> found;
};

int visit_object(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<Search*>(data);
  bool contains = false;
  std::uintptr_t low = UINTPTR_MAX, high = 0;
  const void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      std::uintptr_t end = start + ph.p_memsz;
      if (search->address >= start && search->address < end) contains = true;
      if (start < low) low = start;
      if (end > high) high = end;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<const void*>(start);
    }
  }
  if (!contains) return 0;
  std::uintptr_t mask = search->page - 1;
  DlFindObject object;
  object.map_start = reinterpret_cast<void*>(low & ~mask);
  object.map_end = reinterpret_cast<void*>(high);  // glibc: the last segment's end
  object.eh_frame = const_cast<void*>(eh_frame);
  search->found = object;
  return 1;  // stop the walk
}

}  // namespace

int find_loaded_object(const void* address, DlFindObject* result) {
  Search search;
  search.address = reinterpret_cast<std::uintptr_t>(address);
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) search.page = static_cast<std::uintptr_t>(page);
  dl_iterate_phdr(visit_object, &search);
  if (!search.found) return -1;
  *result = *search.found;
  return 0;
}

bool dlopen_in_dlmopen_namespace_is_safe(std::string_view glibc_version) {
  auto version = Version::parse(glibc_version);
  return version && *version >= Version{2, 34};
}

std::optional<std::uint32_t> kernel_random_u32() {
  std::uint32_t value = 0;
  for (;;) {
    // The raw system call: glibc 2.25 has getrandom(), but the call is what matters here.
    long got = syscall(SYS_getrandom, &value, sizeof value, 0);
    if (got == static_cast<long>(sizeof value)) return value;
    if (got < 0 && errno == EINTR) continue;
    break;
  }
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::size_t have = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  while (have < sizeof value) {
    ssize_t n = read(fd, bytes + have, sizeof value - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
  }
  close(fd);
  if (have != sizeof value) return std::nullopt;
  return value;
}

}  // namespace dlenv
