// What the C allocator holds for the process, for benchmarks that weigh what a structure keeps alive.

#include <stddef.h>

/// The bytes the allocator has handed out and not had back; 0 where the platform cannot say.
size_t bench_allocated_bytes(void);
