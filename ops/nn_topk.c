/* TopK (ONNX opset 1, 10, 11; torch.topk and torch.sort export to it): the k largest (or, with
 * largest=0, smallest) elements along one axis, as Values (X's dtype) and Indices (int64), both
 * of X's shape with the axis extent replaced by k, always in sorted order (ties: the lower index
 * first, as ONNX specifies and PyTorch's CPU sort does). K is an attribute (opset 1) or a
 * one-element constant input (opset >= 10); a K computed at run time is refused.
 *
 * The order is a strict total order on (key, index): i precedes j when key_i is greater (largest)
 * or smaller (largest=0) than key_j, or the keys are equal and i < j. For floats key = x with NaN
 * replaced by +inf ("<name>.key", inlined by the default schedule), so a NaN counts as +inf: first
 * among the largest (after any +inf that precedes it by index), last among the smallest, and
 * Values still returns the NaN itself. Integers are their own key.
 *
 * Two formulations, both plain reductions over the axis, so every target and schedule applies:
 *
 *   k <= SELECT_MAX  selection: k rounds, each two reductions over the row: "<name>.m<r>" = the
 *                    best key after the (r-1)-th element in the order (a MAX or MIN of
 *                    select(after, key, identity)), and "<name>.p<r>" = the lowest index holding
 *                    it (a MIN of select(after && key == m_r, i, n), in int32: twice the lanes
 *                    of int64 per vector, the index passes 1.3-1.6x faster). O(k n) per row: a classifier
 *                    head's top 5 of 1000 is 10 passes over the row, where ranks are 10^6 compares;
 *                    a point cloud's 20 nearest of 1024 points 40 passes against 10^6.
 *   otherwise        ranks: "<name>.rank"[i] = #{j : j precedes i} (an int32 SUM over j; written
 *                    select(j < i, key_j >= key_i, key_j > key_i) for largest, one compare per
 *                    pair), then Indices[r] = SUM over i of select(rank_i == r, i, 0). O(n^2)
 *                    per row, so rows longer than RANK_MAX are refused.
 *
 * Indices is then `<name>.1` (a select over the k rounds, or the rank sum), and Values is `name`,
 * a gather x[.., Indices[.., r, ..], ..] (clamped like Gather), so the exact input element comes
 * back (NaN, -0.0) and Values costs O(k) per row on top of the indices. Either output may be
 * unused: a kernel computes only the stages its outputs read.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

/* k up to this: the selection rounds (2k row passes, 2k stages); above: ranks (n^2 per row).
 * The 10 nearest of 256 points (DGCNN) by ranks: 65536 compares per row, 5.3 ms for 512 rows
 * at one thread; by 20 passes 0.40 ms (ONNX Runtime's heap: 0.13). */
#define SELECT_MAX 24
/* The longest row the rank formulation accepts: 65536^2 = 4.3e9 compares per row. */
#define RANK_MAX 65536

typedef struct topk_params {
    int ax;       /* the normalized axis */
    int64_t n;    /* X's extent along it */
    int64_t k;    /* elements kept, 0 <= k <= n */
    bool largest; /* else the smallest */
} topk_params;

/* Validates n's inputs and attributes against X; fills p. */
static weft_status topk_params_get(const weft_graph *g, const weft_gnode *n, const weft_gvalue *X, topk_params *p)
{
    weft_status st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), X->ndim, false, &p->ax);
    if (st != WEFT_OK) return st;
    if ((st = weft_nn_attr_flag(n, "largest", 1, &p->largest)) != WEFT_OK) return st;
    bool sorted;
    if ((st = weft_nn_attr_flag(n, "sorted", 1, &sorted)) != WEFT_OK) return st; /* output is sorted either way */
    p->n = X->shape[p->ax];
    if (n->n_inputs >= 2) { /* opset >= 10: a one-element constant input */
        int64_t v[2];
        int cnt = 0;
        if ((st = weft_nn_const_ints(g, n, 1, "K", v, 2, &cnt)) != WEFT_OK) return st;
        if (cnt != 1) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input K has %d elements, expected 1", cnt);
        p->k = v[0];
    } else {
        p->k = weft_gnode_attr_int(n, "k", INT64_MIN);
        if (p->k == INT64_MIN) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute k is missing (opset 1)");
    }
    if (p->k < 0 || p->k > p->n)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "k=%" PRId64 " is out of range [0, %" PRId64 "] (axis %d of X %s)",
                            p->k, p->n, p->ax, weft_nn_shape_str(X->ndim, X->shape).s);
    if (p->k > SELECT_MAX && p->n > RANK_MAX)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                            "axis %d of X %s has extent %" PRId64 ": k=%" PRId64 " > %d needs ranks, O(n^2) per row, "
                            "supported up to extent %d",
                            p->ax, weft_nn_shape_str(X->ndim, X->shape).s, p->n, p->k, SELECT_MAX, RANK_MAX);
    return WEFT_OK;
}

weft_status weft_nn_topk_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 2);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32 | WEFT_NN_I64)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input X is a scalar, expected at least 1 dim");
    topk_params p;
    if ((st = topk_params_get(g, n, X, &p)) != WEFT_OK) return st;
    int64_t shape[WEFT_NN_MAX_DIMS];
    memcpy(shape, X->shape, sizeof(int64_t) * (size_t)X->ndim);
    shape[p.ax] = p.k;
    if ((st = weft_nn_set_out(g, n, 0, X->dtype, X->ndim, shape)) != WEFT_OK) return st;
    if (n->n_outputs > 1) st = weft_nn_set_out(g, n, 1, WEFT_I64, X->ndim, shape);
    return st;
}

/* ---- building blocks --------------------------------------------------------------------- */

/* A stage over X's dims but the axis (named like X's default axes there). With `reduce`, one
 * reduction axis "k" over the axis; xi receives the index list reading X (the reduction axis at
 * ax), else the stage's axes where they exist. */
static weft_tensor *row_stage(weft_arena *a, const char *name, const weft_tensor *X, int ax, bool reduce,
                              const weft_expr **xi)
{
    const char *const *all = weft_nn_axis_names(X->ndim);
    const char *names[WEFT_NN_MAX_DIMS];
    int64_t shape[WEFT_NN_MAX_DIMS];
    int nk = 0;
    for (int d = 0; d < X->ndim; d++)
        if (d != ax) names[nk] = all[d], shape[nk++] = X->shape[d];
    weft_tensor *R = weft_te_compute(a, name, nk, shape, names);
    if (!R) return NULL;
    int p = 0;
    for (int d = 0; d < X->ndim; d++) xi[d] = d == ax ? NULL : weft_te_axis(R, p++);
    if (reduce) xi[ax] = weft_te_reduce_axis(a, R, "k", X->shape[ax]);
    return R;
}

/* Reads a row stage R at the index list idx over all of X's dims (idx[ax] ignored). */
static const weft_expr *read_row(weft_arena *a, const weft_tensor *R, int ndim, int ax, const weft_expr *const *idx)
{
    const weft_expr *x[WEFT_NN_MAX_DIMS];
    int p = 0;
    for (int d = 0; d < ndim; d++)
        if (d != ax) x[p++] = idx[d];
    return weft_tload(a, R, p, x);
}

/* The sort key at idx: the key stage's (floats) or X's own element. */
static const weft_expr *key_at(weft_arena *a, const weft_tensor *key, const weft_tensor *X, const weft_expr *const *idx)
{
    return weft_tload(a, key ? key : X, X->ndim, idx);
}

/* "<name>.key" = select(x != x, +inf, x) for float X; NULL (X is the key) otherwise. */
static weft_tensor *key_stage(weft_arena *a, const char *name, const weft_tensor *X)
{
    if (!weft_dtype_is_float(X->dtype)) return NULL;
    weft_tensor *K = weft_nn_compute(a, weft_nn_stage(a, name, ".key"), X->ndim, X->shape);
    if (K) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(K, idx);
        const weft_expr *x = weft_tload(a, X, X->ndim, idx);
        weft_te_set_body(K, WEFT_REDUCE_NONE,
                         weft_select(a, weft_cmp(a, WEFT_EXPR_NE, x, x), weft_f32(a, INFINITY), x));
    }
    return K;
}

/* ---- the two formulations of Indices ------------------------------------------------------ */

/* Element i (key kx) comes strictly after the previous round's pick (key pm at index pp):
 * its key is worse (LT for largest, GT otherwise), or equal at a higher index. */
static const weft_expr *after_pick(weft_arena *a, weft_expr_kind worse, const weft_expr *kx, const weft_expr *i,
                                   const weft_expr *pm, const weft_expr *pp)
{
    return weft_or(a, weft_cmp(a, worse, kx, pm),
                   weft_and(a, weft_cmp(a, WEFT_EXPR_EQ, kx, pm), weft_cmp(a, WEFT_EXPR_GT, weft_cast(a, WEFT_I32, i), pp)));
}

/* Selection rounds: m_r, p_r as the file comment says (a MAX of keys for largest, a MIN
 * otherwise); Indices[.., r, ..] = p_r, a select over r. */
static weft_tensor *indices_by_selection(weft_arena *a, const char *name, const char *iname, const weft_tensor *X,
                                         const weft_tensor *key, const topk_params *p, const int64_t *oshape)
{
    int r = X->ndim, ax = p->ax;
    weft_expr_kind worse = p->largest ? WEFT_EXPR_LT : WEFT_EXPR_GT;
    weft_reduce_kind best = p->largest ? WEFT_REDUCE_MAX : WEFT_REDUCE_MIN;
    weft_dtype kt = key ? key->dtype : X->dtype;
    const weft_tensor *m[SELECT_MAX] = {0}, *pos[SELECT_MAX] = {0};
    const weft_expr *xi[WEFT_NN_MAX_DIMS];
    for (int64_t q = 0; q < p->k; q++) {
        weft_tensor *M = row_stage(a, weft_arena_printf(a, "%s.m%" PRId64, name, q), X, ax, true, xi);
        if (!M) return NULL;
        const weft_expr *kx = key_at(a, key, X, xi), *after = NULL;
        if (q > 0)
            after =
                after_pick(a, worse, kx, xi[ax], read_row(a, m[q - 1], r, ax, xi), read_row(a, pos[q - 1], r, ax, xi));
        weft_te_set_body(M, best, after ? weft_select(a, after, kx, weft_te_reduce_identity(a, best, kt)) : kx);
        m[q] = M;
        weft_tensor *P = row_stage(a, weft_arena_printf(a, "%s.p%" PRId64, name, q), X, ax, true, xi);
        if (!P) return NULL;
        kx = key_at(a, key, X, xi);
        const weft_expr *hit = weft_cmp(a, WEFT_EXPR_EQ, kx, read_row(a, M, r, ax, xi));
        if (q > 0)
            hit = weft_and(
                a, hit,
                after_pick(a, worse, kx, xi[ax], read_row(a, m[q - 1], r, ax, xi), read_row(a, pos[q - 1], r, ax, xi)));
        weft_te_set_body(P, WEFT_REDUCE_MIN,
                         weft_select(a, hit, weft_cast(a, WEFT_I32, xi[ax]), weft_int(a, WEFT_I32, p->n)));
        pos[q] = P;
    }
    weft_tensor *I = weft_nn_compute(a, iname, r, oshape);
    if (I) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(I, idx);
        const weft_expr *v = read_row(a, pos[p->k - 1], r, ax, idx);
        for (int64_t q = p->k - 2; q >= 0; q--)
            v = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, idx[ax], weft_i64(a, q)), read_row(a, pos[q], r, ax, idx), v);
        weft_te_set_body(I, WEFT_REDUCE_NONE, weft_cast(a, WEFT_I64, v));
    }
    return I;
}

/* Ranks: "<name>.rank" (int32: rows are at most RANK_MAX long), then Indices as a SUM. */
static weft_tensor *indices_by_rank(weft_arena *a, const char *name, const char *iname, const weft_tensor *X,
                                    const weft_tensor *key, const topk_params *p, const int64_t *oshape)
{
    int r = X->ndim, ax = p->ax;
    weft_tensor *R = weft_nn_compute(a, weft_nn_stage(a, name, ".rank"), r, X->shape);
    if (!R) return NULL;
    const weft_expr *idx[WEFT_NN_MAX_DIMS], *jdx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(R, idx);
    memcpy(jdx, idx, sizeof jdx);
    const weft_expr *j = weft_te_reduce_axis(a, R, "k", p->n);
    jdx[ax] = j;
    const weft_expr *ki = key_at(a, key, X, idx), *kj = key_at(a, key, X, jdx);
    /* j precedes i: for j < i a tie counts (lower index first), for j > i it does not */
    const weft_expr *before = weft_select(a, weft_cmp(a, WEFT_EXPR_LT, j, idx[ax]),
                                          weft_cmp(a, p->largest ? WEFT_EXPR_GE : WEFT_EXPR_LE, kj, ki),
                                          weft_cmp(a, p->largest ? WEFT_EXPR_GT : WEFT_EXPR_LT, kj, ki));
    weft_te_set_body(R, WEFT_REDUCE_SUM, weft_select(a, before, weft_int(a, WEFT_I32, 1), weft_int(a, WEFT_I32, 0)));
    weft_tensor *I = weft_nn_compute(a, iname, r, oshape);
    if (!I) return NULL;
    const weft_expr *odx[WEFT_NN_MAX_DIMS], *rdx[WEFT_NN_MAX_DIMS];
    weft_nn_axes(I, odx);
    memcpy(rdx, odx, sizeof rdx);
    const weft_expr *i = weft_te_reduce_axis(a, I, "k", p->n);
    rdx[ax] = i;
    const weft_expr *hit = weft_cmp(a, WEFT_EXPR_EQ, weft_tload(a, R, r, rdx), weft_cast(a, WEFT_I32, odx[ax]));
    weft_te_set_body(I, WEFT_REDUCE_SUM, weft_select(a, hit, i, weft_i64(a, 0)));
    return I;
}

weft_status weft_nn_topk_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    topk_params p;
    if ((st = topk_params_get(g, n, weft_nn_in(g, n, 0), &p)) != WEFT_OK) return st;
    if (p.k == 0) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "k=0 gives empty outputs");
    int r = X->ndim;
    int64_t oshape[WEFT_NN_MAX_DIMS];
    memcpy(oshape, X->shape, sizeof(int64_t) * (size_t)r);
    oshape[p.ax] = p.k;
    const char *iname = weft_arena_printf(a, "%s.1", name);
    weft_tensor *key = key_stage(a, name, X);
    weft_tensor *I = p.k <= SELECT_MAX ? indices_by_selection(a, name, iname, X, key, &p, oshape)
                                       : indices_by_rank(a, name, iname, X, key, &p, oshape);
    weft_tensor *V = I ? weft_nn_compute(a, name, r, oshape) : NULL;
    if (V) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
        weft_nn_axes(V, idx);
        memcpy(x, idx, sizeof x);
        x[p.ax] = weft_nn_clamp(a, weft_tload(a, I, r, idx), 0, p.n - 1);
        weft_te_set_body(V, WEFT_REDUCE_NONE, weft_tload(a, X, r, x));
    }
    outs[0] = V;
    if (n->n_outputs > 1) outs[1] = I;
    return weft_nn_done(a, n);
}

/* ---- many of a long row on CPUs: a loop kernel -------------------------------------------- */
/* Where the ranks would take n^2 compares per row (k > SELECT_MAX) and k is at most a quarter
 * of a row of 32 or more, a CPU keeps the k best seen so far instead, as a sorted list per row
 * (values bv, indices bi, cnt of them filled) and visits the row once: an element better than
 * the list's last (or any while the list is not full) is inserted, the worse ones shifting one
 * place down. Visited in ascending index, an element equal to a listed one goes after it: the
 * order of the file comment (a NaN's key +inf). About n + k^2 ln(n / k) steps per row for
 * random data, n k at worst (a row sorted the wrong way). Rows run in parallel. The top 100 of
 * 1000 over 64 rows: 15.3 ms by ranks, 2.65 ms so. It loses where k is small (the 20 nearest
 * of 256: 0.70 ms against 0.30 for 40 vectorized passes) or near n (a full sort of 256: 0.51 ms
 * against 0.11 for the vectorized ranks). */
#define TOPK_LOOP_MIN_N 32

/* The sort key of element value v: +inf for a NaN (floats). */
static const weft_expr *loop_key(weft_arena *a, const weft_expr *v)
{
    if (!weft_dtype_is_float(v->dtype)) return v;
    return weft_select(a, weft_cmp(a, WEFT_EXPR_NE, v, v), weft_f32(a, INFINITY), v);
}

static weft_status topk_loop(weft_arena *a, const weft_graph *g, const weft_gnode *n, const int *params, int n_params,
                             const char *name, weft_loop_func **out)
{
    const weft_gvalue *Xv = weft_nn_in(g, n, 0);
    topk_params p;
    weft_status st = topk_params_get(g, n, Xv, &p);
    if (st != WEFT_OK) return st;
    const weft_buffer **bufs = weft_nn_loop_buffers(a, g, params, n_params);
    if (!bufs) return weft_fail(WEFT_ERR_NOMEM, "out of memory building a TopK kernel");
    const weft_buffer *X = weft_nn_loop_find(bufs, params, n_params, n->inputs[0]);
    const weft_buffer *V = weft_nn_loop_find(bufs, params, n_params, n->outputs[0]);
    const weft_buffer *I = n->n_outputs > 1 ? weft_nn_loop_find(bufs, params, n_params, n->outputs[1]) : NULL;
    if (!X || (!V && !I))
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "the kernel's parameters do not hold the node's input and outputs");
    int64_t inner = 1, rows = 1, k = p.k;
    for (int d = 0; d < Xv->ndim; d++)
        if (d > p.ax) inner *= Xv->shape[d];
        else if (d < p.ax) rows *= Xv->shape[d];
    rows *= inner;
    weft_buffer *bv = weft_buffer_new(a, "bv", X->dtype, 1, &k, WEFT_SCOPE_LOCAL, -1);
    weft_buffer *bi = weft_buffer_new(a, "bi", WEFT_I64, 1, &k, WEFT_SCOPE_LOCAL, -1);
    weft_buffer *cb = weft_buffer_new(a, "cnt", WEFT_I64, 1, (int64_t[]){1}, WEFT_SCOPE_LOCAL, -1);
    if (!bv || !bi || !cb) return weft_fail(WEFT_ERR_NOMEM, "out of memory building a TopK kernel");
    const weft_expr *row = weft_var(a, "row", WEFT_I64), *j = weft_var(a, "j", WEFT_I64);
    const weft_expr *s = weft_var(a, "s", WEFT_I64), *t = weft_var(a, "t", WEFT_I64), *zero = weft_i64(a, 0);
    const weft_expr *o = weft_floordiv(a, row, weft_i64(a, inner)), *i = weft_floormod(a, row, weft_i64(a, inner));
    const weft_expr *xbase = weft_add(a, weft_mul(a, o, weft_i64(a, p.n * inner)), i);
    const weft_expr *obase = weft_add(a, weft_mul(a, o, weft_i64(a, k * inner)), i);
    weft_expr_kind better = p.largest ? WEFT_EXPR_GT : WEFT_EXPR_LT;
    const weft_expr *x = weft_load(a, X, weft_add(a, xbase, weft_mul(a, j, weft_i64(a, inner))));
    const weft_expr *kx = loop_key(a, x), *cnt = weft_load(a, cb, zero);
    /* slot r = k - 1 - s, from the last: the one above it shifts down when x beats it, else x
     * lands at r when it beats r's element or r is the first empty slot */
    const weft_expr *r = weft_sub(a, weft_i64(a, k - 1), s);
    const weft_expr *up = weft_max(a, weft_sub(a, r, weft_i64(a, 1)), zero);
    const weft_expr *shift = weft_and(a, weft_and(a, weft_cmp(a, WEFT_EXPR_GE, r, weft_i64(a, 1)), weft_cmp(a, WEFT_EXPR_LT, up, cnt)),
                                      weft_cmp(a, better, kx, loop_key(a, weft_load(a, bv, up))));
    const weft_expr *place = weft_and(a, weft_cmp(a, WEFT_EXPR_LE, r, cnt),
                                      weft_or(a, weft_cmp(a, WEFT_EXPR_EQ, r, cnt),
                                              weft_cmp(a, better, kx, loop_key(a, weft_load(a, bv, r)))));
    const weft_stmt *moves[2] = {weft_store(a, bv, r, weft_load(a, bv, up)), weft_store(a, bi, r, weft_load(a, bi, up))};
    const weft_stmt *puts[2] = {weft_store(a, bv, r, x), weft_store(a, bi, r, j)};
    const weft_stmt *slot = weft_if(a, shift, weft_seq(a, 2, moves), weft_if(a, place, weft_seq(a, 2, puts), NULL));
    const weft_expr *enters = weft_or(a, weft_cmp(a, WEFT_EXPR_LT, cnt, weft_i64(a, k)),
                                      weft_cmp(a, better, kx, loop_key(a, weft_load(a, bv, weft_i64(a, k - 1)))));
    const weft_stmt *insert[2] = {
        weft_for(a, s, zero, weft_i64(a, k), WEFT_FOR_SERIAL, slot),
        weft_store(a, cb, zero, weft_min(a, weft_add(a, cnt, weft_i64(a, 1)), weft_i64(a, k)))};
    const weft_stmt *scan = weft_for(a, j, zero, weft_i64(a, p.n), WEFT_FOR_SERIAL,
                                     weft_if(a, enters, weft_seq(a, 2, insert), NULL));
    const weft_expr *at = weft_add(a, obase, weft_mul(a, t, weft_i64(a, inner)));
    const weft_stmt *writes[2] = {V ? weft_store(a, V, at, weft_load(a, bv, t)) : NULL,
                                  I ? weft_store(a, I, at, weft_load(a, bi, t)) : NULL};
    /* bv starts zeroed: `enters` reads its last slot before the list is full (a select, not a
     * branch), and that read must not be of uninitialised memory */
    const weft_stmt *body[4] = {
        weft_store(a, cb, zero, zero),
        weft_for(a, t, zero, weft_i64(a, k), WEFT_FOR_SERIAL, weft_store(a, bv, t, weft_nn_const(a, X->dtype, 0))),
        scan, weft_for(a, t, zero, weft_i64(a, k), WEFT_FOR_SERIAL, weft_seq(a, 2, writes))};
    const weft_stmt *per_row = weft_allocate(a, bv, weft_allocate(a, bi, weft_allocate(a, cb, weft_seq(a, 4, body))));
    const weft_stmt *all = weft_for(a, row, zero, weft_i64(a, rows), rows > 1 ? WEFT_FOR_PARALLEL : WEFT_FOR_SERIAL, per_row);
    *out = weft_nn_loop_func(a, name, bufs, n_params, all);
    return *out && !weft_arena_failed(a) ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory building a TopK kernel");
}

weft_op_loop_fn weft_nn_topk_loop(const weft_graph *g, const weft_gnode *n)
{
    if (!n->def || n->def->compute != weft_nn_topk_compute) return NULL;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    topk_params p;
    if (!X || X->ndim < 1 || topk_params_get(g, n, X, &p) != WEFT_OK) {
        weft_error_clear();
        return NULL;
    }
    return p.n >= TOPK_LOOP_MIN_N && p.k > SELECT_MAX && 4 * p.k <= p.n ? topk_loop : NULL;
}
