/* What a target supports, readable by every layer: lowering, default schedules and the tuner
 * decide vector widths, thread counts and memory scopes from it. Filled by a target's caps(). */
#ifndef WEFT_IR_CAPS_H
#define WEFT_IR_CAPS_H
#include <stdbool.h>

#include "ir/stmt.h"

typedef struct weft_target_caps {
    const char *name;       /* "llvm", "interp", later "cuda", "hip" */
    int vector_bits;        /* widest native vector register (512 with AVX-512), 0 if none */
    int vector_lanes_f32;   /* vector_bits / 32 */
    int max_threads;        /* CPU: cores available; GPU: threads per block */
    bool has_thread_binding;/* THREAD_BOUND loops allowed (GPU) */
    bool scopes[WEFT_SCOPE_COUNT]; /* memory scopes cache stages may use */
    char cpu[64];           /* host CPU name ("znver5") or GPU arch */
    char features[1024];    /* ISA features ("+avx512f,+fma,...") */
} weft_target_caps;

/* Capabilities of a plain CPU with the given vector width and thread count (for tests/tools). */
static inline weft_target_caps weft_caps_cpu(int vector_bits, int threads)
{
    weft_target_caps c = {0};
    c.name = "cpu";
    c.vector_bits = vector_bits;
    c.vector_lanes_f32 = vector_bits / 32;
    c.max_threads = threads;
    c.scopes[WEFT_SCOPE_GLOBAL] = c.scopes[WEFT_SCOPE_LOCAL] = true;
    return c;
}

#endif
