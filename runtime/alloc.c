/* Aligned, zeroed buffers for kernels and tools (uninitialised ones for generated code's local
 * buffers), the weft_malloc family with its test fail hook
 * (runtime/mem.h), and the monotonic clock.
 *
 * Every block is 64-byte aligned (one cache line, one zmm register), so generated code may use
 * aligned vector loads on buffer starts. Blocks of 2 MiB and more are 2 MiB aligned and
 * madvise'd for transparent huge pages: first touch of 4 KiB pages costs ~10 us each on these
 * machines, which would otherwise dominate the first run of a large kernel.
 */
#include "runtime/runtime.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "runtime/mem.h"

enum {
    SMALL_ALIGN = 64,
};
#define HUGE_ALIGN ((size_t)2 << 20)

/* The fail hook (runtime/mem.h) and its argument. Tests install them while no other thread
 * allocates; the argument is stored first, so a thread that sees the hook sees its argument. */
static _Atomic(weft_alloc_fail_fn) fail_fn;
static void *_Atomic fail_ud;
static atomic_ulong rt_failures;

void weft_alloc_set_fail_hook(weft_alloc_fail_fn fn, void *ud)
{
    atomic_store(&fail_ud, ud);
    atomic_store(&fail_fn, fn);
}

static bool should_fail(size_t n)
{
    weft_alloc_fail_fn fn = atomic_load_explicit(&fail_fn, memory_order_relaxed);
    return fn && fn(atomic_load(&fail_ud), n);
}

void *weft_malloc(size_t n) { return should_fail(n) ? NULL : malloc(n); }

void *weft_calloc(size_t count, size_t size) { return should_fail(count * size) ? NULL : calloc(count, size); }

void *weft_realloc(void *p, size_t n) { return should_fail(n) ? NULL : realloc(p, n); }

char *weft_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = weft_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *weft_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = weft_malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

unsigned long weft_rt_alloc_failures(void) { return atomic_load(&rt_failures); }

/* weft_rt_alloc without the zeroing. */
void *weft_rt_alloc_uninit(size_t n)
{
    if (n == 0) n = 1;
    size_t align = n >= HUGE_ALIGN ? HUGE_ALIGN : SMALL_ALIGN;
    void *p = NULL;
    if (should_fail(n) || posix_memalign(&p, align, n) != 0) {
        atomic_fetch_add(&rt_failures, 1);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    if (align == HUGE_ALIGN) (void)madvise(p, n & ~(HUGE_ALIGN - 1), MADV_HUGEPAGE);
#endif
    return p;
}

void *weft_rt_alloc(size_t n)
{
    void *p = weft_rt_alloc_uninit(n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

void weft_rt_free(void *p) { free(p); }

double weft_rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
