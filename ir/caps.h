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
    int vector_regs;        /* architectural vector registers (16 with AVX2, 32 with AVX-512) */
    bool fma;               /* fused multiply-add */
    long l1d_bytes, l2_bytes, l3_bytes; /* per-core L1 data and L2, shared L3 (0 if unknown) */
    int max_threads;        /* CPU: cores available; GPU: threads per block */
    bool has_thread_binding;/* THREAD_BOUND loops allowed (GPU) */
    bool scopes[WEFT_SCOPE_COUNT]; /* memory scopes cache stages may use */
    char cpu[64];           /* host CPU name ("znver5") or GPU arch */
    char features[1024];    /* ISA features ("+avx512f,+fma,...") */
    long shared_bytes;      /* GPU: shared memory per block (0 on CPUs) */
    int warp_size;          /* GPU: threads that run in lockstep (a CUDA warp: 32; an AMD wavefront:
                             * 64 on GCN/CDNA, 32 on RDNA); blocks are sized in whole warps. 0 on CPUs */
} weft_target_caps;

/* Capabilities of a plain CPU with the given vector width and thread count (for tests/tools). */
static inline weft_target_caps weft_caps_cpu(int vector_bits, int threads)
{
    weft_target_caps c = {0};
    c.name = "cpu";
    c.vector_bits = vector_bits;
    c.vector_lanes_f32 = vector_bits / 32;
    c.vector_regs = vector_bits >= 512 ? 32 : 16;
    c.fma = vector_bits >= 256;
    c.l1d_bytes = 32 * 1024;
    c.l2_bytes = 1024 * 1024;
    c.l3_bytes = 32 * 1024 * 1024;
    c.max_threads = threads;
    c.scopes[WEFT_SCOPE_GLOBAL] = c.scopes[WEFT_SCOPE_LOCAL] = true;
    return c;
}

/* Capabilities of a CUDA-class GPU (compile-only targets and tests): 1024 threads per block,
 * 48 KiB static shared memory per block, warps of 32, thread binding, all three scopes. */
static inline weft_target_caps weft_caps_gpu(const char *name)
{
    weft_target_caps c = {0};
    c.name = name;
    c.max_threads = 1024;
    c.has_thread_binding = true;
    c.shared_bytes = 48 * 1024;
    c.warp_size = 32;
    c.scopes[WEFT_SCOPE_GLOBAL] = c.scopes[WEFT_SCOPE_SHARED] = c.scopes[WEFT_SCOPE_LOCAL] = true;
    return c;
}

#endif
