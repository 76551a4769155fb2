/* Runtime used by generated code and by the tools: a persistent thread pool with a
 * parallel-for, 64-byte aligned buffers, and a monotonic clock.
 *
 * Generated CPU code outlines the body of a parallel loop into
 *     void body(void *closure, int64_t begin, int64_t end)
 * and calls weft_rt_parallel_for(pool, body, closure, extent): the iterations [0, extent) are
 * split into min(n_threads, extent) balanced chunks (sizes differ by at most one), one per
 * thread, the calling thread owning the first, and each chunk into up to WEFT_RT_PIECES
 * balanced pieces: body is called once per piece. A thread runs its own chunk's pieces in
 * order, then the pieces of other chunks that no thread has started (a thread slowed by
 * another process, or done early, shifts work to the others). A NULL pool, a pool of one
 * thread, or a call made from inside a running parallel-for runs body(closure, 0, extent)
 * inline. These symbols are looked up by the JIT by name.
 *
 * A pool runs one parallel-for at a time: a call made while another thread's parallel-for is
 * running on the same pool does not wait, it runs its whole range inline on its own thread.
 *
 * Cost: a fork-join takes about 0.3-0.5 us while the workers are awake. Idle workers spin
 * (with a pause instruction, yielding the core after a few us) for up to 80 us after a job,
 * then sleep on a futex; waking a sleeping worker costs a few us to tens of us on a VM. The
 * model executor therefore runs kernels too small to gain from the pool with a NULL pool
 * (model/compile.c).
 */
#ifndef WEFT_RUNTIME_H
#define WEFT_RUNTIME_H
#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* Pieces per chunk of a parallel-for (fewer when a chunk has fewer iterations). */
#define WEFT_RT_PIECES 4

typedef struct weft_threadpool weft_threadpool;
typedef void (*weft_rt_body)(void *closure, int64_t begin, int64_t end);

/* n_threads <= 0 means the cores available to this process (sched_getaffinity). Caller owns
 * the pool: weft_threadpool_destroy (accepts NULL). */
WEFT_API weft_status weft_threadpool_create(int n_threads, weft_threadpool **out);
WEFT_API void weft_threadpool_destroy(weft_threadpool *p);
WEFT_API int weft_threadpool_size(const weft_threadpool *p);
/* Number of cores available to this process. */
WEFT_API int weft_rt_cores(void);

/* Called by generated code. */
WEFT_API void weft_rt_parallel_for(weft_threadpool *p, weft_rt_body body, void *closure, int64_t extent);

/* 64-byte aligned, zeroed allocation of n bytes; large blocks are madvise'd for huge pages.
 * Free with weft_rt_free (accepts NULL). Also used by generated code for large ALLOCATEs. */
WEFT_API void *weft_rt_alloc(size_t n);
/* The same, not zeroed: generated code's large local buffers, which the kernel writes before it
 * reads them (or zeroes itself where a guarded vector loop reads disabled lanes). Zeroing a
 * packed panel on every allocation cost as much memory traffic as packing it (matmul
 * 128x3072x768: 5-40% of the kernel's time). */
WEFT_API void *weft_rt_alloc_uninit(size_t n);
WEFT_API void weft_rt_free(void *p);

/* Monotonic time in seconds. */
WEFT_API double weft_rt_now(void);

#endif
