/* GPU launches of a lowered function (ir/launch.c): each top-level statement of the body (under
 * the root ALLOCATEs) is one kernel launch; its grid is the extents of its block-bound loops
 * and its block the largest extent of its thread-bound loops, per axis. */
#ifndef WEFT_IR_LAUNCH_H
#define WEFT_IR_LAUNCH_H
#include "ir/caps.h"
#include "ir/stmt.h"

typedef struct weft_gpu_launch {
    const weft_stmt *body; /* the launched statement */
    int64_t grid[3], block[3];
    int64_t shared_bytes;  /* SHARED allocations in it */
} weft_gpu_launch;

/* The launches of f, in order, into out[0..max-1]; returns their number (may exceed max) or
 * -1 when a loop extent is not a constant. `allocs` receives the root ALLOCATE'd (global
 * temporary) buffers, at most max_allocs; *n_allocs their number. */
int weft_gpu_launches(const weft_loop_func *f, weft_gpu_launch *out, int max, const weft_buffer **allocs,
                      int max_allocs, int *n_allocs);

#endif
