/* Reductions: ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSumExp, ArgMax/ArgMin,
 * Softmax/LogSoftmax, LayerNormalization.
 *
 * A reduction stage only has the kept dims as output axes (named like the input's axes at
 * those positions), with one reduction axis per reduced dim ("k", or "k0", "k1", ...). With
 * keepdims=1 an elementwise stage `name` then restores the extent-1 dims by reading the
 * reduction at the kept axes (a reduction stage with extent-1 output axes its body never reads
 * would classify as OUT_REDUCTION_REUSE). Stages: Reduce* "<name>.red" (Mean: "<name>.sum";
 * LogSumExp: "<name>.max", "<name>.sum") then `name`, or the reduction is `name` itself when
 * nothing follows; ArgMax/ArgMin "<name>.ext", "<name>.idx" (or `name`), then `name`; Softmax "<name>.max",
 * "<name>.exp", "<name>.sum", then `name` = exp / sum (like ops/softmax.c); LayerNormalization
 * "<name>.sum", "<name>.mean", "<name>.sqsum", "<name>.rstd", then `name` (like
 * ops/layer_norm.c). CumSum below CUMSUM_BLOCKED along its axis is one reduction stage `name`
 * over the input's shape: y[.., i, ..] = sum over k of select(k <= i, x[.., k, ..], 0) (k < i
 * exclusive; k >= i, k > i reversed), n adds per element where a scan does 1: fine for the
 * position ids and short axes exported models use it on, and any schedule of a reduction
 * applies; longer axes go in blocks (cumsum_blocked).
 */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

static const char *const reduce_axis_names[WEFT_NN_MAX_DIMS] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};

/* A stage over X's kept dims (reduced[d] false), its axes named like X's default axes there. */
static weft_tensor *kept_stage(weft_arena *a, const char *name, const weft_tensor *X, const bool *reduced)
{
    const char *const *all = weft_nn_axis_names(X->ndim);
    const char *names[WEFT_NN_MAX_DIMS];
    int64_t shape[WEFT_NN_MAX_DIMS];
    int nk = 0;
    for (int d = 0; d < X->ndim; d++)
        if (!reduced[d]) names[nk] = all[d], shape[nk++] = X->shape[d];
    return weft_te_compute(a, name, nk, shape, names);
}

/* A reduction stage over X's kept dims with one reduction axis per run of adjacent reduced
 * dims (declared in ops/nn_internal.h). A run of dims d..e is one axis of their product's
 * extent, read as (k / (S[d+1]...S[e]), ..., (k / S[e]) % S[e-1], k % S[e]) (a dim of extent 1
 * as 0): lowering recombines the parts to k, so the run is one contiguous stretch the default
 * schedule can sum in vectors (a mean over 10x10 or 7x7 planes is one reduction of 100 or 49,
 * not rows shorter than a vector). */
weft_tensor *weft_nn_reduce_stage(weft_arena *a, const char *name, const weft_tensor *X, const bool *reduced,
                                  const char *axis, const weft_expr **xi)
{
    weft_tensor *R = X ? kept_stage(a, name, X, reduced) : NULL;
    if (!R) return NULL;
    int runs = 0, p = 0, r = 0;
    for (int d = 0; d < X->ndim; d++) runs += reduced[d] && (d == 0 || !reduced[d - 1]);
    for (int d = 0; d < X->ndim;) {
        if (!reduced[d]) {
            xi[d] = weft_te_axis(R, p++), d++;
            continue;
        }
        int e = d;
        int64_t ext = X->shape[d];
        while (e + 1 < X->ndim && reduced[e + 1]) ext *= X->shape[++e];
        const weft_expr *k = weft_te_reduce_axis(a, R, runs == 1 ? axis : reduce_axis_names[r++], ext);
        int64_t inner = 1; /* product of the run's extents after dim j */
        for (int j = e; j >= d; j--) {
            const weft_expr *v = inner == 1 ? k : weft_floordiv(a, k, weft_i64(a, inner));
            xi[j] = X->shape[j] == 1 ? weft_i64(a, 0) : j == d ? v : weft_floormod(a, v, weft_i64(a, X->shape[j]));
            inner *= X->shape[j];
        }
        d = e + 1;
    }
    return R;
}

/* Reads R (over the kept dims) from a stage whose axes idx cover all of X's dims. */
static const weft_expr *read_kept(weft_arena *a, const weft_tensor *R, int ndim, const bool *reduced,
                                  const weft_expr *const *idx)
{
    const weft_expr *x[WEFT_NN_MAX_DIMS];
    int p = 0;
    for (int d = 0; d < ndim; d++)
        if (!reduced[d]) x[p++] = idx[d];
    return weft_tload(a, R, p, x);
}

/* ---- ReduceMean / Sum / Max / Min -------------------------------------------------------- */

/* The reduced dims of n's input (empty axes: all, or none with noop_with_empty_axes). */
static weft_status reduce_axes(const weft_graph *g, const weft_gnode *n, int rank, bool *reduced, bool *noop)
{
    int64_t axes[WEFT_NN_MAX_DIMS];
    int cnt;
    weft_status st;
    if (weft_nn_has_in(n, 1))
        st = weft_nn_const_ints(g, n, 1, "axes", axes, WEFT_NN_MAX_DIMS, &cnt);
    else
        st = weft_nn_attr_ints(n, "axes", axes, WEFT_NN_MAX_DIMS, &cnt);
    if (st != WEFT_OK) return st;
    *noop = false;
    for (int d = 0; d < rank; d++) reduced[d] = cnt <= 0;
    if (cnt <= 0 && weft_gnode_attr_int(n, "noop_with_empty_axes", 0) != 0) {
        *noop = true;
        for (int d = 0; d < rank; d++) reduced[d] = false;
    }
    for (int j = 0; j < cnt; j++) {
        int ax;
        if ((st = weft_nn_axis(n, "axis", axes[j], rank, false, &ax)) != WEFT_OK) return st;
        if (reduced[ax]) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "axis %" PRId64 " is repeated in axes", axes[j]);
        reduced[ax] = true;
    }
    return WEFT_OK;
}

/* The Reduce* ops: y = post(REDUCE(pre(x))). LogSumExp reduces exp(x - m) after a max stage m
 * and adds m back: log(sum(exp(x - m))) + m. */
typedef enum reduce_op { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LSE, R_COUNT } reduce_op;

#define R_NUM (WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32)
static const struct {
    const char *op;
    weft_reduce_kind kind;
    unsigned dtypes;
} reduce_ops[R_COUNT] = {
    [R_SUM] = {"ReduceSum", WEFT_REDUCE_SUM, R_NUM},       [R_MEAN] = {"ReduceMean", WEFT_REDUCE_SUM, WEFT_NN_F32},
    [R_MAX] = {"ReduceMax", WEFT_REDUCE_MAX, R_NUM},       [R_MIN] = {"ReduceMin", WEFT_REDUCE_MIN, R_NUM},
    [R_PROD] = {"ReduceProd", WEFT_REDUCE_PROD, R_NUM},    [R_L1] = {"ReduceL1", WEFT_REDUCE_SUM, R_NUM},
    [R_L2] = {"ReduceL2", WEFT_REDUCE_SUM, WEFT_NN_F32},   [R_SUMSQ] = {"ReduceSumSquare", WEFT_REDUCE_SUM, R_NUM},
    [R_LSE] = {"ReduceLogSumExp", WEFT_REDUCE_SUM, WEFT_NN_F32},
};

static reduce_op reduce_find(const weft_gnode *n)
{
    for (int k = 0; k < R_COUNT; k++)
        if (strcmp(reduce_ops[k].op, n->op_type) == 0) return (reduce_op)k;
    return R_COUNT;
}

/* |x| (floats through fabs, integers as max(x, -x)). */
static const weft_expr *abs_of(weft_arena *a, const weft_expr *x)
{
    if (!x) return NULL;
    if (weft_dtype_is_float(x->dtype)) return weft_call1(a, WEFT_INTRIN_FABS, x);
    return weft_max(a, x, weft_sub(a, weft_nn_const(a, x->dtype, 0), x));
}

/* pre(x) of op k; m is the row maximum (LogSumExp only). */
static const weft_expr *reduce_pre(weft_arena *a, reduce_op k, const weft_expr *x, const weft_expr *m)
{
    switch (k) {
    case R_L1: return abs_of(a, x);
    case R_L2:
    case R_SUMSQ: return weft_mul(a, x, x);
    case R_LSE: return weft_call1(a, WEFT_INTRIN_EXP, weft_sub(a, x, m));
    default: return x;
    }
}

/* post(v) of op k over `count` reduced elements; m as for reduce_pre. */
static const weft_expr *reduce_post(weft_arena *a, reduce_op k, const weft_expr *v, int64_t count, const weft_expr *m)
{
    switch (k) {
    case R_MEAN: return weft_mul(a, v, weft_f32(a, 1.0 / (double)count));
    case R_L2: return weft_call1(a, WEFT_INTRIN_SQRT, v);
    case R_LSE: return weft_add(a, weft_call1(a, WEFT_INTRIN_LOG, v), m);
    default: return v;
    }
}

static bool has_post(reduce_op k) { return k == R_MEAN || k == R_L2 || k == R_LSE; }

weft_status weft_nn_reduce_infer(weft_graph *g, const weft_gnode *n)
{
    reduce_op k = reduce_find(n);
    if (k == R_COUNT) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a Reduce op");
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input data", reduce_ops[k].dtypes)) != WEFT_OK) return st;
    bool reduced[WEFT_NN_MAX_DIMS], noop;
    if ((st = reduce_axes(g, n, X->ndim, reduced, &noop)) != WEFT_OK) return st;
    bool keep = weft_gnode_attr_int(n, "keepdims", 1) != 0;
    int r = 0;
    int64_t shape[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) {
        if (!reduced[d]) shape[r++] = X->shape[d];
        else if (keep) shape[r++] = 1;
    }
    return weft_nn_set_out(g, n, 0, X->dtype, r, shape);
}

/* noop_with_empty_axes with empty axes: each element reduced alone, post(pre(x)) (so
 * ReduceSumSquare squares and ReduceL1/L2 take |x|, as numpy with axis=()). */
static weft_tensor *reduce_noop(weft_arena *a, const char *name, reduce_op k, const weft_tensor *X)
{
    if (k == R_SUM || k == R_MEAN || k == R_MAX || k == R_MIN || k == R_PROD || k == R_LSE)
        return weft_nn_reshape_copy(a, name, X, X->ndim, X->shape);
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        const weft_expr *x = weft_tload(a, X, X->ndim, idx);
        weft_te_set_body(Y, WEFT_REDUCE_NONE, k == R_L2 ? abs_of(a, x) : reduce_pre(a, k, x, NULL));
    }
    return Y;
}

weft_status weft_nn_reduce_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    reduce_op k = reduce_find(n);
    if (k == R_COUNT) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "not a Reduce op");
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    bool reduced[WEFT_NN_MAX_DIMS], noop;
    if ((st = reduce_axes(g, n, X->ndim, reduced, &noop)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    if (noop) {
        outs[0] = reduce_noop(a, name, k, X);
        return weft_nn_done(a, n);
    }
    bool keep = out->ndim == X->ndim;
    int64_t count = 1;
    for (int d = 0; d < X->ndim; d++) count *= reduced[d] ? X->shape[d] : 1;
    bool single = !keep && !has_post(k);
    const weft_expr *xi[WEFT_NN_MAX_DIMS];
    weft_tensor *mx = NULL;
    if (k == R_LSE) {
        mx = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".max"), X, reduced, "k", xi);
        if (mx) weft_te_set_body(mx, WEFT_REDUCE_MAX, weft_tload(a, X, X->ndim, xi));
    }
    const char *rname = single ? name : weft_nn_stage(a, name, k == R_MEAN || k == R_LSE ? ".sum" : ".red");
    weft_tensor *R = weft_nn_reduce_stage(a, rname, X, reduced, "k", xi);
    if (R) {
        const weft_expr *m = mx ? read_kept(a, mx, X->ndim, reduced, xi) : NULL;
        weft_te_set_body(R, reduce_ops[k].kind, reduce_pre(a, k, weft_tload(a, X, X->ndim, xi), m));
    }
    weft_tensor *Y = R;
    if (!single) {
        Y = weft_nn_compute(a, name, out->ndim, out->shape);
        if (Y) {
            const weft_expr *idx[WEFT_NN_MAX_DIMS];
            weft_nn_axes(Y, idx);
            /* with keepdims the output axes line up with X's dims; without, they are the kept ones */
            const weft_expr *v = keep ? read_kept(a, R, X->ndim, reduced, idx) : weft_tload(a, R, out->ndim, idx);
            const weft_expr *m = !mx ? NULL : keep ? read_kept(a, mx, X->ndim, reduced, idx)
                                                   : weft_tload(a, mx, out->ndim, idx);
            weft_te_set_body(Y, WEFT_REDUCE_NONE, reduce_post(a, k, v, count, m));
        }
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- ArgMax, ArgMin ---------------------------------------------------------------------- */

/* The axis, select_last_index and keepdims of an ArgMax/ArgMin over rank dims. */
static weft_status arg_attrs(const weft_gnode *n, int rank, int *ax, bool *last, bool *keep)
{
    weft_status st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), rank, false, ax);
    if (st != WEFT_OK) return st;
    if ((st = weft_nn_attr_flag(n, "select_last_index", 0, last)) != WEFT_OK) return st;
    return weft_nn_attr_flag(n, "keepdims", 1, keep);
}

weft_status weft_nn_arg_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input data", R_NUM)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input data is a scalar, expected at least 1 dim");
    int ax;
    bool last;
    bool keep;
    if ((st = arg_attrs(n, X->ndim, &ax, &last, &keep)) != WEFT_OK) return st;
    int r = 0;
    int64_t shape[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) {
        if (d != ax) shape[r++] = X->shape[d];
        else if (keep) shape[r++] = 1;
    }
    return weft_nn_set_out(g, n, 0, WEFT_I64, r, shape);
}

/* Stages "<name>.ext" (the max or min along axis), then the index: the smallest k with
 * x[k] == ext (a MIN reduction of select(x == ext, k, K)), or with select_last_index the largest
 * (MAX of select(x == ext, k, -1)); with keepdims `name` restores the extent-1 dim. */
weft_status weft_nn_arg_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int ax, r = X->ndim;
    bool last, keep;
    if ((st = arg_attrs(n, r, &ax, &last, &keep)) != WEFT_OK) return st;
    bool is_max = strcmp(n->op_type, "ArgMax") == 0;
    bool reduced[WEFT_NN_MAX_DIMS] = {false};
    reduced[ax] = true;
    const weft_expr *xi[WEFT_NN_MAX_DIMS];
    weft_tensor *ext = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".ext"), X, reduced, "k", xi);
    if (ext) weft_te_set_body(ext, is_max ? WEFT_REDUCE_MAX : WEFT_REDUCE_MIN, weft_tload(a, X, r, xi));
    weft_tensor *I = weft_nn_reduce_stage(a, keep ? weft_nn_stage(a, name, ".idx") : name, X, reduced, "k", xi);
    if (I) {
        const weft_expr *hit = weft_cmp(a, WEFT_EXPR_EQ, weft_tload(a, X, r, xi), read_kept(a, ext, r, reduced, xi));
        const weft_expr *miss = weft_i64(a, last ? -1 : X->shape[ax]);
        weft_te_set_body(I, last ? WEFT_REDUCE_MAX : WEFT_REDUCE_MIN, weft_select(a, hit, xi[ax], miss));
    }
    weft_tensor *Y = I;
    if (keep) {
        int64_t shape[WEFT_NN_MAX_DIMS];
        for (int d = 0; d < r; d++) shape[d] = d == ax ? 1 : X->shape[d];
        Y = weft_nn_compute(a, name, r, shape);
        if (Y) {
            const weft_expr *idx[WEFT_NN_MAX_DIMS];
            weft_nn_axes(Y, idx);
            weft_te_set_body(Y, WEFT_REDUCE_NONE, read_kept(a, I, r, reduced, idx));
        }
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- CumSum ------------------------------------------------------------------------------ */

/* From this length on, a CumSum is computed in blocks of CUMSUM_BLOCK along its axis: block
 * totals "<name>.blk" (a sum over each block), the totals of the blocks before an element's
 * own "<name>.pre" and the elements of its own block up to it "<name>.in", added in `name`:
 * about len / B + B adds per element instead of len (a linear transformer's running sums over
 * 96 steps: 5x fewer). Positions run backwards for `reverse`. */
enum { CUMSUM_BLOCKED = 32, CUMSUM_BLOCK = 8 };

/* X read at position q along axis ax (reversed: element len - 1 - q), other axes at idx. */
static const weft_expr *at_pos(weft_arena *a, const weft_tensor *X, int ax, bool rev, const weft_expr *const *idx,
                               const weft_expr *q)
{
    const weft_expr *xi[WEFT_NN_MAX_DIMS];
    memcpy(xi, idx, sizeof xi[0] * (size_t)X->ndim);
    xi[ax] = rev ? weft_sub(a, weft_i64(a, X->shape[ax] - 1), q) : q;
    return weft_tload(a, X, X->ndim, xi);
}

static weft_tensor *cumsum_blocked(weft_arena *a, const char *name, const weft_tensor *X, int ax, bool excl, bool rev)
{
    int r = X->ndim;
    int64_t len = X->shape[ax], B = CUMSUM_BLOCK, nb = (len + B - 1) / B, bshape[WEFT_NN_MAX_DIMS];
    memcpy(bshape, X->shape, sizeof bshape[0] * (size_t)r);
    bshape[ax] = nb;
    const weft_expr *zero = weft_dtype_eq(X->dtype, WEFT_F32) ? weft_f32(a, 0.0) : weft_i64(a, 0);
    const weft_expr *idx[WEFT_NN_MAX_DIMS];
    /* blk[.., b, ..] = sum over j < B of x at position b*B + j (inside the axis) */
    weft_tensor *blk = weft_nn_compute(a, weft_nn_stage(a, name, ".blk"), r, bshape);
    if (!blk) return NULL;
    weft_nn_axes(blk, idx);
    const weft_expr *j = weft_te_reduce_axis(a, blk, "rj", B); /* names apart from the axes' (n, c, h, w, d0, ...) */
    const weft_expr *q = weft_add(a, weft_mul(a, idx[ax], weft_i64(a, B)), j);
    const weft_expr *qc = weft_min(a, q, weft_i64(a, len - 1));
    weft_te_set_body(blk, WEFT_REDUCE_SUM, weft_select(a, weft_cmp(a, WEFT_EXPR_LT, q, weft_i64(a, len)), at_pos(a, X, ax, rev, idx, qc), zero));
    /* the element's position p and its block's first position */
    weft_tensor *pre = weft_nn_compute(a, weft_nn_stage(a, name, ".pre"), r, X->shape);
    weft_tensor *in = weft_nn_compute(a, weft_nn_stage(a, name, ".in"), r, X->shape);
    weft_tensor *Y = weft_nn_compute(a, name, r, X->shape);
    if (!pre || !in || !Y) return NULL;
    /* pre[.., i, ..] = sum over blocks c before p's block of blk[c] */
    weft_nn_axes(pre, idx);
    const weft_expr *p = rev ? weft_sub(a, weft_i64(a, len - 1), idx[ax]) : idx[ax];
    const weft_expr *c = weft_te_reduce_axis(a, pre, "rb", nb), *bi[WEFT_NN_MAX_DIMS];
    memcpy(bi, idx, sizeof bi[0] * (size_t)r);
    bi[ax] = c;
    weft_te_set_body(pre, WEFT_REDUCE_SUM,
                     weft_select(a, weft_cmp(a, WEFT_EXPR_LT, c, weft_floordiv(a, p, weft_i64(a, B))), weft_tload(a, blk, r, bi), zero));
    /* in[.., i, ..] = sum over j < B of x at position (p's block start) + j up to p (before p) */
    weft_nn_axes(in, idx);
    p = rev ? weft_sub(a, weft_i64(a, len - 1), idx[ax]) : idx[ax];
    j = weft_te_reduce_axis(a, in, "rj", B);
    q = weft_add(a, weft_mul(a, weft_floordiv(a, p, weft_i64(a, B)), weft_i64(a, B)), j);
    qc = weft_min(a, q, weft_i64(a, len - 1));
    weft_te_set_body(in, WEFT_REDUCE_SUM,
                     weft_select(a, weft_cmp(a, excl ? WEFT_EXPR_LT : WEFT_EXPR_LE, q, p), at_pos(a, X, ax, rev, idx, qc), zero));
    weft_nn_axes(Y, idx);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_add(a, weft_tload(a, pre, r, idx), weft_tload(a, in, r, idx)));
    return Y;
}

/* CumSum's axis (input 1: a constant integer scalar or one-element tensor) and flags. */
static weft_status cumsum_attrs(const weft_graph *g, const weft_gnode *n, int rank, int *ax, bool *excl, bool *rev)
{
    int64_t v[2];
    int cnt = 0;
    weft_status st = weft_nn_const_ints(g, n, 1, "axis", v, 2, &cnt);
    if (st != WEFT_OK) return st;
    if (cnt != 1) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input axis has %d elements, expected 1", cnt);
    if ((st = weft_nn_axis(n, "axis", v[0], rank, false, ax)) != WEFT_OK) return st;
    if ((st = weft_nn_attr_flag(n, "exclusive", 0, excl)) != WEFT_OK) return st;
    return weft_nn_attr_flag(n, "reverse", 0, rev);
}

weft_status weft_nn_cumsum_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input x", WEFT_NN_F32 | WEFT_NN_I64)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input x is a scalar, expected at least 1 dim");
    int ax;
    bool excl, rev;
    if ((st = cumsum_attrs(g, n, X->ndim, &ax, &excl, &rev)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, X->shape);
}

weft_status weft_nn_cumsum_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int ax, r = X->ndim;
    bool excl, rev;
    if ((st = cumsum_attrs(g, n, r, &ax, &excl, &rev)) != WEFT_OK) return st;
    int64_t len = X->shape[ax];
    if (len >= CUMSUM_BLOCKED) {
        outs[0] = cumsum_blocked(a, name, X, ax, excl, rev);
        return weft_nn_done(a, n);
    }
    weft_tensor *Y = weft_nn_compute(a, name, r, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *xi[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        memcpy(xi, idx, sizeof xi);
        const weft_expr *k = weft_te_reduce_axis(a, Y, "k", X->shape[ax]);
        xi[ax] = k;
        /* k <= i, k < i (exclusive); reversed: i <= k, i < k */
        const weft_expr *in = rev ? weft_cmp(a, excl ? WEFT_EXPR_LT : WEFT_EXPR_LE, idx[ax], k)
                                  : weft_cmp(a, excl ? WEFT_EXPR_LT : WEFT_EXPR_LE, k, idx[ax]);
        const weft_expr *zero = weft_dtype_eq(X->dtype, WEFT_F32) ? weft_f32(a, 0.0) : weft_i64(a, 0);
        weft_te_set_body(Y, WEFT_REDUCE_SUM, weft_select(a, in, weft_tload(a, X, r, xi), zero));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Softmax, LogSoftmax ----------------------------------------------------------------- */

weft_status weft_nn_softmax_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input is a scalar, expected at least 1 dim");
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), X->ndim, false, &ax)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, X->ndim, X->shape);
}

weft_status weft_nn_softmax_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                    const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int ax, r = X->ndim;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), r, false, &ax)) != WEFT_OK) return st;
    bool log_sm = strcmp(n->op_type, "LogSoftmax") == 0;
    bool reduced[WEFT_NN_MAX_DIMS] = {false};
    reduced[ax] = true;
    const weft_expr *xi[WEFT_NN_MAX_DIMS], *idx[WEFT_NN_MAX_DIMS];

    weft_tensor *mx = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".max"), X, reduced, "k", xi);
    if (mx) weft_te_set_body(mx, WEFT_REDUCE_MAX, weft_tload(a, X, r, xi));
    weft_tensor *e = weft_nn_compute(a, weft_nn_stage(a, name, ".exp"), r, X->shape);
    if (e) {
        weft_nn_axes(e, idx);
        const weft_expr *d = weft_sub(a, weft_tload(a, X, r, idx), read_kept(a, mx, r, reduced, idx));
        weft_te_set_body(e, WEFT_REDUCE_NONE, weft_call1(a, WEFT_INTRIN_EXP, d));
    }
    weft_tensor *s = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".sum"), X, reduced, "k", xi);
    if (s) weft_te_set_body(s, WEFT_REDUCE_SUM, weft_tload(a, e, r, xi));
    weft_tensor *Y = weft_nn_compute(a, name, r, X->shape);
    if (Y) {
        weft_nn_axes(Y, idx);
        const weft_expr *sum = read_kept(a, s, r, reduced, idx);
        if (log_sm) {
            const weft_expr *d = weft_sub(a, weft_tload(a, X, r, idx), read_kept(a, mx, r, reduced, idx));
            weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_sub(a, d, weft_call1(a, WEFT_INTRIN_LOG, sum)));
        } else {
            /* times the row's reciprocal: one division per row, not per element */
            const weft_expr *inv = weft_div(a, weft_f32(a, 1.0), sum);
            weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_mul(a, weft_tload(a, e, r, idx), inv));
        }
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- LayerNormalization ------------------------------------------------------------------ */

/* p (Scale or B) broadcasts to X's normalized dims [axis, rank). */
static weft_status check_norm_param(const weft_gnode *n, const weft_gvalue *X, int ax, const weft_gvalue *p,
                                    const char *what)
{
    weft_status st = weft_nn_check_dtype(n, p, what, WEFT_NN_F32);
    if (st != WEFT_OK) return st;
    int nd = X->ndim - ax, r;
    int64_t bs[WEFT_NN_MAX_DIMS];
    if (p->ndim > nd || weft_nn_broadcast(n, p->ndim, p->shape, nd, X->shape + ax, &r, bs) != WEFT_OK ||
        memcmp(bs, X->shape + ax, sizeof(int64_t) * (size_t)nd) != 0)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input %s has shape %s, expected %s (X %s from axis %d)", what,
                            weft_nn_shape_str(p->ndim, p->shape).s, weft_nn_shape_str(nd, X->shape + ax).s,
                            weft_nn_shape_str(X->ndim, X->shape).s, ax);
    return WEFT_OK;
}

weft_status weft_nn_layernorm_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0), *S = weft_nn_in(g, n, 1), *B = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, X, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input X is a scalar, expected at least 1 dim");
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), X->ndim, false, &ax)) != WEFT_OK ||
        (st = check_norm_param(n, X, ax, S, "Scale")) != WEFT_OK || (B && (st = check_norm_param(n, X, ax, B, "B"))))
        return st;
    return weft_nn_set_out(g, n, 0, WEFT_F32, X->ndim, X->shape);
}

weft_status weft_nn_layernorm_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                      const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    bool has_b = weft_nn_has_in(n, 2);
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK ||
        (has_b && (st = weft_nn_check_in(g, n, ins, 2)) != WEFT_OK))
        return st;
    const weft_tensor *X = ins[0];
    int ax, r = X->ndim;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), r, false, &ax)) != WEFT_OK) return st;
    double eps = weft_gnode_attr_float(n, "epsilon", 1e-5);
    bool reduced[WEFT_NN_MAX_DIMS] = {false};
    int64_t count = 1;
    for (int d = ax; d < r; d++) reduced[d] = true, count *= X->shape[d];
    const weft_expr *n_f = weft_f32(a, (double)count);
    const weft_expr *xi[WEFT_NN_MAX_DIMS], *idx[WEFT_NN_MAX_DIMS];

    weft_tensor *sum = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".sum"), X, reduced, "k", xi);
    if (sum) weft_te_set_body(sum, WEFT_REDUCE_SUM, weft_tload(a, X, r, xi));
    weft_tensor *mean = kept_stage(a, weft_nn_stage(a, name, ".mean"), X, reduced);
    if (mean) {
        weft_nn_axes(mean, idx);
        weft_te_set_body(mean, WEFT_REDUCE_NONE, weft_div(a, weft_tload(a, sum, mean->ndim, idx), n_f));
    }
    weft_tensor *sq = weft_nn_reduce_stage(a, weft_nn_stage(a, name, ".sqsum"), X, reduced, "k", xi);
    if (sq) {
        const weft_expr *d = weft_sub(a, weft_tload(a, X, r, xi), read_kept(a, mean, r, reduced, xi));
        weft_te_set_body(sq, WEFT_REDUCE_SUM, weft_mul(a, d, d));
    }
    weft_tensor *rstd = kept_stage(a, weft_nn_stage(a, name, ".rstd"), X, reduced);
    if (rstd) {
        weft_nn_axes(rstd, idx);
        const weft_expr *var = weft_div(a, weft_tload(a, sq, rstd->ndim, idx), n_f);
        weft_te_set_body(rstd, WEFT_REDUCE_NONE, weft_call1(a, WEFT_INTRIN_RSQRT, weft_add(a, var, weft_f32(a, eps))));
    }
    weft_tensor *Y = weft_nn_compute(a, name, r, X->shape);
    if (Y) {
        weft_nn_axes(Y, idx);
        const weft_expr *c = weft_sub(a, weft_tload(a, X, r, idx), read_kept(a, mean, r, reduced, idx));
        const weft_expr *v =
            weft_mul(a, weft_mul(a, c, read_kept(a, rstd, r, reduced, idx)), weft_nn_bcast_load(a, ins[1], r, idx));
        if (has_b) v = weft_add(a, v, weft_nn_bcast_load(a, ins[2], r, idx));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
