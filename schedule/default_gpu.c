/* Default GPU schedules (simple and correct first). Elementwise and injective stages that are
 * not outputs are inlined into their readers. Then each root stage gets one of two rules:
 *
 *   block per row   a row reduction (pattern REDUCTION: a row sum or max, softmax's max and
 *                   sum, layer norm's sums) over one reduction axis k of at least GPU_ROW_MIN
 *                   points: one block per output element (row), T = min(k, block size)
 *                   threads. TVM's cross-thread reduction through rfactor:
 *                     split R k T; rfactor R k.1         R.rf[.., k.1] = partial sums over k.0
 *                     cache_write R.rf shared; compute_inline R.rf
 *                     split R r 1 (r: R's last axis); bind r.0 blockIdx.x; bind r.1 threadIdx.x
 *                     (up to two more axes of extent > 1 on blockIdx.y, blockIdx.z)
 *                     compute_at R.rf.shared R r.0; bind R.rf.shared k.1 threadIdx.x
 *                   so each thread of a block sums every T-th point of the row into shared
 *                   memory, a barrier (lowering's barrier pass) follows, and one thread (the
 *                   bound loop of extent 1) adds the T partial sums. Rows are read by
 *                   neighbouring threads at neighbouring addresses (coalesced).
 *   gemm            a matmul-like stage (one reduction axis, two operands: matmul, dense,
 *                   batched matmul; schedule/gemm_gpu.c): a block tile of up to 128 x 128
 *                   outputs over 256 threads, a register tile of up to 8 x 8 per thread, the
 *                   reduction in K tiles of 16 whose operand slices the block's threads load
 *                   together into shared memory; the tile from weft_gpu_gemm_default_tile.
 *   thread per output  everything else (conv, pooling, elementwise, transposes, short
 *                   or multi-axis reductions): the spatial loops fused, split by the block
 *                   size (256 threads: 8 warps of 32, 4 AMD wavefronts of 64; a whole number
 *                   of caps->warp_size below the caps' thread limit; or the whole extent when
 *                   smaller) and bound to
 *                   blockIdx.x / threadIdx.x; reduction loops stay serial in the thread.
 *
 * Faster schedules come from tuning. A stage without spatial axes (a scalar) is left to the
 * launch check's message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/gemm_gpu.h"
#include "schedule/sched_util.h"
#include "schedule/state.h"

enum { GPU_BLOCK = 256, GPU_ROW_MIN = 32 };

/* Fuses the spatial loops of stage i into one (when it has more than one); its name in name. */
static weft_status fuse_spatial(weft_schedule *s, int i, char *name)
{
    const weft_stage *st = &s->stages[i];
    const weft_tensor *op = st->op;
    if (op->ndim == 1) {
        snprintf(name, WEFT_SCHED_NAME, "%s", st->iters[0].name);
        return WEFT_OK;
    }
    char line[1024];
    int len = snprintf(line, sizeof line, "fuse %s", st->name);
    for (int d = 0; d < op->ndim && len < (int)sizeof line; d++)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s", st->iters[d].name);
    weft_status rc = weft_schedule_apply(s, line);
    if (rc != WEFT_OK) return rc;
    st = &s->stages[i];
    snprintf(name, WEFT_SCHED_NAME, "%s", st->iters[st->leaves[0]].name);
    return WEFT_OK;
}

/* The stage that step text just added: the one whose name is not among the n old names. */
static int added_stage(const weft_schedule *s, char (*old)[WEFT_SCHED_NAME], int n)
{
    for (int i = 0; i < s->n_stages; i++) {
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = !strcmp(s->stages[i].name, old[j]);
        if (!seen) return i;
    }
    return -1;
}

static int stage_names(const weft_schedule *s, char (*out)[WEFT_SCHED_NAME])
{
    for (int i = 0; i < s->n_stages; i++) snprintf(out[i], WEFT_SCHED_NAME, "%s", s->stages[i].name);
    return s->n_stages;
}

enum { GPU_GRID_YZ = 65535 }; /* blockIdx.y and .z extents */

/* The output axes of row reduction st that get a block axis: those of extent > 1 (the others
 * leave no loop), the last one at least; at most three, outer ones within GPU_GRID_YZ. Returns
 * their number (0: the block-per-row rule does not apply). */
static int row_axes(const weft_stage *st, int *axes)
{
    const weft_tensor *op = st->op;
    int n = 0;
    for (int d = 0; d < op->ndim; d++)
        if (op->shape[d] > 1 || d == op->ndim - 1) {
            if (n == 3) return 0;
            axes[n++] = d;
        }
    for (int i = 0; i + 1 < n; i++)
        if (op->shape[axes[i]] > GPU_GRID_YZ) return 0;
    return n;
}

static bool is_row_reduction(const weft_stage *st)
{
    const weft_tensor *op = st->op;
    int axes[3];
    return op->ndim >= 1 && op->n_reduce == 1 && weft_tensor_pattern(op) == WEFT_PATTERN_REDUCTION &&
           op->reduce_axis[0].extent >= GPU_ROW_MIN && row_axes(st, axes) > 0;
}

/* The block-per-row rule (above) for row reduction `name`. Its output axes get one block axis
 * each (the last blockIdx.x, then .y, .z) rather than one fused loop: the shared stage attached
 * at the last one then covers exactly one row (bounds through a fused index's div/mod would
 * cover more). */
static weft_status block_per_row(weft_schedule *s, const char *name, int64_t block)
{
    char old[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    int r = weft_sched_find_stage(s, name);
    const weft_stage *st = &s->stages[r];
    int axes[3], n = row_axes(st, axes);
    char k[WEFT_SCHED_NAME], rf[WEFT_SCHED_NAME], sh[WEFT_SCHED_NAME], ax[3][WEFT_SCHED_NAME];
    for (int i = 0; i < n; i++) snprintf(ax[i], WEFT_SCHED_NAME, "%s", st->iters[axes[i]].name);
    snprintf(k, sizeof k, "%s", st->iters[st->op->ndim].name);
    int64_t extent = st->op->reduce_axis[0].extent, t = extent < block ? extent : block;
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", name, k, (long long)t);
    int n_old = stage_names(s, old);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "rfactor %s %s.1", name, k);
    int i = rc == WEFT_OK ? added_stage(s, old, n_old) : -1;
    if (rc == WEFT_OK && i < 0) rc = weft_fail(WEFT_ERR_INTERNAL, "default gpu: rfactor of %s added no stage", name);
    if (rc != WEFT_OK) return rc;
    snprintf(rf, sizeof rf, "%s", s->stages[i].name);
    n_old = stage_names(s, old);
    rc = weft_sched_stepf(s, "cache_write %s shared", rf);
    i = rc == WEFT_OK ? added_stage(s, old, n_old) : -1;
    if (rc == WEFT_OK && i < 0) rc = weft_fail(WEFT_ERR_INTERNAL, "default gpu: cache_write of %s added no stage", rf);
    if (rc != WEFT_OK) return rc;
    snprintf(sh, sizeof sh, "%s", s->stages[i].name);
    const char *last = ax[n - 1];
    if ((rc = weft_sched_stepf(s, "compute_inline %s", rf)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "split %s %s 1", name, last)) != WEFT_OK) return rc;
    for (int a = 0; a + 1 < n; a++)
        if ((rc = weft_sched_stepf(s, "bind %s %s blockIdx.%c", name, ax[a], "zy"[a + 3 - n])) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.0 blockIdx.x", name, last)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "bind %s %s.1 threadIdx.x", name, last)) != WEFT_OK) return rc;
    if ((rc = weft_sched_stepf(s, "compute_at %s %s %s.0", sh, name, last)) != WEFT_OK) return rc;
    return weft_sched_stepf(s, "bind %s %s.1 threadIdx.x", sh, k);
}

/* The thread-per-output rule (above) for stage `name`. */
static weft_status thread_per_output(weft_schedule *s, const char *name, int64_t block)
{
    int i = weft_sched_find_stage(s, name);
    const weft_tensor *op = s->stages[i].op;
    int64_t total = 1;
    for (int d = 0; d < op->ndim; d++) total *= op->shape[d];
    char it[WEFT_SCHED_NAME];
    weft_status rc = fuse_spatial(s, i, it);
    int64_t t = total < block ? total : block;
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", name, it, (long long)t);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "bind %s %s.0 blockIdx.x", name, it);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "bind %s %s.1 threadIdx.x", name, it);
    return rc;
}

/* The GEMM rule (schedule/gemm_gpu.c) for root stage `name`, when the stage is matmul-like:
 * with `tile` (knobs) it must apply; with the default tile (tile NULL) it is first tried on a
 * copy of s and skipped when it fails there. *done says whether s got it (otherwise s is
 * unchanged). */
static weft_status try_gemm(weft_schedule *s, const char *name, const weft_target_caps *caps, const weft_gpu_gemm_tile *tile,
                            bool *done)
{
    *done = false;
    weft_gpu_gemm_shape g;
    int i = weft_sched_find_stage(s, name);
    if (i < 0 || !weft_gpu_gemm_form(s->stages[i].op, &g)) return WEFT_OK;
    if (tile) {
        *done = true;
        return weft_gpu_gemm_apply(s, name, tile, caps);
    }
    weft_gpu_gemm_tile t;
    weft_gpu_gemm_default_tile(&g, caps, &t);
    char *text = weft_schedule_text(s);
    if (!text) return weft_fail(WEFT_ERR_NOMEM, "default gpu: out of memory");
    weft_schedule *copy = NULL;
    weft_status rc = weft_schedule_create(s->func, &copy);
    if (rc == WEFT_OK) rc = weft_schedule_apply_text(copy, text);
    if (rc == WEFT_OK) rc = weft_gpu_gemm_apply(copy, name, &t, caps);
    weft_schedule_destroy(copy);
    free(text);
    if (rc == WEFT_ERR_NOMEM) return rc;
    if (rc != WEFT_OK) return WEFT_OK; /* not this rule: thread per output */
    *done = true;
    return weft_gpu_gemm_apply(s, name, &t, caps);
}

static weft_status default_gpu(weft_schedule *s, const weft_target_caps *caps, const weft_gpu_gemm_tile *tile)
{
    int64_t block = caps && caps->max_threads > 0 && caps->max_threads < GPU_BLOCK ? caps->max_threads : GPU_BLOCK;
    int64_t warp = caps && caps->warp_size > 0 ? caps->warp_size : 32;
    if (block >= warp) block -= block % warp; /* whole warps (wavefronts) per block */
    weft_status rc = WEFT_OK;
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (!s->stages[i].is_output && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE))
            rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    }
    /* the rules add stages (rfactor, cache_write): walk the root stages by name */
    char names[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    bool row[WEFT_SCHED_MAX_STAGES];
    int n = 0;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        if (st->attach != WEFT_ATTACH_ROOT || st->op->ndim == 0) continue; /* a scalar: see above */
        snprintf(names[n], WEFT_SCHED_NAME, "%s", st->name);
        row[n++] = is_row_reduction(st);
    }
    for (int i = 0; i < n && rc == WEFT_OK; i++) {
        bool gemm = false;
        if (row[i]) rc = block_per_row(s, names[i], block);
        else if ((rc = try_gemm(s, names[i], caps, tile, &gemm)) == WEFT_OK && !gemm) rc = thread_per_output(s, names[i], block);
    }
    return rc;
}

weft_status weft_schedule_default_gpu(weft_schedule *s, const weft_target_caps *caps) { return default_gpu(s, caps, NULL); }

/* ---- knobs: the GEMM tile (weft_schedule_gpu_knob_space) ------------------------------------ */

static const char *const gemm_knob_names[6] = {"tm", "tn", "rm", "rn", "kt", "unroll"};

/* The first matmul-like root stage of f after the default rule's inlining (false: none). */
static bool gemm_stage(const weft_te_func *f, weft_gpu_gemm_shape *g)
{
    weft_schedule *s = NULL;
    if (weft_schedule_create(f, &s) != WEFT_OK) return false;
    bool found = false;
    for (int i = 0; i < s->n_stages && !found; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        bool inl = !s->stages[i].is_output && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE);
        found = !inl && !is_row_reduction(&s->stages[i]) && weft_gpu_gemm_form(s->stages[i].op, g);
    }
    weft_schedule_destroy(s);
    return found;
}

static void add_value(weft_knob_space *sp, int i, int64_t v)
{
    for (int j = 0; j < sp->n_values[i]; j++)
        if (sp->values[i][j] == v) return;
    if (sp->n_values[i] < WEFT_KNOB_VALUES_MAX) sp->values[i][sp->n_values[i]++] = v;
}

weft_status weft_schedule_gpu_knob_space(const weft_te_func *f, const weft_target_caps *caps, weft_knob_space *sp)
{
    memset(sp, 0, sizeof *sp);
    weft_gpu_gemm_shape g;
    if (!gemm_stage(f, &g)) return WEFT_OK;
    snprintf(sp->rule, sizeof sp->rule, "gpu_gemm");
    sp->n = 6;
    for (int i = 0; i < 6; i++) snprintf(sp->name[i], sizeof sp->name[i], "%s", gemm_knob_names[i]);
    int64_t max_threads = caps && caps->max_threads > 0 ? caps->max_threads : 1024;
    for (int64_t v = 1; v <= max_threads && v <= 256; v *= 2) {
        if (v == 1 || v / 2 < g.m) add_value(sp, 0, v);
        if (v == 1 || v / 2 < g.n) add_value(sp, 1, v);
    }
    for (int64_t v = 1; v <= 8; v *= 2) {
        if (v == 1 || v / 2 < g.m) add_value(sp, 2, v);
        if (v == 1 || v / 2 < g.n) add_value(sp, 3, v);
    }
    for (int64_t v = 1; v <= 32 && v <= g.k; v *= 2) add_value(sp, 4, v);
    if (g.k < 32) add_value(sp, 4, g.k);
    static const int64_t unrolls[] = {0, 16, 64, 512};
    for (int i = 0; i < 4; i++) add_value(sp, 5, unrolls[i]);
    /* the default tile is a point of the space */
    weft_gpu_gemm_tile t;
    weft_gpu_gemm_default_tile(&g, caps, &t);
    const int64_t d[6] = {t.tm, t.tn, t.rm, t.rn, t.kt, t.unroll};
    for (int i = 0; i < 6; i++) add_value(sp, i, d[i]);
    return WEFT_OK;
}

weft_status weft_schedule_default_gpu_knobs(weft_schedule *s, const weft_target_caps *caps, int n, const int64_t *v)
{
    if (n != 6) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: gpu_gemm takes 6 knobs (tm tn rm rn kt unroll), got %d", n);
    weft_gpu_gemm_shape g;
    if (!gemm_stage(s->func, &g)) return weft_fail(WEFT_ERR_INVALID_ARG, "knobs: the kernel has no matmul-like stage");
    weft_gpu_gemm_tile t = {v[0], v[1], v[2], v[3], v[4], v[5]};
    weft_status rc = weft_gpu_gemm_check(&g, &t, caps);
    if (rc != WEFT_OK) return rc;
    /* schedule a copy first: a refusal leaves s unchanged */
    char *text = weft_schedule_text(s);
    if (!text) return weft_fail(WEFT_ERR_NOMEM, "knobs: out of memory");
    weft_schedule *copy = NULL;
    rc = weft_schedule_create(s->func, &copy);
    if (rc == WEFT_OK) rc = weft_schedule_apply_text(copy, text);
    if (rc == WEFT_OK) rc = default_gpu(copy, caps, &t);
    weft_schedule_destroy(copy);
    free(text);
    return rc == WEFT_OK ? default_gpu(s, caps, &t) : rc;
}
