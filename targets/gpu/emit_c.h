/* GPU C source from loop IR, for CUDA and dialects of it (HIP): one `extern "C"` kernel per
 * launch (ir/launch.h), named <function>_k<i>, taking the function's parameters in order
 * (inputs `const`) then the root-allocated temporaries (global workspace buffers the caller
 * allocates). SHARED buffers become `__shared__` arrays, LOCAL ones per-thread arrays
 * (registers after unrolling), bound loops the thread's index with a guard when the loop is
 * shorter than the launch, barriers the dialect's block barrier. Semantics follow the
 * interpreter's (targets/interp/interp.h): FLOORDIV/FLOORMOD/MIN/MAX through small helpers,
 * rsqrt as 1/sqrt, sigmoid as 1/(1+exp(-x)). */
#ifndef WEFT_TARGETS_GPU_EMIT_C_H
#define WEFT_TARGETS_GPU_EMIT_C_H
#include "ir/stmt.h"
#include "ir/launch.h"
#include "weft/weft.h"

typedef struct weft_gpu_dialect {
    const char *name;     /* "cuda", "hip" */
    const char *prelude;  /* included before the helpers (headers, if any) */
    const char *barrier;  /* "__syncthreads();" */
} weft_gpu_dialect;

extern const weft_gpu_dialect weft_gpu_dialect_cuda;
extern const weft_gpu_dialect weft_gpu_dialect_hip;

#define WEFT_GPU_MAX_LAUNCHES 64

typedef struct weft_gpu_source {
    char *text;                    /* malloc'd; the whole translation unit */
    int n_launches;
    weft_gpu_launch launches[WEFT_GPU_MAX_LAUNCHES];
    char names[WEFT_GPU_MAX_LAUNCHES][80]; /* kernel names */
    int n_temps;                   /* root temporaries appended to every kernel's parameters */
    const weft_buffer *temps[32];
} weft_gpu_source;

/* Emits f (already lowered for a GPU target). On error out->text is NULL. */
weft_status weft_gpu_emit(const weft_loop_func *f, const weft_gpu_dialect *d, weft_gpu_source *out);

#endif
