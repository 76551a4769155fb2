/* Shared helpers of the graph ops (ops/nn_internal.h): error prefixes, shape checks, numpy
 * broadcasting, constant inputs, and the small TE building blocks (broadcast reads, reshaping
 * copies) several ops reuse. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

/* ---- errors and printing ----------------------------------------------------------------- */

weft_status weft_nn_fail(weft_status st, const weft_gnode *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return weft_fail(st, "%s node '%s': %s", n && n->op_type ? n->op_type : "?", n && n->name ? n->name : "", msg);
}

weft_nn_shape_text weft_nn_shape_str(int ndim, const int64_t *shape)
{
    weft_nn_shape_text t;
    size_t used = 0;
    t.s[used++] = '[';
    for (int d = 0; d < ndim && used + 24 < sizeof t.s; d++)
        used += (size_t)snprintf(t.s + used, sizeof t.s - used, "%s%" PRId64, d ? "," : "", shape[d]);
    snprintf(t.s + used, sizeof t.s - used, "]");
    return t;
}

/* ---- graph access ------------------------------------------------------------------------ */

bool weft_nn_has_in(const weft_gnode *n, int i) { return i >= 0 && i < n->n_inputs && n->inputs[i] >= 0; }

const weft_gvalue *weft_nn_in(const weft_graph *g, const weft_gnode *n, int i)
{
    return weft_nn_has_in(n, i) ? &g->values[n->inputs[i]] : NULL;
}

weft_gvalue *weft_nn_out(weft_graph *g, const weft_gnode *n, int k) { return &g->values[n->outputs[k]]; }

const weft_gvalue *weft_nn_out_c(const weft_graph *g, const weft_gnode *n, int k) { return &g->values[n->outputs[k]]; }

weft_status weft_nn_check_arity(const weft_gnode *n, int min_in, int max_in, int min_out, int max_out)
{
    if (n->n_inputs < min_in || n->n_inputs > max_in) {
        if (min_in == max_in)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has %d inputs, expected %d", n->n_inputs, min_in);
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has %d inputs, expected %d to %d", n->n_inputs, min_in, max_in);
    }
    for (int i = 0; i < min_in; i++)
        if (n->inputs[i] < 0) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "required input %d is missing", i);
    if (n->n_outputs < min_out || n->n_outputs > max_out) {
        if (min_out == max_out)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "has %d outputs, expected %d", n->n_outputs, min_out);
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "has %d outputs, expected %d to %d", n->n_outputs, min_out,
                            max_out);
    }
    for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] < 0) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "output %d is omitted", k);
    return WEFT_OK;
}

static unsigned dtype_bit(weft_dtype t)
{
    if (weft_dtype_eq(t, WEFT_F32)) return WEFT_NN_F32;
    if (weft_dtype_eq(t, WEFT_I64)) return WEFT_NN_I64;
    if (weft_dtype_eq(t, WEFT_I32)) return WEFT_NN_I32;
    if (weft_dtype_eq(t, WEFT_BOOL)) return WEFT_NN_BOOL;
    return 0;
}

weft_status weft_nn_check_dtype(const weft_gnode *n, const weft_gvalue *v, const char *what, unsigned mask)
{
    if (dtype_bit(v->dtype) & mask) return WEFT_OK;
    char want[64] = "";
    static const char *const names[] = {"float32", "int64", "int32", "bool"};
    for (int b = 0; b < 4; b++)
        if (mask & (1u << b)) {
            if (want[0]) strcat(want, " or ");
            strcat(want, names[b]);
        }
    return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s has dtype %s, expected %s", what, weft_dtype_name(v->dtype), want);
}

weft_status weft_nn_check_rank(const weft_gnode *n, const weft_gvalue *v, const char *what, int ndim,
                               const char *expect)
{
    if (v->ndim == ndim) return WEFT_OK;
    return weft_nn_fail(WEFT_ERR_SHAPE, n, "%s has %d dims %s, expected %d%s%s%s", what, v->ndim,
                        weft_nn_shape_str(v->ndim, v->shape).s, ndim, expect ? " (" : "", expect ? expect : "",
                        expect ? ")" : "");
}

#define WEFT_NN_MAX_NUMEL ((int64_t)1 << 40)

weft_status weft_nn_set_out(weft_graph *g, const weft_gnode *n, int k, weft_dtype t, int ndim, const int64_t *shape)
{
    if (k >= n->n_outputs || n->outputs[k] < 0)
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "output %d does not exist", k);
    if (ndim < 0 || ndim > WEFT_NN_MAX_DIMS)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "output %d would have %d dims, at most %d are supported", k, ndim,
                            WEFT_NN_MAX_DIMS);
    /* Empty tensors (a dim of 0) exist only as constants: the output of a node evaluated at
     * load time (shape arithmetic, as PyTorch's slice assignments export it), never at run time. */
    bool folded = true;
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] >= 0 && !g->values[n->inputs[i]].data) folded = false;
    if (n->def && n->def->eval_static) folded = true;
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 0 || (shape[d] == 0 && !folded))
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                                "output %d has shape %s; %s", k, weft_nn_shape_str(ndim, shape).s,
                                shape[d] < 0 ? "negative dims are not supported"
                                             : "empty tensors are supported only as constants computed at load time");
    /* Element counts (and byte sizes) must stay far inside int64: refuse absurd shapes (each
     * dim too: an empty tensor's product is 0 whatever its other dims). */
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] > WEFT_NN_MAX_NUMEL || (numel > 0 && shape[d] > WEFT_NN_MAX_NUMEL / numel))
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "output %d has shape %s: more than 2^40 elements", k,
                                weft_nn_shape_str(ndim, shape).s);
        numel *= shape[d];
    }
    weft_gvalue *v = weft_nn_out(g, n, k);
    v->dtype = t;
    v->ndim = ndim;
    for (int d = 0; d < WEFT_NN_MAX_DIMS; d++) v->shape[d] = d < ndim ? shape[d] : 0;
    return WEFT_OK;
}

weft_status weft_nn_axis(const weft_gnode *n, const char *what, int64_t axis, int rank, bool inclusive, int *out)
{
    int64_t hi = inclusive ? rank + 1 : rank;
    if (axis < -hi || axis >= hi)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                            "%s=%" PRId64 " is out of range [%" PRId64 ", %" PRId64 "] for rank %d", what, axis, -hi,
                            hi - 1, rank);
    *out = (int)(axis < 0 ? axis + hi : axis);
    return WEFT_OK;
}

weft_status weft_nn_broadcast(const weft_gnode *n, int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                              int64_t *sout)
{
    int r = na > nb ? na : nb;
    int64_t tmp[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < r; d++) {
        int da = d - (r - na), db = d - (r - nb);
        int64_t x = da >= 0 ? sa[da] : 1, y = db >= 0 ? sb[db] : 1;
        if (x != y && x != 1 && y != 1)
            return weft_nn_fail(WEFT_ERR_SHAPE, n,
                                "cannot broadcast shapes %s and %s (dim %d: %" PRId64 " vs %" PRId64 ")",
                                weft_nn_shape_str(na, sa).s, weft_nn_shape_str(nb, sb).s, d, x, y);
        tmp[d] = x == 1 ? y : x;
    }
    for (int d = 0; d < r; d++) sout[d] = tmp[d];
    *nout = r;
    return WEFT_OK;
}

bool weft_nn_is_const(const weft_graph *g, const weft_gnode *n, int i)
{
    const weft_gvalue *v = weft_nn_in(g, n, i);
    return v && v->data;
}

double weft_nn_data_float(const weft_gvalue *v, int64_t j)
{
    if (weft_dtype_eq(v->dtype, WEFT_F32)) return ((const float *)v->data)[j];
    return (double)weft_gvalue_int(v, j);
}

weft_status weft_nn_const_ints(const weft_graph *g, const weft_gnode *n, int i, const char *what, int64_t *out, int max,
                               int *count)
{
    const weft_gvalue *v = weft_nn_in(g, n, i);
    if (!v) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s input is missing", what);
    if (!v->data) return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "%s input must be a constant", what);
    if (!weft_dtype_eq(v->dtype, WEFT_I64) && !weft_dtype_eq(v->dtype, WEFT_I32))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s input has dtype %s, expected int64", what,
                            weft_dtype_name(v->dtype));
    if (v->ndim > 1)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "%s input has shape %s, expected 1 dim", what,
                            weft_nn_shape_str(v->ndim, v->shape).s);
    int64_t cnt = weft_gvalue_numel(v);
    if (cnt > max)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "%s input has %" PRId64 " elements, at most %d are supported",
                            what, cnt, max);
    for (int64_t j = 0; j < cnt; j++) out[j] = weft_gvalue_int(v, j);
    *count = (int)cnt;
    return WEFT_OK;
}

bool weft_nn_const_scalar(const weft_graph *g, const weft_gnode *n, int i, double *out)
{
    const weft_gvalue *v = weft_nn_in(g, n, i);
    if (!v || !v->data || weft_gvalue_numel(v) != 1) return false;
    *out = weft_nn_data_float(v, 0);
    return true;
}

weft_status weft_nn_attr_ints(const weft_gnode *n, const char *name, int64_t *out, int max, int *count)
{
    const int64_t *p = NULL;
    int cnt = weft_gnode_attr_ints(n, name, &p);
    if (cnt > max)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute %s has %d elements, at most %d are supported", name,
                            cnt, max);
    for (int j = 0; j < cnt; j++) out[j] = p[j];
    *count = cnt;
    return WEFT_OK;
}

weft_status weft_nn_attr_flag(const weft_gnode *n, const char *name, int64_t dflt, bool *out)
{
    int64_t v = weft_gnode_attr_int(n, name, dflt);
    if (v != 0 && v != 1)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute %s=%" PRId64 ", expected 0 or 1", name, v);
    *out = v != 0;
    return WEFT_OK;
}

bool weft_nn_onnx_dtype(int64_t code, weft_dtype *out)
{
    switch (code) {
    case 1: *out = WEFT_F32; return true;   /* FLOAT */
    case 6: *out = WEFT_I32; return true;   /* INT32 */
    case 7: *out = WEFT_I64; return true;   /* INT64 */
    case 9: *out = WEFT_BOOL; return true;  /* BOOL */
    default: return false;
    }
}

/* ---- tensor building --------------------------------------------------------------------- */

const char *const *weft_nn_axis_names(int ndim)
{
    static const char *const n1[] = {"i"}, *const n2[] = {"i", "j"}, *const n3[] = {"b", "i", "j"};
    static const char *const n4[] = {"n", "c", "h", "w"};
    static const char *const nd[] = {"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"};
    switch (ndim) {
    case 1: return n1;
    case 2: return n2;
    case 3: return n3;
    case 4: return n4;
    default: return nd;
    }
}

weft_tensor *weft_nn_compute(weft_arena *a, const char *name, int ndim, const int64_t *shape)
{
    return weft_te_compute(a, name, ndim, shape, weft_nn_axis_names(ndim));
}

const char *weft_nn_stage(weft_arena *a, const char *name, const char *suffix)
{
    return weft_arena_printf(a, "%s%s", name, suffix);
}

weft_status weft_nn_check_in(const weft_graph *g, const weft_gnode *n, const weft_tensor *const *ins, int i)
{
    const weft_gvalue *v = weft_nn_in(g, n, i);
    if (!v) return weft_nn_fail(WEFT_ERR_INTERNAL, n, "input %d is missing", i);
    const weft_tensor *t = ins ? ins[i] : NULL;
    if (!t)
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "no tensor was given for input %d ('%s')", i, v->name ? v->name : "");
    bool same = t->ndim == v->ndim && weft_dtype_eq(t->dtype, v->dtype);
    for (int d = 0; same && d < t->ndim; d++) same = t->shape[d] == v->shape[d];
    if (!same)
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "tensor for input %d is %s %s, the graph value is %s %s", i,
                            weft_dtype_name(t->dtype), weft_nn_shape_str(t->ndim, t->shape).s,
                            weft_dtype_name(v->dtype), weft_nn_shape_str(v->ndim, v->shape).s);
    return WEFT_OK;
}

weft_status weft_nn_done(weft_arena *a, const weft_gnode *n)
{
    if (weft_arena_failed(a)) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory building the tensor expression");
    return WEFT_OK;
}

const weft_expr *weft_nn_const(weft_arena *a, weft_dtype t, double v)
{
    if (weft_dtype_is_float(t)) return weft_float(a, t, v);
    return weft_int(a, t, (int64_t)v);
}

const weft_expr *weft_nn_clamp(weft_arena *a, const weft_expr *e, int64_t lo, int64_t hi)
{
    return weft_min(a, weft_max(a, e, weft_i64(a, lo)), weft_i64(a, hi));
}

const weft_expr *weft_nn_bcast_load(weft_arena *a, const weft_tensor *in, int out_ndim, const weft_expr *const *idx)
{
    if (!in) return NULL;
    const weft_expr *x[WEFT_NN_MAX_DIMS];
    int off = out_ndim - in->ndim;
    for (int d = 0; d < in->ndim; d++) x[d] = in->shape[d] == 1 ? weft_i64(a, 0) : idx[d + off];
    return weft_tload(a, in, in->ndim, x);
}

const weft_expr *weft_nn_clamp_float(weft_arena *a, const weft_expr *x, double lo, double hi)
{
    const weft_expr *l = weft_f32(a, lo), *h = weft_f32(a, hi);
    const weft_expr *c = weft_select(a, weft_cmp(a, WEFT_EXPR_GT, x, l), x, l);
    return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, c, h), c, h);
}

const weft_expr *weft_nn_flat_index(weft_arena *a, int nd, const int64_t *shape, const weft_expr *const *x)
{
    const weft_expr *f = nd ? x[0] : weft_i64(a, 0);
    for (int d = 1; d < nd; d++) f = weft_add(a, weft_mul(a, f, weft_i64(a, shape[d])), x[d]);
    return f;
}

void weft_nn_axes(const weft_tensor *t, const weft_expr **idx)
{
    for (int d = 0; t && d < t->ndim; d++) idx[d] = weft_te_axis(t, d);
}

/* x[i0..i1) of `in` for output dims [o0, o1) of Y (axes o, shape `shape`) holding the same
 * elements: their row-major flat index split over the input dims (one input dim: the flat
 * index itself, affine). */
static void reshape_run(weft_arena *a, const weft_expr *const *o, const int64_t *shape, int o0, int o1,
                        const weft_tensor *in, int i0, int i1, const weft_expr **x)
{
    const weft_expr *flat = weft_nn_flat_index(a, o1 - o0, shape + o0, o + o0);
    int64_t stride = 1;
    for (int d = i1 - 1; d >= i0; d--) {
        const weft_expr *q = stride == 1 ? flat : weft_floordiv(a, flat, weft_i64(a, stride));
        x[d] = d == i0 ? q : weft_floormod(a, q, weft_i64(a, in->shape[d]));
        stride *= in->shape[d];
    }
}

weft_tensor *weft_nn_reshape_copy(weft_arena *a, const char *name, const weft_tensor *in, int ndim,
                                  const int64_t *shape)
{
    weft_tensor *Y = weft_nn_compute(a, name, ndim, shape);
    if (!Y || !in) return Y;
    const weft_expr *o[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
    weft_nn_axes(Y, o);
    /* Dims of 1 are skipped; the others are matched in runs of equal product, each run a
     * row-major flat index over its output dims split over its input dims (reshape_run). A dim
     * kept as it is (Squeeze, Unsqueeze) reads the output axis directly and a split of one input
     * dim ([T, H*D] -> [T, H, D]) reads an affine index (o_H*D + o_D), which schedules can tell
     * the strides of; only input dims merged or regrouped go through floordiv/floormod. Empty
     * tensors take one run over all dims. */
    int po = 0, pi = 0;
    bool runs = true;
    while (runs && (po < ndim || pi < in->ndim)) {
        if (po < ndim && shape[po] == 1) {
            po++;
            continue;
        }
        if (pi < in->ndim && in->shape[pi] == 1) {
            x[pi++] = weft_i64(a, 0);
            continue;
        }
        if (po == ndim || pi == in->ndim || shape[po] < 1 || in->shape[pi] < 1) {
            runs = false;
            break;
        }
        int o0 = po, i0 = pi;
        int64_t prod_o = shape[po++], prod_i = in->shape[pi++];
        while (runs && prod_o != prod_i) {
            if (prod_o < prod_i && po < ndim) prod_o *= shape[po++];
            else if (prod_i < prod_o && pi < in->ndim) prod_i *= in->shape[pi++];
            else runs = false;
        }
        if (runs) reshape_run(a, o, shape, o0, po, in, i0, pi, x);
    }
    if (!runs) reshape_run(a, o, shape, 0, ndim, in, 0, in->ndim, x);
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, in, in->ndim, x));
    return Y;
}

const weft_buffer **weft_nn_loop_buffers(weft_arena *a, const weft_graph *g, const int *params, int n)
{
    const weft_buffer **all = weft_arena_alloc(a, sizeof *all * (size_t)(n + 1));
    for (int i = 0; all && i < n; i++) {
        const weft_gvalue *v = &g->values[params[i]];
        all[i] = weft_buffer_new(a, weft_arena_printf(a, "p%d", i), v->dtype, v->ndim, v->shape, WEFT_SCOPE_GLOBAL, i);
        if (!all[i]) return NULL;
    }
    return all;
}

const weft_buffer *weft_nn_loop_find(const weft_buffer *const *bufs, const int *params, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (params[i] == v) return bufs[i];
    return NULL;
}

weft_loop_func *weft_nn_loop_func(weft_arena *a, const char *name, const weft_buffer **bufs, int n,
                                  const weft_stmt *body)
{
    weft_loop_func *lf = body ? weft_arena_alloc(a, sizeof *lf) : NULL;
    if (!lf) return NULL;
    lf->name = name;
    lf->n_params = n;
    lf->params = bufs;
    lf->body = body;
    return lf;
}
