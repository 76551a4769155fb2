/* Pad: modes constant, reflect, edge and wrap over any rank. The pads are a constant input
 * (opset >= 11: data, pads, optional constant_value, optional axes (opset 18)) or the `pads`
 * attribute with `value` (opset 2, chosen when the node has one input). Negative pads crop.
 *
 * The output is one stage over the output shape that reads X at a remapped index per dim:
 * src = o - pad_begin, then
 *   constant: X[clamp(src)] where 0 <= src < in, else the constant (SELECT evaluates both
 *             arms, so the load index is clamped into range)
 *   reflect:  (in-1) - |(in-1) - |src||   (one reflection: pads must be < in, as in ONNX)
 *   edge:     clamp(src, 0, in-1)
 *   wrap:     src mod in
 * Dims without padding read o directly.
 */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

typedef struct pad_params {
    pad_mode mode;
    int rank;
    int64_t begin[WEFT_NN_MAX_DIMS], end[WEFT_NN_MAX_DIMS];
    double value;
} pad_params;

static weft_status parse_mode(const weft_gnode *n, pad_mode *mode)
{
    const char *m = weft_gnode_attr_string(n, "mode", "constant");
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    for (int k = 0; k < 4; k++)
        if (strcmp(m, names[k]) == 0) {
            *mode = (pad_mode)k;
            return WEFT_OK;
        }
    return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attribute mode='%s', expected constant, reflect, edge or wrap", m);
}

/* Reads mode, pads (input or attribute), axes and the constant value; checks them against
 * the input shape `in` of rank `rank`. */
static weft_status pad_params_read(const weft_graph *g, const weft_gnode *n, int rank, const int64_t *in,
                                   pad_params *p)
{
    weft_status st;
    memset(p, 0, sizeof *p);
    p->rank = rank;
    if ((st = parse_mode(n, &p->mode)) != WEFT_OK) return st;
    int64_t pads[2 * WEFT_NN_MAX_DIMS];
    int cnt = 0, axes[WEFT_NN_MAX_DIMS], n_axes = rank;
    for (int d = 0; d < rank; d++) axes[d] = d;
    if (n->n_inputs >= 2) {
        if (weft_gnode_attr_ints(n, "pads", &(const int64_t *){NULL}) >= 0)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has both a pads input and a pads attribute");
        if ((st = weft_nn_const_ints(g, n, 1, "pads", pads, 2 * WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
        if (weft_nn_has_in(n, 3)) {
            int64_t ax[WEFT_NN_MAX_DIMS];
            if ((st = weft_nn_const_ints(g, n, 3, "axes", ax, WEFT_NN_MAX_DIMS, &n_axes)) != WEFT_OK) return st;
            bool seen[WEFT_NN_MAX_DIMS] = {false};
            for (int j = 0; j < n_axes; j++) {
                if ((st = weft_nn_axis(n, "axes element", ax[j], rank, false, &axes[j])) != WEFT_OK) return st;
                if (seen[axes[j]])
                    return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "axes %s names axis %d twice",
                                        weft_nn_shape_str(n_axes, ax).s, axes[j]);
                seen[axes[j]] = true;
            }
        }
        if (weft_nn_has_in(n, 2)) {
            const weft_gvalue *cv = weft_nn_in(g, n, 2);
            if (cv->ndim > 1 || weft_gvalue_numel(cv) != 1)
                return weft_nn_fail(WEFT_ERR_SHAPE, n, "constant_value input has shape %s, expected a scalar",
                                    weft_nn_shape_str(cv->ndim, cv->shape).s);
            if (!weft_nn_const_scalar(g, n, 2, &p->value))
                return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "constant_value input must be a constant");
        }
    } else {
        if ((st = weft_nn_attr_ints(n, "pads", pads, 2 * WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
        if (cnt < 0) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has no pads (neither an input nor an attribute)");
        p->value = weft_gnode_attr_float(n, "value", 0.0);
    }
    if (cnt != 2 * n_axes)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "pads %s has %d elements, expected 2 * %d for input %s", 
                            weft_nn_shape_str(cnt, pads).s, cnt, n_axes, weft_nn_shape_str(rank, in).s);
    for (int j = 0; j < n_axes; j++) p->begin[axes[j]] = pads[j], p->end[axes[j]] = pads[n_axes + j];
    for (int d = 0; d < rank; d++) {
        int64_t b = p->begin[d], e = p->end[d];
        /* 2^40 bounds every extent: larger pads could only overflow the sums below. */
        if (b > ((int64_t)1 << 40) || b < -((int64_t)1 << 40) || e > ((int64_t)1 << 40) || e < -((int64_t)1 << 40))
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "pads %s: axis %d padded by more than 2^40", weft_nn_shape_str(cnt, pads).s, d);
        if (in[d] + b + e <= 0)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "pads %s crop axis %d (extent %" PRId64 ") to nothing",
                                weft_nn_shape_str(cnt, pads).s, d, in[d]);
        if (p->mode == PAD_REFLECT && (b > 0 || e > 0) && (b >= in[d] || e >= in[d]))
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                                "mode=reflect needs pads smaller than the axis: axis %d has extent %" PRId64
                                ", pads %s",
                                d, in[d], weft_nn_shape_str(cnt, pads).s);
        if (p->mode != PAD_CONSTANT && (b < 0 || e < 0))
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "negative pads %s are supported only with mode=constant",
                                weft_nn_shape_str(cnt, pads).s);
    }
    return WEFT_OK;
}

weft_status weft_nn_pad_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 4, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, X, "input data", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input data is a scalar; Pad needs at least 1 dim");
    pad_params p;
    if ((st = pad_params_read(g, n, X->ndim, X->shape, &p)) != WEFT_OK) return st;
    int64_t shape[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) shape[d] = X->shape[d] + p.begin[d] + p.end[d];
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, shape);
}

weft_status weft_nn_pad_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    pad_params p;
    if ((st = pad_params_read(g, n, X->ndim, X->shape, &p)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (Y) {
        const weft_expr *o[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS], *inside = NULL;
        weft_nn_axes(Y, o);
        for (int d = 0; d < X->ndim; d++) {
            int64_t b = p.begin[d], e = p.end[d], ext = X->shape[d];
            x[d] = o[d];
            if (b == 0 && e == 0) continue;
            const weft_expr *src = b == 0 ? o[d] : weft_sub(a, o[d], weft_i64(a, b));
            switch (p.mode) {
            case PAD_CONSTANT: {
                const weft_expr *c = NULL;
                if (b > 0) c = weft_cmp(a, WEFT_EXPR_GE, src, weft_i64(a, 0));
                if (e > 0) {
                    const weft_expr *lt = weft_cmp(a, WEFT_EXPR_LT, src, weft_i64(a, ext));
                    c = c ? weft_and(a, c, lt) : lt;
                }
                if (c) inside = inside ? weft_and(a, inside, c) : c;
                x[d] = c ? weft_nn_clamp(a, src, 0, ext - 1) : src;
                break;
            }
            case PAD_EDGE: x[d] = weft_nn_clamp(a, src, 0, ext - 1); break;
            case PAD_WRAP: x[d] = weft_floormod(a, src, weft_i64(a, ext)); break;
            case PAD_REFLECT: {
                const weft_expr *last = weft_i64(a, ext - 1);
                const weft_expr *abs1 = weft_max(a, src, weft_sub(a, weft_i64(a, 0), src));
                const weft_expr *dist = weft_sub(a, last, abs1);
                x[d] = weft_sub(a, last, weft_max(a, dist, weft_sub(a, weft_i64(a, 0), dist)));
                break;
            }
            }
        }
        const weft_expr *v = weft_tload(a, X, X->ndim, x);
        if (inside) v = weft_select(a, inside, v, weft_nn_const(a, X->dtype, p.value));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
