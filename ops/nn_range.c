/* Range (opset 11): start, limit and delta are constant scalars of one dtype (int64, int32 or
 * float32), as exports of torch.arange for position ids and window masks give them; the output
 * is 1-D with max(ceil((limit - start) / delta), 0) elements (an empty range is refused, like
 * every empty tensor). It is always folded into a constant (eval_static); the compute,
 * start + i * delta, serves the interpreter path.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"
#include "runtime/mem.h"

static weft_status range_params(const weft_graph *g, const weft_gnode *n, double *start, double *delta, int64_t *count)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    double v[3];
    const weft_gvalue *s = weft_nn_in(g, n, 0);
    for (int i = 0; i < 3; i++) {
        const weft_gvalue *x = weft_nn_in(g, n, i);
        weft_status st = weft_nn_check_dtype(n, x, what[i], WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32);
        if (st != WEFT_OK) return st;
        if (!weft_dtype_eq(x->dtype, s->dtype))
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%s input has dtype %s, start has %s", what[i],
                                weft_dtype_name(x->dtype), weft_dtype_name(s->dtype));
        if (weft_gvalue_numel(x) != 1 || x->ndim > 1)
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "%s input has shape %s, expected a scalar", what[i],
                                weft_nn_shape_str(x->ndim, x->shape).s);
        if (!weft_nn_const_scalar(g, n, i, &v[i]))
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "%s input must be a constant", what[i]);
    }
    if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "start %g, limit %g, delta %g: delta must be nonzero and all finite",
                            v[0], v[1], v[2]);
    double c = ceil((v[1] - v[0]) / v[2]);
    if (c > (double)((int64_t)1 << 40))
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "start %g, limit %g, delta %g give %g elements", v[0], v[1], v[2], c);
    *start = v[0], *delta = v[2], *count = c > 0 ? (int64_t)c : 0;
    return WEFT_OK;
}

weft_status weft_nn_range_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 3, 1, 1);
    if (st != WEFT_OK) return st;
    double start, delta;
    int64_t count;
    if ((st = range_params(g, n, &start, &delta, &count)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, weft_nn_in(g, n, 0)->dtype, 1, &count);
}

weft_status weft_nn_range_eval(const weft_graph *g, const weft_gnode *n, int k, void **data)
{
    double start, delta;
    int64_t count;
    weft_status st = range_params(g, n, &start, &delta, &count);
    if (st != WEFT_OK) return st;
    weft_dtype t = weft_nn_in(g, n, 0)->dtype;
    void *p = weft_malloc((size_t)(count > 0 ? count : 1) * (size_t)weft_dtype_bytes(t));
    if (!p) return weft_nn_fail(WEFT_ERR_NOMEM, n, "out of memory");
    for (int64_t j = 0; j < count; j++) {
        if (weft_dtype_eq(t, WEFT_F32)) ((float *)p)[j] = (float)(start + (double)j * delta);
        else if (weft_dtype_eq(t, WEFT_I32)) ((int32_t *)p)[j] = (int32_t)(start + (double)j * delta);
        else ((int64_t *)p)[j] = (int64_t)start + j * (int64_t)delta;
    }
    *data = p;
    return WEFT_OK;
}

weft_status weft_nn_range_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    double start, delta;
    int64_t count;
    weft_status st = range_params(g, n, &start, &delta, &count);
    if (st != WEFT_OK) return st;
    weft_dtype t = weft_nn_in(g, n, 0)->dtype;
    weft_tensor *Y = weft_nn_compute(a, name, 1, &count);
    if (Y) {
        const weft_expr *i = weft_te_axis(Y, 0);
        if (!weft_dtype_eq(t, WEFT_I64)) i = weft_cast(a, t, i);
        weft_te_set_body(Y, WEFT_REDUCE_NONE,
                         weft_add(a, weft_nn_const(a, t, start), weft_mul(a, i, weft_nn_const(a, t, delta))));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
