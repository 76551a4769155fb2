/* Default schedule of a convolution in filter blocks (the kernel of a Conv whose weights the
 * model's layout pass laid out [F/fb, C, KH, KW, fb], ops/nn_conv.c), with its fused epilogue.
 *
 * Pattern (by structure, whatever the op's name): the kernel has one output, 4-D [N, F, OH,
 * OW]; one root reduction R with reuse is 5-D [N, F/fb, OH, OW, fb] (fb = the vector width)
 * and the output reads it through inlined stages (bias, ReLU, Clip, SiLU, a residual add).
 * A reduction's taps that only ever read padding were already dropped by ops/nn_conv.c.
 *
 * Schedule (steps, so it prints and replays like any other):
 *   - stages between R and the output are inlined; the zero-padding stage, if any, is computed
 *     once at root, in parallel over its rows (the reduction then reads plain strided indices,
 *     not a clamped select per tap);
 *   - the output is tiled [tf filter blocks x fb filters] x [ty rows x tx columns]; all tile
 *     loops are fused into one parallel loop (filter blocks outermost, so consecutive chunks
 *     reuse one block of weights from L2); the write-back reads the accumulators a filter
 *     vector at a time;
 *   - R is computed per tile: reduction loops (rc, ry, rx: the weights stream contiguously)
 *     around the register tile, whose filter and spatial loops are unrolled and whose fb loop
 *     is vectorized: tf*ty*tx accumulator vectors, tf weight vectors per tap and one broadcast
 *     of an input element, which must fit the vector register file (caps->vector_regs).
 * The tile maximizes accumulators (times the useful fraction of imperfect tiles) up to a cap
 * (choose_tile); tf divides F/fb.
 */
#include <stdio.h>
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/sched_util.h"
#include "schedule/gemm_gpu.h"

typedef struct conv_tile {
    int64_t tf, tn, ty, tx;
} conv_tile;

/* The step "fuse Y o0 o1 ..." of the outer loops into line, and the fused loop's name
 * ("o0@o1@...", cut at nfused - 1: callers compare its length with WEFT_SCHED_NAME) into fused. */
static void fuse_text(const char *yname, const char (*outer)[WEFT_SCHED_NAME + 4], int n_outer, char *line, size_t nline,
                      char *fused, size_t nfused)
{
    int len = snprintf(line, nline, "fuse %s", yname);
    fused[0] = '\0';
    for (int i = 0; i < n_outer; i++) {
        if (len >= 0 && (size_t)len < nline) len += snprintf(line + len, nline - (size_t)len, " %s", outer[i]);
        strncat(fused, i ? "@" : "", nfused - strlen(fused) - 1);
        strncat(fused, outer[i], nfused - strlen(fused) - 1);
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t vector_regs(const weft_target_caps *caps);

/* compute_inline every stage of s but r, y and p (p < 0: none). */
static weft_status inline_others(weft_schedule *s, int r, int y, int p)
{
    weft_status rc = WEFT_OK;
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++)
        if (i != r && i != y && i != p) rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    return rc;
}

/* Whether a register tile of acc accumulators, inputs loaded vectors and one broadcast fits the
 * vector register file. */
static bool tile_fits(int64_t acc, int64_t inputs, const weft_target_caps *caps)
{
    return acc + inputs + 1 <= vector_regs(caps);
}

/* The register tile for R [N, FO, OH, OW, fb]: at most 2 x weft_sched_tile_rows accumulators
 * (16 with AVX-512, 12 with AVX2), like the matmul tile; ties go to more filter vectors (fewer
 * broadcasts per FMA). Measured with AVX-512 (3x3 convs with 64 channels at 56x56 and 512 at
 * 7x7): 2 filter vectors x 7-8 columns ran 10-20% faster than 1 x 8, and 28 accumulators
 * 1.5-2x slower (spills). */
static conv_tile choose_tile(const int64_t *shape, int64_t taps_x, const weft_target_caps *caps)
{
    int64_t N = shape[0], FO = shape[1], OH = shape[2], OW = shape[3];
    int64_t max_acc = WEFT_SCHED_TILE_VECS * weft_sched_tile_rows(caps);
    conv_tile best = {1, 1, 1, 1};
    double best_score = -1;
    for (int64_t tf = 1; tf <= WEFT_SCHED_TILE_VECS && tf <= FO; tf++) {
        if (FO % tf) continue;
        int64_t rows = max_acc / tf;
        /* Taps along x (a reduction loop rx of 2 or more): LLVM unrolls rx and shares the
         * broadcasts of neighbouring taps, which keeps a broadcast per spatial position live
         * beside the tf weight vectors (schedule_blocked's fo-outside order): with two or more
         * filter vectors the tile then fits tf * rows + rows + 1 registers. AVX2's 2 x 6 tile
         * with 2x2 taps spilled its accumulators every step: the DCGAN generator's sub-pixel
         * convs (128 -> 4 x 64 at 9x9 to 17x17, Zen 3, 1 thread) 0.48-0.51 -> 0.25-0.27 ms
         * with 2 x 5. One filter vector keeps its columns (a 9x9 16 -> 3 conv at 64x64: 1.8 ms
         * with 4 columns, 1.5 with 8). */
        int64_t tap_rows = (vector_regs(caps) - 1) / (tf + 1);
        if (taps_x > 1 && tf > 1 && rows > tap_rows) rows = tap_rows;
        /* rows from columns, then whole rows, then whole images (tiny images, batches) */
        int64_t tx = weft_sched_fit_tile(OW, rows, 1);
        /* rows: the nearest divisor, or first (single columns: a pointwise conv's fused
         * pixels, schedule_blocked) as many as fit in tiles evened out, the last one partial:
         * 196 pixels in 33 tiles of 6 rather than 49 of 4, 49 in 4 of 13 rather than 16 */
        for (int c = OW == 1 ? 1 : 0; c >= 0; c--) {
            int64_t ty = 1, tn = 1;
            if (tx == OW && rows / tx >= 2)
                ty = c ? ceil_div(OH, ceil_div(OH, rows / tx)) : weft_sched_fit_tile(OH, rows / tx, 1);
            if (tx == OW && ty == OH && rows / (tx * ty) >= 2) tn = weft_sched_fit_tile(N, rows / (tx * ty), 1);
            double eff = (double)OW / (double)(ceil_div(OW, tx) * tx) * (double)OH / (double)(ceil_div(OH, ty) * ty) *
                         (double)N / (double)(ceil_div(N, tn) * tn);
            double score = (double)(tf * tn * tx * ty) * eff;
            if (score > best_score + 1e-9 || (score > best_score - 1e-9 && tf > best.tf)) {
                best_score = score;
                best = (conv_tile){tf, tn, ty, tx};
            }
        }
    }
    return best;
}


/* Whether the blocked reduction R runs over Y's pixels fused (a pointwise conv: R [N, F/fb,
 * OH*OW, 1, fb], ops/nn_conv.c). */
static bool blocked_flat(const weft_tensor *R, const weft_tensor *Y)
{
    return R->shape[3] == 1 && Y->shape[3] > 1 && R->shape[2] == Y->shape[2] * Y->shape[3];
}

/* The blocked reduction of the kernel's one 4-D output, or -1 when the kernel does not have
 * this pattern. */
static int blocked_reduction(const weft_schedule *s, int *out)
{
    int y = -1, r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->is_output) {
            if (y >= 0) return -1;
            y = i;
        } else if (st->op->n_reduce) {
            if (r >= 0 || weft_tensor_pattern(st->op) != WEFT_PATTERN_OUT_REDUCTION_REUSE) return -1;
            r = i;
        }
    }
    if (y < 0 || r < 0 || s->stages[y].op->n_reduce) return -1;
    const weft_tensor *R = s->stages[r].op, *Y = s->stages[y].op;
    if (R->ndim != 5 || Y->ndim != 4 || R->shape[0] != Y->shape[0] || R->shape[4] < 2 ||
        !(blocked_flat(R, Y) || (R->shape[2] == Y->shape[2] && R->shape[3] == Y->shape[3])) ||
        R->shape[1] * R->shape[4] < Y->shape[1] ||
        (R->shape[1] - 1) * R->shape[4] >= Y->shape[1] || !weft_sched_reads_through(s, y, r))
        return -1;
    /* Every other stage is elementwise or injective (padding, bias, epilogue). */
    for (int i = 0; i < s->n_stages; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (i != r && i != y && p != WEFT_PATTERN_ELEMWISE && p != WEFT_PATTERN_INJECTIVE) return -1;
    }
    *out = y;
    return r;
}

/* The compute stage R reads (the zero padding), or -1. */
static int pad_stage_of(const weft_schedule *s, int r)
{
    for (int i = 0; i < r; i++) {
        const weft_stage *st = &s->stages[i];
        if (!st->is_output && !st->op->n_reduce && st->op->ndim >= 4 && weft_sched_reads(s, r, i) &&
            weft_tensor_pattern(st->op) == WEFT_PATTERN_INJECTIVE)
            return i;
    }
    return -1;
}

/* The padding stage: at root parallel over (n, c, h), or where compute_at puts it; columns
 * (the last axis) in vectors (a clamped index: gathers). */
static weft_status schedule_pad(weft_schedule *s, const char *pname, const weft_target_caps *caps, bool root)
{
    int p = weft_sched_find_stage(s, pname);
    if (p < 0) return WEFT_ERR_INTERNAL;
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    const weft_stage *ps = &s->stages[p];
    int last = ps->op->ndim - 1; /* the columns (4-D, or 5-D split by phase) */
    char a[5][WEFT_SCHED_NAME];
    for (int d = 0; d <= last && d < 5; d++) snprintf(a[d], sizeof a[d], "%s", ps->iters[d].name);
    weft_status rc = WEFT_OK;
    /* Parallel over planes (n, c) when there are enough of them, so that the row index stays a
     * plain loop variable (a fused n@c@h index costs a division and a modulo per row: about
     * 20 instructions per row of 6); over (n, c, h) otherwise. */
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    bool planes = ps->op->shape[0] * ps->op->shape[1] >= 8 * threads;
    const char *rows = planes ? "" : a[2], *at = planes ? "" : "@";
    if (root) rc = weft_sched_stepf(s, "fuse %s %s %s %s", pname, a[0], a[1], rows);
    if (root && rc == WEFT_OK) rc = weft_sched_stepf(s, "parallel %s %s@%s%s%s", pname, a[0], a[1], at, rows);
    if (rc == WEFT_OK && ps->op->shape[last] > lanes) {
        rc = weft_sched_stepf(s, "split %s %s %lld", pname, a[last], (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", pname, a[last]);
    } else if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", pname, a[last]);
    return rc;
}

/* A window reduction that mixes no channels (pooling, depthwise conv): one 4-D output; one
 * 4-D reduction R of the output's shape over exactly two axes (the window), which is the output
 * or is read by it through elementwise/injective stages; -1 otherwise. */
static int window_reduction(const weft_schedule *s, int *out)
{
    int y = -1, r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->op->n_reduce) {
            if (r >= 0) return -1;
            r = i;
        }
        if (st->is_output) {
            if (y >= 0) return -1;
            y = i;
        }
    }
    if (y < 0 || r < 0) return -1;
    const weft_tensor *R = s->stages[r].op, *Y = s->stages[y].op;
    if (R->ndim != 4 || Y->ndim != 4 || R->n_reduce != 2 || (r != y && !weft_sched_reads_through(s, y, r))) return -1;
    for (int d = 0; d < 4; d++)
        if (R->shape[d] != Y->shape[d]) return -1;
    for (int i = 0; i < s->n_stages; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (i != r && p != WEFT_PATTERN_ELEMWISE && p != WEFT_PATTERN_INJECTIVE) return -1;
    }
    *out = y;
    return r;
}

/* The lanes of a row of a plane narrower than a vector in the window rule: the power of two
 * at least ow, at most 8 (an odd width such as <7 x float> becomes 4 + 2 + 1-lane accesses). */
static int64_t narrow_row_lanes(int64_t ow)
{
    int64_t t = 1;
    while (t < ow && t < 8) t *= 2;
    return t;
}

/* schedule_window's tile of a whole plane narrower than a vector: the output parallel over
 * (n, c), its plane one flat axis in vectors; R (rows unrolled, columns vectorized) and the
 * padding computed per channel. */
static weft_status schedule_window_plane(weft_schedule *s, const char *rname, const char *yname, const char *pname,
                                         int64_t lanes)
{
    int y = weft_sched_find_stage(s, yname);
    char ax[4][WEFT_SCHED_NAME], fused[WEFT_SCHED_NAME * 2], plane[WEFT_SCHED_NAME * 2];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    snprintf(fused, sizeof fused, "%.60s@%.60s", ax[0], ax[1]);
    snprintf(plane, sizeof plane, "%.60s@%.60s", ax[2], ax[3]);
    if (strlen(fused) >= WEFT_SCHED_NAME || strlen(plane) >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    weft_status rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[0], ax[1]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "parallel %s %s", yname, fused);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[2], ax[3]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", yname, plane, (long long)lanes);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", yname, plane);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, fused);
    if (rc == WEFT_OK && pname[0]) rc = weft_sched_stepf(s, "compute_at %s %s %s", pname, yname, fused);
    if (rc != WEFT_OK) return rc;
    const weft_stage *rs = &s->stages[weft_sched_find_stage(s, rname)];
    char it[6][WEFT_SCHED_NAME];
    for (int d = 0; d < 6; d++) snprintf(it[d], sizeof it[d], "%s", rs->iters[d].name);
    rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s", rname, it[4], it[5], it[0], it[1], it[2], it[3]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s", rname, it[2]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", rname, it[3]);
    return rc;
}

/* Pooling and depthwise convs: the padding per channel (in vectors, into a buffer that stays
 * in L1/L2; per row tile it was recomputed KH/ty times: 1.7-3x slower); the output parallel
 * over (n, c), row and column tiles inside, columns in vectors; the window reduced per tile
 * into a local accumulator of ty rows x one or two vectors (window loops outside, rows
 * unrolled, columns vectorized). */
/* tile_x/tile_y > 0 override the column/row tile (knobs); 0 chooses them. */
static weft_status schedule_window(weft_schedule *s, int r, int y, const weft_target_caps *caps, int64_t tile_x,
                                   int64_t tile_y)
{
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    int p = pad_stage_of(s, r);
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME], pname[WEFT_SCHED_NAME] = "";
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    if (p >= 0) snprintf(pname, sizeof pname, "%s", s->stages[p].name);
    weft_status rc = inline_others(s, r, y, p);
    if (rc == WEFT_OK && p >= 0) rc = schedule_pad(s, pname, caps, false);
    if (rc != WEFT_OK) return rc;
    if (r == y) { /* the reduction is the output: accumulate in a local copy */
        if ((rc = weft_sched_stepf(s, "cache_write %s local", yname)) != WEFT_OK) return rc;
        y = weft_sched_find_stage(s, yname);
        snprintf(rname, sizeof rname, "%s", s->stages[y - 1].name);
    }
    const weft_tensor *Y = s->stages[y].op;
    int64_t OH = Y->shape[2], OW = Y->shape[3];
    /* Divisors of the columns: a partial tile here (guards in the window loops, the padding's
     * tile shifting) measured up to 10x slower. The fewest vectors per output row, up to two
     * vectors per tile (three ran 3x slower with AVX2); a partial tile only when no divisor
     * fills half a vector (17 columns with AVX2: a one-column tile ran 30x slower). Ties go to
     * the wider tile when it is whole vectors, else to the narrower: 28 columns with 16 lanes
     * are two tiles of 14, not one of 28 (a <28 x float> accumulator that LLVM splits and
     * shuffles through the stack unless the window loops unroll completely). Zen 4, 1 thread, depthwise, 28 -> 2 x 14 columns:
     * 7x7 on 28x28 0.50 -> 0.29 ms, 7x7 on 56x56 1.04 -> 0.57, 3x3 on 56x56 0.22 -> 0.18,
     * 31x31 on 28x28 8.2 -> 3.4; 5x5 on 28x28 0.155 -> 0.19 (its 50 window steps unroll). */
    int64_t tx = 1, best = -1;
    for (int64_t t = 1; t <= 2 * lanes && t <= OW; t++)
        if (OW % t == 0 && (best < 0 || (OW / t) * ceil_div(t, lanes) < best ||
                            ((OW / t) * ceil_div(t, lanes) == best && t % lanes == 0))) {
            best = (OW / t) * ceil_div(t, lanes);
            tx = t;
        }
    if (2 * tx < lanes && tx < OW) tx = lanes;
    int64_t ty = 1;
    for (int64_t t = 1; t <= weft_sched_tile_rows(caps) / ceil_div(tx, lanes) / 2 && t <= OH; t++)
        if (OH % t == 0) ty = t;
    if (OW < lanes && OW > 1) {
        /* Planes narrower than a vector (7x7 and 14x14 with AVX-512): rows in vectors of at most
         * 8 lanes, a power of two (an odd width such as <7 x float> becomes 4 + 2 + 1-lane
         * accesses; the lanes past the row are masked), and rows in balanced tiles of up to
         * weft_sched_tile_rows (the last may be shorter: a guarded row). Measured on Zen 4
         * (AVX-512, 1 thread), depthwise + SiLU, tx x ty before -> after: 1152 channels of 7x7,
         * 5x5 taps, 7 x 1 308 us -> 8 x 7 155; 672 of 14x14, 5x5, 14 x 2 255-302 -> 8 x 7 222;
         * 480 of 14x14, 3x3, 14 x 2 104 -> 8 x 7 105 (16-lane tiles: 141-184). */
        tx = narrow_row_lanes(OW);
        int64_t cap = weft_sched_tile_rows(caps), n = ceil_div(OH, cap);
        ty = ceil_div(OH, n);
        /* The whole plane in one tile when its rows fit the registers as accumulators (one
         * vector each, a broadcast and an input vector beside them): R's rows stay OW-lane
         * vectors (codegen reads the padded rows as the next power of two) and the output's
         * epilogue (SiLU, bias) runs over the flat plane in full vectors, 49 elements in 4
         * vectors of 16 instead of 7 of 8. Zen 4, 1 thread, depthwise + SiLU, 8-lane tiles ->
         * one tile (three calls each): 1152 channels of 7x7, 3x3, 0.078-0.085 -> 0.059-0.068
         * ms; 480 of 14x14, 3x3, 0.132-0.136 -> 0.099-0.102; 672 of 14x14, 5x5, 0.28-0.34 ->
         * 0.21-0.26. Rows unrolled in the epilogue instead of the flat plane: 1.0-1.3x slower.
         * Not with a column stride: a 7-lane stride-2 row read as its 14 lanes ran 1.25x
         * slower than the 8-lane tile's. */
        const weft_tensor *R = s->stages[weft_sched_find_stage(s, rname)].op;
        int ps = pname[0] ? weft_sched_find_stage(s, pname) : -1;
        bool unit = ps >= 0 && s->stages[ps].op->ndim == 4 && s->stages[ps].op->shape[3] == OW + R->reduce_axis[1].extent - 1;
        if (unit && tile_fits(OH, 1, caps)) {
            tx = OW;
            ty = OH;
        }
    }
    if (OW >= 2 * lanes && vector_regs(caps) <= 16) {
        /* Wide planes with 16 registers (AVX2): two vectors of columns (a masked tail when
         * they do not divide the row) by up to 4 rows, 8 accumulators: two 256-bit FMA pipes of
         * 4 cycles' latency need 8 independent sums, and the divisor rule above left 2 (8
         * columns x 2 rows at 56 or 112 columns). Zen 4, --cpu znver3, 1 thread, depthwise + SiLU
         * (two calls each, before -> after): 32 channels at 112x112 0.424 -> 0.380 ms, 144 at
         * 56x56 0.513 -> 0.459, stride 2: 96 at 112 0.53-0.76 -> 0.47-0.64, 5x5 144 at 56 0.387
         * -> 0.339. The same shape of tile with AVX-512 (32 x 4) was 0.87-2.2x: not taken. */
        tx = 2 * lanes;
        ty = 1;
        for (int64_t t = 1; t <= 4 && t <= OH; t++)
            if (OH % t == 0) ty = t;
    }
    if (tile_x > 0) tx = tile_x;
    if (tile_y > 0) ty = tile_y;
    if (tx == OW && ty == OH && OW < lanes && OH * OW > lanes) return schedule_window_plane(s, rname, yname, pname, lanes);
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    char yo[WEFT_SCHED_NAME + 4], yi[WEFT_SCHED_NAME + 4], xo[WEFT_SCHED_NAME + 4], xi[WEFT_SCHED_NAME + 4];
    snprintf(yo, sizeof yo, "%s", ax[2]), yi[0] = '\0';
    snprintf(xo, sizeof xo, "%s", ax[3]), xi[0] = '\0';
    if (ty > 1 && ty < OH) {
        rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[2], (long long)ty);
        snprintf(yo, sizeof yo, "%s.0", ax[2]), snprintf(yi, sizeof yi, "%s.1", ax[2]);
    } else if (ty > 1) snprintf(yi, sizeof yi, "%s", ax[2]), yo[0] = '\0';
    if (rc == WEFT_OK && tx != OW) {
        rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[3], (long long)tx);
        snprintf(xo, sizeof xo, "%s.0", ax[3]), snprintf(xi, sizeof xi, "%s.1", ax[3]);
    } else snprintf(xi, sizeof xi, "%s", ax[3]), xo[0] = '\0';
    if (rc != WEFT_OK) return rc;
    /* n c [y.0] [x.0] | [y.1] x.1: (n, c) fused and parallel, the padded plane of a channel
     * computed there (once per channel, not once per row tile), R at the innermost outer loop */
    char outer[4][WEFT_SCHED_NAME + 4], line[1024], fused[WEFT_SCHED_NAME * 2] = "";
    int n_outer = 0;
    snprintf(outer[n_outer++], sizeof outer[0], "%s", ax[0]);
    snprintf(outer[n_outer++], sizeof outer[0], "%s", ax[1]);
    if (yo[0]) snprintf(outer[n_outer++], sizeof outer[0], "%s", yo);
    if (xo[0]) snprintf(outer[n_outer++], sizeof outer[0], "%s", xo);
    int len = snprintf(line, sizeof line, "reorder %s", yname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    snprintf(line + len, sizeof line - (size_t)len, "%s%s %s", yi[0] ? " " : "", yi, xi);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    snprintf(fused, sizeof fused, "%.60s@%.60s", outer[0], outer[1]);
    if (strlen(fused) >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    if ((rc = weft_sched_stepf(s, "fuse %s %s %s", yname, outer[0], outer[1])) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "parallel %s %s", yname, fused)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "vectorize %s %s", yname, xi)) != WEFT_OK) return rc;
    const char *at = n_outer > 2 ? outer[n_outer - 1] : fused;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, at)) != WEFT_OK) return rc;
    if (pname[0] && (rc = weft_sched_stepf(s, "compute_at %s %s %s", pname, yname, fused)) != WEFT_OK) return rc;
    r = weft_sched_find_stage(s, rname);
    const weft_stage *rs = &s->stages[r];
    char it[6][WEFT_SCHED_NAME];
    for (int d = 0; d < 6; d++) snprintf(it[d], sizeof it[d], "%s", rs->iters[d].name);
    rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s", rname, it[4], it[5], it[0], it[1], it[2], it[3]);
    if (rc == WEFT_OK && ty > 1) rc = weft_sched_stepf(s, "unroll %s %s", rname, it[2]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", rname, it[3]);
    return rc;
}

/* A global pool: the one reduction R is 2-D [N, C] over the spatial dims of a 4-D or 5-D
 * input, as one reduction axis p (GlobalAveragePool, GlobalMaxPool: ops/nn_conv.c reads
 * X[n, c, p / W, p % W] in 2-D, which lowering recombines to one contiguous run per plane). Planes of at least a
 * vector get per-channel vector partial sums along the plane (rfactor), then one horizontal
 * sum: measured with AVX-512 on 96 channels of 56x56, 2.6x faster than channel vectors; on Zen
 * 4 (1 thread), planes whose rows are shorter than a vector, which read channel vectors
 * through gathers before the plane was one axis: 1280 channels of 10x10 65 -> 23 us, and
 * efficientnet_b0's squeeze-excite pools over 14x14 and 7x7 about 4x faster. Smaller planes:
 * R parallel over (n, channel vectors) with the plane loop outside a vector of channels
 * (gathers across channel planes, independent lanes; a scalar sum of one channel is a chain of
 * dependent adds). Other stages (N x C elements) keep their naive schedule. */
static bool global_pool(weft_schedule *s, const weft_target_caps *caps, weft_status *rc)
{
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    int r = -1;
    for (int i = 0; i < s->n_stages; i++)
        if (s->stages[i].op->n_reduce) {
            if (r >= 0) return false;
            r = i;
        }
    if (r < 0 || s->stages[r].is_output) return false;
    const weft_tensor *R = s->stages[r].op;
    if (R->ndim != 2 || R->n_reduce != 1 || R->shape[1] < lanes || !R->body || R->body->kind != WEFT_EXPR_TLOAD ||
        weft_expr_tload_n(R->body) < 4 || weft_expr_tload_idx(R->body, 0) != R->axis[0].var ||
        weft_expr_tload_idx(R->body, 1) != R->axis[1].var)
        return false; /* the plane: the input's trailing dims (rows of a 3-D input: the row rules) */
    for (int i = 0; i < s->n_stages; i++) { /* the rest: elementwise over N x C at most */
        const weft_tensor *op = s->stages[i].op;
        int64_t n = 1;
        for (int d = 0; d < op->ndim; d++) n *= op->shape[d];
        if (i != r && (op->n_reduce || n > R->shape[0] * R->shape[1])) return false;
    }
    const weft_stage *rs = &s->stages[r];
    char rname[WEFT_SCHED_NAME], it[3][WEFT_SCHED_NAME];
    snprintf(rname, sizeof rname, "%s", rs->name);
    for (int d = 0; d < 3; d++) snprintf(it[d], sizeof it[d], "%s", rs->iters[d].name);
    if (R->reduce_axis[0].extent >= lanes) {
        /* R parallel over (n, c); per channel, the vector of partial sums (rf, computed there)
         * summed across its lanes in registers (R's vectorized p.1: targets/llvm/vector.c's
         * reduction into one cell). Before, rf was a stage of its own and R summed its 16
         * lanes per channel serially after the parallel loop: mbv2_tiny's pool over 1280
         * channels of 10x10 took 16 us at 1 thread and 31 at 2 (Zen 4). */
        char rf[WEFT_SCHED_NAME + 8];
        snprintf(rf, sizeof rf, "%s.rf", rname);
        /* The output (the mean's scaling, max pool's copy), when it is the one other stage
         * and reads R: parallel over its elements with R computed there, so no serial pass
         * over the channels follows the parallel loop. Its names are taken now: the steps
         * below move the stages. */
        const weft_stage *ys = s->n_stages == 2 ? &s->stages[1 - r] : NULL;
        bool at_out = ys && ys->is_output && ys->op->ndim >= 2 && ys->op->ndim <= 4 &&
                      ys->n_leaves == ys->op->ndim && weft_sched_reads(s, 1 - r, r);
        char yname[WEFT_SCHED_NAME], outer[4][WEFT_SCHED_NAME + 4], yfuse[1024], yfused[WEFT_SCHED_NAME * 2];
        if (at_out) {
            snprintf(yname, sizeof yname, "%s", ys->name);
            for (int d = 0; d < ys->op->ndim; d++) snprintf(outer[d], sizeof outer[d], "%s", ys->iters[ys->leaves[d]].name);
            fuse_text(yname, (const char(*)[WEFT_SCHED_NAME + 4])outer, ys->op->ndim, yfuse, sizeof yfuse, yfused, sizeof yfused);
            at_out = strlen(yfused) < WEFT_SCHED_NAME;
        }
        /* up to 4 vectors of partial sums (independent add chains) when the plane has at
         * least 4 iterations of them: 96 planes of 56x56 0.033 -> 0.020 ms (Zen 3, 1 thread) */
        int64_t plane = R->reduce_axis[0].extent, acc = plane >= 16 * lanes ? 4 : plane >= 8 * lanes ? 2 : 1;
        *rc = weft_sched_stepf(s, "split %s %s %lld", rname, it[2], (long long)(lanes * acc));
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "rfactor %s %s.1", rname, it[2]);
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "fuse %s %s %s", rname, it[0], it[1]);
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "compute_at %s %s %s@%s", rf, rname, it[0], it[1]);
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "reorder %s %s %s %s.0 %s.1", rf, it[0], it[1], it[2], it[2]);
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "vectorize %s %s.1", rf, it[2]);
        if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "vectorize %s %s.1", rname, it[2]);
        if (at_out) {
            if (*rc == WEFT_OK) *rc = weft_schedule_apply(s, yfuse);
            if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "parallel %s %s", yname, yfused);
            if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, yfused);
        } else if (*rc == WEFT_OK) {
            *rc = weft_sched_stepf(s, "parallel %s %s@%s", rname, it[0], it[1]);
        }
        return true;
    }
    *rc = weft_sched_stepf(s, "split %s %s %lld", rname, it[1], (long long)lanes);
    if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "reorder %s %s %s.0 %s %s.1", rname, it[0], it[1], it[2], it[1]);
    if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "fuse %s %s %s.0", rname, it[0], it[1]);
    if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "parallel %s %s@%s.0", rname, it[0], it[1]);
    if (*rc == WEFT_OK) *rc = weft_sched_stepf(s, "vectorize %s %s.1", rname, it[1]);
    return true;
}

/* The stage of a kernel's one reduction R (pattern out-reduction-with-reuse, over three axes:
 * rc, ry, rx) and, in *out, its one output Y (4-D, no reduction, a stage of its own that reads
 * R through elementwise/injective stages, as every other stage is); -1 otherwise. The pointwise
 * pixel rule and the column rule add their shapes of R. */
static int reduction_into_output(const weft_schedule *s, int *out)
{
    int y = -1, r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->op->n_reduce) {
            if (r >= 0 || weft_tensor_pattern(st->op) != WEFT_PATTERN_OUT_REDUCTION_REUSE) return -1;
            r = i;
        }
        if (st->is_output) {
            if (y >= 0) return -1;
            y = i;
        }
    }
    if (y < 0 || r < 0 || r == y) return -1;
    const weft_tensor *R = s->stages[r].op, *Y = s->stages[y].op;
    if (Y->ndim != 4 || R->n_reduce != 3 || Y->n_reduce || !weft_sched_reads_through(s, y, r)) return -1;
    for (int i = 0; i < s->n_stages; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (i != r && p != WEFT_PATTERN_ELEMWISE && p != WEFT_PATTERN_INJECTIVE) return -1;
    }
    *out = y;
    return r;
}

/* ---- pointwise convolution over pixels (weights left [F, C, 1, 1]) --------------------------- */

/* A pointwise conv the layout pass left unblocked because its planes fill whole vectors
 * (model/passes.c; ops/nn_conv.c "flat"): one 3-D reduction R [N, F, OH*OW] over (rc, ry, rx)
 * read by the 4-D output Y [N, F, OH, OW] through elementwise/injective stages; -1 otherwise. */
static int pixel_reduction(const weft_schedule *s, int *out, int64_t lanes)
{
    int y, r = reduction_into_output(s, &y);
    if (r < 0) return -1;
    const weft_tensor *R = s->stages[r].op, *Y = s->stages[y].op;
    if (R->ndim != 3 || R->shape[0] != Y->shape[0] || R->shape[1] != Y->shape[1] ||
        R->shape[2] != Y->shape[2] * Y->shape[3] || R->shape[2] < lanes)
        return -1;
    *out = y;
    return r;
}

/* Whether tx pixels (whole vectors, at most the plane) tile P: dividing it, or any number of
 * vectors when P is not whole vectors (the last tile is then partial: a guarded tail). */
static bool pixel_tile_fits(int64_t tx, int64_t P, int64_t lanes)
{
    return tx >= lanes && tx % lanes == 0 && tx <= P && (P % tx == 0 || P % lanes != 0);
}

/* The tile: tf filters x tx pixels (pixel_tile_fits): the most
 * accumulators (tf * tx / lanes, up to 2 x weft_sched_tile_rows, with the tx / lanes input
 * vectors and a broadcast in the register file), ties to fewer loads per FMA (tx / lanes input
 * vectors + tf broadcast weights per input channel). With AVX2's 16 registers a 3 x 4-vector
 * tile (12 + 4 + 1 live) spilled every step: 144 -> 24 channels at 56x56, Zen 4 with --cpu
 * znver3, 0.47 ms; 4 x 3 vectors fit. */
static conv_tile choose_pixel_tile(int64_t F, int64_t P, int64_t lanes, const weft_target_caps *caps)
{
    int64_t max_acc = WEFT_SCHED_TILE_VECS * weft_sched_tile_rows(caps);
    conv_tile best = {1, 1, 1, lanes};
    double best_acc = 0, best_ratio = 0;
    for (int64_t nv = 1; nv <= max_acc && nv * lanes <= P; nv++) {
        if (!pixel_tile_fits(nv * lanes, P, lanes)) continue;
        int64_t tf = 1;
        for (int64_t t = 1; t * nv <= max_acc && t <= F && tile_fits(t * nv, nv, caps); t++)
            if (F % t == 0) tf = t;
        double acc = (double)(tf * nv), ratio = acc / (double)(tf + nv);
        if (acc > best_acc || (acc == best_acc && ratio > best_ratio)) {
            best_acc = acc, best_ratio = ratio;
            best = (conv_tile){tf, 1, 1, nv * lanes};
        }
    }
    return best;
}

/* The pixel reduction r (computed at its tile's loop) as a register tile: reduction loops
 * outside, tf filters and tx / lanes pixel vectors unrolled, lanes vectorized. */
static weft_status pixel_register_tile(weft_schedule *s, int r, int64_t tf, int64_t tx, int64_t lanes)
{
    char rname[WEFT_SCHED_NAME], it[6][WEFT_SCHED_NAME];
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    for (int d = 0; d < 6; d++) snprintf(it[d], sizeof it[d], "%s", s->stages[r].iters[d].name);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", rname, it[2], (long long)lanes);
    if (rc == WEFT_OK)
        rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s.0 %s.1", rname, it[3], it[4], it[5], it[0], it[1], it[2],
                              it[2]);
    if (rc == WEFT_OK && tf > 1) rc = weft_sched_stepf(s, "unroll %s %s", rname, it[1]);
    if (rc == WEFT_OK && tx > lanes) rc = weft_sched_stepf(s, "unroll %s %s.0", rname, it[2]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", rname, it[2]);
    return rc;
}

/* A pointwise conv as the packed matmul (schedule/manual.c) with filters as its rows and
 * pixels as its columns: Y[n, f, q] = sum_c W[f, c] X[n, c, q] over the fused plane q = y@x,
 * in panels of nc pixels (parallel over images and panels), the panel's C x nc block of X
 * packed once (cache_read: contiguous, reused from L2 by every tile of filters), mr filters x
 * nr pixels per register tile. The unpacked tiles below read X straight from its planes, C
 * rows a plane apart: a 512 -> 128 conv at 64x64 on Zen 3 (L2 512 KiB) ran at 28 GFLOP/s
 * against 62 for the packed matmul of the same shape. Needs more than one filter tile (the
 * packed block is reused across them), a panel of at least one tile, and two panels per thread
 * (parallel over panels only: regnet's 208 -> 440 conv at 4x4 is one panel, which the
 * unpacked tiles share out by filters). */
static bool pixel_panels_fit(const weft_tensor *Y, int64_t mr, int64_t nr, int64_t nc, const weft_target_caps *caps)
{
    int64_t P = Y->shape[2] * Y->shape[3], threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    return Y->shape[1] > mr && P >= nr && Y->shape[0] * ((P + nc - 1) / nc) >= 2 * threads;
}

static weft_status schedule_pixel_panels(weft_schedule *s, const char *yname, const char *rname, int64_t mr, int64_t nr,
                                         int64_t nc, int64_t lanes)
{
    int y = weft_sched_find_stage(s, yname);
    char ax[4][WEFT_SCHED_NAME], q[WEFT_SCHED_NAME * 2 + 2];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    snprintf(q, sizeof q, "%s@%s", ax[2], ax[3]);
    if (strlen(q) + 8 >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    weft_status rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[2], ax[3]);
    /* n q.0 | f.0 q.1 f.1 q.2 */
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld %lld", yname, q, (long long)(nc / nr), (long long)nr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[1], (long long)mr);
    if (rc == WEFT_OK)
        rc = weft_sched_stepf(s, "reorder %s %s %s.0 %s.0 %s.1 %s.1 %s.2", yname, ax[0], q, ax[1], q, ax[1], q);
    char outer[2][WEFT_SCHED_NAME + 8], par[WEFT_SCHED_NAME];
    snprintf(outer[0], sizeof outer[0], "%s", ax[0]);
    snprintf(outer[1], sizeof outer[1], "%.*s.0", WEFT_SCHED_NAME - 8, q);
    if (rc == WEFT_OK) rc = weft_sched_fuse_parallel(s, y, outer, 2, true, par);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s.1", rname, yname, q);
    int r = weft_sched_find_stage(s, rname);
    if (rc != WEFT_OK || r < 0) return rc != WEFT_OK ? rc : WEFT_ERR_INTERNAL;
    rc = pixel_register_tile(s, r, mr, nr, lanes);
    const weft_tensor *x = weft_sched_reused_input(s->func, s->stages[r].op, 2);
    if (rc == WEFT_OK && x) {
        char xl[WEFT_SCHED_NAME];
        snprintf(xl, sizeof xl, "%s.local", x->name);
        rc = weft_sched_stepf(s, "cache_read %s local %s", x->name, rname);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", xl, yname, par);
        int xi = weft_sched_find_stage(s, xl);
        if (rc == WEFT_OK && xi >= 0) {
            const weft_stage *xs = &s->stages[xi];
            char last[WEFT_SCHED_NAME];
            snprintf(last, sizeof last, "%s", xs->iters[xs->op->ndim - 1].name);
            if (xs->op->shape[xs->op->ndim - 1] % lanes == 0) {
                rc = weft_sched_stepf(s, "split %s %s %lld", xl, last, (long long)lanes);
                if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", xl, last);
            }
        }
    }
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s.2 %lld", yname, q, (long long)lanes);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.2.1", yname, q);
    return rc;
}

/* The output's pixels fused (y@x: one contiguous run per plane), parallel over (n, filter
 * tiles, pixel tiles); per tile R in a local accumulator of tf x tx/lanes vectors: reduction
 * loops outside, filters and pixel vectors unrolled, lanes vectorized (an input vector per
 * pixel vector, a broadcast weight per filter); the write-back stores whole vectors of
 * pixels (no transpose, unlike the blocked rule). */
/* tile (knobs) overrides the chosen tile when non-NULL. */
static weft_status schedule_pixels(weft_schedule *s, int r, int y, const weft_target_caps *caps, int64_t lanes,
                                   const conv_tile *tile)
{
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME];
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    weft_status rc = inline_others(s, r, y, -1);
    if (rc != WEFT_OK) return rc;
    y = weft_sched_find_stage(s, yname);
    const weft_tensor *Y = s->stages[y].op;
    if (!tile) {
        int64_t mr, nr, nc, reduce = 1;
        const weft_tensor *R = s->stages[weft_sched_find_stage(s, rname)].op;
        for (int k = 0; k < R->n_reduce; k++) reduce *= R->reduce_axis[k].extent;
        weft_sched_matmul_blocks(caps, Y->shape[1], Y->shape[2] * Y->shape[3], reduce, lanes, &mr, &nr, &nc);
        if (pixel_panels_fit(Y, mr, nr, nc, caps)) return schedule_pixel_panels(s, yname, rname, mr, nr, nc, lanes);
    }
    conv_tile t = tile ? *tile : choose_pixel_tile(Y->shape[1], Y->shape[2] * Y->shape[3], lanes, caps);
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    char q[WEFT_SCHED_NAME * 2];
    snprintf(q, sizeof q, "%s@%s", ax[2], ax[3]);
    if (strlen(q) + 8 >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    if ((rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[2], ax[3])) != WEFT_OK) return rc;
    /* n f.0 q.0 | f.1 q.1.0 q.1.1 (q.1 = the pixel tile, in vectors) */
    char f0[WEFT_SCHED_NAME + 4], f1[WEFT_SCHED_NAME + 4], x0[WEFT_SCHED_NAME + 4], x1[WEFT_SCHED_NAME + 4];
    snprintf(f0, sizeof f0, "%s", ax[1]), f1[0] = '\0';
    if (t.tf > 1 && t.tf < Y->shape[1]) {
        rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[1], (long long)t.tf);
        snprintf(f0, sizeof f0, "%s.0", ax[1]), snprintf(f1, sizeof f1, "%s.1", ax[1]);
    } else if (t.tf > 1) snprintf(f1, sizeof f1, "%s", ax[1]), f0[0] = '\0';
    if (rc == WEFT_OK && t.tx < Y->shape[2] * Y->shape[3]) {
        rc = weft_sched_stepf(s, "split %s %s %lld", yname, q, (long long)t.tx);
        snprintf(x0, sizeof x0, "%.*s.0", WEFT_SCHED_NAME - 8, q);
        snprintf(x1, sizeof x1, "%.*s.1", WEFT_SCHED_NAME - 8, q);
    } else snprintf(x1, sizeof x1, "%.*s", WEFT_SCHED_NAME - 8, q), x0[0] = '\0';
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", yname, x1, (long long)lanes);
    if (rc != WEFT_OK) return rc;
    char outer[3][WEFT_SCHED_NAME + 4], line[1024], fused[WEFT_SCHED_NAME * 2] = "";
    int n_outer = 0;
    /* Filter blocks outside the pixel tiles read the image's input channels once per block:
     * fine while they stay in L2, but a big plane of many channels is then streamed from memory
     * per block (S3D's temporal conv, 448 -> 64 channels over 112x112: 22 MB per image read 16
     * times, 27 GFLOP/s). Then the pixel tiles go outside: a tile's channels (C x tx) stay in
     * L2 while every filter block reads them. */
    const weft_tensor *R = s->stages[weft_sched_find_stage(s, rname)].op;
    int64_t reduce = 1;
    for (int k = 0; k < R->n_reduce; k++) reduce *= R->reduce_axis[k].extent;
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    bool pixels_outer = x0[0] && f0[0] && reduce * Y->shape[2] * Y->shape[3] * 4 > l2;
    snprintf(outer[n_outer++], sizeof outer[0], "%s", ax[0]);
    if (pixels_outer) snprintf(outer[n_outer++], sizeof outer[0], "%s", x0);
    if (f0[0]) snprintf(outer[n_outer++], sizeof outer[0], "%s", f0);
    if (x0[0] && !pixels_outer) snprintf(outer[n_outer++], sizeof outer[0], "%s", x0);
    int len = snprintf(line, sizeof line, "reorder %s", yname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    snprintf(line + len, sizeof line - (size_t)len, "%s%s %s.0 %s.1", f1[0] ? " " : "", f1, x1, x1);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    fuse_text(yname, (const char(*)[WEFT_SCHED_NAME + 4])outer, n_outer, line, sizeof line, fused, sizeof fused);
    if (strlen(fused) >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    if (n_outer > 1 && (rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "parallel %s %s", yname, fused)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "vectorize %s %s.1", yname, x1)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, fused)) != WEFT_OK) return rc;
    return pixel_register_tile(s, weft_sched_find_stage(s, rname), t.tf, t.tx, lanes);
}

/* ---- convolution over output columns (weights left [F, C, KH, KW]) ------------------------- */

/* A conv the layout pass marked "weft_conv_columns" (model/passes.c columns_form: a window over
 * few input channels): one 4-D reduction R [N, F, OH, OW] over three axes (rc, ry, rx), read by
 * the 4-D output Y of the same shape through elementwise/injective stages, rows of at least a
 * vector; -1 otherwise. */
static int column_reduction(const weft_schedule *s, int *out, int64_t lanes)
{
    int y, r = reduction_into_output(s, &y);
    if (r < 0) return -1;
    const weft_tensor *R = s->stages[r].op, *Y = s->stages[y].op;
    if (R->ndim != 4 || R->shape[3] < lanes) return -1;
    for (int d = 0; d < 4; d++)
        if (R->shape[d] != Y->shape[d]) return -1;
    *out = y;
    return r;
}

/* The tile: tf filters x ty rows of one column vector: the most accumulators (tf * ty, up to
 * 2 x weft_sched_tile_rows, with the ty input vectors and a broadcast in the register file),
 * ties to the fewest loads per tap (ty input vectors + tf broadcast weights), then to more
 * filters; tf divides F and ty divides OH. Measured on Zen 4 (1 thread; noisy, one run each),
 * a 7x7 stride-2 stem 3 -> 64 channels at 224x224, AVX-512: 4 x 4 2.39 ms, 8 x 2 2.26, 16 x 1
 * 2.37, 8 x 1 2.40, 1 x 16 4.14 (the blocked form: 2.73); AVX2 (8 accumulators: no divisor of
 * 112 rows gives 12): 4 x 2 2.62, 2 x 4 2.91, 8 x 1 3.04, 2 x 6 4.02 (blocked: 3.22). A 3x3
 * one, 3 -> 32 with SiLU, AVX-512: 4 x 4 0.41 ms, 8 x 2 0.45, 16 x 1 0.40 (blocked: 0.82). */
static conv_tile choose_column_tile(int64_t F, int64_t OH, const weft_target_caps *caps)
{
    int64_t max_acc = WEFT_SCHED_TILE_VECS * weft_sched_tile_rows(caps);
    conv_tile best = {1, 1, 1, 1};
    for (int64_t tf = 1; tf <= F && tf <= max_acc; tf++) {
        if (F % tf) continue;
        for (int64_t ty = 1; ty <= OH && tf * ty <= max_acc; ty++) {
            if (OH % ty || !tile_fits(tf * ty, ty, caps)) continue;
            int64_t acc = tf * ty, bacc = best.tf * best.ty;
            int64_t loads = tf + ty, bloads = best.tf + best.ty;
            if (acc > bacc || (acc == bacc && (loads < bloads || (loads == bloads && tf > best.tf))))
                best = (conv_tile){tf, 1, ty, 1};
        }
    }
    return best;
}

/* The padding at root (split by phase for a column stride: unit-stride vectors per tap); the
 * output tiled [tf filters] x [ty rows] x [one vector of columns] (a partial last vector when
 * the row is not whole vectors), tiles fused into one parallel loop (filters outermost); R per
 * tile: reduction loops outside, filters and rows unrolled, columns vectorized (an input
 * vector per row and tap, a broadcast weight per filter); the write-back stores whole column
 * vectors. */
static weft_status schedule_columns(weft_schedule *s, int r, int y, const weft_target_caps *caps, int64_t lanes,
                                    const conv_tile *tile)
{
    int p = pad_stage_of(s, r);
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME], pname[WEFT_SCHED_NAME] = "";
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    if (p >= 0) snprintf(pname, sizeof pname, "%s", s->stages[p].name);
    weft_status rc = inline_others(s, r, y, p);
    if (rc == WEFT_OK && p >= 0) rc = schedule_pad(s, pname, caps, true);
    if (rc != WEFT_OK) return rc;
    y = weft_sched_find_stage(s, yname);
    const weft_tensor *Y = s->stages[y].op;
    int64_t F = Y->shape[1], OH = Y->shape[2], OW = Y->shape[3];
    conv_tile t = tile ? *tile : choose_column_tile(F, OH, caps);
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", s->stages[y].iters[d].name);
    /* n f.0 y.0 x.0 | f.1 y.1 x.1 */
    char outer[4][WEFT_SCHED_NAME + 4], inner[3][WEFT_SCHED_NAME + 4];
    int n_outer = 0, n_inner = 0;
    snprintf(outer[n_outer++], sizeof outer[0], "%s", ax[0]);
    const int64_t tl[3] = {t.tf, t.ty, lanes}, ext[3] = {F, OH, OW};
    for (int d = 0; d < 3 && rc == WEFT_OK; d++) {
        const char *a = ax[d + 1];
        if (tl[d] >= ext[d]) snprintf(inner[n_inner++], sizeof inner[0], "%s", a);
        else if (tl[d] <= 1) snprintf(outer[n_outer++], sizeof outer[0], "%s", a);
        else {
            rc = weft_sched_stepf(s, "split %s %s %lld", yname, a, (long long)tl[d]);
            snprintf(outer[n_outer++], sizeof outer[0], "%s.0", a);
            snprintf(inner[n_inner++], sizeof inner[0], "%s.1", a);
        }
    }
    if (rc != WEFT_OK) return rc;
    char line[1024], fused[WEFT_SCHED_NAME * 2] = "";
    int len = snprintf(line, sizeof line, "reorder %s", yname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    for (int i = 0; i < n_inner; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", inner[i]);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    fuse_text(yname, (const char(*)[WEFT_SCHED_NAME + 4])outer, n_outer, line, sizeof line, fused, sizeof fused);
    if (strlen(fused) >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
    if (n_outer > 1 && (rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "parallel %s %s", yname, fused)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "vectorize %s %s", yname, inner[n_inner - 1])) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, fused)) != WEFT_OK) return rc;
    r = weft_sched_find_stage(s, rname);
    const weft_stage *rs = &s->stages[r];
    char it[7][WEFT_SCHED_NAME];
    for (int d = 0; d < 7; d++) snprintf(it[d], sizeof it[d], "%s", rs->iters[d].name);
    rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s %s", rname, it[4], it[5], it[6], it[0], it[1], it[2], it[3]);
    if (rc == WEFT_OK && t.tf > 1) rc = weft_sched_stepf(s, "unroll %s %s", rname, it[1]);
    if (rc == WEFT_OK && t.ty > 1) rc = weft_sched_stepf(s, "unroll %s %s", rname, it[2]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", rname, it[3]);
    return rc;
}

/* The blocked rule's decisions: the register tile, the filter blocks' place among the parallel
 * loops (outermost: a block of weights is reused from L2 by consecutive chunks; innermost: an
 * input tile is reused across filter blocks), and an auto_unroll pragma on the reduction. */
typedef struct conv_knobs {
    conv_tile tile;
    bool spatial_outer;
    int unroll;
} conv_knobs;

static weft_status schedule_blocked(weft_schedule *s, int r, int y, const weft_target_caps *caps, const conv_knobs *kn)
{
    int p = pad_stage_of(s, r);
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME], pname[WEFT_SCHED_NAME] = "";
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    if (p >= 0) snprintf(pname, sizeof pname, "%s", s->stages[p].name);
    weft_status rc = inline_others(s, r, y, p);
    if (rc != WEFT_OK) return rc;

    if (p >= 0 && (rc = schedule_pad(s, pname, caps, true)) != WEFT_OK) return rc;

    const weft_tensor *R = s->stages[r].op;
    int64_t fb = R->shape[4], OH = R->shape[2], OW = R->shape[3];
    conv_tile t = kn->tile;

    /* The output: f -> (f.0, f.1 = tf, f.2 = fb); n, y, x -> (.0, .1 = tn, ty, tx). Loops:
     * n.0 f.0 y.0 x.0 | f.1 n.1 y.1 x.1 f.2. */
    /* Pixels fused in R: Y's rows and columns fused alike, its tile loops n, f, y@x. */
    bool flat = blocked_flat(R, s->stages[y].op);
    const weft_stage *ys = &s->stages[y];
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", ys->iters[d].name);
    if (flat) {
        char q[WEFT_SCHED_NAME * 2 + 2];
        snprintf(q, sizeof q, "%s@%s", ax[2], ax[3]);
        if (strlen(q) + 8 >= WEFT_SCHED_NAME) return WEFT_ERR_INTERNAL;
        if ((rc = weft_sched_stepf(s, "fuse %s %s %s", yname, ax[2], ax[3])) != WEFT_OK) return rc;
        memcpy(ax[2], q, strlen(q) + 1); /* shorter than WEFT_SCHED_NAME - 8 */
    }
    char outer[4][WEFT_SCHED_NAME + 4], inner[6][WEFT_SCHED_NAME + 4], fin[2][WEFT_SCHED_NAME + 4];
    int n_outer = 0, n_inner = 0, n_fin = 0;
    const int64_t tile[4] = {t.tn, 0, t.ty, t.tx}, ext[4] = {R->shape[0], 0, OH, OW};
    for (int d = 0; d < (flat ? 3 : 4) && rc == WEFT_OK; d++) {
        if (d == 1) {
            if (t.tf > 1) {
                rc = weft_sched_stepf(s, "split %s %s %lld %lld", yname, ax[1], (long long)t.tf, (long long)fb);
                snprintf(fin[n_fin++], sizeof fin[0], "%s.1", ax[1]);
                snprintf(fin[n_fin++], sizeof fin[0], "%s.2", ax[1]);
            } else {
                rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[1], (long long)fb);
                snprintf(fin[n_fin++], sizeof fin[0], "%s.1", ax[1]);
            }
            if (!kn->spatial_outer) snprintf(outer[n_outer++], sizeof outer[0], "%s.0", ax[1]);
        } else if (tile[d] >= ext[d] && ext[d] > 1) {
            snprintf(inner[n_inner++], sizeof inner[0], "%s", ax[d]);
        } else if (tile[d] <= 1) {
            snprintf(outer[n_outer++], sizeof outer[0], "%s", ax[d]);
        } else {
            rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[d], (long long)tile[d]);
            snprintf(outer[n_outer++], sizeof outer[0], "%s.0", ax[d]);
            snprintf(inner[n_inner++], sizeof inner[0], "%s.1", ax[d]);
        }
    }
    if (rc != WEFT_OK) return rc;
    if (kn->spatial_outer) snprintf(outer[n_outer++], sizeof outer[0], "%s.0", ax[1]);
    /* The write-back reads the accumulators as they lie: f.1, then the spatial tile, then the
     * fb filters of a vector innermost (stores strided by OH*OW). Reading them across columns
     * instead (contiguous stores, a gather from the accumulators) kept LLVM from holding them
     * in registers: every reduction step stored them to the stack, 1.2-1.7x slower. */
    char order[6][WEFT_SCHED_NAME + 4];
    int n_order = 0;
    const int w = (int)sizeof order[0] - 1;
    for (int i = 0; i < n_fin - 1; i++) snprintf(order[n_order++], sizeof order[0], "%.*s", w, fin[i]);
    for (int i = 0; i < n_inner; i++) snprintf(order[n_order++], sizeof order[0], "%.*s", w, inner[i]);
    snprintf(order[n_order++], sizeof order[0], "%.*s", w, fin[n_fin - 1]);
    n_inner = n_order;
    memcpy(inner, order, sizeof order);
    if (rc != WEFT_OK) return rc;
    char line[1024], fused[WEFT_SCHED_NAME * 2] = "";
    int len = snprintf(line, sizeof line, "reorder %s", yname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    for (int i = 0; i < n_inner; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", inner[i]);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    fuse_text(yname, (const char(*)[WEFT_SCHED_NAME + 4])outer, n_outer, line, sizeof line, fused, sizeof fused);
    if (strlen(fused) >= WEFT_SCHED_NAME) snprintf(fused, sizeof fused, "%s", outer[0]);
    else if (n_outer > 1 && (rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "parallel %s %s", yname, fused)) != WEFT_OK) return rc;
    rc = weft_sched_stepf(s, "vectorize %s %s", yname, inner[n_inner - 1]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, fused);
    if (rc != WEFT_OK) return rc;

    /* The register tile: reduction loops outside, then n, fo, y, x (or n, y, x, fo) unrolled,
     * fi vectorized. */
    r = weft_sched_find_stage(s, rname);
    const weft_stage *rs = &s->stages[r];
    len = snprintf(line, sizeof line, "reorder %s", rname);
    for (int k = 0; k < R->n_reduce; k++)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s", rs->iters[5 + k].name);
    /* fo outside the spatial loops unless that would spill: LLVM then keeps each spatial
     * position's broadcast live across the filter vectors (acc + tn*ty*tx broadcasts + a
     * weight vector); inside, a broadcast feeds its tf FMAs at once and the tf weight vectors
     * stay live instead. AVX2's 2 x 6 tile (12 accumulators, 16 registers) spilled three
     * accumulators per reduction step: Zen 4, 1 thread, --cpu haswell, fo outside -> inside:
     * a 1152 -> 320 pointwise conv at 7x7 0.82-0.84 -> 0.50-0.58 ms, 480 -> 80 at 14x14
     * 0.30-0.33 -> 0.16-0.18 ms; AVX-512 tiles (16 + 8 + 1 of 32 registers) keep fo outside. */
    static const int fo_inner[5] = {0, 2, 3, 1, 4}, fo_outer[5] = {0, 1, 2, 3, 4};
    int64_t spatial = t.tn * t.ty * t.tx;
    const int *ord = t.tf * spatial + spatial + 1 > vector_regs(caps) ? fo_inner : fo_outer;
    for (int d = 0; d < 5; d++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", rs->iters[ord[d]].name);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    const int64_t unroll[4] = {t.tn, t.tf, t.ty, t.tx};
    for (int i = 0; i < 4 && rc == WEFT_OK; i++)
        if (unroll[i] > 1) rc = weft_sched_stepf(s, "unroll %s %s", rname, s->stages[r].iters[i].name);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", rname, s->stages[r].iters[4].name);
    if (rc == WEFT_OK && kn->unroll > 0 && R->n_reduce > 0) /* on the outermost reduction loop */
        rc = weft_sched_stepf(s, "pragma %s %s auto_unroll %d", rname, s->stages[r].iters[5].name, kn->unroll);
    return rc;
}


/* ---- Winograd F(m x m, 3x3), m = 2 or 4 (ops/nn_conv.c) ---------------------------------------
 *
 * Pattern: one 4-D output Y; one reduction M [a, a, N, F/fb, TH, TW, fb] (a = m + 2 = 4 or 6);
 * the transformed input V [a, a, N, TH, TW, C] (injective) that M reads; the padded input P
 * [N, H', W', C] V reads; every other stage elementwise or injective (bias, epilogue). Returns
 * M (and y, v, p), or -1.
 *
 * Schedule: P at root, parallel over rows, channels in vectors. Y is tiled like the blocked
 * conv's output, in m x m output tiles: [tf filter blocks x fb] x [tn images x m ty rows x m tx
 * columns]; the spatial tile loops are fused and parallel (with the filter blocks when there
 * are too few spatial tiles for the threads). V is computed per spatial tile (all a^2 points,
 * all channels: a channel vector per unrolled point, the taps shared), M per filter block
 * inside it: the a^2 products are each a register tile (channels outside, tf x tn x ty x tx
 * accumulator vectors, summed in a local copy per point), and Y's inverse transform reads them
 * from the tile's buffer, a filter vector at a time, the m x m outputs of a tile unrolled. */
static int winograd_reduction(const weft_schedule *s, int *out, int *vout, int *pout)
{
    int y = -1, r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->is_output) {
            if (y >= 0) return -1;
            y = i;
        } else if (st->op->n_reduce) {
            if (r >= 0) return -1;
            r = i;
        }
    }
    if (y < 0 || r < 0 || s->stages[y].op->n_reduce || s->stages[y].op->ndim != 4) return -1;
    const weft_tensor *M = s->stages[r].op;
    if (M->ndim != 7 || (M->shape[0] != 4 && M->shape[0] != 6) || M->shape[1] != M->shape[0] || M->n_reduce != 1 ||
        !weft_sched_reads_through(s, y, r))
        return -1;
    int v = -1, p = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_tensor *t = s->stages[i].op;
        if (i == r || i == y) continue;
        weft_op_pattern pat = weft_tensor_pattern(t);
        if (pat != WEFT_PATTERN_ELEMWISE && pat != WEFT_PATTERN_INJECTIVE) return -1;
        if (t->ndim == 6 && t->shape[0] == M->shape[0] && t->shape[1] == M->shape[0] && weft_sched_reads(s, r, i)) v = i;
    }
    if (v < 0) return -1;
    for (int i = 0; i < s->n_stages; i++)
        if (i != v && s->stages[i].op->ndim == 4 && !s->stages[i].is_output && weft_sched_reads(s, v, i)) p = i;
    if (p < 0) return -1;
    *out = y, *vout = v, *pout = p;
    return r;
}

static weft_status schedule_winograd(weft_schedule *s, int r, int y, int v, int p, const weft_target_caps *caps,
                                     const conv_tile *tile)
{
    char yname[WEFT_SCHED_NAME], rname[WEFT_SCHED_NAME], vname[WEFT_SCHED_NAME], pname[WEFT_SCHED_NAME];
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(rname, sizeof rname, "%s", s->stages[r].name);
    snprintf(vname, sizeof vname, "%s", s->stages[v].name);
    snprintf(pname, sizeof pname, "%s", s->stages[p].name);
    weft_status rc = WEFT_OK;
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++)
        if (i != r && i != y && i != v && i != p) rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    if (rc != WEFT_OK || (rc = schedule_pad(s, pname, caps, true)) != WEFT_OK) return rc;
    /* M's sums accumulate in a copy computed per point: its tile's indices are constants once
     * unrolled, so the accumulators stay in registers across the channel loop (summing into M
     * itself, indexed by the point loops, stored every accumulator at every step) */
    const weft_tensor *M = s->stages[weft_sched_find_stage(s, rname)].op;
    if ((rc = weft_sched_stepf(s, "cache_write %s local", rname)) != WEFT_OK) return rc;
    int li = weft_sched_find_stage(s, rname) - 1;
    if (li < 0 || !s->stages[li].op->n_reduce) return weft_fail(WEFT_ERR_INTERNAL, "Winograd schedule: no local sums");
    char lname[WEFT_SCHED_NAME];
    snprintf(lname, sizeof lname, "%s", s->stages[li].name);
    const weft_tensor *Y = s->stages[weft_sched_find_stage(s, yname)].op;
    int64_t fb = M->shape[6], C = s->stages[weft_sched_find_stage(s, vname)].op->shape[5];
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    conv_tile t = *tile;
    const weft_stage *ys = &s->stages[weft_sched_find_stage(s, yname)];
    char ax[4][WEFT_SCHED_NAME];
    for (int d = 0; d < 4; d++) snprintf(ax[d], sizeof ax[d], "%s", ys->iters[d].name);
    /* Y: n -> (n.0, n.1 = tn); y -> (y.0, y.1.0 = ty tiles, y.1.1 = m rows of a tile), x
     * likewise; f -> (f.0, [f.1 = tf,] f.2 = fb). The rows and columns within a tile are
     * unrolled innermost but for the filter vector: their taps of A^T become constants. */
    int64_t m = M->shape[0] - 2;
    char outer[4][WEFT_SCHED_NAME + 4], inner[5][WEFT_SCHED_NAME + 8], within[2][WEFT_SCHED_NAME + 8], fo[WEFT_SCHED_NAME + 4],
        fmid[WEFT_SCHED_NAME + 4] = "", flast[WEFT_SCHED_NAME + 4];
    int n_outer = 0, n_inner = 0, n_within = 0;
    const int64_t tiles[4] = {t.tn, 0, m * t.ty, m * t.tx}, ext[4] = {Y->shape[0], 0, Y->shape[2], Y->shape[3]};
    int64_t spatial_chunks = 1;
    for (int d = 0; d < 4 && rc == WEFT_OK; d++) {
        if (d == 1) continue;
        if (d == 0) {
            if (tiles[d] >= ext[d]) {
                if (ext[d] > 1) snprintf(inner[n_inner++], sizeof inner[0], "%.60s", ax[d]);
            } else if (tiles[d] <= 1) {
                snprintf(outer[n_outer++], sizeof outer[0], "%.60s", ax[d]);
                spatial_chunks *= ext[d];
            } else {
                rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[d], (long long)tiles[d]);
                snprintf(outer[n_outer++], sizeof outer[0], "%.60s.0", ax[d]);
                snprintf(inner[n_inner++], sizeof inner[0], "%.60s.1", ax[d]);
                spatial_chunks *= ceil_div(ext[d], tiles[d]);
            }
        } else if (tiles[d] >= ext[d] || tiles[d] == m) { /* whole in tiles, or one tile per chunk */
            rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[d], (long long)m);
            if (tiles[d] >= ext[d]) snprintf(inner[n_inner++], sizeof inner[0], "%.60s.0", ax[d]);
            else snprintf(outer[n_outer++], sizeof outer[0], "%.60s.0", ax[d]);
            snprintf(within[n_within++], sizeof within[0], "%.60s.1", ax[d]);
            if (tiles[d] < ext[d]) spatial_chunks *= ceil_div(ext[d], m);
        } else {
            rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[d], (long long)tiles[d]);
            if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s.1 %lld", yname, ax[d], (long long)m);
            snprintf(outer[n_outer++], sizeof outer[0], "%.60s.0", ax[d]);
            snprintf(inner[n_inner++], sizeof inner[0], "%.60s.1.0", ax[d]);
            snprintf(within[n_within++], sizeof within[0], "%.60s.1.1", ax[d]);
            spatial_chunks *= ceil_div(ext[d], tiles[d]);
        }
    }
    for (int i = 0; i < n_within; i++) snprintf(inner[n_inner++], sizeof inner[0], "%.70s", within[i]);
    if (rc != WEFT_OK) return rc;
    if (t.tf > 1) {
        rc = weft_sched_stepf(s, "split %s %s %lld %lld", yname, ax[1], (long long)t.tf, (long long)fb);
        snprintf(fmid, sizeof fmid, "%s.1", ax[1]);
        snprintf(flast, sizeof flast, "%s.2", ax[1]);
    } else {
        rc = weft_sched_stepf(s, "split %s %s %lld", yname, ax[1], (long long)fb);
        snprintf(flast, sizeof flast, "%s.1", ax[1]);
    }
    snprintf(fo, sizeof fo, "%s.0", ax[1]);
    if (rc != WEFT_OK) return rc;
    /* Too few spatial tiles to share evenly among the threads: the filter blocks join the
     * parallel loop (V is then transformed once per filter block). Transformed weights larger
     * than the transformed input (more filters than tiles: 128 channels at 28x28 in 4x4 tiles,
     * 256 at 14x14 in 2x2: U 2.4 and 4.2 MB, V 0.9 and 0.8 MB): V once for the whole image,
     * in parallel before the products, and the filter blocks outermost in the parallel loop,
     * so a block of U is read from memory once and from cache by every spatial tile (per
     * spatial tile, every tile streamed all of U; in resnet18 those convs ran 1.3x slower than
     * alone, where U stays in L3). */
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    bool v_root = M->shape[3] * fb > M->shape[2] * M->shape[4] * M->shape[5];
    bool with_f = v_root || n_outer == 0 || spatial_chunks < threads || (spatial_chunks < 4 * threads && spatial_chunks % threads);
    if (v_root) {
        memmove(outer[1], outer[0], sizeof outer[0] * (size_t)n_outer);
        snprintf(outer[0], sizeof outer[0], "%s", fo);
        n_outer++;
    } else if (with_f) snprintf(outer[n_outer++], sizeof outer[0], "%s", fo);
    char line[1024], fused[WEFT_SCHED_NAME * 2];
    int len = snprintf(line, sizeof line, "reorder %s", yname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    if (!with_f) len += snprintf(line + len, sizeof line - (size_t)len, " %s", fo);
    if (fmid[0]) len += snprintf(line + len, sizeof line - (size_t)len, " %s", fmid);
    for (int i = 0; i < n_inner; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", inner[i]);
    snprintf(line + len, sizeof line - (size_t)len, " %s", flast);
    if ((rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    fuse_text(yname, (const char(*)[WEFT_SCHED_NAME + 4])outer, n_outer, line, sizeof line, fused, sizeof fused);
    if (strlen(fused) >= WEFT_SCHED_NAME) return weft_fail(WEFT_ERR_INTERNAL, "Winograd schedule: loop names too long");
    if (n_outer > 1 && (rc = weft_schedule_apply(s, line)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "parallel %s %s", yname, fused)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "vectorize %s %s", yname, flast)) != WEFT_OK) return rc;
    for (int i = 0; i < n_within && rc == WEFT_OK; i++) rc = weft_sched_stepf(s, "unroll %s %s", yname, within[i]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, yname, fused);
    if (rc != WEFT_OK) return rc;

    /* M (computed per spatial tile, every filter block of it, or the tile's tf blocks when the
     * blocks are parallel): an outer loop of one iteration (n split by the tile's tn) where V
     * is computed once for all filter blocks, then per filter block of tf and per point the
     * channels outside the register tile [n, fo, th, tw] x fi. */
    const weft_stage *rs = &s->stages[weft_sched_find_stage(s, rname)];
    char ra[7][WEFT_SCHED_NAME];
    for (int d = 0; d < 7; d++) snprintf(ra[d], sizeof ra[d], "%s", rs->iters[d].name);
    if ((rc = weft_sched_stepf(s, "split %s %s %lld", rname, ra[2], (long long)t.tn)) != WEFT_OK) return rc;
    char n0[WEFT_SCHED_NAME + 4], n1[WEFT_SCHED_NAME + 4], f0[WEFT_SCHED_NAME + 4] = "", f1[WEFT_SCHED_NAME + 4];
    snprintf(n0, sizeof n0, "%s.0", ra[2]);
    snprintf(n1, sizeof n1, "%s.1", ra[2]);
    snprintf(f1, sizeof f1, "%s", ra[3]);
    if (!with_f) {
        if ((rc = weft_sched_stepf(s, "split %s %s %lld", rname, ra[3], (long long)t.tf)) != WEFT_OK) return rc;
        snprintf(f0, sizeof f0, "%s.0", ra[3]);
        snprintf(f1, sizeof f1, "%s.1", ra[3]);
    }
    rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s %s %s %s", rname, n0, f0, ra[0], ra[1], n1, f1, ra[4], ra[5], ra[6]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", rname, ra[6]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", lname, rname, ra[1]);
    if (rc != WEFT_OK) return rc;
    /* the register tile: channels outside, [n, fo, th, tw] unrolled, fi vectorized */
    const weft_stage *ls = &s->stages[weft_sched_find_stage(s, lname)];
    char la[8][WEFT_SCHED_NAME];
    for (int d = 0; d < 8; d++) snprintf(la[d], sizeof la[d], "%s", ls->iters[d].name);
    int64_t sp = t.tn * t.ty * t.tx;
    bool fo_inner = t.tf * sp + sp + 1 > vector_regs(caps); /* as schedule_blocked */
    if (fo_inner)
        rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s %s %s", lname, la[0], la[1], la[7], la[2], la[4], la[5], la[3],
                              la[6]);
    else
        rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s %s %s", lname, la[0], la[1], la[7], la[2], la[3], la[4], la[5],
                              la[6]);
    const int64_t unroll[4] = {t.tn, t.tf, t.ty, t.tx};
    for (int i = 0; i < 4 && rc == WEFT_OK; i++)
        if (unroll[i] > 1) rc = weft_sched_stepf(s, "unroll %s %s", lname, la[2 + i]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", lname, la[6]);
    if (rc == WEFT_OK && !v_root) rc = weft_sched_stepf(s, "compute_at %s %s %s", vname, rname, n0);
    if (rc != WEFT_OK) return rc;

    /* V: the channels in vectors innermost, the (m+2)^2 points unrolled around them (the taps
     * of a channel vector are loaded once for all points). */
    const weft_stage *vs = &s->stages[weft_sched_find_stage(s, vname)];
    char va[6][WEFT_SCHED_NAME];
    for (int d = 0; d < 6; d++) snprintf(va[d], sizeof va[d], "%s", vs->iters[d].name);
    if (C > lanes) {
        rc = weft_sched_stepf(s, "split %s %s %lld", vname, va[5], (long long)lanes);
        if (rc == WEFT_OK)
            rc = weft_sched_stepf(s, "reorder %s %s %s %s %s.0 %s %s %s.1", vname, va[2], va[3], va[4], va[5], va[0], va[1],
                                  va[5]);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", vname, va[5]);
    } else {
        rc = weft_sched_stepf(s, "reorder %s %s %s %s %s %s %s", vname, va[2], va[3], va[4], va[0], va[1], va[5]);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", vname, va[5]);
    }
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s", vname, va[0]);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s", vname, va[1]);
    if (rc == WEFT_OK && v_root) rc = weft_sched_stepf(s, "fuse %s %s %s", vname, va[2], va[3]);
    if (rc == WEFT_OK && v_root) rc = weft_sched_stepf(s, "parallel %s %s@%s", vname, va[2], va[3]);
    return rc;
}

weft_status weft_schedule_default_conv(weft_schedule *s, const weft_target_caps *caps, bool *done)
{
    {
        int wy, wv, wp, wr = winograd_reduction(s, &wy, &wv, &wp);
        if (wr >= 0) {
            *done = true;
            const int64_t *m = s->stages[wr].op->shape; /* [a, a, N, FO, TH, TW, fb] */
            conv_tile t = choose_tile((const int64_t[]){m[2], m[3], m[4], m[5]}, 1, caps);
            return schedule_winograd(s, wr, wy, wv, wp, caps, &t);
        }
    }
    weft_status grc = WEFT_OK;
    if ((*done = global_pool(s, caps, &grc))) return grc;
    *done = false;
    int y, r = blocked_reduction(s, &y);
    if (r < 0) {
        r = window_reduction(s, &y);
        int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
        if (r < 0 && (r = pixel_reduction(s, &y, lanes)) >= 0) {
            *done = true;
            return schedule_pixels(s, r, y, caps, lanes, NULL);
        }
        if (r < 0 && (r = column_reduction(s, &y, lanes)) >= 0) {
            *done = true;
            return schedule_columns(s, r, y, caps, lanes, NULL);
        }
        weft_status grc2 = WEFT_OK;
        if (r < 0 && (*done = weft_schedule_default_gate(s, caps, &grc2))) return grc2;
        if (r < 0) return WEFT_OK;
        *done = true;
        return schedule_window(s, r, y, caps, 0, 0);
    }
    *done = true;
    const weft_tensor *R = s->stages[r].op; /* [N, F/fb, OH, OW, fb] over (rc, ry, rx) */
    conv_knobs k = {.tile = choose_tile(R->shape, R->n_reduce == 3 ? R->reduce_axis[2].extent : 1, caps)};
    return schedule_blocked(s, r, y, caps, &k);
}

/* ---- knobs (weft_schedule_knob_space) ------------------------------------------------------ */

enum { K_TF, K_TN, K_TY, K_TX, K_SPATIAL_OUTER, K_UNROLL, N_CONV_KNOBS };
enum { N_WINO_KNOBS = 4 };   /* the Winograd rule's: tf, tn, ty, tx (in 2x2 tiles) */
enum { N_WINDOW_KNOBS = 2 }; /* the window rule's: tx, ty */
enum { N_PIXEL_KNOBS = 2 };  /* the pointwise pixel rule's: tf, tx */
enum { N_COLUMN_KNOBS = 2 }; /* the column rule's: tf, ty */
static const char *const conv_knob_names[N_CONV_KNOBS] = {"tf", "tn", "ty", "tx", "spatial_outer", "unroll"};

/* Vector registers a tile keeps live: accumulators, a weight vector per filter block, a broadcast. */
static int64_t tile_live_vectors(const conv_tile *t) { return t->tf * t->tn * t->ty * t->tx + t->tf + 1; }

static int64_t vector_regs(const weft_target_caps *caps) { return caps && caps->vector_regs > 0 ? caps->vector_regs : 16; }

static void knob_add(weft_knob_space *sp, int i, int64_t v)
{
    if (sp->n_values[i] < WEFT_KNOB_VALUES_MAX) sp->values[i][sp->n_values[i]++] = v;
}

/* The register-tile knobs tf, tn, ty, tx (their names and values) of a reduction tiled over
 * ext = {N, filter blocks, rows, columns}: the blocked conv's positions or the Winograd
 * products' tiles. */
static void tile_knob_values(weft_knob_space *sp, const int64_t *ext, const weft_target_caps *caps)
{
    for (int i = K_TF; i <= K_TX; i++) snprintf(sp->name[i], sizeof sp->name[i], "%s", conv_knob_names[i]);
    for (int64_t v = 1; v <= ext[1] && v <= 4; v++)
        if (ext[1] % v == 0) knob_add(sp, K_TF, v);
    for (int64_t v = 1; v <= ext[0] && v <= 8; v++) knob_add(sp, K_TN, v);
    for (int64_t v = 1; v <= ext[2] && v <= 8; v++) knob_add(sp, K_TY, v);
    for (int64_t v = 1; v <= ext[3] && v <= vector_regs(caps) - 2; v++) knob_add(sp, K_TX, v);
}

/* v[K_TF..K_TX] as a register tile over ext (as tile_knob_values): each within [1, its
 * extent], tf dividing the filter blocks, the tile's live vectors within the registers. */
static weft_status tile_knobs(const int64_t *v, const int64_t *ext, const weft_target_caps *caps, conv_tile *t)
{
    const int64_t max[4] = {ext[1], ext[0], ext[2], ext[3]}; /* K_TF, K_TN, K_TY, K_TX */
    for (int i = K_TF; i <= K_TX; i++)
        if (v[i] < 1 || v[i] > max[i])
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: %s = %lld is outside [1, %lld]", conv_knob_names[i], (long long)v[i],
                             (long long)max[i]);
    *t = (conv_tile){v[K_TF], v[K_TN], v[K_TY], v[K_TX]};
    if (ext[1] % t->tf)
        return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: tf = %lld does not divide %lld filter blocks", (long long)t->tf, (long long)ext[1]);
    if (tile_live_vectors(t) > vector_regs(caps))
        return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: a %lldx%lldx%lldx%lld tile keeps %lld vectors live, more than the %lld registers",
                         (long long)t->tf, (long long)t->tn, (long long)t->ty, (long long)t->tx, (long long)tile_live_vectors(t),
                         (long long)vector_regs(caps));
    return WEFT_OK;
}

weft_status weft_schedule_knob_space(const weft_te_func *f, const weft_target_caps *caps, weft_knob_space *sp)
{
    memset(sp, 0, sizeof *sp);
    if (caps && caps->has_thread_binding) return weft_schedule_gpu_knob_space(f, caps, sp); /* schedule/gemm_gpu.h */
    weft_schedule *s = NULL;
    weft_status rc = weft_schedule_create(f, &s);
    if (rc != WEFT_OK) return rc;
    int y, r = blocked_reduction(s, &y);
    weft_schedule *probe = NULL; /* global_pool schedules what it matches: probe a copy */
    bool gp = false;
    if (r < 0 && (rc = weft_schedule_create(f, &probe)) == WEFT_OK) {
        weft_status ignored = WEFT_OK;
        gp = global_pool(probe, caps, &ignored);
        weft_schedule_destroy(probe);
    }
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    int wv, wp;
    if (r < 0 && !gp && (r = winograd_reduction(s, &y, &wv, &wp)) >= 0) {
        const int64_t *sh = s->stages[r].op->shape; /* [a, a, N, FO, TH, TW, fb] */
        snprintf(sp->rule, sizeof sp->rule, "conv_winograd");
        sp->n = N_WINO_KNOBS;
        tile_knob_values(sp, (const int64_t[]){sh[2], sh[3], sh[4], sh[5]}, caps);
    } else if (r < 0 && !gp && (r = pixel_reduction(s, &y, lanes)) >= 0) {
        const int64_t *sh = s->stages[y].op->shape; /* [N, F, OH, OW] */
        snprintf(sp->rule, sizeof sp->rule, "conv_pixels");
        sp->n = N_PIXEL_KNOBS;
        snprintf(sp->name[0], sizeof sp->name[0], "tf");
        snprintf(sp->name[1], sizeof sp->name[1], "tx");
        for (int64_t v = 1; v <= sh[1] && v <= 16; v++)
            if (sh[1] % v == 0) knob_add(sp, 0, v);
        for (int64_t v = lanes; v <= sh[2] * sh[3] && v <= 8 * lanes; v += lanes)
            if (pixel_tile_fits(v, sh[2] * sh[3], lanes)) knob_add(sp, 1, v);
    } else if (r < 0 && !gp && (r = column_reduction(s, &y, lanes)) >= 0) {
        const int64_t *sh = s->stages[y].op->shape; /* [N, F, OH, OW] */
        int64_t max_acc = WEFT_SCHED_TILE_VECS * weft_sched_tile_rows(caps);
        snprintf(sp->rule, sizeof sp->rule, "conv_columns");
        sp->n = N_COLUMN_KNOBS;
        snprintf(sp->name[0], sizeof sp->name[0], "tf");
        snprintf(sp->name[1], sizeof sp->name[1], "ty");
        for (int64_t v = 1; v <= sh[1] && v <= max_acc; v++)
            if (sh[1] % v == 0) knob_add(sp, 0, v);
        for (int64_t v = 1; v <= sh[2] && v <= max_acc; v++)
            if (sh[2] % v == 0) knob_add(sp, 1, v);
    } else if (r < 0 && !gp && (r = window_reduction(s, &y)) >= 0) {
        const int64_t *sh = s->stages[y].op->shape; /* [N, C, OH, OW] */
        snprintf(sp->rule, sizeof sp->rule, "window");
        sp->n = N_WINDOW_KNOBS;
        snprintf(sp->name[0], sizeof sp->name[0], "tx");
        snprintf(sp->name[1], sizeof sp->name[1], "ty");
        int64_t pow2 = narrow_row_lanes(sh[3]); /* the default's rows of a narrow plane */
        for (int64_t v = 1; v <= sh[3] && v <= 2 * lanes; v++)
            if (sh[3] % v == 0 || v == lanes) knob_add(sp, 0, v);
        if (sh[3] < lanes && pow2 > sh[3]) knob_add(sp, 0, pow2);
        for (int64_t v = 1; v <= sh[2] && v <= 8; v++)
            if (sh[2] % v == 0) knob_add(sp, 1, v);
        if (sh[3] < lanes && sh[2] > 8 && tile_fits(sh[2], 1, caps)) knob_add(sp, 1, sh[2]); /* the whole plane */
    } else if (r >= 0 && s->stages[r].op->ndim == 5) {
        const int64_t *sh = s->stages[r].op->shape; /* [N, FO, OH, OW, fb] */
        snprintf(sp->rule, sizeof sp->rule, "conv_blocked");
        sp->n = N_CONV_KNOBS;
        for (int i = K_SPATIAL_OUTER; i < N_CONV_KNOBS; i++) snprintf(sp->name[i], sizeof sp->name[i], "%s", conv_knob_names[i]);
        tile_knob_values(sp, sh, caps);
        knob_add(sp, K_SPATIAL_OUTER, 0);
        knob_add(sp, K_SPATIAL_OUTER, 1);
        knob_add(sp, K_UNROLL, 0);
        knob_add(sp, K_UNROLL, 16);
        knob_add(sp, K_UNROLL, 64);
    }
    weft_schedule_destroy(s);
    return WEFT_OK;
}

weft_status weft_schedule_default_knobs(weft_schedule *s, const weft_target_caps *caps, int n, const int64_t *v)
{
    if (caps && caps->has_thread_binding) return weft_schedule_default_gpu_knobs(s, caps, n, v); /* schedule/gemm_gpu.h */
    weft_knob_space sp;
    weft_status src = weft_schedule_knob_space(weft_schedule_func(s), caps, &sp);
    if (src != WEFT_OK) return src;
    if (sp.n == 0) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: the kernel has no default rule with knobs");
    int y, r = blocked_reduction(s, &y);
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    if (!strcmp(sp.rule, "conv_winograd")) {
        int wv, wp;
        r = winograd_reduction(s, &y, &wv, &wp);
        if (n != N_WINO_KNOBS) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: conv_winograd takes %d knobs, got %d", N_WINO_KNOBS, n);
        const int64_t *sh = s->stages[r].op->shape; /* [a, a, N, FO, TH, TW, fb] */
        conv_tile t;
        weft_status trc = tile_knobs(v, (const int64_t[]){sh[2], sh[3], sh[4], sh[5]}, caps, &t);
        return trc != WEFT_OK ? trc : schedule_winograd(s, r, y, wv, wp, caps, &t);
    }
    if (!strcmp(sp.rule, "conv_pixels")) {
        r = pixel_reduction(s, &y, lanes);
        if (n != N_PIXEL_KNOBS) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: conv_pixels takes %d knobs, got %d", N_PIXEL_KNOBS, n);
        const int64_t *sh = s->stages[y].op->shape;
        int64_t P = sh[2] * sh[3];
        if (v[0] < 1 || v[0] > sh[1] || sh[1] % v[0])
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: tf = %lld does not divide %lld filters", (long long)v[0], (long long)sh[1]);
        if (!pixel_tile_fits(v[1], P, lanes))
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: tx = %lld is not a multiple of %lld that tiles %lld pixels",
                             (long long)v[1], (long long)lanes, (long long)P);
        conv_tile t = {v[0], 1, 1, v[1]};
        if (!tile_fits(v[0] * (v[1] / lanes), v[1] / lanes, caps))
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: a %lld x %lld tile needs more than the %lld vector registers",
                             (long long)v[0], (long long)v[1], (long long)vector_regs(caps));
        return schedule_pixels(s, r, y, caps, lanes, &t);
    }
    if (!strcmp(sp.rule, "conv_columns")) {
        r = column_reduction(s, &y, lanes);
        if (n != N_COLUMN_KNOBS) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: conv_columns takes %d knobs, got %d", N_COLUMN_KNOBS, n);
        const int64_t *sh = s->stages[y].op->shape;
        if (v[0] < 1 || v[0] > sh[1] || sh[1] % v[0] || v[1] < 1 || v[1] > sh[2] || sh[2] % v[1])
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: tile %lld filters x %lld rows does not divide %lld x %lld",
                             (long long)v[0], (long long)v[1], (long long)sh[1], (long long)sh[2]);
        if (!tile_fits(v[0] * v[1], v[1], caps))
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: a %lld x %lld tile needs more than the %lld vector registers",
                             (long long)v[0], (long long)v[1], (long long)vector_regs(caps));
        conv_tile t = {v[0], 1, v[1], 1};
        return schedule_columns(s, r, y, caps, lanes, &t);
    }
    if (!strcmp(sp.rule, "window")) {
        r = window_reduction(s, &y);
        if (n != N_WINDOW_KNOBS) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: window takes %d knobs, got %d", N_WINDOW_KNOBS, n);
        const int64_t *sh = s->stages[y].op->shape;
        bool wide_rows = sh[3] < lanes && v[0] == narrow_row_lanes(sh[3]); /* masked past the row */
        if (v[0] < 1 || (v[0] > sh[3] && !wide_rows) || v[1] < 1 || v[1] > sh[2])
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: tile %lld x %lld is outside the %lld x %lld output", (long long)v[1],
                             (long long)v[0], (long long)sh[2], (long long)sh[3]);
        if (!tile_fits(v[1] * ceil_div(v[0], lanes), 1, caps))
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: a %lld x %lld tile needs more than the %lld vector registers",
                             (long long)v[1], (long long)v[0], (long long)vector_regs(caps));
        return schedule_window(s, r, y, caps, v[0], v[1]);
    }
    if (n != N_CONV_KNOBS) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: conv_blocked takes %d knobs, got %d", N_CONV_KNOBS, n);
    const int64_t max[N_CONV_KNOBS] = {0, 0, 0, 0, 1, 4096};
    for (int i = K_SPATIAL_OUTER; i < N_CONV_KNOBS; i++)
        if (v[i] < 0 || v[i] > max[i])
            return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: %s = %lld is outside [0, %lld]", conv_knob_names[i], (long long)v[i],
                             (long long)max[i]);
    conv_knobs k = {.spatial_outer = v[K_SPATIAL_OUTER] != 0, .unroll = (int)v[K_UNROLL]};
    weft_status trc = tile_knobs(v, s->stages[r].op->shape, caps, &k.tile);
    return trc != WEFT_OK ? trc : schedule_blocked(s, r, y, caps, &k);
}
