/* The default schedule: decent without tuning, chosen per stage by compute pattern
 * (ir/pattern.h), written as ordinary steps so it prints and replays like any other.
 *
 *   a plain matmul (operand B not pre-laid)  the packed schedule of manual.c
 *   elementwise / injective, not an output   compute_inline into its readers (but a division
 *                                            a matmul-like stage reads as an operand: at root,
 *                                            rows parallel, last axis in vectors)
 *   reduction with reuse (matmul, conv)      a register tile: the output is tiled (outer
 *                                            loops fused and parallel, the last axis's tile
 *                                            vectorized; fewer rows than a full tile get
 *                                            wider rows) and the reduction is computed per
 *                                            tile into a local accumulator (cache_write when
 *                                            the reduction is itself the output, otherwise at
 *                                            its elementwise reader: dense+bias+relu is one nest);
 *                                            a few rows (<= 4 full tiles) by a wide operand:
 *                                            the accumulator covers every row of a column block
 *                                            and K is blocked so each slice of the operand is
 *                                            read from L1 by every row tile; by a weight
 *                                            streamed from memory: half-height, twice as wide
 *                                            tiles (default_dense.c)
 *   elementwise output                       outer loops fused and parallel (serial below
 *                                            SMALL_NEST elements when the kernel has other
 *                                            outputs), last axis vectorized in vector-width
 *                                            chunks
 *   reduction along unit-stride rows          rfactor into vector partial sums per row (A x,
 *   (an output, no unit-stride spatial axis)  row sums), rows parallel
 *   reduction without reuse                  computed per row at its reader's parallel loop
 *                                            when it reduces the reader's last axis (softmax,
 *                                            layer norm), else parallel over its own rows
 */
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/sched_util.h"

static int only_reader(const weft_schedule *s, int p)
{
    int found = -1;
    for (int q = 0; q < s->n_stages; q++) {
        if (q == p || s->stages[q].attach == WEFT_ATTACH_INLINE || !weft_sched_reads(s, q, p)) continue;
        if (found >= 0) return -1;
        found = q;
    }
    return found;
}

/* x has y's shape without y's last axis (dropped or kept as 1): one row of y needs one
 * element of x, so x can be computed per row inside y's row loop. */
static bool reduces_last_axis_of(const weft_tensor *x, const weft_tensor *y)
{
    int n = y->ndim;
    if (n == 0 || !(x->ndim == n || x->ndim == n - 1)) return false;
    for (int d = 0; d < n - 1; d++)
        if (x->shape[d] != y->shape[d]) return false;
    return x->ndim == n - 1 || x->shape[n - 1] == 1;
}

/* Stage x at root: its rows fused and parallel, the last axis in vectors. */
static weft_status rows_in_vectors(weft_schedule *s, int x, int64_t lanes)
{
    const weft_tensor *op = s->stages[x].op;
    int64_t tiles[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) tiles[d] = 1;
    tiles[op->ndim - 1] = weft_sched_fit_tile(op->shape[op->ndim - 1], lanes, lanes);
    char attach[WEFT_SCHED_NAME], par[WEFT_SCHED_NAME];
    return weft_sched_tile(s, x, tiles, attach, par);
}

/* Whether every read in op's body that uses op's last axis walks it at unit stride as the
 * read's last index, and none walks a reduction axis there: a reduction over a leading axis
 * (a column sum, a CumSum's block totals over a sequence of rows) whose loads are contiguous
 * along the output's last axis. Reads that do not use the last axis are the same in every
 * lane; `seen`: the body uses the last axis at all (a scatter's short search over its rows,
 * select(I[.., k] == w, k, -1), compares it with the rows' indices). */
typedef struct last_walk {
    const weft_tensor *op;
    bool ok, seen;
} last_walk;

static void scan_last_walk(void *ud, const weft_expr *e)
{
    last_walk *w = ud;
    if (!w->ok) return;
    const weft_expr *v = w->op->axis[w->op->ndim - 1].var;
    if (e == v) w->seen = true;
    if (e->kind == WEFT_EXPR_TLOAD && weft_expr_tload_n(e) > 0) {
        if (!weft_expr_uses_var(e, v)) return; /* the same element in every lane */
        int n = weft_expr_tload_n(e);
        const weft_expr *last = weft_expr_tload_idx(e, n - 1);
        for (int r = 0; r < w->op->n_reduce; r++)
            if (weft_expr_uses_var(last, w->op->reduce_axis[r].var)) w->ok = false;
        for (int i = 0; i < n - 1; i++)
            if (weft_expr_uses_var(weft_expr_tload_idx(e, i), v)) w->ok = false;
        if (last == v) w->seen = true;
        else w->ok = false;
        return;
    }
    weft_expr_each_child(e, scan_last_walk, ud);
}

/* Stage x at root: its axes fused and parallel. A reduction over leading axes whose reads walk
 * its last axis contiguously (scan_last_walk) and whose last axis is at least 4 long keeps that
 * axis out of the fusion, moves the reduction loops outside it and vectorizes it (split by the
 * vector when longer than two): a linear transformer's CumSum blocks over [2, 96, 4, 16, 16]
 * ran as scalar loops over all 196608 elements. */
static weft_status parallel_rows(weft_schedule *s, int x, int64_t lanes)
{
    const weft_stage *st = &s->stages[x];
    const weft_tensor *op = st->op;
    int n = op->ndim;
    char loops[WEFT_MAX_DIMS][WEFT_SCHED_NAME + 8], par[WEFT_SCHED_NAME], sname[WEFT_SCHED_NAME];
    for (int d = 0; d < n; d++) snprintf(loops[d], sizeof loops[d], "%s", st->iters[d].name);
    last_walk w = {op, op->n_reduce >= 1 && op->n_reduce <= 2 && n >= 2 && op->body && op->shape[n - 1] >= 4, false};
    if (w.ok) scan_last_walk(&w, op->body);
    if (!w.ok || !w.seen) return weft_sched_fuse_parallel(s, x, loops, n, true, par);
    snprintf(sname, sizeof sname, "%s", st->name);
    char last[WEFT_SCHED_NAME + 8], red[2][WEFT_SCHED_NAME];
    snprintf(last, sizeof last, "%s", loops[n - 1]);
    for (int r = 0; r < op->n_reduce; r++) snprintf(red[r], sizeof red[r], "%s", st->iters[n + r].name);
    weft_status rc = weft_sched_fuse_parallel(s, x, loops, n - 1, true, par);
    bool split = op->shape[n - 1] > 2 * lanes;
    if (rc == WEFT_OK && split) rc = weft_sched_stepf(s, "split %s %s %lld", sname, last, (long long)lanes);
    char vec[WEFT_SCHED_NAME + 12], outer[WEFT_SCHED_NAME + 12];
    snprintf(vec, sizeof vec, split ? "%s.1" : "%s", last);
    snprintf(outer, sizeof outer, "%s.0", last);
    if (rc == WEFT_OK) {
        char line[512];
        int len = snprintf(line, sizeof line, "reorder %s", sname);
        if (split) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer);
        for (int r = 0; r < op->n_reduce; r++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", red[r]);
        snprintf(line + len, sizeof line - (size_t)len, " %s", vec);
        rc = weft_schedule_apply(s, line);
    }
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", sname, vec);
    return rc;
}

static void find_float_div(void *ud, const weft_expr *e)
{
    bool *found = ud;
    if (*found) return;
    if (e->kind == WEFT_EXPR_DIV && weft_dtype_is_float(e->dtype)) {
        *found = true;
        return;
    }
    weft_expr_each_child(e, find_float_div, ud);
}

/* Stage p is elementwise, not an output, divides floats, and a reduction with reuse (a
 * matmul-like stage, which reads each of p's elements many times) reads it directly. */
static bool divided_operand(const weft_schedule *s, int p)
{
    const weft_tensor *op = s->stages[p].op;
    if (s->stages[p].is_output || op->n_reduce || !op->body || op->ndim < 2 ||
        weft_tensor_pattern(op) != WEFT_PATTERN_ELEMWISE)
        return false;
    bool div = false;
    find_float_div(&div, op->body);
    if (!div) return false;
    for (int q = 0; q < s->n_stages; q++)
        if (q != p && weft_sched_reads(s, q, p) && weft_tensor_pattern(s->stages[q].op) == WEFT_PATTERN_OUT_REDUCTION_REUSE)
            return true;
    return false;
}

/* Counts expression nodes (shared ones once per use), stopping at COSTLY_NODES. */
enum { COSTLY_NODES = 32, BROADCAST_READS = 4 };
static void count_nodes(void *ud, const weft_expr *e)
{
    int *n = ud;
    if (*n >= COSTLY_NODES) return;
    (*n)++;
    weft_expr_each_child(e, count_nodes, ud);
}

/* The axes of reader r that occur in the indices r's body reads tensor p at (a bit per axis). */
typedef struct axes_read {
    const weft_tensor *p, *r;
    unsigned used;
    bool found; /* r reads p at all */
} axes_read;

static void mark_axes(void *ud, const weft_expr *e)
{
    axes_read *c = ud;
    if (e->kind == WEFT_EXPR_TLOAD && weft_expr_tload_tensor(e) == c->p && (c->found = true))
        for (int i = 0; i < weft_expr_tload_n(e); i++)
            for (int d = 0; d < c->r->ndim && d < 32; d++)
                if (weft_expr_uses_var(weft_expr_tload_idx(e, i), weft_te_axis(c->r, d))) c->used |= 1u << d;
    weft_expr_each_child(e, mark_axes, ud);
}

/* Whether some stage reads stage p broadcast: along an axis of its own that none of its
 * indices into p uses (each element of p read again for every position of that axis), or
 * reads it whole but is itself inlined into a broadcast reader (an elementwise or injective
 * stage that is not an output: TopK's indices plus a row offset, then gathered for every
 * channel). */
static bool read_broadcast(const weft_schedule *s, int p, int depth)
{
    if (depth > 8) return true;
    for (int q = 0; q < s->n_stages; q++) {
        const weft_tensor *r = s->stages[q].op;
        if (q == p || !r->body || r->ndim > 32) continue;
        axes_read c = {s->stages[p].ref, r, 0, false};
        mark_axes(&c, r->body);
        if (!c.found) continue;
        if (c.used != (r->ndim == 32 ? ~0u : (1u << r->ndim) - 1)) return true;
        weft_op_pattern pat = weft_tensor_pattern(r);
        if (!s->stages[q].is_output && (pat == WEFT_PATTERN_ELEMWISE || pat == WEFT_PATTERN_INJECTIVE) &&
            read_broadcast(s, q, depth + 1))
            return true;
    }
    return false;
}

/* Stage p is elementwise, not an output, its expression long (COSTLY_NODES nodes or more), an
 * output has BROADCAST_READS times its elements or more, and a stage reads it broadcast:
 * inlined, the expression would be evaluated once per output element. TopK's Indices (a
 * select over its k rounds' positions) read by a gather of 64 channels of neighbours (DGCNN):
 * 5120 indices computed 327680 times. A concatenation of four upsampled maps reads each
 * element once (SegFormer's head): inlined, each is computed where the copy reads it. */
static bool costly_broadcast(const weft_schedule *s, int p)
{
    const weft_tensor *op = s->stages[p].op;
    if (s->stages[p].is_output || op->n_reduce || !op->body || op->ndim < 1) return false;
    int64_t most = 0;
    for (int q = 0; q < s->n_stages; q++)
        if (s->stages[q].is_output && weft_te_numel(s->stages[q].op) > most) most = weft_te_numel(s->stages[q].op);
    if (most < BROADCAST_READS * weft_te_numel(op)) return false;
    int nodes = 0;
    count_nodes(&nodes, op->body);
    return nodes >= COSTLY_NODES && read_broadcast(s, p, 0);
}

/* What stage x reads among the stages that are computed, not inlined: none, only reductions
 * (a TopK round the rounds before it), or a row that is no reduction (a softmax's sum its exp).
 * Factored into partials at a row loop, x's partial stage is then such a stage's reader, and
 * compute_at wants every reader at the consumer itself: the partials are computed at the row
 * loop too (weft_sched_rfactor_at), not inside x. */
typedef enum { READS_INPUTS, READS_REDUCTIONS, READS_ROW } computed_reads;

static computed_reads reads_computed(const weft_schedule *s, int x)
{
    computed_reads r = READS_INPUTS;
    for (int q = 0; q < s->n_stages; q++)
        if (q != x && s->stages[q].attach != WEFT_ATTACH_INLINE && s->stages[q].op->body && weft_sched_reads(s, x, q)) {
            if (!s->stages[q].op->n_reduce) return READS_ROW;
            r = READS_REDUCTIONS;
        }
    return r;
}

/* A plain matmul (one 2-D reduction over one axis, the rest elementwise) whose reused operand
 * is a 2-D input, i.e. not laid out for the register tile at compile time, with enough rows
 * to amortise packing it (more than 8 register tiles: measured, 32x512x512 ran 1.5x faster
 * unpacked and 128x768x3072 3x faster packed): the packed schedule of manual.c. */
static bool plain_matmul(const weft_schedule *s, const weft_target_caps *caps, int64_t lanes)
{
    int r = -1;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_tensor *op = s->stages[i].op;
        weft_op_pattern p = weft_tensor_pattern(op);
        if (p == WEFT_PATTERN_OUT_REDUCTION_REUSE && op->ndim == 2 && op->n_reduce == 1 && r < 0) r = i;
        else if (op->n_reduce || (p != WEFT_PATTERN_ELEMWISE && p != WEFT_PATTERN_INJECTIVE)) return false;
    }
    if (r < 0) return false;
    const weft_tensor *op = s->stages[r].op;
    int u, v;
    weft_sched_choose_tile_axes(op, &u, &v);
    const weft_tensor *b = weft_sched_reused_input(s->func, op, 1);
    return u == 0 && v == 1 && b && b->ndim == 2 && op->shape[0] > 8 * weft_sched_tile_rows(caps) &&
           op->shape[1] >= 2 * lanes && op->reduce_axis[0].extent >= 16;
}

/* An elementwise output nest of fewer elements than this runs serially inside a kernel of several
 * outputs (a recurrent step's gates and state copies, [batch, hidden] each): its work is about
 * as long as a fork-join (a kernel of one small output runs serially anyway, model/compile.c). */
#define SMALL_NEST 4096

/* Vectors per row of a register tile of `rows` rows: WEFT_SCHED_TILE_VECS when rows fill the
 * tile (weft_sched_tile_rows), more when there are fewer rows (a product of 2-5 rows: a
 * recurrent step at a small batch, a few tokens), so the tile keeps about as many accumulators
 * and each row's broadcast serves more weight vectors; at most what fits beside one operand
 * vector per column vector and the broadcast. */
static int64_t small_rows_cap(int64_t rows, const weft_target_caps *caps)
{
    int64_t full = weft_sched_tile_rows(caps), regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    if (rows >= full || rows < 1) return WEFT_SCHED_TILE_VECS;
    int64_t vecs = full * WEFT_SCHED_TILE_VECS / rows, fit = (regs - 1) / (rows + 1);
    vecs = vecs < fit ? vecs : fit;
    return vecs > WEFT_SCHED_TILE_VECS ? vecs : WEFT_SCHED_TILE_VECS;
}

/* Was stage x split by rfactor (a stage "<x>.rf" holds its partial sums)? */
static bool rfactored(const weft_schedule *s, int x)
{
    char rf[WEFT_SCHED_NAME + 4];
    snprintf(rf, sizeof rf, "%s.rf", s->stages[x].name);
    return weft_sched_find_stage(s, rf) >= 0;
}

/* An elementwise output that transposes (weft_sched_transposed_axis gives the axis a its reads
 * walk contiguously): a and the last axis t in tiles of `lanes`, a's inner loop vectorized
 * inside t's, the other loops and both outer ones fused (parallel unless `parallel` is false).
 * Each vector then loads contiguously and the LLVM target stores the t loop's vectors
 * transposed in registers: attention's K^T written from the QKV product, [8, 32, 128] out of
 * [128, 768], took 27 us with a gather per vector (Zen 4, one thread). */
static weft_status schedule_transposed(weft_schedule *s, int y, int a, int64_t lanes, bool parallel, char *par)
{
    const weft_stage *st = &s->stages[y];
    int n = st->op->ndim, t = n - 1;
    char sname[WEFT_SCHED_NAME], outer[WEFT_MAX_DIMS + 1][WEFT_SCHED_NAME + 8], inner[2][WEFT_SCHED_NAME + 8];
    int n_outer = 0;
    snprintf(sname, sizeof sname, "%s", st->name);
    for (int d = 0; d < n; d++)
        if (d != a && d != t) snprintf(outer[n_outer++], sizeof outer[0], "%s", st->iters[d].name);
    weft_status rc = WEFT_OK;
    const int axes[2] = {a, t};
    for (int k = 0; k < 2 && rc == WEFT_OK; k++) {
        char name[WEFT_SCHED_NAME];
        snprintf(name, sizeof name, "%s", s->stages[y].iters[axes[k]].name);
        if (st->op->shape[axes[k]] > lanes) {
            rc = weft_sched_stepf(s, "split %s %s %lld", sname, name, (long long)lanes);
            snprintf(outer[n_outer++], sizeof outer[0], "%s.0", name);
            snprintf(inner[k], sizeof inner[k], "%s.1", name);
        } else snprintf(inner[k], sizeof inner[k], "%s", name);
    }
    char line[1024];
    int len = snprintf(line, sizeof line, "reorder %s", sname);
    for (int i = 0; i < n_outer; i++) len += snprintf(line + len, sizeof line - (size_t)len, " %s", outer[i]);
    snprintf(line + len, sizeof line - (size_t)len, " %s %s", inner[1], inner[0]);
    if (rc == WEFT_OK) rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK) rc = weft_sched_fuse_parallel(s, y, outer, n_outer, parallel, par);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s", sname, inner[0]);
    return rc;
}

weft_status weft_schedule_default(weft_schedule *s, const weft_target_caps *caps)
{
    if (caps && caps->has_thread_binding) return weft_schedule_default_gpu(s, caps); /* schedule/default_gpu.c */
    int64_t lanes = caps && caps->vector_lanes_f32 > 1 ? caps->vector_lanes_f32 : 8;
    weft_status rc = WEFT_OK;
    if (plain_matmul(s, caps, lanes)) return weft_schedule_manual_matmul(s, caps);
    bool conv_done = false;
    if ((rc = weft_schedule_default_conv(s, caps, &conv_done)) != WEFT_OK || conv_done) return rc;
    /* 0. Operands a matmul-like stage reads transposed (attention's K^T): packed, not inlined. */
    char pack[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME], pack_reader[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    int n_pack = 0;
    bool packed[WEFT_SCHED_MAX_STAGES] = {false};
    for (int i = 0; i < s->n_stages; i++) {
        int p = weft_sched_pack_operand(s, i);
        if (p < 0 || packed[p]) continue;
        packed[p] = true;
        snprintf(pack[n_pack], WEFT_SCHED_NAME, "%s", s->stages[p].name);
        snprintf(pack_reader[n_pack++], WEFT_SCHED_NAME, "%s", s->stages[i].name);
    }
    /* 1. Inline elementwise and injective stages that are not outputs, but for a division an
     * operand of a matmul-like stage is scaled by (attention's Q / sqrt(d)): computed once at
     * root instead (inlined, the product divided each element it broadcast, once per column
     * block: 131k scalar divisions per head set, 2.6x the kernel's time). */
    bool scaled[WEFT_SCHED_MAX_STAGES] = {false};
    for (int i = 0; i < s->n_stages; i++) scaled[i] = !packed[i] && (divided_operand(s, i) || costly_broadcast(s, i));
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++) {
        weft_op_pattern p = weft_tensor_pattern(s->stages[i].op);
        if (!s->stages[i].is_output && (p == WEFT_PATTERN_ELEMWISE || p == WEFT_PATTERN_INJECTIVE) &&
            !weft_sched_keep_row_stage(s, i) && !packed[i] && !scaled[i])
            rc = weft_sched_stepf(s, "compute_inline %s", s->stages[i].name);
    }
    for (int i = 0; i < s->n_stages && rc == WEFT_OK; i++)
        if (scaled[i]) rc = rows_in_vectors(s, i, lanes);
    /* 2. Outputs, and the reductions they are fused with. Stage indices shift when a cache
     * stage is inserted, so outputs are found by name each time. */
    char outputs[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    int n_out = 0;
    for (int i = 0; i < s->n_stages; i++)
        if (s->stages[i].is_output) snprintf(outputs[n_out++], WEFT_SCHED_NAME, "%s", s->stages[i].name);
    /* output o's row loop, by output (stage indices shift as stages are inserted) */
    char row_loop[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    memset(row_loop, 0, sizeof row_loop);
    char whole[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME]; /* products register-tiled at root */
    int n_whole = 0;
    for (int o = 0; o < n_out && rc == WEFT_OK; o++) {
        int y = weft_sched_find_stage(s, outputs[o]);
        weft_op_pattern p = weft_tensor_pattern(s->stages[y].op);
        int r = -1;
        if ((p == WEFT_PATTERN_OUT_REDUCTION_REUSE || p == WEFT_PATTERN_REDUCTION) &&
            weft_sched_wants_rfactor(s->stages[y].op, lanes)) {
            rc = weft_sched_rfactor_rows(s, outputs[o], lanes, caps);
            continue;
        }
        if (p == WEFT_PATTERN_OUT_REDUCTION_REUSE) {
            rc = weft_sched_stepf(s, "cache_write %s local", outputs[o]);
            if (rc != WEFT_OK) break;
            y = weft_sched_find_stage(s, outputs[o]);
            r = y - 1;
        } else if (p == WEFT_PATTERN_REDUCTION) {
            rc = parallel_rows(s, y, lanes);
            continue;
        } else {
            for (int q = 0; q < s->n_stages; q++)
                if (s->stages[q].attach == WEFT_ATTACH_ROOT && !s->stages[q].is_output &&
                    weft_tensor_pattern(s->stages[q].op) == WEFT_PATTERN_OUT_REDUCTION_REUSE && only_reader(s, q) == y &&
                    s->stages[q].op->ndim == s->stages[y].op->ndim)
                    r = q;
            /* A matrix-vector product under an elementwise epilogue (a Gemm with a bias into one
             * column): partial sums along K as for a bare one, the epilogue a plain loop over the
             * few outputs. Vectorized across rows it read A in gathers of stride K (197 x 1001:
             * 94 us, 4 GFLOP/s). */
            if (r >= 0 && weft_sched_wants_rfactor(s->stages[r].op, lanes)) {
                char rn[WEFT_SCHED_NAME];
                snprintf(rn, sizeof rn, "%s", s->stages[r].name);
                rc = weft_sched_rfactor_rows(s, rn, lanes, caps);
                continue;
            }
        }
        const weft_tensor *op = s->stages[y].op;
        int n = op->ndim;
        int64_t elems = 1;
        for (int d = 0; d < n; d++) elems *= op->shape[d];
        int64_t tw = lanes;
        int ta = r < 0 && p != WEFT_PATTERN_OUT_REDUCTION_REUSE ? weft_sched_transposed_axis(s, y, lanes, &tw) : -1;
        if (ta >= 0) {
            rc = schedule_transposed(s, y, ta, tw, n_out < 2 || elems >= SMALL_NEST, row_loop[o]);
            continue;
        }
        int64_t tiles[WEFT_MAX_DIMS];
        int u = -1, v = n - 1;
        for (int d = 0; d < n; d++) tiles[d] = 1;
        if (r >= 0) {
            weft_sched_choose_tile_axes(s->stages[r].op, &u, &v);
            /* Axes after the vector axis keep tile 1 so it is innermost in the accumulator. */
            int64_t cap = u >= 0      ? WEFT_SCHED_TILE_VECS * lanes
                          : v == n - 1 ? weft_sched_row_vector_tile(s->stages[r].op, v, lanes, caps)
                                       : 4 * lanes;
            if (u >= 0) {
                tiles[u] = weft_sched_fit_rows(op->shape[u], weft_sched_tile_rows(caps));
                cap = small_rows_cap(tiles[u], caps) * lanes;
                int64_t rows, vecs;
                if (weft_sched_streamed_tile(s, r, u, v, caps, &rows, &vecs)) {
                    tiles[u] = weft_sched_fit_tile(op->shape[u], rows, 1);
                    cap = vecs * lanes;
                } else if ((rows = weft_sched_row_streams(s, r, u, v, cap, caps)) > 0 && tiles[u] > rows)
                    tiles[u] = weft_sched_fit_tile(op->shape[u], rows, 1);
            }
            tiles[v] = weft_sched_fit_vector_tile(op->shape[v], cap, lanes);
        } else if (n) tiles[n - 1] = weft_sched_fit_tile(op->shape[n - 1], 2 * lanes, lanes);
        char attach[WEFT_SCHED_NAME], par[WEFT_SCHED_NAME];
        int first = r >= 0 ? weft_sched_dense_first_axis(s, r, u, v, op->shape, tiles, caps) : -1;
        rc = weft_sched_tile_first(s, y, tiles, first, n_out < 2 || r >= 0 || elems >= SMALL_NEST, attach, par);
        if (rc != WEFT_OK) break;
        snprintf(row_loop[o], WEFT_SCHED_NAME, "%s", par);
        if (r >= 0) {
            char rname[WEFT_SCHED_NAME];
            snprintf(rname, sizeof rname, "%s", s->stages[r].name);
            bool reads_pack = false; /* a packed operand is computed at the column-block loop too */
            for (int k = 0; k < n_pack; k++) reads_pack = reads_pack || !strncmp(pack_reader[k], rname, strlen(pack_reader[k]));
            int64_t kc = attach[0] && par[0] && strcmp(attach, par) && v == n - 1 && !reads_pack
                             ? weft_sched_rows_kblock(s, r, u, v, op->shape, tiles, first, caps) : 0;
            if (kc > 0) {
                rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, outputs[o], par);
                if (rc == WEFT_OK) rc = weft_sched_apply_rows_kblock(s, outputs[o], rname, u, v, tiles[u], kc, lanes, tiles, caps);
            } else {
                /* When one tile is the whole output (a recurrent step's [2, 48] product) there is
                 * no loop to compute the product at: it is the register tile at root, and step 3
                 * leaves it (it made a parallel loop over every output element inside the
                 * reduction loop, scalar: 1.6 GFLOP/s). */
                if (attach[0]) rc = weft_sched_stepf(s, "compute_at %s %s %s", rname, outputs[o], attach);
                else snprintf(whole[n_whole++], WEFT_SCHED_NAME, "%s", rname);
                /* a vector tile wider than one vector runs as native vectors (the last tile's empty
                 * vectors are then skipped, not computed masked) */
                bool wide = v == n - 1 && tiles[v] > lanes;
                if (rc == WEFT_OK) rc = weft_sched_register_tile(s, weft_sched_find_stage(s, rname), u, v, wide ? 0 : 64, tiles);
                if (rc == WEFT_OK && wide) rc = weft_sched_wide_vectors(s, outputs[o], rname, v, lanes);
            }
            for (int k = 0; k < n_pack && rc == WEFT_OK; k++)
                if (!strcmp(pack_reader[k], rname) || (!strncmp(pack_reader[k], rname, strlen(pack_reader[k])) &&
                                                       !strcmp(rname + strlen(pack_reader[k]), ".local")))
                    rc = weft_sched_pack_at(s, pack[k], outputs[o], par, first == v && par[0], lanes);
        }
    }
    /* 3. Remaining root reductions: at their reader's row loop, or parallel on their own. Row
     * stages are told apart by name first: a reduction factored into partials below no longer
     * reads its row stage itself. */
    char row_stages[WEFT_SCHED_MAX_STAGES][WEFT_SCHED_NAME];
    int n_row_stages = 0;
    for (int x = 0; x < s->n_stages; x++)
        if (!s->stages[x].op->n_reduce && weft_sched_keep_row_stage(s, x))
            snprintf(row_stages[n_row_stages++], WEFT_SCHED_NAME, "%s", s->stages[x].name);
    for (int x = s->n_stages - 1; x >= 0 && rc == WEFT_OK; x--) {
        weft_stage *st = &s->stages[x];
        bool row_stage = false;
        for (int k = 0; k < n_row_stages; k++) row_stage = row_stage || !strcmp(row_stages[k], st->name);
        if (st->attach != WEFT_ATTACH_ROOT || st->is_output || (!st->op->n_reduce && !row_stage)) continue;
        if (rfactored(s, x)) continue; /* its partial sums' rule scheduled it (step 2) */
        bool tiled = false;
        for (int k = 0; k < n_whole; k++) tiled = tiled || !strcmp(whole[k], st->name);
        if (tiled) continue;
        int y = only_reader(s, x);
        /* Readers computed at y count as y (readers come later, so they are attached first). */
        bool all_y = true;
        int yy = -1;
        for (int q = 0; q < s->n_stages; q++) {
            if (q == x || s->stages[q].attach == WEFT_ATTACH_INLINE || !weft_sched_reads(s, q, x)) continue;
            int top = s->stages[q].attach == WEFT_ATTACH_AT ? s->stages[q].at_stage : q;
            if (yy < 0) yy = top;
            all_y = all_y && top == yy && (q == top || s->stages[q].at_stage == top);
        }
        if (y < 0 && all_y) y = yy;
        if (y >= 0 && s->stages[y].attach == WEFT_ATTACH_AT && all_y) y = s->stages[y].at_stage;
        /* At y's row loop only when a row of y reads the same row of x: a softmax read
         * transposed (LeViT's attn.softmax(-1).transpose(-1, -2)) recomputed all 49 rows per
         * output row there (423 us for 9.6k outputs). */
        const char *rows = "";
        for (int o = 0; o < n_out && y >= 0; o++)
            if (!strcmp(outputs[o], s->stages[y].name)) rows = row_loop[o];
        bool at_rows = y >= 0 && all_y && s->stages[y].is_output && rows[0] && weft_sched_reads_rows_aligned(s, y, x);
        if (row_stage && at_rows && st->op->ndim == s->stages[y].op->ndim &&
            !memcmp(st->op->shape, s->stages[y].op->shape, sizeof(int64_t) * (size_t)st->op->ndim))
            rc = weft_sched_row_stage_at(s, x, y, rows, lanes);
        else if (row_stage) rc = rows_in_vectors(s, x, lanes);
        /* in vector partials, computed at the row loop too when x reads a row computed there
         * (a softmax's exp); a plain loop when x reads only other reductions computed there
         * (TopK's rounds, each reading the one before: LLVM vectorizes that loop itself, and the
         * partials at the row loop ran 1.2x slower: 16 of 256 over 512 rows 0.53 -> 0.65 ms) */
        else if (at_rows && reduces_last_axis_of(st->op, s->stages[y].op)) {
            computed_reads cr = reads_computed(s, x);
            rc = weft_sched_wants_rfactor(st->op, lanes) && cr != READS_REDUCTIONS
                     ? weft_sched_rfactor_at(s, x, y, rows, lanes, cr == READS_ROW)
                     : weft_sched_stepf(s, "compute_at %s %s %s", st->name, s->stages[y].name, rows);
        }
        /* a long row read at unit stride: partial results in vectors, as for an output (the
         * selection rounds of a TopK, each a MAX or MIN over the row: DGCNN's 10 of 256) */
        else if (weft_sched_wants_rfactor(st->op, lanes)) {
            char xname[WEFT_SCHED_NAME];
            snprintf(xname, sizeof xname, "%s", st->name);
            rc = weft_sched_rfactor_rows(s, xname, lanes, caps);
        } else rc = parallel_rows(s, x, lanes);
    }
    return rc;
}
