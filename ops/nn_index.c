/* Injective graph ops (index remapping, no arithmetic on values): Transpose, Concat, Split,
 * Slice, Gather, Tile (out[i] = in[i mod in_shape]), Trilu (a mask on the last two indices),
 * OneHot (a compare of the index with the output coordinate), GatherElements. Shape-like inputs (Split's split, Slice's
 * starts/ends/axes/steps, Tile's repeats, constant
 * Gather indices) are read from the graph's constant data, never from tensors.
 *
 * Concat is a select chain over the inputs; each arm reads its input at an index clamped into
 * range, because SELECT evaluates both arms. Split's outputs are named `name` (output 0) and
 * "<name>.1", "<name>.2", ... Gather with constant indices turns them into an index expression
 * (one value, or an arithmetic progression like 0..n-1 or 3,5,7, or a select chain for a few
 * scattered values); other indices are read from the indices tensor, wrapped when negative and
 * clamped into range.
 */
#include <inttypes.h>
#include <string.h>

#include "ir/error.h"
#include "ops/nn_internal.h"

/* ---- Transpose --------------------------------------------------------------------------- */

static weft_status transpose_perm(const weft_gnode *n, int rank, int *perm)
{
    int64_t p[WEFT_NN_MAX_DIMS];
    int cnt;
    weft_status st = weft_nn_attr_ints(n, "perm", p, WEFT_NN_MAX_DIMS, &cnt);
    if (st != WEFT_OK) return st;
    if (cnt < 0) {
        for (int d = 0; d < rank; d++) perm[d] = rank - 1 - d;
        return WEFT_OK;
    }
    bool seen[WEFT_NN_MAX_DIMS] = {false};
    bool ok = cnt == rank;
    for (int d = 0; ok && d < cnt; d++) {
        ok = p[d] >= 0 && p[d] < rank && !seen[p[d]];
        if (ok) seen[p[d]] = true, perm[d] = (int)p[d];
    }
    if (!ok)
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "perm %s is not a permutation of %d dims",
                            weft_nn_shape_str(cnt, p).s, rank);
    return WEFT_OK;
}

weft_status weft_nn_transpose_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 1, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int perm[WEFT_NN_MAX_DIMS];
    if ((st = transpose_perm(n, X->ndim, perm)) != WEFT_OK) return st;
    int64_t shape[WEFT_NN_MAX_DIMS];
    for (int d = 0; d < X->ndim; d++) shape[d] = X->shape[perm[d]];
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, shape);
}

weft_status weft_nn_transpose_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                      const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int perm[WEFT_NN_MAX_DIMS];
    if ((st = transpose_perm(n, X->ndim, perm)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        for (int d = 0; d < X->ndim; d++) x[perm[d]] = idx[d];
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Concat ------------------------------------------------------------------------------ */

weft_status weft_nn_concat_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, WEFT_NODE_MAX_IO, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input 0 is a scalar, expected at least 1 dim");
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), X->ndim, false, &ax)) != WEFT_OK) return st;
    int64_t shape[WEFT_NN_MAX_DIMS];
    memcpy(shape, X->shape, sizeof shape);
    for (int i = 1; i < n->n_inputs; i++) {
        const weft_gvalue *v = weft_nn_in(g, n, i);
        if (!v) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input %d is missing", i);
        if (!weft_dtype_eq(v->dtype, X->dtype))
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input %d has dtype %s, input 0 has %s", i,
                                weft_dtype_name(v->dtype), weft_dtype_name(X->dtype));
        bool ok = v->ndim == X->ndim;
        for (int d = 0; ok && d < X->ndim; d++) ok = d == ax || v->shape[d] == X->shape[d];
        if (!ok)
            return weft_nn_fail(WEFT_ERR_SHAPE, n,
                                "input %d has shape %s, input 0 has %s; they must agree except on axis %d", i,
                                weft_nn_shape_str(v->ndim, v->shape).s, weft_nn_shape_str(X->ndim, X->shape).s, ax);
        shape[ax] += v->shape[ax];
    }
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, shape);
}

weft_status weft_nn_concat_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < n->n_inputs; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    int ax, r = out->ndim;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), r, false, &ax)) != WEFT_OK) return st;
    weft_tensor *Y = weft_nn_compute(a, name, r, out->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        memcpy(x, idx, sizeof x);
        int64_t off[WEFT_NODE_MAX_IO + 1];
        off[0] = 0;
        for (int i = 0; i < n->n_inputs; i++) off[i + 1] = off[i] + ins[i]->shape[ax];
        /* from the last input backwards: body = i < off[t+1] ? in_t[...] : body */
        const weft_expr *v = idx[ax], *body = NULL;
        int first = 0, last = n->n_inputs - 1; /* empty inputs (constants only) add nothing */
        while (first < last && ins[first]->shape[ax] == 0) first++;
        while (last > first && ins[last]->shape[ax] == 0) last--;
        for (int t = last; t >= first; t--) {
            if (ins[t]->shape[ax] == 0) continue;
            const weft_expr *local = off[t] ? weft_sub(a, v, weft_i64(a, off[t])) : v;
            if (t > first) local = weft_max(a, local, weft_i64(a, 0));
            if (t < last) local = weft_min(a, local, weft_i64(a, ins[t]->shape[ax] - 1));
            x[ax] = local;
            const weft_expr *load = weft_tload(a, ins[t], r, x);
            body = body ? weft_select(a, weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, off[t + 1])), load, body) : load;
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, body);
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Split ------------------------------------------------------------------------------- */

/* Split's axis and per-output sizes: input 1 (opset 13), attribute split (older), or equal
 * parts (the last one smaller when the extent does not divide, as opset 18). */
static weft_status split_sizes(const weft_graph *g, const weft_gnode *n, const weft_gvalue *X, int *ax, int64_t *sizes)
{
    weft_status st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), X->ndim, false, ax);
    if (st != WEFT_OK) return st;
    int cnt = -1;
    if (weft_nn_has_in(n, 1))
        st = weft_nn_const_ints(g, n, 1, "split", sizes, WEFT_NODE_MAX_IO, &cnt);
    else
        st = weft_nn_attr_ints(n, "split", sizes, WEFT_NODE_MAX_IO, &cnt);
    if (st != WEFT_OK) return st;
    int64_t ext = X->shape[*ax];
    if (cnt < 0) {
        int64_t part = (ext + n->n_outputs - 1) / n->n_outputs;
        for (int k = 0; k < n->n_outputs; k++) {
            int64_t left = ext - part * k;
            sizes[k] = left < part ? left : part;
        }
        cnt = n->n_outputs;
    }
    int64_t sum = 0;
    for (int k = 0; k < cnt; k++) sum += sizes[k];
    if (cnt != n->n_outputs || sum != ext)
        return weft_nn_fail(
            WEFT_ERR_SHAPE, n, "split %s into %d outputs does not cover axis %d of input %s (extent %" PRId64 ")",
            weft_nn_shape_str(cnt, sizes).s, n->n_outputs, *ax, weft_nn_shape_str(X->ndim, X->shape).s, ext);
    return WEFT_OK;
}

weft_status weft_nn_split_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, WEFT_NODE_MAX_IO);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "input is a scalar, expected at least 1 dim");
    int ax;
    int64_t sizes[WEFT_NODE_MAX_IO];
    if ((st = split_sizes(g, n, X, &ax, sizes)) != WEFT_OK) return st;
    weft_dtype t = X->dtype;
    int r = X->ndim;
    int64_t shape[WEFT_NN_MAX_DIMS];
    memcpy(shape, X->shape, sizeof shape);
    for (int k = 0; k < n->n_outputs; k++) {
        shape[ax] = sizes[k];
        if ((st = weft_nn_set_out(g, n, k, t, r, shape)) != WEFT_OK) return st;
    }
    return WEFT_OK;
}

weft_status weft_nn_split_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int ax;
    int64_t sizes[WEFT_NODE_MAX_IO], off = 0;
    if ((st = split_sizes(g, n, weft_nn_in(g, n, 0), &ax, sizes)) != WEFT_OK) return st;
    for (int k = 0; k < n->n_outputs; k++) {
        const weft_gvalue *out = weft_nn_out_c(g, n, k);
        weft_tensor *Y =
            weft_nn_compute(a, k == 0 ? name : weft_arena_printf(a, "%s.%d", name, k), out->ndim, out->shape);
        if (Y) {
            const weft_expr *x[WEFT_NN_MAX_DIMS];
            weft_nn_axes(Y, x);
            if (off) x[ax] = weft_add(a, x[ax], weft_i64(a, off));
            weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
        }
        outs[k] = Y;
        off += sizes[k];
    }
    return weft_nn_done(a, n);
}

/* ---- Slice ------------------------------------------------------------------------------- */

/* Per-dim start and step of the slice (dims not sliced: 0 and 1) and the output shape. */
static weft_status slice_params(const weft_graph *g, const weft_gnode *n, const weft_gvalue *X, int64_t *start,
                                int64_t *step, int64_t *shape)
{
    int64_t starts[WEFT_NN_MAX_DIMS], ends[WEFT_NN_MAX_DIMS], axes[WEFT_NN_MAX_DIMS], steps[WEFT_NN_MAX_DIMS];
    int ns, ne, na = -1, nst = -1;
    weft_status st;
    if (n->n_inputs == 1) { /* opset 1: attributes */
        if ((st = weft_nn_attr_ints(n, "starts", starts, WEFT_NN_MAX_DIMS, &ns)) != WEFT_OK ||
            (st = weft_nn_attr_ints(n, "ends", ends, WEFT_NN_MAX_DIMS, &ne)) != WEFT_OK ||
            (st = weft_nn_attr_ints(n, "axes", axes, WEFT_NN_MAX_DIMS, &na)) != WEFT_OK)
            return st;
    } else {
        if ((st = weft_nn_const_ints(g, n, 1, "starts", starts, WEFT_NN_MAX_DIMS, &ns)) != WEFT_OK ||
            (st = weft_nn_const_ints(g, n, 2, "ends", ends, WEFT_NN_MAX_DIMS, &ne)) != WEFT_OK ||
            (weft_nn_has_in(n, 3) &&
             (st = weft_nn_const_ints(g, n, 3, "axes", axes, WEFT_NN_MAX_DIMS, &na)) != WEFT_OK) ||
            (weft_nn_has_in(n, 4) &&
             (st = weft_nn_const_ints(g, n, 4, "steps", steps, WEFT_NN_MAX_DIMS, &nst)) != WEFT_OK))
            return st;
    }
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "starts, ends, axes and steps have %d, %d, %d and %d elements", ns,
                            ne, na, nst);
    for (int d = 0; d < X->ndim; d++) start[d] = 0, step[d] = 1, shape[d] = X->shape[d];
    bool seen[WEFT_NN_MAX_DIMS] = {false};
    for (int j = 0; j < ns; j++) {
        int ax = j;
        if (na >= 0 && (st = weft_nn_axis(n, "axis", axes[j], X->ndim, false, &ax)) != WEFT_OK) return st;
        if (na < 0 && j >= X->ndim)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "%d starts for input %s of %d dims", ns,
                                weft_nn_shape_str(X->ndim, X->shape).s, X->ndim);
        if (seen[ax]) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "axis %d is sliced twice", ax);
        seen[ax] = true;
        int64_t dim = X->shape[ax], s = starts[j], e = ends[j], k = nst >= 0 ? steps[j] : 1;
        if (k == 0) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "step of axis %d is 0", ax);
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (k > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        }
        /* ceil(span / |k|) without overflow: any step as large as the span takes one element. */
        int64_t span = k > 0 ? e - s : s - e;
        int64_t len = span <= 0 ? 0 : (k >= span || k <= -span) ? 1 : (span - 1) / (k > 0 ? k : -k) + 1;
        start[ax] = s, step[ax] = k, shape[ax] = len > 0 ? len : 0;
    }
    return WEFT_OK;
}

weft_status weft_nn_slice_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 5, 1, 1);
    if (st != WEFT_OK) return st;
    if (n->n_inputs == 2) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "has 2 inputs, expected 1 or 3 to 5");
    const weft_gvalue *X = weft_nn_in(g, n, 0);
    int64_t start[WEFT_NN_MAX_DIMS], step[WEFT_NN_MAX_DIMS], shape[WEFT_NN_MAX_DIMS];
    if ((st = slice_params(g, n, X, start, step, shape)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, X->dtype, X->ndim, shape);
}

weft_status weft_nn_slice_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    int64_t start[WEFT_NN_MAX_DIMS], step[WEFT_NN_MAX_DIMS], shape[WEFT_NN_MAX_DIMS];
    if ((st = slice_params(g, n, weft_nn_in(g, n, 0), start, step, shape)) != WEFT_OK) return st;
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, shape);
    if (Y) {
        const weft_expr *x[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, x);
        for (int d = 0; d < X->ndim; d++) {
            if (step[d] != 1) x[d] = weft_mul(a, x[d], weft_i64(a, step[d]));
            if (start[d] != 0) x[d] = weft_add(a, x[d], weft_i64(a, start[d]));
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Gather ------------------------------------------------------------------------------ */

const weft_expr *weft_nn_wrap_index(weft_arena *a, const weft_expr *v, int64_t dim)
{
    if (!weft_dtype_eq(v->dtype, WEFT_I64)) v = weft_cast(a, WEFT_I64, v);
    return weft_select(a, weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, 0)), weft_add(a, v, weft_i64(a, dim)), v);
}

weft_status weft_nn_gather_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *X = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    if ((st = weft_nn_check_dtype(n, I, "indices", WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
    if (X->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "data is a scalar, expected at least 1 dim");
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), X->ndim, false, &ax)) != WEFT_OK) return st;
    int64_t dim = X->shape[ax];
    if (I->data) {
        for (int64_t j = 0; j < weft_gvalue_numel(I); j++) {
            int64_t v = weft_gvalue_int(I, j);
            if (v < -dim || v >= dim)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "index %" PRId64 " is out of range for axis %d of data %s",
                                    v, ax, weft_nn_shape_str(X->ndim, X->shape).s);
        }
    }
    int r = X->ndim - 1 + I->ndim;
    if (r > WEFT_NN_MAX_DIMS)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "output would have %d dims, at most %d are supported", r,
                            WEFT_NN_MAX_DIMS);
    int64_t shape[WEFT_NN_MAX_DIMS];
    int p = 0;
    for (int d = 0; d < ax; d++) shape[p++] = X->shape[d];
    for (int d = 0; d < I->ndim; d++) shape[p++] = I->shape[d];
    for (int d = ax + 1; d < X->ndim; d++) shape[p++] = X->shape[d];
    return weft_nn_set_out(g, n, 0, X->dtype, r, shape);
}

/* The gathered index along the axis for constant indices, from the flat position `flat` in
 * the indices; NULL when the values need a table (not few, not a progression). */
static const weft_expr *gather_const_index(weft_arena *a, const weft_gvalue *I, int64_t dim, const weft_expr *flat)
{
    int64_t cnt = weft_gvalue_numel(I);
#define WRAP(j) (weft_gvalue_int(I, (j)) < 0 ? weft_gvalue_int(I, (j)) + dim : weft_gvalue_int(I, (j)))
    int64_t first = WRAP(0);
    if (cnt == 1) return weft_i64(a, first);
    int64_t step = WRAP(1) - first;
    bool progression = true;
    for (int64_t j = 2; progression && j < cnt; j++) progression = WRAP(j) == first + step * j;
    if (progression) {
        const weft_expr *e = step == 1 ? flat : weft_mul(a, flat, weft_i64(a, step));
        return first ? weft_add(a, e, weft_i64(a, first)) : e;
    }
    if (cnt > 64) return NULL;
    const weft_expr *body = weft_i64(a, WRAP(cnt - 1));
    for (int64_t j = cnt - 2; j >= 0; j--)
        body = weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, flat, weft_i64(a, j)), weft_i64(a, WRAP(j)), body);
    return body;
#undef WRAP
}

weft_status weft_nn_gather_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    const weft_gvalue *I = weft_nn_in(g, n, 1), *out = weft_nn_out_c(g, n, 0);
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), X->ndim, false, &ax)) != WEFT_OK) return st;
    int64_t dim = X->shape[ax];
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (!Y) return weft_nn_done(a, n);
    const weft_expr *idx[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS], *sel = NULL;
    weft_nn_axes(Y, idx);
    const weft_expr *const *iidx = idx + ax; /* the output axes that walk the indices */
    if (I->data) {
        sel = gather_const_index(a, I, dim, weft_nn_flat_index(a, I->ndim, I->shape, iidx));
    }
    if (!sel) {
        if (!ins[1] && I->data)
            return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n,
                                "%" PRId64 " scattered constant indices need the indices tensor", weft_gvalue_numel(I));
        if ((st = weft_nn_check_in(g, n, ins, 1)) != WEFT_OK) return st;
        sel = weft_nn_clamp(a, weft_nn_wrap_index(a, weft_tload(a, ins[1], I->ndim, iidx), dim), 0, dim - 1);
    }
    int p = 0;
    for (int d = 0; d < ax; d++) x[p++] = idx[d];
    x[p++] = sel;
    for (int d = ax + 1; d < X->ndim; d++) x[p++] = idx[d - 1 + I->ndim];
    weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Tile -------------------------------------------------------------------------------- */

/* The constant repeats (one per dim of X, each >= 0). */
static weft_status tile_repeats(const weft_graph *g, const weft_gnode *n, int rank, int64_t *rep)
{
    const weft_gvalue *r = weft_nn_in(g, n, 1);
    weft_status st = weft_nn_check_dtype(n, r, "input repeats", WEFT_NN_I64);
    if (st != WEFT_OK) return st;
    int cnt;
    if ((st = weft_nn_const_ints(g, n, 1, "repeats", rep, WEFT_NN_MAX_DIMS, &cnt)) != WEFT_OK) return st;
    if (r->ndim != 1 || cnt != rank)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input repeats has shape %s, expected [%d] (one per dim of input)",
                            weft_nn_shape_str(r->ndim, r->shape).s, rank);
    for (int d = 0; d < rank; d++)
        if (rep[d] < 0)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "repeats[%d] = %" PRId64 " is negative", d, rep[d]);
    return WEFT_OK;
}

weft_status weft_nn_tile_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    int64_t rep[WEFT_NN_MAX_DIMS], shape[WEFT_NN_MAX_DIMS];
    if ((st = tile_repeats(g, n, x->ndim, rep)) != WEFT_OK) return st;
    for (int d = 0; d < x->ndim; d++) {
        if (rep[d] != 0 && x->shape[d] > INT64_MAX / rep[d])
            return weft_nn_fail(WEFT_ERR_SHAPE, n, "repeats[%d] = %" PRId64 " overflows dim %d", d, rep[d], d);
        shape[d] = x->shape[d] * rep[d];
    }
    return weft_nn_set_out(g, n, 0, x->dtype, x->ndim, shape);
}

weft_status weft_nn_tile_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                 const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *xi[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        for (int d = 0; d < X->ndim; d++)
            xi[d] = X->shape[d] == 1               ? weft_i64(a, 0)
                    : out->shape[d] == X->shape[d] ? idx[d]
                                                   : weft_floormod(a, idx[d], weft_i64(a, X->shape[d]));
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, xi));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- Trilu ------------------------------------------------------------------------------- */

/* Trilu's diagonal offset k: the optional constant input 1 (a one-element int64), else 0. */
static weft_status trilu_k(const weft_graph *g, const weft_gnode *n, int64_t *k)
{
    *k = 0;
    if (!weft_nn_has_in(n, 1)) return WEFT_OK;
    int cnt;
    int64_t v[1];
    weft_status st = weft_nn_check_dtype(n, weft_nn_in(g, n, 1), "input k", WEFT_NN_I64);
    if (st != WEFT_OK) return st;
    if ((st = weft_nn_const_ints(g, n, 1, "k", v, 1, &cnt)) != WEFT_OK) return st;
    if (cnt != 1) return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "input k has %d elements, expected 1", cnt);
    *k = v[0];
    return WEFT_OK;
}

weft_status weft_nn_trilu_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 1, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0);
    if (x->ndim < 2)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input has shape %s, expected at least 2 dims",
                            weft_nn_shape_str(x->ndim, x->shape).s);
    bool upper;
    int64_t k;
    if ((st = weft_nn_attr_flag(n, "upper", 1, &upper)) != WEFT_OK || (st = trilu_k(g, n, &k)) != WEFT_OK) return st;
    return weft_nn_set_out(g, n, 0, x->dtype, x->ndim, x->shape);
}

/* out[..., i, j] = x[..., i, j] where j - i >= k (upper) or j - i <= k (lower), else 0. */
weft_status weft_nn_trilu_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                  const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st = weft_nn_check_in(g, n, ins, 0);
    if (st != WEFT_OK) return st;
    bool upper;
    int64_t k;
    if ((st = weft_nn_attr_flag(n, "upper", 1, &upper)) != WEFT_OK || (st = trilu_k(g, n, &k)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0];
    weft_tensor *Y = weft_nn_compute(a, name, X->ndim, X->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        int r = X->ndim;
        const weft_expr *diff = weft_sub(a, idx[r - 1], idx[r - 2]);
        const weft_expr *keep = weft_cmp(a, upper ? WEFT_EXPR_GE : WEFT_EXPR_LE, diff, weft_i64(a, k));
        weft_te_set_body(Y, WEFT_REDUCE_NONE,
                         weft_select(a, keep, weft_tload(a, X, r, idx), weft_nn_const(a, X->dtype, 0)));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- OneHot ------------------------------------------------------------------------------ */

/* OneHot's constant depth (input 1, a one-element number, >= 1) and output axis. */
static weft_status onehot_plan(const weft_graph *g, const weft_gnode *n, int64_t *depth, int *axis)
{
    const weft_gvalue *ix = weft_nn_in(g, n, 0), *dv = weft_nn_in(g, n, 1), *vv = weft_nn_in(g, n, 2);
    weft_status st = weft_nn_check_dtype(n, ix, "input indices", WEFT_NN_I64 | WEFT_NN_I32 | WEFT_NN_F32);
    if (st != WEFT_OK) return st;
    if (vv->ndim != 1 || vv->shape[0] != 2)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "input values has shape %s, expected [2] (off, on)",
                            weft_nn_shape_str(vv->ndim, vv->shape).s);
    double d;
    if (!weft_nn_const_scalar(g, n, 1, &d))
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "input depth (shape %s) must be a constant scalar",
                            weft_nn_shape_str(dv->ndim, dv->shape).s);
    if (!(d >= 1 && d <= (double)(INT64_C(1) << 31)))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "depth %g is out of range (1 to 2^31)", d);
    *depth = (int64_t)d;
    return weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", -1), ix->ndim, true, axis);
}

weft_status weft_nn_onehot_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 3, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *ix = weft_nn_in(g, n, 0);
    if (ix->ndim + 1 > WEFT_NN_MAX_DIMS)
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "indices of %d dims: the output would have more than %d",
                            ix->ndim, WEFT_NN_MAX_DIMS);
    int64_t depth, shape[WEFT_NN_MAX_DIMS];
    int axis;
    if ((st = onehot_plan(g, n, &depth, &axis)) != WEFT_OK) return st;
    for (int d = 0, s = 0; d <= ix->ndim; d++) shape[d] = d == axis ? depth : ix->shape[s++];
    return weft_nn_set_out(g, n, 0, weft_nn_in(g, n, 2)->dtype, ix->ndim + 1, shape);
}

/* out[..., c at axis, ...] = c == (i < 0 ? i + depth : i) ? values[1] : values[0], with i the
 * index there (a float index truncated): an index outside [-depth, depth) gives all off. */
weft_status weft_nn_onehot_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                   const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 3; i += 2)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    int64_t depth;
    int axis;
    if ((st = onehot_plan(g, n, &depth, &axis)) != WEFT_OK) return st;
    const weft_gvalue *out = weft_nn_out_c(g, n, 0);
    weft_tensor *Y = weft_nn_compute(a, name, out->ndim, out->shape);
    if (Y) {
        const weft_tensor *I = ins[0], *V = ins[2];
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *ii[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        for (int d = 0, s = 0; d < out->ndim; d++)
            if (d != axis) ii[s++] = idx[d];
        const weft_expr *i = weft_nn_wrap_index(a, weft_tload(a, I, I->ndim, ii), depth);
        const weft_expr *on = weft_tload(a, V, 1, (const weft_expr *const[]){weft_i64(a, 1)});
        const weft_expr *off = weft_tload(a, V, 1, (const weft_expr *const[]){weft_i64(a, 0)});
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_select(a, weft_cmp(a, WEFT_EXPR_EQ, i, idx[axis]), on, off));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- GatherElements ---------------------------------------------------------------------- */

weft_status weft_nn_gather_elements_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 2, 2, 1, 1);
    if (st != WEFT_OK) return st;
    const weft_gvalue *x = weft_nn_in(g, n, 0), *ix = weft_nn_in(g, n, 1);
    if ((st = weft_nn_check_dtype(n, ix, "input indices", WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), x->ndim, false, &ax)) != WEFT_OK) return st;
    bool ok = ix->ndim == x->ndim;
    for (int d = 0; ok && d < x->ndim; d++) ok = d == ax || ix->shape[d] <= x->shape[d];
    if (!ok)
        return weft_nn_fail(WEFT_ERR_SHAPE, n, "indices of shape %s do not fit data of shape %s (same rank, no dim "
                            "larger off the axis)", weft_nn_shape_str(ix->ndim, ix->shape).s,
                            weft_nn_shape_str(x->ndim, x->shape).s);
    return weft_nn_set_out(g, n, 0, x->dtype, ix->ndim, ix->shape);
}

/* out[i] = x[i with the axis coordinate replaced by indices[i]] (negative indices count from
 * the end; an index out of range is clamped into it, as Gather's run-time indices are). */
weft_status weft_nn_gather_elements_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                            const weft_tensor *const *ins, weft_tensor **outs)
{
    weft_status st;
    for (int i = 0; i < 2; i++)
        if ((st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    const weft_tensor *X = ins[0], *I = ins[1];
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), X->ndim, false, &ax)) != WEFT_OK) return st;
    weft_tensor *Y = weft_nn_compute(a, name, I->ndim, I->shape);
    if (Y) {
        const weft_expr *idx[WEFT_NN_MAX_DIMS], *x[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, idx);
        int64_t dim = X->shape[ax];
        const weft_expr *v = weft_nn_clamp(a, weft_nn_wrap_index(a, weft_tload(a, I, I->ndim, idx), dim), 0, dim - 1);
        for (int d = 0; d < X->ndim; d++) x[d] = d == ax ? v : idx[d];
        weft_te_set_body(Y, WEFT_REDUCE_NONE, weft_tload(a, X, X->ndim, x));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}
