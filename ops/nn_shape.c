/* Shape-only graph ops. Aliases (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout):
 * the output is the input's buffer with another shape, so fusion needs no kernel; their
 * compute is still a row-major copy (weft_nn_reshape_copy), used by constant folding. Shape, Size
 * and ConstantOfShape depend on shapes alone: eval_static writes their data, and their
 * compute is a constant-valued stage.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"
#include "runtime/mem.h"

/* ---- aliases ----------------------------------------------------------------------------- */

static int64_t numel(int ndim, const int64_t *shape)
{
    int64_t p = 1;
    for (int d = 0; d < ndim; d++) p *= shape[d];
    return p;
}

weft_status weft_nn_reshape_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int64_t shape[WEFT_NN_MAX_DIMS + 1];
    int cnt;
    if ((st = weft_nn_const_ints(g, n, 1, "shape", shape, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
    bool allowzero = weft_gnode_attr_int(n, "allowzero", 0) != 0;
    int infer_at = -1;
    int64_t known = 1, total = weft_gvalue_numel(X);
    for (int d = 0; d < cnt; d++) {
        if (shape[d] == 0 && !allowzero) {
            if (d >= X->ndim)
                return weft_nn_fail(WEFT_ERR_SHAPE, n, "shape %s copies dim %d (0) but the input %s has %d dims",
                                    weft_nn_shape_str(cnt, shape).s, d, weft_nn_shape_str(X->ndim, X->shape).s,
                                    X->ndim);
            shape[d] = X->shape[d];
        }
        if (shape[d] == -1) {
            if (infer_at >= 0)
                return weft_nn_fail(WEFT_ERR_SHAPE, n, "shape %s has more than one -1",
                                    weft_nn_shape_str(cnt, shape).s);
            infer_at = d;
        } else if (shape[d] < 0) {
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "shape %s has a negative dim", weft_nn_shape_str(cnt, shape).s);
        } else {
            /* A product over the input's element count can never match it (and could overflow). */
            if (shape[d] > 0 && known > total / shape[d])
                return weft_nn_fail(WEFT_ERR_SHAPE, n, "cannot reshape input %s (%" PRId64 " elements) to %s",
                                    weft_nn_shape_str(X->ndim, X->shape).s, total, weft_nn_shape_str(cnt, shape).s);
            known *= shape[d];
        }
    }
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "cannot reshape input %s (%" PRId64 " elements) to %s",
                                weft_nn_shape_str(X->ndim, X->shape).s, total, weft_nn_shape_str(cnt, shape).s);
        shape[infer_at] = total / known;
    } else if (known != total) {
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "cannot reshape input %s (%" PRId64 " elements) to %s (%" PRId64 ")",
                            weft_nn_shape_str(X->ndim, X->shape).s, total, weft_nn_shape_str(cnt, shape).s, known);
    }
    return weft_nn_set_out(g, n, 0, X->dtype, cnt, shape);
}

weft_status weft_nn_flatten_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 1), X->ndim, true, &ax)) != WEFT_OK) return st;
    int64_t shape[2] = {numel(ax, X->shape), numel(X->ndim - ax, X->shape + ax)};
    return weft_nn_set_out(g, n, 0, X->dtype, 2, shape);
}

/* axes of Squeeze/Unsqueeze: constant input 1 (opset 13) or attribute (older); count -1
 * when neither is given. */
static weft_status squeeze_axes(const weft_graph *g, const weft_gnode *n, int64_t *axes, int *cnt)
{
    if (weft_nn_has_in(n, 1)) return weft_nn_const_ints(g, n, 1, "axes", axes, WEFT_NN_MAX_DIMS, cnt);
    return weft_nn_attr_ints(n, "axes", axes, WEFT_NN_MAX_DIMS, cnt);
}

weft_status weft_nn_squeeze_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int64_t axes[WEFT_NN_MAX_DIMS], shape[WEFT_NN_MAX_DIMS];
    int cnt, r = 0;
    if ((st = squeeze_axes(g, n, axes, &cnt)) != WEFT_OK) return st;
    bool drop[WEFT_NN_MAX_DIMS] = {false};
    for (int j = 0; j < cnt; j++) {
        int ax;
        if ((st = weft_nn_axis(n, "axis", axes[j], X->ndim, false, &ax)) != WEFT_OK) return st;
        if (X->shape[ax] != 1)
            return weft_nn_fail(WEFT_ERR_SHAPE, n,
                                "cannot squeeze axis %d of input %s: its extent is %" PRId64 ", not 1", ax,
                                weft_nn_shape_str(X->ndim, X->shape).s, X->shape[ax]);
        drop[ax] = true;
    }
    for (int d = 0; d < X->ndim; d++)
        if (!(cnt < 0 ? X->shape[d] == 1 : drop[d])) shape[r++] = X->shape[d];
    return weft_nn_set_out(g, n, 0, X->dtype, r, shape);
}

weft_status weft_nn_unsqueeze_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int64_t axes[WEFT_NN_MAX_DIMS], shape[WEFT_NN_MAX_DIMS];
    int cnt;
    if ((st = squeeze_axes(g, n, axes, &cnt)) != WEFT_OK) return st;
    if (cnt <= 0) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "axes are missing");
    int r = X->ndim + cnt;
    if (r > WEFT_NN_MAX_DIMS)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "output would have %d dims, at most %d are supported", r,
                            WEFT_NN_MAX_DIMS);
    bool ins[WEFT_NN_MAX_DIMS] = {false};
    for (int j = 0; j < cnt; j++) {
        int ax;
        if ((st = weft_nn_axis(n, "axis", axes[j], r, false, &ax)) != WEFT_OK) return st;
        if (ins[ax]) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "axis %" PRId64 " is repeated in axes", axes[j]);
        ins[ax] = true;
    }
    for (int d = 0, p = 0; d < r; d++) shape[d] = ins[d] ? 1 : X->shape[p++];
    return weft_nn_set_out(g, n, 0, X->dtype, r, shape);
}

/* Identity and Dropout (inference: identity; the mask output is not supported). */
weft_status weft_nn_identity_infer(weft_graph *g, const weft_gnode *n)
{
    bool dropout = strcmp(n->op_type, "Dropout") == 0;
    weft_status st = weft_nn_check_arity(n, 1, dropout ? 3 : 1, 1, 1);
    if (st != WEFT_OK) return st;
    double training;
    if (dropout && weft_nn_has_in(n, 2)) {
        if (!weft_nn_const_scalar(g, n, 2, &training))
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "training_mode input must be a constant");
        if (training != 0) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "training_mode=true is not supported");
    }
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, X->shape);
}

weft_status weft_nn_alias_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    outs[0] = weft_nn_reshape_copy(a, name, ins[0], out->ndim, out->shape);
    return weft_nn_done(a, n);
}

/* ---- Shape, Size, ConstantOfShape -------------------------------------------------------- */

/* Shape's [start, end) (opset 15 attributes; negative counts from the end, clamped). */
static void shape_range(const weft_gnode *n, int rank, int *start, int *end)
{
    int64_t s = weft_gnode_attr_int(n, "start", 0), e = weft_gnode_attr_int(n, "end", rank);
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    *start = (int)(s < 0 ? 0 : s > rank ? rank : s);
    *end = (int)(e < 0 ? 0 : e > rank ? rank : e);
}

weft_status weft_nn_shape_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int s, e;
    shape_range(n, X->ndim, &s, &e);
    if (e <= s)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "start=%d end=%d of input %s give an empty shape", s, e,
                            weft_nn_shape_str(X->ndim, X->shape).s);
    return weft_nn_set_out(g, n, 0, WEFT_I64, 1, (int64_t[]){e - s});
}

weft_status weft_nn_shape_eval(const weft_graph *g, const weft_gnode *n, int k, void **data)
{
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int s, e;
    shape_range(n, X->ndim, &s, &e);
    int64_t *p = weft_malloc(sizeof *p * (size_t)(e > s ? e - s : 1));
    if (!p) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
    for (int d = s; d < e; d++) p[d - s] = X->shape[d];
    *data = p;
    return WEFT_OK;
}

/* out[i] = vals[i] for a 1-D int64 output (a select chain; vals are few). */
static weft_tensor *const_1d(weft_arena *a, const char *name, const int64_t *vals, int cnt)
{
    weft_tensor *Y = weft_nn_compute(a, name, 1, (int64_t[]){cnt});
    if (!Y) return NULL;
    const weft_expr *i = weft_te_axis(Y, 0), *body = weft_i64(a, vals[cnt - 1]);
    for (int j = cnt - 2; j >= 0; j--)
        body = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, i, weft_i64(a, j)), weft_i64(a, vals[j]), body);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    return Y;
}

weft_status weft_nn_shape_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int s, e;
    shape_range(n, X->ndim, &s, &e);
    outs[0] = const_1d(a, name, X->shape + s, e - s);
    return weft_nn_done(a, n);
}

weft_status weft_nn_size_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, WEFT_I64, 0, NULL);
}

weft_status weft_nn_size_eval(const weft_graph *g, const weft_gnode *n, int k, void **data)
{
    int64_t *p = weft_malloc(sizeof *p);
    if (!p) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
    *p = weft_gvalue_numel(weft_nn_in(g, n, 0));
    *data = p;
    return WEFT_OK;
}

weft_status weft_nn_size_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_tensor *Y = weft_nn_compute(a, name, 0, NULL);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_i64(a, weft_gvalue_numel(weft_nn_in(g, n, 0))));
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ConstantOfShape's fill value: attribute "value" as FLOAT or FLOATS[1] (float32 output), INT
 * or INTS[1] (int64 output); absent: float32 0. */
static weft_status fill_value(const weft_gnode *n, weft_dtype *t, double *v)
{
    *t = WEFT_F32;
    *v = 0;
    for (int i = 0; i < n->n_attrs; i++) {
        const weft_attr *at = &n->attrs[i];
        if (strcmp(at->name, "value") != 0) continue;
        switch (at->kind) {
        case WEFT_ATTR_FLOAT: *v = at->f; return WEFT_OK;
        case WEFT_ATTR_INT: *t = WEFT_I64, *v = (double)at->i; return WEFT_OK;
        case WEFT_ATTR_FLOATS:
            if (at->n == 1) return *v = at->floats[0], WEFT_OK;
            break;
        case WEFT_ATTR_INTS:
            if (at->n == 1) return *t = WEFT_I64, *v = (double)at->ints[0], WEFT_OK;
            break;
        default: break;
        }
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute value must be one float or int");
    }
    return WEFT_OK;
}

weft_status weft_nn_const_of_shape_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    int64_t shape[WEFT_NN_MAX_DIMS];
    int cnt;
    weft_dtype t;
    double v;
    if ((st = weft_nn_const_ints(g, n, 0, "shape", shape, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK ||
        (st = fill_value(n, &t, &v)) != WEFT_OK)
        return st;
    return weft_nn_set_out(g, n, 0, t, cnt, shape);
}

weft_status weft_nn_const_of_shape_eval(const weft_graph *g, const weft_gnode *n, int k, void **data)
{
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_dtype t;
    double v;
    weft_status st = fill_value(n, &t, &v);
    if (st != WEFT_OK) return st;
    int64_t cnt = weft_gvalue_numel(out);
    void *p = weft_malloc((size_t)cnt * (size_t)weft_dtype_bytes(t));
    if (!p) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
    for (int64_t j = 0; j < cnt; j++) {
        if (weft_dtype_is_float(t)) ((float *)p)[j] = (float)v;
        else ((int64_t *)p)[j] = (int64_t)v;
    }
    *data = p;
    return WEFT_OK;
}

weft_status weft_nn_const_of_shape_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                           const weft_tensor *const *ins, weft_tensor **outs)
{
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_dtype t;
    double v;
    weft_status st = fill_value(n, &t, &v);
    if (st != WEFT_OK) return st;
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_nn_const(a, t, v));
    outs[0] = Y;
    return weft_nn_done(a, n);
}
