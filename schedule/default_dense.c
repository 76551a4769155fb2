/* Default-schedule rules for row kernels and dense (matmul-like) kernels, called from
 * default.c (see sched_util.h for the contracts). */
#include <string.h>

#include "ir/error.h"
#include "ir/pattern.h"
#include "schedule/sched_util.h"

static void find_costly_call(void *ud, const weft_expr *e)
{
    bool *found = ud;
    if (*found) return;
    if (e->kind == WEFT_EXPR_CALL) {
        weft_intrin fn = weft_expr_call_fn(e);
        if (fn == WEFT_INTRIN_EXP || fn == WEFT_INTRIN_LOG || fn == WEFT_INTRIN_ERF || fn == WEFT_INTRIN_TANH ||
            fn == WEFT_INTRIN_SIGMOID || fn == WEFT_INTRIN_POW || fn == WEFT_INTRIN_SIN || fn == WEFT_INTRIN_COS) {
            *found = true;
            return;
        }
    }
    weft_expr_each_child(e, find_costly_call, ud);
}

bool weft_sched_keep_row_stage(const weft_schedule *s, int p)
{
    const weft_tensor *op = s->stages[p].op;
    if (s->stages[p].is_output || op->n_reduce || !op->body || op->ndim == 0) return false;
    if (weft_tensor_pattern(op) != WEFT_PATTERN_ELEMWISE) return false;
    bool costly = false;
    find_costly_call(&costly, op->body);
    if (!costly) return false;
    int readers = 0;
    bool row_reduce = false;
    for (int q = 0; q < s->n_stages; q++) {
        if (q == p || !weft_sched_reads(s, q, p)) continue;
        readers++;
        const weft_tensor *r = s->stages[q].op;
        /* a reduction of p's rows: its shape is p's without the last axis (dropped or 1) */
        if (r->n_reduce && (r->ndim == op->ndim - 1 || (r->ndim == op->ndim && r->shape[op->ndim - 1] == 1))) {
            bool same = true;
            for (int d = 0; d < op->ndim - 1; d++) same = same && r->shape[d] == op->shape[d];
            row_reduce = row_reduce || same;
        }
    }
    return readers >= 2 && row_reduce;
}

weft_status weft_sched_row_stage_at(weft_schedule *s, int x, int y, const char *row_loop, int64_t lanes)
{
    char xname[WEFT_SCHED_NAME], yname[WEFT_SCHED_NAME], last[WEFT_SCHED_NAME];
    snprintf(xname, sizeof xname, "%s", s->stages[x].name);
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    const weft_tensor *op = s->stages[x].op;
    int n = op->ndim;
    snprintf(last, sizeof last, "%s", s->stages[x].iters[n - 1].name);
    weft_status rc = weft_sched_stepf(s, "compute_at %s %s %s", xname, yname, row_loop);
    int64_t extent = op->shape[n - 1];
    if (rc == WEFT_OK && extent > lanes) {
        rc = weft_sched_stepf(s, "split %s %s %lld", xname, last, (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", xname, last);
    } else if (rc == WEFT_OK && extent > 1) rc = weft_sched_stepf(s, "vectorize %s %s", xname, last);
    return rc;
}

int weft_sched_dense_first_axis(const weft_schedule *s, int r, int u, int v, const int64_t *out_shape,
                                const int64_t *tiles, const weft_target_caps *caps)
{
    const weft_tensor *op = s->stages[r].op;
    if (op->n_reduce != 1 || v < 0 || tiles[v] >= out_shape[v]) return -1;
    if (u < 0) return v == op->ndim - 1 ? v : -1; /* a matrix-vector product: parallel over column blocks */
    if (tiles[u] >= out_shape[u]) return -1;
    if (!weft_sched_reused_input(s->func, op, v) && weft_sched_pack_operand(s, r) < 0) return -1;
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    int64_t blocks = (out_shape[v] + tiles[v] - 1) / tiles[v];
    for (int d = 0; d < u; d++) blocks *= out_shape[d]; /* batch axes are fused with it */
    return blocks >= 2 * threads ? v : -1;
}

int64_t weft_sched_row_vector_tile(const weft_tensor *op, int v, int64_t lanes, const weft_target_caps *caps)
{
    int64_t n = op->shape[v];
    int regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    int64_t max_vecs = regs - 4 > 4 ? regs - 4 : 4; /* accumulators, a broadcast, spare */
    if (max_vecs * lanes > 256) max_vecs = 256 / lanes; /* the widest vectorized loop */
    if (op->n_reduce != 1 || lanes < 1) return 4 * lanes;
    int64_t vecs = (n + lanes - 1) / lanes;
    int64_t blocks = (vecs + max_vecs - 1) / max_vecs;
    if (blocks < threads && vecs >= 8 * threads) blocks = threads; /* every thread gets >= 8 vectors */
    return (vecs + blocks - 1) / blocks * lanes;
}

/* The output's inner loop over its last axis (AXIS.1, or AXIS when its tile is the whole axis)
 * split into native vectors. */
static weft_status out_vectors(weft_schedule *s, int y, int64_t lanes)
{
    char yv[WEFT_SCHED_NAME + 4], out[WEFT_SCHED_NAME];
    snprintf(out, sizeof out, "%s", s->stages[y].name);
    snprintf(yv, sizeof yv, "%s.1", s->stages[y].iters[s->stages[y].op->ndim - 1].name);
    bool split = false; /* the output's last axis keeps its name when its tile is the whole axis */
    for (int i = 0; i < s->stages[y].n_iters; i++) split = split || !strcmp(s->stages[y].iters[i].name, yv);
    if (!split) snprintf(yv, sizeof yv, "%s", s->stages[y].iters[s->stages[y].op->ndim - 1].name);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", out, yv, (long long)lanes);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", out, yv);
    return rc;
}

weft_status weft_sched_wide_vectors(weft_schedule *s, const char *out, const char *local, int v, int64_t lanes)
{
    int y = weft_sched_find_stage(s, out), r = weft_sched_find_stage(s, local);
    if (y < 0 || r < 0 || v >= s->stages[r].op->ndim) return weft_fail(WEFT_ERR_INTERNAL, "default schedule: no stage %s/%s", out, local);
    char rv[WEFT_SCHED_NAME];
    snprintf(rv, sizeof rv, "%s", s->stages[r].iters[v].name);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", local, rv, (long long)lanes);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s.0", local, rv);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", local, rv);
    if (rc == WEFT_OK) rc = out_vectors(s, weft_sched_find_stage(s, out), lanes);
    return rc;
}

/* The first tensor read by op's body along the vector axis v that does (uses_u) or does not
 * use the row axis u; with f, only f's inputs count. */
typedef struct operand_scan {
    const weft_tensor *op;
    int u, v;
    bool uses_u;
    const weft_te_func *f;
    const weft_tensor *found;
} operand_scan;

static bool is_input(const weft_te_func *f, const weft_tensor *t)
{
    for (int i = 0; i < f->n_inputs; i++)
        if (f->inputs[i] == t) return true;
    return false;
}

static void find_operand(void *ud, const weft_expr *e)
{
    operand_scan *sc = ud;
    if (sc->found) return;
    if (e->kind == WEFT_EXPR_TLOAD && weft_expr_uses_var(e, sc->op->axis[sc->v].var) &&
        weft_expr_uses_var(e, sc->op->axis[sc->u].var) == sc->uses_u &&
        (!sc->f || is_input(sc->f, weft_expr_tload_tensor(e)))) {
        sc->found = weft_expr_tload_tensor(e);
        return;
    }
    weft_expr_each_child(e, find_operand, ud);
}

int weft_sched_pack_operand(const weft_schedule *s, int r)
{
    const weft_tensor *op = s->stages[r].op;
    if (op->n_reduce != 1 || !op->body || weft_tensor_pattern(op) != WEFT_PATTERN_OUT_REDUCTION_REUSE) return -1;
    int u, v;
    weft_sched_choose_tile_axes(op, &u, &v);
    if (u < 0) return -1;
    operand_scan sc = {op, u, v, false, NULL, NULL};
    find_operand(&sc, op->body);
    if (!sc.found) return -1;
    for (int p = 0; p < s->n_stages; p++) {
        if (s->stages[p].op != sc.found) continue;
        if (s->stages[p].is_output || sc.found->n_reduce || weft_tensor_pattern(sc.found) != WEFT_PATTERN_INJECTIVE) return -1;
        for (int q = 0; q < s->n_stages; q++)
            if (q != p && q != r && weft_sched_reads(s, q, p)) return -1; /* r must be its only reader */
        return p;
    }
    return -1;
}

weft_status weft_sched_pack_at(weft_schedule *s, const char *stage, const char *out, const char *loop, bool packed,
                               int64_t lanes)
{
    int p = weft_sched_find_stage(s, stage);
    if (p < 0) return weft_fail(WEFT_ERR_INTERNAL, "default schedule: no stage %s", stage);
    if (!packed) return weft_sched_stepf(s, "compute_inline %s", stage);
    weft_status rc = weft_sched_stepf(s, "compute_at %s %s %s", stage, out, loop);
    const weft_tensor *op = s->stages[p].op;
    int n = op->ndim;
    if (rc == WEFT_OK && n > 0 && op->shape[n - 1] >= lanes) {
        char last[WEFT_SCHED_NAME];
        snprintf(last, sizeof last, "%s", s->stages[weft_sched_find_stage(s, stage)].iters[n - 1].name);
        rc = weft_sched_stepf(s, "split %s %s %lld", stage, last, (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", stage, last);
    }
    return rc;
}

int64_t weft_sched_fit_vector_tile(int64_t extent, int64_t cap, int64_t lanes)
{
    int64_t t = weft_sched_fit_tile(extent, cap, lanes);
    if (lanes > 1 && t >= extent && extent > lanes && extent % lanes) {
        int64_t half = (extent + 1) / 2;
        t = (half + lanes - 1) / lanes * lanes;
    }
    return t;
}

typedef struct contig_scan {
    const weft_tensor *op;
    bool reduce_unit, spatial_unit;
} contig_scan;

/* The variable a read's last index walks at unit stride: the bare variable, or floormod(var, c)
 * (a blocked layout's inner index: unit stride within each block of c, as in a weight laid out
 * [N/c, K, c]); NULL otherwise. */
static const weft_expr *unit_walk(const weft_expr *last)
{
    if (last->kind == WEFT_EXPR_VAR) return last;
    if (last->kind == WEFT_EXPR_FLOORMOD && weft_expr_a(last)->kind == WEFT_EXPR_VAR &&
        weft_expr_b(last)->kind == WEFT_EXPR_INT && weft_expr_int(weft_expr_b(last)) >= 2)
        return weft_expr_a(last);
    return NULL;
}

/* Which axes some read indexes last by a unit-stride walk (unit_walk). A spatial axis counts
 * only in a read that walks the reduction too (a column sum's X[k, j]); a per-row value read
 * once per row (the previous round's pick of a TopK selection, m[b, i]) streams nothing. */
static void scan_contig(void *ud, const weft_expr *e)
{
    contig_scan *sc = ud;
    if (e->kind == WEFT_EXPR_TLOAD && weft_expr_tload_n(e) > 0) {
        const weft_expr *last = weft_expr_tload_idx(e, weft_expr_tload_n(e) - 1), *walk = unit_walk(last);
        if (last == sc->op->reduce_axis[0].var) sc->reduce_unit = true;
        if (weft_expr_uses_var(e, sc->op->reduce_axis[0].var))
            for (int d = 0; d < sc->op->ndim; d++)
                if (walk == sc->op->axis[d].var && sc->op->shape[d] >= 2) sc->spatial_unit = true;
    }
    weft_expr_each_child(e, scan_contig, ud);
}

bool weft_sched_wants_rfactor(const weft_tensor *op, int64_t lanes)
{
    if (op->n_reduce != 1 || !op->body || op->reduce == WEFT_REDUCE_NONE || op->ndim < 1) return false;
    if (op->reduce_axis[0].extent < 4 * lanes) return false;
    contig_scan sc = {op, false, false};
    scan_contig(&sc, op->body);
    return sc.reduce_unit && !sc.spatial_unit;
}

weft_status weft_sched_rfactor_rows(weft_schedule *s, const char *out, int64_t lanes, const weft_target_caps *caps)
{
    int y = weft_sched_find_stage(s, out);
    if (y < 0) return weft_fail(WEFT_ERR_INTERNAL, "default schedule: no stage %s", out);
    const weft_tensor *op = s->stages[y].op;
    int64_t K = op->reduce_axis[0].extent, rows = 1;
    for (int d = 0; d < op->ndim; d++) rows *= op->shape[d];
    int threads = caps && caps->max_threads > 0 ? caps->max_threads : 1;
    /* Four vectors of partial sums when the row has at least eight (four independent add
     * chains), summed to one vector by a second rfactor so the serial final sum is one
     * vector long. */
    int64_t w = K >= 8 * lanes ? 4 * lanes : lanes;
    /* a width that divides K needs no guard in the inner loop (AVX2 37x1x1000: 6.3 us at 32
     * guarded lanes) */
    for (int64_t c = w; c >= lanes && K % w; c /= 2)
        if (K % c == 0) w = c;
    char k[WEFT_SCHED_NAME], last[WEFT_SCHED_NAME], rf[WEFT_SCHED_NAME + 4], fused[WEFT_SCHED_NAME * 2] = "", line[1024];
    snprintf(k, sizeof k, "%s", s->stages[y].iters[op->ndim].name);
    snprintf(last, sizeof last, "%s", s->stages[y].iters[op->ndim - 1].name);
    snprintf(rf, sizeof rf, "%s.rf", out);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", out, k, (long long)w);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "rfactor %s %s.1", out, k);
    bool two = w > lanes;
    if (rc == WEFT_OK && two) rc = weft_sched_stepf(s, "split %s %s.1 %lld", out, k, (long long)lanes);
    if (rc == WEFT_OK && two) rc = weft_sched_stepf(s, "rfactor %s %s.1.1", out, k);
    if (rc != WEFT_OK) return rc;
    y = weft_sched_find_stage(s, out);
    int len = snprintf(line, sizeof line, "fuse %s", out);
    for (int d = 0; d < op->ndim; d++) {
        len += snprintf(line + len, sizeof line - (size_t)len, " %s", s->stages[y].iters[d].name);
        strncat(fused, d ? "@" : "", sizeof fused - strlen(fused) - 1);
        strncat(fused, s->stages[y].iters[d].name, sizeof fused - strlen(fused) - 1);
    }
    if (strlen(fused) >= WEFT_SCHED_NAME) return weft_fail(WEFT_ERR_UNSUPPORTED, "default schedule: loop name %s is too long", fused);
    if (op->ndim >= 2) rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK && rows >= 2 * threads) rc = weft_sched_stepf(s, "parallel %s %s", out, fused);
    if (two) {
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s.rf2 %s %s", out, out, fused);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "reorder %s.rf2 %s.1.0 %s.1.1", out, k, k);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s.rf2 %s.1.1", out, k);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s.rf2 %s", rf, out, last);
    } else if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", rf, out, fused);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "reorder %s %s.0 %s.1", rf, k, k);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", rf, k);
    /* the final sum of one vector across its lanes, in registers (a reduction into one cell) */
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1%s", out, k, two ? ".1" : "");
    return rc;
}

weft_status weft_sched_rfactor_at(weft_schedule *s, int x, int y, const char *row_loop, int64_t lanes, bool rf_at_rows)
{
    const weft_tensor *op = s->stages[x].op;
    int64_t K = op->reduce_axis[0].extent;
    int64_t w = K >= 8 * lanes ? 4 * lanes : lanes; /* four independent chains on long rows */
    for (int64_t c = w; c >= lanes && K % w; c /= 2)
        if (K % c == 0) w = c;
    char xname[WEFT_SCHED_NAME], yname[WEFT_SCHED_NAME], k[WEFT_SCHED_NAME], rf[WEFT_SCHED_NAME + 4];
    snprintf(xname, sizeof xname, "%s", s->stages[x].name);
    snprintf(yname, sizeof yname, "%s", s->stages[y].name);
    snprintf(k, sizeof k, "%s", s->stages[x].iters[op->ndim].name);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", xname, k, (long long)w);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "rfactor %s %s.1", xname, k);
    if (rc != WEFT_OK) return rc;
    x = weft_sched_find_stage(s, xname); /* rfactor inserted the partial stage just before x */
    snprintf(rf, sizeof rf, "%s", s->stages[x - 1].name);
    char last[WEFT_SCHED_NAME];
    snprintf(last, sizeof last, "%s", s->stages[x].iters[op->ndim - 1].name);
    rc = weft_sched_stepf(s, "compute_at %s %s %s", xname, yname, row_loop);
    if (rc == WEFT_OK && rf_at_rows) rc = weft_sched_stepf(s, "compute_at %s %s %s", rf, yname, row_loop);
    else if (rc == WEFT_OK) rc = weft_sched_stepf(s, "compute_at %s %s %s", rf, xname, last);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "reorder %s %s.0 %s.1", rf, k, k);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", rf, k);
    /* the final reduction of the partials across lanes, in registers (a reduction into one cell) */
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", xname, k);
    return rc;
}

int64_t weft_sched_rows_kblock(const weft_schedule *s, int r, int u, int v, const int64_t *out_shape, const int64_t *tiles,
                               int first, const weft_target_caps *caps)
{
    const weft_tensor *op = s->stages[r].op;
    if (u < 0 || first != v || op->n_reduce != 1 || tiles[u] >= out_shape[u] || tiles[u] < 1) return 0;
    if (out_shape[u] > SMALL_M_ROW_TILES * weft_sched_tile_rows(caps)) return 0;
    for (int d = 0; d < op->ndim; d++) /* the accumulator covers every row at one column block */
        if (d != u && d != v && out_shape[d] > 1 && tiles[d] < out_shape[d] && d > u) return 0;
    long l1 = caps && caps->l1d_bytes > 0 ? caps->l1d_bytes : 32 * 1024;
    int64_t K = op->reduce_axis[0].extent, kc = (int64_t)(l1 / 2) / (tiles[v] * 4);
    if (kc < 16 || K < 2 * kc) return 0;
    return weft_sched_fit_tile(K, kc, 1);
}

weft_status weft_sched_apply_rows_kblock(weft_schedule *s, const char *out, const char *local, int u, int v, int64_t mr,
                                         int64_t kc, int64_t lanes, const int64_t *tiles, const weft_target_caps *caps)
{
    int r = weft_sched_find_stage(s, local);
    if (r < 0 || weft_sched_find_stage(s, out) < 0) return weft_fail(WEFT_ERR_INTERNAL, "default schedule: no stage %s", local);
    const weft_tensor *op = s->stages[r].op;
    int n = op->ndim;
    char name[WEFT_MAX_DIMS + 1][WEFT_SCHED_NAME], line[1024];
    for (int d = 0; d <= n; d++) snprintf(name[d], WEFT_SCHED_NAME, "%s", s->stages[r].iters[d].name);
    weft_status rc = weft_sched_stepf(s, "split %s %s %lld", local, name[u], (long long)mr);
    if (rc == WEFT_OK) rc = weft_sched_stepf(s, "split %s %s %lld", local, name[n], (long long)kc);
    if (rc != WEFT_OK) return rc;
    /* k.0, row tiles, k.1, then the tile: rows, columns (the other axes keep their order) */
    int len = snprintf(line, sizeof line, "reorder %s %s.0 %s.0 %s.1", local, name[n], name[u], name[n]);
    for (int d = 0; d < n; d++)
        if (d != v) len += snprintf(line + len, sizeof line - (size_t)len, d == u ? " %s.1" : " %s", name[d]);
    snprintf(line + len, sizeof line - (size_t)len, " %s", name[v]);
    rc = weft_schedule_apply(s, line);
    if (rc == WEFT_OK && mr > 1) rc = weft_sched_stepf(s, "unroll %s %s.1", local, name[u]);
    if (rc == WEFT_OK && tiles[v] > lanes) {
        rc = weft_sched_stepf(s, "split %s %s %lld", local, name[v], (long long)lanes);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "unroll %s %s.0", local, name[v]);
        if (rc == WEFT_OK) rc = weft_sched_stepf(s, "vectorize %s %s.1", local, name[v]);
        if (rc == WEFT_OK) rc = out_vectors(s, weft_sched_find_stage(s, out), lanes);
    } else if (rc == WEFT_OK && tiles[v] > 1) rc = weft_sched_stepf(s, "vectorize %s %s", local, name[v]);
    const weft_tensor *w = weft_sched_reused_input(s->func, op, v);
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    if (rc == WEFT_OK && w && weft_te_numel(w) * (int64_t)weft_dtype_bytes(w->dtype) > (int64_t)l2) rc = weft_sched_stepf(s, "pragma %s %s.0 prefetch %s", local, name[n], w->name);
    return rc;
}

bool weft_sched_streamed_tile(const weft_schedule *s, int r, int u, int v, const weft_target_caps *caps, int64_t *rows,
                              int64_t *vecs)
{
    const weft_tensor *op = s->stages[r].op, *w = u >= 0 ? weft_sched_reused_input(s->func, op, v) : NULL;
    int regs = caps && caps->vector_regs > 0 ? caps->vector_regs : 16;
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    int64_t full = weft_sched_tile_rows(caps), m = 1, bytes = 4;
    if (!w || op->n_reduce != 1) return false;
    for (int d = 0; d < op->ndim; d++) m *= d == v ? 1 : op->shape[d];
    for (int d = 0; d < w->ndim; d++) bytes *= w->shape[d];
    *rows = full / 2;
    *vecs = 2 * WEFT_SCHED_TILE_VECS;
    return m > *rows && m <= SMALL_M_ROW_TILES * full && bytes > 4 * (int64_t)l2 && *rows * *vecs + *vecs + 1 <= regs;
}

int64_t weft_sched_row_streams(const weft_schedule *s, int r, int u, int v, int64_t row_lanes, const weft_target_caps *caps)
{
    const weft_tensor *op = s->stages[r].op;
    if (u < 0 || v < 0 || op->n_reduce != 1 || !op->body) return 0;
    operand_scan sc = {op, u, v, true, s->func, NULL};
    find_operand(&sc, op->body);
    if (!sc.found) return 0;
    long l2 = caps && caps->l2_bytes > 0 ? caps->l2_bytes : 512 * 1024;
    int64_t bytes = weft_te_numel(sc.found) * (int64_t)weft_dtype_bytes(sc.found->dtype);
    int64_t row_bytes = (row_lanes < op->shape[v] ? row_lanes : op->shape[v]) * (int64_t)weft_dtype_bytes(sc.found->dtype);
    if (bytes <= (int64_t)l2 || row_bytes < 1) return 0;
    return STREAM_BYTES / row_bytes > 1 ? STREAM_BYTES / row_bytes : 1;
}
