/* Piecewise-linear activations that exported mobile networks use: HardSigmoid
 * (max(0, min(1, alpha * x + beta)), defaults alpha 0.2, beta 0.5), HardSwish
 * (x * max(0, min(1, x / 6 + 0.5)), opset 14), PRelu (x < 0 ? slope * x : x, slope broadcast
 * unidirectionally to X: [C,1,1] against [N,C,H,W], or [1]).
 * Each is one elementwise stage `name` over the input shape, like the
 * unary ops of nn_elementwise.c, so they fuse as epilogues of convolutions.
 */
#include <math.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

weft_status weft_nn_hard_act_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    if ((st = weft_nn_check_dtype(n, x, "input X", WEFT_NN_F32)) != WEFT_OK) return st;
    if (strcmp(n->op_type, "HardSigmoid") == 0) {
        double alpha = weft_gnode_attr_float(n, "alpha", 0.2), beta = weft_gnode_attr_float(n, "beta", 0.5);
        if (!isfinite(alpha) || !isfinite(beta))
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "attributes alpha=%g and beta=%g must be finite", alpha, beta);
    }
    return weft_nn_set_out(g, n, 0, x->dtype, x->ndim, x->shape);
}

weft_status weft_nn_hard_act_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                     const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    bool swish = strcmp(n->op_type, "HardSwish") == 0;
    double alpha = swish ? 1.0 / 6.0 : weft_gnode_attr_float(n, "alpha", 0.2);
    double beta = swish ? 0.5 : weft_gnode_attr_float(n, "beta", 0.5);
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        const weft_expr *x = weft_tload(a, X, X->ndim, idx);
        const weft_expr *lin = weft_add(a, weft_mul(a, x, weft_f32(a, alpha)), weft_f32(a, beta));
        const weft_expr *hs = weft_min(a, weft_max(a, lin, weft_f32(a, 0.0)), weft_f32(a, 1.0));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, swish ? weft_mul(a, x, hs) : hs);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- PRelu ------------------------------------------------------------------------------- */

weft_status weft_nn_prelu_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0), *s = weft_nn_in(g, n, 1);
    if ((st = weft_nn_check_dtype(n, x, "input X", WEFT_NN_F32)) != WEFT_OK ||
        (st = weft_nn_check_dtype(n, s, "input slope", WEFT_NN_F32)) != WEFT_OK)
        return st;
    int r;
    int64_t bs[WEFT_NN_MAX_DIMS];
    if (s->ndim > x->ndim || weft_nn_broadcast(n, s->ndim, s->shape, x->ndim, x->shape, &r, bs) != WEFT_OK ||
        memcmp(bs, x->shape, sizeof(int64_t) * (size_t)x->ndim) != 0)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input slope has shape %s, which does not broadcast to X %s",
                            weft_nn_shape_str(s->ndim, s->shape).s, weft_nn_shape_str(x->ndim, x->shape).s);
    return weft_nn_set_out(g, n, 0, x->dtype, x->ndim, x->shape);
}

weft_status weft_nn_prelu_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        const weft_expr *x = weft_tload(a, X, X->ndim, idx);
        const weft_expr *slope = weft_nn_bcast_load(a, ins[1], X->ndim, idx);
        weft_te_set_body(Y, WEFT_REDUCE_NONE,
                         weft_select(a, weft_cmp(a, WEFT_EXPR_LT, x, weft_f32(a, 0.0)), weft_mul(a, x, slope), x));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
