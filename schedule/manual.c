/* A hand-written expert schedule for matmul-like kernels (a 2-d output with one reduction
 * axis reading A[i, k] and B[k, j]: weft_op_matmul, weft_op_dense_bias_relu), in the style of
 * BLIS/oneDNN kernels:
 *
 *   for j.0 (parallel)              N / nc column panels
 *     pack B[:, panel] -> B.local     K x nc, contiguous (cache_read), once per panel
 *     for i.0                       M / mr row blocks
 *       for j.1                     nc / nr register tiles
 *         C.local[mr x nr] = 0      accumulators in vector registers
 *         for k: for i (unrolled): for j (vectorized): C.local += A[i, k] * B.local[k, j]
 *         C[tile] = epilogue(C.local)  (bias + relu when the kernel has one)
 *
 * mr x nr = 8 x 32 fills 16 of AVX-512's 32 registers with accumulators; factors are chosen
 * to divide the shape so no guard reaches the inner loops. */
#include <string.h>

#include "ir/pattern.h"
#include "schedule/sched_util.h"

weft_status weft_schedule_manual_matmul(weft_schedule *s, const weft_target_caps *caps)
{
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    weft_status rc = WEFT_OK;
    int r = -1, t = -1;
    for (int i = 0; i < s->n_stages; i++)
        if (s->stages[i].op->n_reduce == 1 && s->stages[i].op->ndim == 2) r = i;
    if (r < 0) return weft_sched_stepf(s, "compute_root %s", "(no matmul-like stage)");
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (!s->stages[i].is_output && i != r && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE))
            rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    }
    if (rc != WEFT_OK) return rc;
    char rname[WEFT_SCHED_NAME], tname[WEFT_SCHED_NAME];
    if (s->stages[r].is_output) {
        snprintf(tname, sizeof tname, "%s", s->stages[r].name);
        rc = weft_sched_stepf(s, "cache_write %s local", tname);
        if (rc != WEFT_OK) return rc;
        t = weft_sched_find_stage(s, tname);
        r = t - 1;
    } else {
        for (int i = 0; i < s->n_stages; i++)
            if (s->stages[i].is_output) t = i;
        snprintf(tname, sizeof tname, "%s", s->stages[t].name);
    }
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    const weft_tensor *out = s->stages[t].op;
    int64_t M = out->shape[0], N = out->shape[1];
    const int64_t nr_c[] = {2 * lanes, 3 * lanes, 4 * lanes, lanes, 40, 24, 8, 4, 2};
    const int64_t mr_c[] = {8, 6, 4, 7, 5, 3, 2};
    int64_t nr = weft_sched_pick_tile(N, 1, nr_c, 9);
    int64_t mr = weft_sched_pick_tile(M, 1, mr_c, 7);
    /* Panel width: the largest multiple of nr dividing N with nc <= 128 (B panel <= 512 KiB
     * for K = 1024 stays in L2). */
    int64_t nc = nr;
    for (int64_t m = 2; nr * m <= 256; m++)
        if (N % (nr * m) == 0 && nr * m <= 128) nc = nr * m;
    const char *i0 = s->stages[t].iters[0].name, *j0 = s->stages[t].iters[1].name;
    char i[WEFT_SCHED_NAME], j[WEFT_SCHED_NAME];
    snprintf(i, sizeof i, "%s", i0);
    snprintf(j, sizeof j, "%s", j0);
    rc = weft_sched_stepf(s, "split %s %s %lld %lld", tname, j, (long long)(nc / nr), (long long)nr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", tname, i, (long long)mr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "reorder %s %s.0 %s.0 %s.1 %s.1 %s.2", tname, j, i, j, i, j);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s.1", rname, tname, j);
    const int64_t tiles[2] = {mr, nr};
    if (rc == WEFT_OK) rc = weft_sched_register_tile(s, weft_sched_find_stage(s, rname), 0, 1, 128, tiles);
    const weft_tensor *b = weft_sched_reused_input(s->func, s->stages[weft_sched_find_stage(s, rname)].op, 1);
    if (rc == WEFT_OK && b && M > mr) {
        rc = weft_sched_stepf(s, "cache_read %s local %s", b->name, rname);
        char bl[WEFT_SCHED_NAME];
        snprintf(bl, sizeof bl, "%s.local", b->name);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s.0", bl, tname, j);
        int bi = weft_sched_find_stage(s, bl);
        if (rc == WEFT_OK && bi >= 0 && nc % lanes == 0) {
            char ax[WEFT_SCHED_NAME];
            snprintf(ax, sizeof ax, "%s", s->stages[bi].iters[1].name);
            rc = weft_sched_stepf(s, "split %s %s %lld", bl, ax, (long long)lanes);
            if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", bl, ax);
        }
    }
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.2", tname, j);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "parallel %s %s.0", tname, j);
    return rc;
}
