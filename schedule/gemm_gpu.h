/* The GPU GEMM rule (schedule/gemm_gpu.c): shared-memory K tiles, a block tile and a register
 * tile per thread for matmul-like stages. Used by the default GPU schedule and the tuner's GPU
 * sketch; the tile is the knob set the tuner samples. */
#ifndef WEFT_SCHEDULE_GEMM_GPU_H
#define WEFT_SCHEDULE_GEMM_GPU_H
#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"

/* Register-file estimate limit per thread (CUDA allows 255). */
#define WEFT_GPU_GEMM_MAX_REGS 255
/* The default tile shrinks its register tile while the grid has fewer blocks than this. */
#define WEFT_GPU_GEMM_BLOCKS 128

/* A matmul-like stage: C[b.., u, v] = sum_k f(A[.. u .. k ..], B[.. k .. v ..]). */
typedef struct weft_gpu_gemm_shape {
    const weft_tensor *a, *b; /* the operand indexed by u (rows) and the one indexed by v */
    int64_t batch, m, n, k;   /* product of the batch axes; u, v and k extents */
} weft_gpu_gemm_shape;

/* Threads tm x tn (threadIdx.y, threadIdx.x), register tile rm x rn per thread (block tile
 * tm*rm x tn*rn), K tile kt, auto_unroll bound on the K tile's loops (0: none). */
typedef struct weft_gpu_gemm_tile {
    int64_t tm, tn, rm, rn, kt, unroll;
} weft_gpu_gemm_tile;

/* True (and *g filled) when op is matmul-like (see schedule/gemm_gpu.c). */
bool weft_gpu_gemm_form(const weft_tensor *op, weft_gpu_gemm_shape *g);
/* The default tile for g on caps: 256 threads (fewer when the output is smaller; at least a
 * warp), register tiles up to 8 x 8 while the grid keeps WEFT_GPU_GEMM_BLOCKS blocks, K tile 16. */
void weft_gpu_gemm_default_tile(const weft_gpu_gemm_shape *g, const weft_target_caps *caps, weft_gpu_gemm_tile *t);
/* WEFT_OK when t fits caps (threads a whole number of warps within the limit, shared bytes,
 * the register estimate, grid extents) and g (kt <= K); otherwise an error naming the limit. */
weft_status weft_gpu_gemm_check(const weft_gpu_gemm_shape *g, const weft_gpu_gemm_tile *t, const weft_target_caps *caps);
int64_t weft_gpu_gemm_shared_bytes(const weft_gpu_gemm_tile *t); /* both operand slices, f32 */
int64_t weft_gpu_gemm_registers(const weft_gpu_gemm_tile *t);    /* per-thread estimate */
/* Applies the rule to root stage `name` of s. Refuses (WEFT_ERR_INVALID_ARG) a stage that is
 * not matmul-like or a tile that fails weft_gpu_gemm_check; a failing step leaves the steps
 * before it applied (schedule a copy when a fallback is wanted). */
weft_status weft_gpu_gemm_apply(weft_schedule *s, const char *name, const weft_gpu_gemm_tile *t, const weft_target_caps *caps);
/* Knobs of the default GPU schedule (weft_schedule_knob_space and weft_schedule_default_knobs
 * dispatch here for GPU caps; schedule/default_gpu.c): rule "gpu_gemm", knobs tm tn rm rn kt
 * unroll (the tile above, applied to every matmul-like stage), for kernels with a matmul-like
 * stage (sp->n = 0 otherwise). Powers of two within the extents and caps, the default tile
 * among them; values that fail weft_gpu_gemm_check are refused, s unchanged. */
weft_status weft_schedule_gpu_knob_space(const weft_te_func *f, const weft_target_caps *caps, weft_knob_space *sp);
weft_status weft_schedule_default_gpu_knobs(weft_schedule *s, const weft_target_caps *caps, int n, const int64_t *v);

#endif
