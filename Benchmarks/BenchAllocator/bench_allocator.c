// What the C allocator holds for the process: glibc's mallinfo2, which Swift's Glibc module leaves out.

#include "bench_allocator.h"

#if defined(__linux__)
#include <malloc.h>

size_t bench_allocated_bytes(void) {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}
#else
size_t bench_allocated_bytes(void) { return 0; }
#endif
