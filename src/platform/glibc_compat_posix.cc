#include <fcntl.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "platform/glibc_compat.h"

namespace dlenv {
namespace {

struct Search {
  std::uintptr_t address = 0;
  std::uintptr_t page = 4096;
  std::optional<LoadedObjectSpan> found;
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
  LoadedObjectSpan span;
  span.map_start = reinterpret_cast<const void*>(low & ~mask);
  span.map_end = reinterpret_cast<const void*>(high);  // glibc: the last segment's end
  span.eh_frame = eh_frame;
  search->found = span;
  return 1;  // stop the walk
}

}  // namespace

std::optional<LoadedObjectSpan> loaded_object_containing(const void* address) {
  Search search;
  search.address = reinterpret_cast<std::uintptr_t>(address);
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) search.page = static_cast<std::uintptr_t>(page);
  dl_iterate_phdr(visit_object, &search);
  return search.found;
}

bool dlopen_in_dlmopen_namespace_is_safe(std::string_view glibc_version) {
  auto dot = glibc_version.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  int major = 0, minor = 0;
  for (char c : glibc_version.substr(0, dot)) {
    if (c < '0' || c > '9') return false;
    major = major * 10 + (c - '0');
  }
  std::string_view rest = glibc_version.substr(dot + 1);
  std::size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 6) {
    minor = minor * 10 + (rest[digits] - '0');
    ++digits;
  }
  if (digits == 0) return false;
  return major > 2 || (major == 2 && minor >= 34);
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
