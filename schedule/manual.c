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
 * mr x nr comes from the register file (register_tile below: 8 x 48 with AVX-512's 32
 * registers, 6 x 16 with AVX2's 16), nc from the L2 size. Factors divide the shape where one
 * does; where none does, lowering runs the full tiles unguarded and the last one masked. */
#include <string.h>

#include "ir/pattern.h"
#include "schedule/sched_util.h"

/* The register tile: the most accumulators (rows x vecs vectors, vecs 2 or 3, at most 8 rows,
 * rows dividing M where a divisor is near) that fit the vector registers beside one row of B
 * (vecs vectors) and a broadcast of A, rows from weft_sched_fit_rows (a partial last row tile
 * when no divisor of M is near the register budget); on a tie the narrower tile (more rows:
 * less of B streamed from L2 per FMA). Wider than WEFT_SCHED_TILE_VECS vectors only where such tiles
 * divide N (no masked remainder) and two of their K-deep panels fit half of L2. Measured with
 * AVX-512: 128x3072x768 in 8x48 tiles (panels of 192 columns) ~10% faster than 8x32;
 * 128x768x3072 in 8x48 tiles ~5% slower than 8x32, its panels then one tile wide. */
static void register_tile(const weft_target_caps *caps, int64_t M, int64_t N, int64_t K, int64_t lanes, int64_t *mr,
                          int64_t *nr)
{
    int regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    int64_t vecs = WEFT_SCHED_TILE_VECS, rows = weft_sched_fit_rows(M, weft_sched_tile_rows(caps));
    for (int64_t v = WEFT_SCHED_TILE_VECS + 1; v <= 3; v++) {
        int64_t r = (regs - v - 1) / v;
        r = weft_sched_fit_rows(M, r > 8 ? 8 : r);
        if (r >= 1 && r * v > rows * vecs && N % (v * lanes) == 0 && 2 * K * 4 * v * lanes <= l2 / 2) {
            vecs = v;
            rows = r;
        }
    }
    *nr = weft_sched_fit_tile(N, vecs * lanes, lanes);
    *mr = rows;
}

void weft_sched_matmul_blocks(const weft_target_caps *caps, int64_t M, int64_t N, int64_t K, int64_t lanes, int64_t *mr,
                              int64_t *nr, int64_t *ncp)
{
    register_tile(caps, M, N, K, lanes, mr, nr);
    /* Panel width: a multiple of nr whose K x nc panel of B fills at most half of L2 (at most
     * 8 register tiles wide), dividing N when one does. */
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    int64_t m_max = (int64_t)(l2 / 2) / (K * 4 * *nr);
    m_max = m_max < 1 ? 1 : m_max > 8 ? 8 : m_max;
    int64_t nc = *nr;
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    int64_t n_tiles = (N + *nr - 1) / *nr;
    for (int64_t m = 2; m <= m_max; m++) {
        int64_t panels = (N + *nr * m - 1) / (*nr * m); /* parallel: every thread gets its share */
        /* m divides the tile count: the last panel has no empty register tiles (each would be
         * computed fully masked) */
        if (n_tiles % m == 0 && (panels % threads == 0 || panels >= 4 * threads)) nc = *nr * m;
    }
    if (nc > N) nc = *nr;
    if (N % nc) { /* as many panels, evened out: the last one is not mostly empty */
        int64_t tiles = (N + *nr - 1) / *nr, panels = (N + nc - 1) / nc;
        nc = *nr * ((tiles + panels - 1) / panels);
    }
    *ncp = nc;
}

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
    int64_t K = s->stages[r].op->reduce_axis[0].extent, mr, nr, nc;
    weft_sched_matmul_blocks(caps, M, N, K, lanes, &mr, &nr, &nc);
    const char *i0 = s->stages[t].iters[0].name, *j0 = s->stages[t].iters[1].name;
    char i[WEFT_SCHED_NAME], j[WEFT_SCHED_NAME];
    snprintf(i, sizeof i, "%s", i0);
    snprintf(j, sizeof j, "%s", j0);
    rc = weft_sched_stepf(s, "split %s %s %lld %lld", tname, j, (long long)(nc / nr), (long long)nr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", tname, i, (long long)mr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "reorder %s %s.0 %s.0 %s.1 %s.1 %s.2", tname, j, i, j, i, j);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s.1", rname, tname, j);
    const int64_t tiles[2] = {mr, nr};
    /* one native vector per operation: the last tile's empty vectors are skipped */
    if (rc == WEFT_OK) rc = weft_sched_register_tile(s, weft_sched_find_stage(s, rname), 0, 1, nr > lanes ? 0 : 128, tiles);
    if (rc == WEFT_OK && nr > lanes) {
        char rj[WEFT_SCHED_NAME];
        snprintf(rj, sizeof rj, "%s", s->stages[weft_sched_find_stage(s, rname)].iters[1].name);
        rc = weft_sched_stepf(s, "split %s %s %lld", rname, rj, (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s.0", rname, rj);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", rname, rj);
    }
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
    if (rc == WEFT_OK && nr > lanes) {
        rc = weft_sched_stepf(s, "split %s %s.2 %lld", tname, j, (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.2.1", tname, j);
    } else if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.2", tname, j);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "parallel %s %s.0", tname, j);
    return rc;
}
