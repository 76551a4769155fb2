/* Aligned, zeroed buffers for kernels and tools, and the monotonic clock.
 *
 * Every block is 64-byte aligned (one cache line, one zmm register), so generated code may use
 * aligned vector loads on buffer starts. Blocks of 2 MiB and more are 2 MiB aligned and
 * madvise'd for transparent huge pages: first touch of 4 KiB pages costs ~10 us each on these
 * machines, which would otherwise dominate the first run of a large kernel.
 */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum {
    SMALL_ALIGN = 64,
};
#define HUGE_ALIGN ((size_t)2 << 20)

void *weft_rt_alloc(size_t n)
{
    if (n == 0) n = 1;
    size_t align = n >= HUGE_ALIGN ? HUGE_ALIGN : SMALL_ALIGN;
    void *p = NULL;
    if (posix_memalign(&p, align, n) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (align == HUGE_ALIGN) (void)madvise(p, n & ~(HUGE_ALIGN - 1), MADV_HUGEPAGE);
#endif
    memset(p, 0, n);
    return p;
}

void weft_rt_free(void *p) { free(p); }

double weft_rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
