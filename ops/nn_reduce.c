/* Reductions: ReduceMean/Sum/Max/Min, Softmax/LogSoftmax, LayerNormalization.
 *
 * A reduction stage only has the kept dims as output axes (named like the input's axes at
 * those positions), with one reduction axis per reduced dim ("k", or "k0", "k1", ...). With
 * keepdims=1 an elementwise stage `name` then restores the extent-1 dims by reading the
 * reduction at the kept axes (a reduction stage with extent-1 output axes its body never reads
 * would classify as OUT_REDUCTION_REUSE). Stages: Reduce* "<name>.red" (Mean: "<name>.sum")
 * then `name`, or the reduction is `name` itself when nothing follows; Softmax "<name>.max",
 * "<name>.exp", "<name>.sum", then `name` = exp / sum (like ops/softmax.c); LayerNormalization
 * "<name>.sum", "<name>.mean", "<name>.sqsum", "<name>.rstd", then `name` (like
 * ops/layer_norm.c).
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

/* A reduction stage over X's kept dims with one reduction axis per reduced dim; xi receives
 * the full index list for reading X (kept axes and reduction axes in X's dim order). */
static weft_tensor *reduce_stage(weft_arena *a, const char *name, const weft_tensor *X, const bool *reduced,
                                 const weft_expr **xi)
{
    weft_tensor *R = X ? kept_stage(a, name, X, reduced) : NULL;
    if (!R) return NULL;
    int nr = 0, p = 0, r = 0;
    for (int d = 0; d < X->ndim; d++) nr += reduced[d];
    for (int d = 0; d < X->ndim; d++)
        xi[d] = reduced[d] ? weft_te_reduce_axis(a, R, nr == 1 ? "k" : reduce_axis_names[r++], X->shape[d])
                           : weft_te_axis(R, p++);
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

static bool is_mean(const weft_gnode *n) { return strcmp(n->op_type, "ReduceMean") == 0; }

static weft_reduce_kind reduce_kind(const weft_gnode *n)
{
    if (strcmp(n->op_type, "ReduceMax") == 0) return WEFT_REDUCE_MAX;
    if (strcmp(n->op_type, "ReduceMin") == 0) return WEFT_REDUCE_MIN;
    return WEFT_REDUCE_SUM;
}

weft_status weft_nn_reduce_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input data",
                                  is_mean(n) ? WEFT_NN_F32 : WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK)
        return st;
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

weft_status weft_nn_reduce_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    bool reduced[WEFT_NN_MAX_DIMS], noop;
    if ((st = reduce_axes(g, n, X->ndim, reduced, &noop)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    if (noop) {
        outs[0] = weft_nn_reshape_copy(a, name, X, X->ndim, X->shape);
        return weft_nn_done(a, n);
    }
    bool keep = out->ndim == X->ndim, mean = is_mean(n);
    int64_t count = 1;
    for (int d = 0; d < X->ndim; d++) count *= reduced[d] ? X->shape[d] : 1;
    bool single = !keep && !mean;
    const weft_expr *xi[WEFT_NN_MAX_DIMS];
    weft_tensor *R = reduce_stage(a, single ? name : weft_nn_stage(a, name, mean ? ".sum" : ".red"), X, reduced, xi);
    if (R) weft_te_set_body(R, reduce_kind(n), weft_tload(a, X, X->ndim, xi));
    weft_tensor *Y = R;
    if (!single) {
        Y = weft_nn_compute(a, name, out->ndim, out->shape);
        if (Y) {
            const weft_expr *idx[WEFT_NN_MAX_DIMS];
            weft_nn_axes(Y, idx);
            /* with keepdims the output axes line up with X's dims; without, they are the kept ones */
            const weft_expr *v = keep ? read_kept(a, R, X->ndim, reduced, idx) : weft_tload(a, R, out->ndim, idx);
            if (mean) v = weft_mul(a, v, weft_f32(a, 1.0 / (double)count));
            weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
        }
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

    weft_tensor *mx = reduce_stage(a, weft_nn_stage(a, name, ".max"), X, reduced, xi);
    if (mx) weft_te_set_body(mx, WEFT_REDUCE_MAX, weft_tload(a, X, r, xi));
    weft_tensor *e = weft_nn_compute(a, weft_nn_stage(a, name, ".exp"), r, X->shape);
    if (e) {
        weft_nn_axes(e, idx);
        const weft_expr *d = weft_sub(a, weft_tload(a, X, r, idx), read_kept(a, mx, r, reduced, idx));
        weft_te_set_body(e, WEFT_REDUCE_NONE, weft_call1(a, WEFT_INTRIN_EXP, d));
    }
    weft_tensor *s = reduce_stage(a, weft_nn_stage(a, name, ".sum"), X, reduced, xi);
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

    weft_tensor *sum = reduce_stage(a, weft_nn_stage(a, name, ".sum"), X, reduced, xi);
    if (sum) weft_te_set_body(sum, WEFT_REDUCE_SUM, weft_tload(a, X, r, xi));
    weft_tensor *mean = kept_stage(a, weft_nn_stage(a, name, ".mean"), X, reduced);
    if (mean) {
        weft_nn_axes(mean, idx);
        weft_te_set_body(mean, WEFT_REDUCE_NONE, weft_div(a, weft_tload(a, sum, mean->ndim, idx), n_f));
    }
    weft_tensor *sq = reduce_stage(a, weft_nn_stage(a, name, ".sqsum"), X, reduced, xi);
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
