/* ScatterND (opset 11-18, reduction "none") in the form exports of slice assignment give it
 * (x[a:b, c:d] = v becomes ScatterND with the indices of every position of that box): the
 * indices must be constant by the time the kernel is built (constant folding makes the index
 * arithmetic of such exports constant) and list the positions of one dense box of the first k
 * axes in row-major order; negative indices count from the end. The output reads
 *   updates[flat(p - box_start)] inside the box, data[p] outside
 * as one stage (a select; both arms read at clamped indices). Other index patterns are refused
 * naming the node.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

weft_status weft_nn_scatter_nd_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const char *red = weft_gnode_attr_string(n, "reduction", "none");
    if (strcmp(red, "none") != 0)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute reduction='%s' is not supported (none)", red);
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1), *U = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, I, "indices", WEFT_NN_I64)) != WEFT_OK) return st;
    if (!weft_dtype_eq(D->dtype, U->dtype))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "updates have dtype %s, data %s", weft_dtype_name(U->dtype),
                            weft_dtype_name(D->dtype));
    int64_t k = I->ndim >= 1 ? I->shape[I->ndim - 1] : 0;
    bool ok = I->ndim >= 1 && k >= 1 && k <= D->ndim && U->ndim == I->ndim - 1 + D->ndim - (int)k;
    for (int d = 0; ok && d < I->ndim - 1; d++) ok = U->shape[d] == I->shape[d];
    for (int d = (int)k; ok && d < D->ndim; d++) ok = U->shape[I->ndim - 1 + d - (int)k] == D->shape[d];
    if (!ok)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "data %s, indices %s and updates %s do not fit together",
                            weft_nn_shape_str(D->ndim, D->shape).s, weft_nn_shape_str(I->ndim, I->shape).s,
                            weft_nn_shape_str(U->ndim, U->shape).s);
    return weft_nn_set_out(g, n, 0, D->dtype, D->ndim, D->shape);
}

/* The box the constant indices cover: start[0..k), extent[0..k). */
static weft_status index_box(const weft_graph *g, const weft_gnode *n, int64_t *start, int64_t *extent, int *k_out)
{
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    if (!I->data)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "indices must be constants (after constant folding)");
    int k = (int)I->shape[I->ndim - 1];
    int64_t rows = weft_gvalue_numel(I) / k;
    if (rows == 0) /* an empty constant: no position to read the box from */
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "indices %s are empty (a scatter of nothing is not supported)",
                            weft_nn_shape_str(I->ndim, I->shape).s);
    const int64_t *ix = I->data;
    for (int a = 0; a < k; a++) start[a] = extent[a] = 0;
    /* the box: the first row is its start; its extents from the last row */
    for (int a = 0; a < k; a++) {
        int64_t f = ix[a], l = ix[(rows - 1) * k + a];
        if (f < 0) f += D->shape[a];
        if (l < 0) l += D->shape[a];
        start[a] = f, extent[a] = l - f + 1;
        if (f < 0 || l >= D->shape[a] || extent[a] < 1)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "indices are not a dense box of positions (slice assignment)");
    }
    int64_t count = 1;
    for (int a = 0; a < k; a++) count *= extent[a];
    bool ok = count == rows;
    for (int64_t r = 0; ok && r < rows; r++) {
        int64_t rem = r;
        for (int a = k - 1; ok && a >= 0; a--) {
            int64_t v = ix[r * k + a];
            if (v < 0) v += D->shape[a];
            ok = v == start[a] + rem % extent[a];
            rem /= extent[a];
        }
    }
    if (!ok)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                            "indices %s are not the positions of one dense box in row-major order (slice assignment); "
                            "other scatters are not supported",
                            weft_nn_shape_str(I->ndim, I->shape).s);
    *k_out = k;
    return WEFT_OK;
}

weft_status weft_nn_scatter_nd_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                       const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    if ((st = weft_nn_check_in(g, n, ins, 0)) != WEFT_OK || (st = weft_nn_check_in(g, n, ins, 2)) != WEFT_OK) return st;
    int64_t start[WEFT_NN_MAX_DIMS], extent[WEFT_NN_MAX_DIMS];
    int k = 0;
    if ((st = index_box(g, n, start, extent, &k)) != WEFT_OK) return st;
    const weft_tensor *D = ins[0], *U = ins[2];
    const weft_gvalue *I = weft_nn_in(g, n, 1);
    int lead = I->ndim - 1; /* updates' leading dims: the indices' shape without its last dim */
    weft_tensor *Y = weft_nn_compute(a, name, D->ndim, D->shape);
    if (Y) {
        const weft_expr *p[WEFT_NN_MAX_DIMS], *u[WEFT_NN_MAX_DIMS], *inside = NULL, *flat = NULL;
        weft_nn_axes(Y, p);
        for (int d = 0; d < k; d++) {
            const weft_expr *rel = weft_sub(a, p[d], weft_i64(a, start[d]));
            const weft_expr *c = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, rel, weft_i64(a, 0)),
                                          weft_cmp(a, WEFT_EXPR_LT, rel, weft_i64(a, extent[d])));
            inside = inside ? weft_and(a, inside, c) : c;
            rel = weft_nn_clamp(a, rel, 0, extent[d] - 1);
            flat = flat ? weft_add(a, weft_mul(a, flat, weft_i64(a, extent[d])), rel) : rel;
        }
        /* flat row -> updates' leading multi-index */
        for (int d = lead - 1; d >= 0; d--) {
            int64_t e = U->shape[d];
            u[d] = d == 0 ? flat : weft_floormod(a, flat, weft_i64(a, e));
            if (d > 0) flat = weft_floordiv(a, flat, weft_i64(a, e));
        }
        for (int d = k; d < D->ndim; d++) u[lead + d - k] = p[d];
        const weft_expr *v = weft_select(a, inside, weft_tload(a, U, U->ndim, u), weft_tload(a, D, D->ndim, p));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
