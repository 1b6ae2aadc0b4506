// Micro-benchmark behind docs/measurements.md (third pass): searching a region of a file for
// two sonames after (0) first-touch faults of a fresh mapping, (1) one MADV_POPULATE_READ of
// the mapping, (2) pread into a fresh buffer. Run each mode in a fresh process:
//   g++ -O2 -o /tmp/mb bench/scan_read_vs_map.cc && /tmp/mb FILE OFFSET LENGTH MODE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
int main(int argc, char** argv) {
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  fstat(fd, &st);
  long off = strtol(argv[2], 0, 0), len = strtol(argv[3], 0, 0);
  int mode = atoi(argv[4]);
  auto t0 = std::chrono::steady_clock::now();
  const char* p;
  std::unique_ptr<char[]> buf;
  auto* m = (char*)mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mode == 0) {
    p = m + off;
  } else if (mode == 1) {
    long a = off & ~4095L;
    madvise(m + a, len + (off - a), MADV_POPULATE_READ);
    p = m + off;
  } else {
    buf.reset(new char[len]);
    pread(fd, buf.get(), len, off);
    p = buf.get();
  }
  int c = 0;
  const char* e = p + len;
  const char* q = p;
  while ((q = (const char*)memmem(q, e - q, "libnvrtc.so.", 12))) {
    ++c;
    ++q;
  }
  q = p;
  while ((q = (const char*)memmem(q, e - q, "libcublasLt.so.", 15))) {
    ++c;
    ++q;
  }
  auto t1 = std::chrono::steady_clock::now();
  printf("mode %d: %.3f ms (%d)\n", mode,
         std::chrono::duration<double, std::milli>(t1 - t0).count(), c);
}
