/* ScatterND and ScatterElements: data-dependent writes turned around into reads.
 *
 * ScatterND (opset 11-18, reduction none / add / mul / max / min): indices [L..., k] address
 * slices data[i_0, .., i_{k-1}, :] that updates [L..., data dims k..] write (or combine into,
 * with a reduction), rows in row-major order ("none": the last write wins, as the reference
 * implementation and PyTorch's CPU kernel do). Three formulations, per output element p with
 * lead(p) = p[0..k):
 *
 *   box      (constant indices listing the positions of one dense box of the first k axes in
 *            row-major order, reduction none: slice assignment, x[a:b, c:d] = v):
 *                updates[flat(lead(p) - box_start), rest] inside the box, data[p] outside
 *            as one select; no extra constant.
 *   planned  (other constant indices: model/compile.c gives the node a plan as a 4th input,
 *            weft_nn_scatter_plan): int64 [data dims 0..k, T] listing per slice the rows that
 *            land on it, ascending, -1 padded (T = the most on one slice; 1 for "none", the last):
 *                R[p] = REDUCE_t select(plan[lead, t] >= 0, updates[row(plan[lead, t]), rest], id)
 *   run time (computed indices): R[p] = REDUCE over rows of select(indices[row] == lead(p),
 *            updates[row, rest], identity): O(rows) per element; "none": the last such row (a MAX
 *            of row numbers), then its update.
 *
 * and the output data[p] ⊕ R[p] ("<name>.r" is R), or for "none" the chosen update where one
 * lands, data[p] elsewhere. On CPUs run-time indices over many rows take a loop kernel instead
 * (weft_op_loop, at the end of this file). Negative indices count from the end; a constant index out of range
 * is refused when the node is added, one computed at run time lands nowhere.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/stmt.h"
#include "ops/nn_internal.h"
#include "runtime/mem.h"

typedef enum { SC_NONE, SC_ADD, SC_MUL, SC_MAX, SC_MIN } scatter_red;

static weft_status scatter_reduction(const weft_gnode *n, scatter_red *out)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *red = weft_gnode_attr_string(n, "reduction", "none");
    for (int i = 0; i < 5; i++)
        if (strcmp(red, names[i]) == 0) {
            *out = (scatter_red)i;
            return WEFT_OK;
        }
    return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "attribute reduction='%s' is not one of none, add, mul, max, min",
                        red);
}

static weft_reduce_kind scatter_reduce_kind(scatter_red r)
{
    switch (r) {
    case SC_ADD: return WEFT_REDUCE_SUM;
    case SC_MUL: return WEFT_REDUCE_PROD;
    case SC_MAX: return WEFT_REDUCE_MAX;
    case SC_MIN: return WEFT_REDUCE_MIN;
    default: return WEFT_REDUCE_MAX; /* none: the last j, a MAX of positions */
    }
}

static const weft_expr *scatter_combine(weft_arena *a, scatter_red r, const weft_expr *x, const weft_expr *y)
{
    switch (r) {
    case SC_ADD: return weft_add(a, x, y);
    case SC_MUL: return weft_mul(a, x, y);
    case SC_MAX: return weft_max(a, x, y);
    default: return weft_min(a, x, y);
    }
}

/* Data of any dtype for "none" (only selected, never combined: a bool mask assigned at
 * positions), numbers for a reduction. */
static weft_status scatter_data_dtype(const weft_gnode *n, const weft_gvalue *D, scatter_red red)
{
    if (red == SC_NONE) return weft_nn_check_dtype(n, D, "data", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32 | WEFT_NN_BOOL);
    return weft_nn_check_dtype(n, D, "data (with a reduction)", WEFT_NN_F32 | WEFT_NN_I64 | WEFT_NN_I32);
}

/* Compute prologue shared by both ops: inputs 0-2 (and the plan, when present) checked, the
 * reduction read. */
static weft_status scatter_inputs(const weft_graph *g, const weft_gnode *n, const weft_tensor *const *ins,
                                  scatter_red *red)
{
    weft_status st;
    for (int i = 0; i < 4; i++)
        if ((i < 3 || weft_nn_has_in(n, 3)) && (st = weft_nn_check_in(g, n, ins, i)) != WEFT_OK) return st;
    return scatter_reduction(n, red);
}

/* Every entry of plan P in [-1, limit). */
static bool plan_entries_ok(const weft_gvalue *P, int64_t limit)
{
    const int64_t *e = P->data;
    for (int64_t i = 0, m = weft_gvalue_numel(P); i < m; i++)
        if (e[i] < -1 || e[i] >= limit) return false;
    return true;
}

/* R's body: the reduction over the candidates of select(hit, the update (for "none": its row or
 * position `row`), identity). */
static void scatter_r_body(weft_arena *a, weft_tensor *R, scatter_red red, const weft_expr *hit, const weft_expr *row,
                           const weft_expr *upd, weft_dtype t)
{
    weft_reduce_kind rk = scatter_reduce_kind(red);
    const weft_expr *none = red == SC_NONE ? weft_i64(a, -1) : weft_te_reduce_identity(a, rk, t);
    weft_te_set_body(R, rk, weft_select(a, hit, red == SC_NONE ? row : upd, none));
}

/* The output element from data dv and R's rv: "none" the update chosen (upd_at_rv, read at the
 * row or position rv) where one landed, else data; a reduction dv ⊕ rv (upd_at_rv NULL). */
static const weft_expr *scatter_result(weft_arena *a, scatter_red red, const weft_expr *dv, const weft_expr *rv,
                                       const weft_expr *upd_at_rv)
{
    if (red != SC_NONE) return scatter_combine(a, red, dv, rv);
    return weft_select(a, weft_cmp(a, WEFT_EXPR_GE, rv, weft_i64(a, 0)), upd_at_rv, dv);
}

/* The largest plan made (entries); above it the node keeps the run-time formulation. */
#define PLAN_MAX ((int64_t)1 << 24)

weft_status weft_nn_scatter_nd_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 4, 1, 1);
    if (st != WEFT_OK) return st;
    scatter_red red = SC_NONE;
    if ((st = scatter_reduction(n, &red)) != WEFT_OK) return st;
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1), *U = weft_nn_in(g, n, 2);
    if ((st = weft_nn_check_dtype(n, I, "indices", WEFT_NN_I64)) != WEFT_OK) return st;
    if ((st = scatter_data_dtype(n, D, red)) != WEFT_OK) return st;
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
    if (I->data)
        for (int64_t j = 0; j < weft_gvalue_numel(I); j++) {
            int64_t v = ((const int64_t *)I->data)[j], dim = D->shape[j % k];
            if (v < -dim || v >= dim)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "index %" PRId64 " is out of range for axis %d of data %s",
                                    v, (int)(j % k), weft_nn_shape_str(D->ndim, D->shape).s);
        }
    if (weft_nn_has_in(n, 3)) { /* the plan (weft_nn_scatter_plan) */
        const weft_gvalue *P = weft_nn_in(g, n, 3);
        int64_t rows = weft_gvalue_numel(I) / k;
        ok = P->data && weft_dtype_eq(P->dtype, WEFT_I64) && P->ndim == k + 1 && P->shape[k] >= 1;
        for (int d = 0; ok && d < k; d++) ok = P->shape[d] == D->shape[d];
        ok = ok && plan_entries_ok(P, rows);
        if (!ok)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                                "a 4th input must be the scatter plan weft makes itself (a constant int64 [data dims "
                                "0..%" PRId64 ", T] of rows in [-1, %" PRId64 "))",
                                k, rows);
    }
    return weft_nn_set_out(g, n, 0, D->dtype, D->ndim, D->shape);
}

/* The box the constant indices cover: start[0..k), extent[0..k); false when they are not one
 * dense box in row-major order (or are empty). */
static bool index_box(const weft_graph *g, const weft_gnode *n, int64_t *start, int64_t *extent)
{
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    if (!I->data) return false;
    int k = (int)I->shape[I->ndim - 1];
    int64_t rows = weft_gvalue_numel(I) / k;
    if (rows == 0) return false;
    const int64_t *ix = I->data;
    /* the box: the first row is its start; its extents from the last row */
    int64_t count = 1;
    for (int a = 0; a < k; a++) {
        int64_t f = ix[a], l = ix[(rows - 1) * k + a];
        if (f < 0) f += D->shape[a];
        if (l < 0) l += D->shape[a];
        start[a] = f, extent[a] = l - f + 1;
        if (f < 0 || l >= D->shape[a] || extent[a] < 1) return false;
        count *= extent[a];
    }
    if (count != rows) return false;
    for (int64_t r = 0; r < rows; r++) {
        int64_t rem = r;
        for (int a = k - 1; a >= 0; a--) {
            int64_t v = ix[r * k + a];
            if (v < 0) v += D->shape[a];
            if (v != start[a] + rem % extent[a]) return false;
            rem /= extent[a];
        }
    }
    return true;
}

/* Row number rho (an int64 expression) of indices [L..., k] as its multi-index in u[0..L). */
static void unflatten_row(weft_arena *a, const weft_expr *rho, const weft_tensor *I, const weft_expr **u)
{
    int lead = I->ndim - 1;
    for (int d = lead - 1; d >= 0; d--) {
        int64_t e = I->shape[d];
        u[d] = d == 0 ? rho : weft_floormod(a, rho, weft_i64(a, e));
        if (d > 0) rho = weft_floordiv(a, rho, weft_i64(a, e));
    }
}

weft_status weft_nn_scatter_nd_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n, const char *name,
                                       const weft_tensor *const *ins, weft_tensor **outs)
{
    scatter_red red = SC_NONE;
    weft_status st = scatter_inputs(g, n, ins, &red);
    if (st != WEFT_OK) return st;
    const weft_tensor *D = ins[0], *I = ins[1], *U = ins[2], *P = weft_nn_has_in(n, 3) ? ins[3] : NULL;
    const weft_gvalue *Iv = weft_nn_in(g, n, 1);
    int k = (int)I->shape[I->ndim - 1], lead = I->ndim - 1, r = D->ndim;
    int64_t rows = 1;
    for (int d = 0; d < lead; d++) rows *= I->shape[d];
    if (Iv->data && rows == 0) /* an empty constant: no position to read */
        return weft_nn_fail(WEFT_ERR_UNSUPPORTED, n, "indices %s are empty (a scatter of nothing is not supported)",
                            weft_nn_shape_str(I->ndim, I->shape).s);
    int64_t start[WEFT_NN_MAX_DIMS], extent[WEFT_NN_MAX_DIMS];
    if (!P && red == SC_NONE && index_box(g, n, start, extent)) { /* slice assignment */
        weft_tensor *Y = weft_nn_compute(a, name, r, D->shape);
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
            unflatten_row(a, flat, I, u);
            for (int d = k; d < r; d++) u[lead + d - k] = p[d];
            const weft_expr *v = weft_select(a, inside, weft_tload(a, U, U->ndim, u), weft_tload(a, D, r, p));
            weft_te_set_body(Y, WEFT_REDUCE_NONE, v);
        }
        outs[0] = Y;
        return weft_nn_done(a, n);
    }
    weft_tensor *R = weft_nn_compute(a, weft_nn_stage(a, name, ".r"), r, D->shape);
    if (R) {
        const weft_expr *p[WEFT_NN_MAX_DIMS], *u[WEFT_NN_MAX_DIMS + 1], *rho, *hit = NULL;
        weft_nn_axes(R, p);
        if (P) {
            const weft_expr *t = weft_te_reduce_axis(a, R, "k", P->shape[k]), *pp[WEFT_NN_MAX_DIMS + 1];
            for (int d = 0; d < k; d++) pp[d] = p[d];
            pp[k] = t;
            const weft_expr *e = weft_tload(a, P, k + 1, pp);
            hit = weft_cmp(a, WEFT_EXPR_GE, e, weft_i64(a, 0));
            rho = weft_nn_clamp(a, e, 0, rows - 1);
        } else {
            rho = weft_te_reduce_axis(a, R, "k", rows);
            unflatten_row(a, rho, I, u);
            for (int d = 0; d < k; d++) {
                u[lead] = weft_i64(a, d);
                const weft_expr *ix = weft_nn_wrap_index(a, weft_tload(a, I, I->ndim, u), D->shape[d]);
                const weft_expr *c = weft_cmp(a, WEFT_EXPR_EQ, ix, p[d]);
                hit = hit ? weft_and(a, hit, c) : c;
            }
        }
        unflatten_row(a, rho, I, u);
        for (int d = k; d < r; d++) u[lead + d - k] = p[d];
        scatter_r_body(a, R, red, hit, rho, weft_tload(a, U, U->ndim, u), U->dtype);
    }
    weft_tensor *Y = R ? weft_nn_compute(a, name, r, D->shape) : NULL;
    if (Y) {
        const weft_expr *p[WEFT_NN_MAX_DIMS], *u[WEFT_NN_MAX_DIMS + 1];
        weft_nn_axes(Y, p);
        const weft_expr *rv = weft_tload(a, R, r, p), *chosen = NULL; /* "none": rv is a row */
        if (red == SC_NONE) {
            unflatten_row(a, weft_nn_clamp(a, rv, 0, rows - 1), I, u);
            for (int d = k; d < r; d++) u[lead + d - k] = p[d];
            chosen = weft_tload(a, U, U->ndim, u);
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, scatter_result(a, red, weft_tload(a, D, r, p), rv, chosen));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* ---- ScatterElements --------------------------------------------------------------------- */
/* ScatterElements (opset 11-18, and Scatter of opsets 9-10; torch.scatter, scatter_add): for every
 * element u of updates at position q, output[q with q[axis] = indices[q]] ⊕= u. Indices and
 * updates share a shape no larger than data's in every dim but the axis; positions beyond the
 * updates' extent in another dim keep data. The formulations are the file comment's, with the
 * reduction per output element p over positions j along the axis:
 *
 *   planned   plan int64 [plan dims..., T], each plan dim data's extent or 1 where the indices
 *             do not change along it (an index vector expanded over features), listing the j
 *             landing on p: R[p] = REDUCE_t select(plan[p, t] >= 0, updates[p | axis = plan[p, t]], id).
 *   run time  R[p] = REDUCE_j select(indices[p | axis = j] == p[axis], updates[p | axis = j], id).
 */

weft_status weft_nn_scatter_elements_infer(weft_graph *g, const weft_gnode *n)
{
    weft_status st = weft_nn_check_arity(n, 3, 4, 1, 1);
    if (st != WEFT_OK) return st;
    scatter_red red = SC_NONE;
    if ((st = scatter_reduction(n, &red)) != WEFT_OK) return st;
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1), *U = weft_nn_in(g, n, 2);
    if ((st = scatter_data_dtype(n, D, red)) != WEFT_OK) return st;
    if ((st = weft_nn_check_dtype(n, I, "indices", WEFT_NN_I64 | WEFT_NN_I32)) != WEFT_OK) return st;
    if (!weft_dtype_eq(D->dtype, U->dtype))
        return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "updates have dtype %s, data %s", weft_dtype_name(U->dtype),
                            weft_dtype_name(D->dtype));
    if (D->ndim < 1) return weft_nn_fail(WEFT_ERR_SHAPE, n, "data is a scalar, expected at least 1 dim");
    int ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), D->ndim, false, &ax)) != WEFT_OK) return st;
    bool ok = I->ndim == D->ndim && U->ndim == D->ndim;
    for (int d = 0; ok && d < D->ndim; d++) ok = I->shape[d] == U->shape[d] && (d == ax || I->shape[d] <= D->shape[d]);
    if (!ok)
        return weft_nn_fail(WEFT_ERR_SHAPE, n,
                            "indices %s and updates %s must have one shape, of data %s's rank and no larger than data "
                            "in any dim but axis %d",
                            weft_nn_shape_str(I->ndim, I->shape).s, weft_nn_shape_str(U->ndim, U->shape).s,
                            weft_nn_shape_str(D->ndim, D->shape).s, ax);
    if (I->data) {
        int64_t dim = D->shape[ax];
        for (int64_t j = 0; j < weft_gvalue_numel(I); j++) {
            int64_t v = weft_gvalue_int(I, j);
            if (v < -dim || v >= dim)
                return weft_nn_fail(WEFT_ERR_INVALID_ARG, n, "index %" PRId64 " is out of range for axis %d of data %s",
                                    v, ax, weft_nn_shape_str(D->ndim, D->shape).s);
        }
    }
    if (weft_nn_has_in(n, 3)) { /* the plan (weft_nn_scatter_plan) */
        const weft_gvalue *P = weft_nn_in(g, n, 3);
        ok = P->data && weft_dtype_eq(P->dtype, WEFT_I64) && P->ndim == D->ndim + 1 && P->shape[D->ndim] >= 1;
        for (int d = 0; ok && d < D->ndim; d++) ok = P->shape[d] == D->shape[d] || P->shape[d] == 1;
        ok = ok && plan_entries_ok(P, U->shape[ax]);
        if (!ok)
            return weft_nn_fail(WEFT_ERR_INVALID_ARG, n,
                                "a 4th input must be the scatter plan weft makes itself (a constant int64 [data dims "
                                "or 1..., T] of positions in [-1, %" PRId64 "))",
                                U->shape[ax]);
    }
    return weft_nn_set_out(g, n, 0, D->dtype, D->ndim, D->shape);
}

weft_status weft_nn_scatter_elements_compute(weft_arena *a, const weft_graph *g, const weft_gnode *n,
                                             const char *name, const weft_tensor *const *ins, weft_tensor **outs)
{
    scatter_red red = SC_NONE;
    weft_status st = scatter_inputs(g, n, ins, &red);
    if (st != WEFT_OK) return st;
    const weft_tensor *D = ins[0], *I = ins[1], *U = ins[2], *P = weft_nn_has_in(n, 3) ? ins[3] : NULL;
    int r = D->ndim, ax;
    if ((st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), r, false, &ax)) != WEFT_OK) return st;
    int64_t dim = D->shape[ax], nj = U->shape[ax];
    /* R: the reduced updates per output element ("none": the chosen j, or -1) */
    weft_tensor *R = weft_nn_compute(a, weft_nn_stage(a, name, ".r"), r, D->shape);
    if (R) {
        const weft_expr *p[WEFT_NN_MAX_DIMS], *q[WEFT_NN_MAX_DIMS], *inside = NULL;
        weft_nn_axes(R, p);
        for (int d = 0; d < r; d++) {
            if (d == ax || U->shape[d] == D->shape[d]) {
                q[d] = p[d];
                continue;
            }
            const weft_expr *c = weft_cmp(a, WEFT_EXPR_LT, p[d], weft_i64(a, U->shape[d]));
            inside = inside ? weft_and(a, inside, c) : c;
            q[d] = weft_nn_clamp(a, p[d], 0, U->shape[d] - 1);
        }
        const weft_expr *j, *hit;
        if (P) {
            const weft_expr *t = weft_te_reduce_axis(a, R, "k", P->shape[r]), *pp[WEFT_NN_MAX_DIMS + 1];
            for (int d = 0; d < r; d++) pp[d] = P->shape[d] == 1 ? weft_i64(a, 0) : p[d];
            pp[r] = t;
            const weft_expr *e = weft_tload(a, P, r + 1, pp);
            hit = weft_cmp(a, WEFT_EXPR_GE, e, weft_i64(a, 0));
            j = weft_nn_clamp(a, e, 0, nj - 1);
        } else {
            j = weft_te_reduce_axis(a, R, "k", nj);
            q[ax] = j;
            hit = weft_cmp(a, WEFT_EXPR_EQ, weft_nn_wrap_index(a, weft_tload(a, I, r, q), dim), p[ax]);
        }
        if (inside) hit = weft_and(a, inside, hit);
        q[ax] = j;
        scatter_r_body(a, R, red, hit, j, weft_tload(a, U, r, q), U->dtype);
    }
    weft_tensor *Y = R ? weft_nn_compute(a, name, r, D->shape) : NULL;
    if (Y) {
        const weft_expr *p[WEFT_NN_MAX_DIMS], *q[WEFT_NN_MAX_DIMS];
        weft_nn_axes(Y, p);
        const weft_expr *rv = weft_tload(a, R, r, p), *chosen = NULL; /* "none": rv is a position */
        if (red == SC_NONE) {
            for (int d = 0; d < r; d++)
                q[d] = d == ax ? weft_nn_clamp(a, rv, 0, nj - 1) : weft_nn_clamp(a, p[d], 0, U->shape[d] - 1);
            chosen = weft_tload(a, U, r, q);
        }
        weft_te_set_body(Y, WEFT_REDUCE_NONE, scatter_result(a, red, weft_tload(a, D, r, p), rv, chosen));
    }
    outs[0] = Y;
    return weft_nn_done(a, n);
}

/* The indices are equal along dim d (every element equals its neighbour at d = 0). */
static bool same_along(const weft_gvalue *I, int d)
{
    int64_t inner = 1;
    for (int e = d + 1; e < I->ndim; e++) inner *= I->shape[e];
    int64_t ext = I->shape[d], total = weft_gvalue_numel(I);
    for (int64_t q = 0; q < total; q++) {
        int64_t k = q / inner % ext;
        if (k && weft_gvalue_int(I, q) != weft_gvalue_int(I, q - k * inner)) return false;
    }
    return true;
}

/* Row-major offset in the plan (without its T dim) of the element index q of the indices lands
 * on, or -1 when q is a duplicate along a dim the plan collapses. */
static int64_t plan_slot(const weft_gvalue *I, const int64_t *pshape, int ax, int64_t dim, int64_t q)
{
    int64_t rem = q, off = 0, stride = 1, target = weft_gvalue_int(I, q);
    if (target < 0) target += dim;
    for (int d = I->ndim - 1; d >= 0; d--) {
        int64_t c = rem % I->shape[d];
        rem /= I->shape[d];
        if (d == ax) c = target;
        else if (pshape[d] == 1 && c != 0) return -1;
        else if (pshape[d] == 1) c = 0;
        off += c * stride;
        stride *= pshape[d];
    }
    return off;
}

/* The plan of ScatterND node ni (constant indices that are not a box assigned as a whole). */
static weft_status scatter_nd_plan(weft_graph *g, int ni)
{
    const weft_gnode *n = &g->nodes[ni];
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    scatter_red red = SC_NONE;
    if (!D || !I || !I->data || !weft_dtype_eq(I->dtype, WEFT_I64) || I->ndim < 1 || scatter_reduction(n, &red)) {
        weft_error_clear();
        return WEFT_OK;
    }
    int k = (int)I->shape[I->ndim - 1];
    int64_t rows = k > 0 ? weft_gvalue_numel(I) / k : 0, slots = 1, start[WEFT_NN_MAX_DIMS], extent[WEFT_NN_MAX_DIMS];
    if (k < 1 || k > D->ndim || rows == 0 || (red == SC_NONE && index_box(g, n, start, extent))) return WEFT_OK;
    for (int d = 0; d < k; d++) slots *= D->shape[d];
    if (slots > PLAN_MAX) return WEFT_OK;
    const int64_t *ix = I->data;
    int64_t *cnt = weft_calloc((size_t)slots, sizeof *cnt), T = 1, *slot = weft_malloc((size_t)rows * sizeof *slot);
    if (!cnt || !slot) {
        free(cnt), free(slot);
        return weft_fail(WEFT_ERR_NOMEM, "out of memory planning ScatterND node '%s'", n->name);
    }
    for (int64_t q = 0; q < rows; q++) {
        int64_t off = 0;
        for (int d = 0; d < k; d++) {
            int64_t v = ix[q * k + d];
            off = off * D->shape[d] + (v < 0 ? v + D->shape[d] : v);
        }
        slot[q] = off;
        if (red != SC_NONE && ++cnt[off] > T) T = cnt[off];
    }
    int64_t pshape[WEFT_NN_MAX_DIMS + 1];
    for (int d = 0; d < k; d++) pshape[d] = D->shape[d];
    pshape[k] = T;
    int64_t *plan = slots * T <= PLAN_MAX ? weft_malloc((size_t)(slots * T) * sizeof *plan) : NULL;
    if (!plan) {
        free(cnt), free(slot);
        return slots * T <= PLAN_MAX ? weft_fail(WEFT_ERR_NOMEM, "out of memory planning ScatterND node '%s'", n->name)
                                     : WEFT_OK;
    }
    for (int64_t e = 0; e < slots * T; e++) plan[e] = -1;
    memset(cnt, 0, (size_t)slots * sizeof *cnt);
    for (int64_t q = 0; q < rows; q++) {
        if (red == SC_NONE) plan[slot[q]] = q;
        else plan[slot[q] * T + cnt[slot[q]]++] = q;
    }
    free(cnt), free(slot);
    char pname[300];
    snprintf(pname, sizeof pname, "%.280s.plan", n->name);
    int pv = weft_graph_new_value(g, pname, WEFT_I64, k + 1, pshape);
    if (pv < 0) {
        free(plan);
        return weft_fail(WEFT_ERR_NOMEM, "out of memory planning ScatterND node '%s'", g->nodes[ni].name);
    }
    g->values[pv].data = plan;
    g->nodes[ni].inputs[3] = pv;
    g->nodes[ni].n_inputs = 4;
    return WEFT_OK;
}

weft_status weft_nn_scatter_plan(weft_graph *g, int ni)
{
    const weft_gnode *n = &g->nodes[ni];
    if (!n->dead && !strcmp(n->op_type, "ScatterND") && n->n_inputs == 3 && n->n_outputs == 1)
        return scatter_nd_plan(g, ni);
    if (n->dead || (strcmp(n->op_type, "ScatterElements") && strcmp(n->op_type, "Scatter")) || n->n_inputs != 3 ||
        n->n_outputs != 1)
        return WEFT_OK;
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    scatter_red red = SC_NONE;
    int ax;
    if (!D || !I || !I->data || D->ndim != I->ndim || D->ndim >= WEFT_NN_MAX_DIMS || scatter_reduction(n, &red) ||
        weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), D->ndim, false, &ax)) {
        weft_error_clear();
        return WEFT_OK;
    }
    int r = D->ndim;
    int64_t pshape[WEFT_NN_MAX_DIMS + 1], dim = D->shape[ax], nq = weft_gvalue_numel(I), slots = 1;
    for (int d = 0; d < r; d++) {
        pshape[d] = d != ax && same_along(I, d) ? 1 : D->shape[d];
        slots *= pshape[d];
    }
    if (slots > PLAN_MAX) return WEFT_OK;
    int64_t *cnt = weft_calloc((size_t)slots, sizeof *cnt), T = 1;
    if (!cnt) return weft_fail(WEFT_ERR_NOMEM, "out of memory planning ScatterElements node '%s'", n->name);
    for (int64_t q = 0; q < nq; q++) {
        int64_t s = plan_slot(I, pshape, ax, dim, q);
        if (s >= 0 && red != SC_NONE && ++cnt[s] > T) T = cnt[s];
    }
    if (slots * T > PLAN_MAX) {
        free(cnt);
        return WEFT_OK;
    }
    pshape[r] = T;
    int64_t *plan = weft_malloc((size_t)(slots * T) * sizeof *plan);
    char pname[300];
    snprintf(pname, sizeof pname, "%.280s.plan", n->name);
    int pv = plan ? weft_graph_new_value(g, pname, WEFT_I64, r + 1, pshape) : -1;
    if (pv < 0) {
        free(cnt);
        free(plan);
        return weft_fail(WEFT_ERR_NOMEM, "out of memory planning ScatterElements node '%s'", g->nodes[ni].name);
    }
    for (int64_t e = 0; e < slots * T; e++) plan[e] = -1;
    memset(cnt, 0, (size_t)slots * sizeof *cnt);
    /* q in row-major order: along the axis, ascending j; "none" keeps the last */
    int64_t inner = 1;
    for (int d = ax + 1; d < r; d++) inner *= I->shape[d];
    for (int64_t q = 0; q < nq; q++) {
        int64_t s = plan_slot(I, pshape, ax, dim, q), j = q / inner % I->shape[ax];
        if (s < 0) continue;
        if (red == SC_NONE) plan[s] = j;
        else plan[s * T + cnt[s]++] = j;
    }
    free(cnt);
    g->values[pv].data = plan;
    weft_gnode *m = &g->nodes[ni];
    m->inputs[3] = pv;
    m->n_inputs = 4;
    return WEFT_OK;
}

/* ---- scatters with run-time indices as loops ---------------------------------------------- */
/* With indices known only at run time, the formulations above search every row per output
 * element: O(elements x rows), quadratic for an unpooling (a SegNet decoder's scatter through
 * 1024 pooling indices per 64x64 channel: 9.8 ms where its data is 256 KB). From
 * SCATTER_LOOP_MIN_ROWS rows a CPU target runs the scatter as it is defined instead, a loop
 * kernel (ir/stmt.h) in two parts: the output = data, then one pass over the updates, each
 * stored at (or combined into) its computed position; an index outside the axis after wrapping
 * lands nowhere, as in the formulations above. Rows are visited in ascending order, so for
 * "none" the last of several rows landing on one element wins, as there. ScatterElements runs
 * its pass in parallel over its first dim other than the axis (positions that differ there never
 * meet); ScatterND's rows may land anywhere, so its pass is serial. GPU targets keep the tensor
 * expressions (weft_op_loop's callers decide). */
#define SCATTER_LOOP_MIN_ROWS 32

typedef struct loop_params {
    const weft_buffer *D, *I, *U, *Y;
    int n;
    const weft_buffer **all;
} loop_params;

/* Buffers for the kernel's parameters, which of them are n's data, indices, updates and
 * output, and n's reduction. */
static weft_status loop_buffers(weft_arena *a, const weft_graph *g, const weft_gnode *n, const int *params,
                                int n_params, loop_params *lp, scatter_red *red)
{
    weft_status st = scatter_reduction(n, red);
    if (st != WEFT_OK) return st;
    lp->n = n_params;
    lp->all = weft_nn_loop_buffers(a, g, params, n_params);
    if (!lp->all) return weft_fail(WEFT_ERR_NOMEM, "out of memory building a scatter kernel");
    lp->Y = weft_nn_loop_find(lp->all, params, n_params, n->outputs[0]);
    lp->D = weft_nn_loop_find(lp->all, params, n_params, n->inputs[0]);
    lp->I = weft_nn_loop_find(lp->all, params, n_params, n->inputs[1]);
    lp->U = weft_nn_loop_find(lp->all, params, n_params, n->inputs[2]);
    if (!lp->D || !lp->I || !lp->U || !lp->Y)
        return weft_nn_fail(WEFT_ERR_INTERNAL, n, "the kernel's parameters do not hold the node's inputs and output");
    return WEFT_OK;
}

/* Y = D, one parallel loop over rows of the last dim. */
static const weft_stmt *copy_data(weft_arena *a, const weft_buffer *Y, const weft_buffer *D)
{
    int64_t inner = D->ndim ? D->shape[D->ndim - 1] : 1, rows = D->size / (inner ? inner : 1);
    const weft_expr *r = weft_var(a, "r", WEFT_I64), *c = weft_var(a, "c", WEFT_I64);
    const weft_expr *at = weft_add(a, weft_mul(a, r, weft_i64(a, inner)), c);
    const weft_stmt *row = weft_for(a, c, weft_i64(a, 0), weft_i64(a, inner), WEFT_FOR_SERIAL,
                                    weft_store(a, Y, at, weft_load(a, D, at)));
    return weft_for(a, r, weft_i64(a, 0), weft_i64(a, rows), rows > 1 ? WEFT_FOR_PARALLEL : WEFT_FOR_SERIAL, row);
}

/* Y[dst] = upd, or Y[dst] ⊕= upd with a reduction, where `ok`. */
static const weft_stmt *land(weft_arena *a, scatter_red red, const weft_buffer *Y, const weft_expr *dst,
                             const weft_expr *upd, const weft_expr *ok)
{
    const weft_expr *v = red == SC_NONE ? upd : scatter_combine(a, red, weft_load(a, Y, dst), upd);
    return weft_if(a, ok, weft_store(a, Y, dst, v), NULL);
}

/* A wrapped index v (negative: from the end of an axis of extent dim) and whether it lands. */
static const weft_expr *wrap_in(weft_arena *a, const weft_expr *v, int64_t dim, const weft_expr **ok)
{
    v = weft_nn_wrap_index(a, v, dim);
    *ok = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, 0)), weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, dim)));
    return v;
}

static weft_loop_func *loop_func(weft_arena *a, const char *name, const loop_params *lp, const weft_stmt *copy,
                                 const weft_stmt *pass)
{
    return weft_nn_loop_func(a, name, lp->all, lp->n, weft_seq(a, 2, (const weft_stmt *const[]){copy, pass}));
}

static weft_status scatter_elements_loop(weft_arena *a, const weft_graph *g, const weft_gnode *n, const int *params,
                                         int n_params, const char *name, weft_loop_func **out)
{
    loop_params lp;
    scatter_red red = SC_NONE;
    weft_status st = loop_buffers(a, g, n, params, n_params, &lp, &red);
    int r = st == WEFT_OK ? lp.D->ndim : 0, ax = 0;
    if (st == WEFT_OK) st = weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), r, false, &ax);
    if (st != WEFT_OK) return st;
    /* loops over the updates: the dims other than the axis in order, the axis innermost */
    const weft_expr *u[WEFT_NN_MAX_DIMS] = {0}, *q[WEFT_NN_MAX_DIMS] = {0};
    for (int d = 0; d < r; d++) u[d] = weft_var(a, weft_arena_printf(a, "u%d", d), WEFT_I64);
    const weft_expr *src = weft_nn_flat_index(a, r, lp.U->shape, u), *ok;
    const weft_expr *j = wrap_in(a, weft_load(a, lp.I, src), lp.D->shape[ax], &ok);
    for (int d = 0; d < r; d++) q[d] = d == ax ? j : u[d];
    const weft_stmt *body = land(a, red, lp.Y, weft_nn_flat_index(a, r, lp.D->shape, q), weft_load(a, lp.U, src), ok);
    body = weft_for(a, u[ax], weft_i64(a, 0), weft_i64(a, lp.U->shape[ax]), WEFT_FOR_SERIAL, body);
    int outer = ax == 0 ? 1 : 0; /* the outermost loop, in parallel */
    for (int d = r - 1; d >= 0; d--)
        if (d != ax)
            body = weft_for(a, u[d], weft_i64(a, 0), weft_i64(a, lp.U->shape[d]),
                            d == outer && lp.U->shape[d] > 1 ? WEFT_FOR_PARALLEL : WEFT_FOR_SERIAL, body);
    *out = loop_func(a, name, &lp, copy_data(a, lp.Y, lp.D), body);
    return *out && !weft_arena_failed(a) ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory building a scatter kernel");
}

static weft_status scatter_nd_loop(weft_arena *a, const weft_graph *g, const weft_gnode *n, const int *params,
                                   int n_params, const char *name, weft_loop_func **out)
{
    loop_params lp;
    scatter_red red = SC_NONE;
    weft_status st = loop_buffers(a, g, n, params, n_params, &lp, &red);
    if (st != WEFT_OK) return st;
    int r = lp.D->ndim, k = (int)lp.I->shape[lp.I->ndim - 1];
    int64_t rows = lp.I->size / k, slice = 1;
    for (int d = k; d < r; d++) slice *= lp.D->shape[d];
    /* for each row t: the slice's position from its k indices, then its elements e */
    const weft_expr *t = weft_var(a, "t", WEFT_I64), *e = weft_var(a, "e", WEFT_I64), *ok = NULL;
    const weft_expr *lead[WEFT_NN_MAX_DIMS] = {0};
    for (int d = 0; d < k; d++) {
        const weft_expr *okd;
        lead[d] = wrap_in(a, weft_load(a, lp.I, weft_add(a, weft_mul(a, t, weft_i64(a, k)), weft_i64(a, d))),
                          lp.D->shape[d], &okd);
        ok = ok ? weft_and(a, ok, okd) : okd;
    }
    const weft_expr *dst = weft_add(a, weft_mul(a, weft_nn_flat_index(a, k, lp.D->shape, lead), weft_i64(a, slice)), e);
    const weft_expr *upd = weft_load(a, lp.U, weft_add(a, weft_mul(a, t, weft_i64(a, slice)), e));
    const weft_stmt *body = weft_for(a, e, weft_i64(a, 0), weft_i64(a, slice), WEFT_FOR_SERIAL, land(a, red, lp.Y, dst, upd, ok));
    body = weft_for(a, t, weft_i64(a, 0), weft_i64(a, rows), WEFT_FOR_SERIAL, body);
    *out = loop_func(a, name, &lp, copy_data(a, lp.Y, lp.D), body);
    return *out && !weft_arena_failed(a) ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "out of memory building a scatter kernel");
}

weft_op_loop_fn weft_nn_scatter_loop(const weft_graph *g, const weft_gnode *n)
{
    if (!n->def || n->n_inputs < 3 || n->n_inputs > 3 || n->n_outputs != 1) return NULL;
    bool elements = n->def->compute == weft_nn_scatter_elements_compute, nd = n->def->compute == weft_nn_scatter_nd_compute;
    if ((!elements && !nd) || weft_nn_is_const(g, n, 1)) return NULL;
    const weft_gvalue *D = weft_nn_in(g, n, 0), *I = weft_nn_in(g, n, 1);
    if (!D || !I || I->ndim < 1) return NULL;
    int64_t rows;
    if (elements) {
        int ax;
        if (weft_nn_axis(n, "axis", weft_gnode_attr_int(n, "axis", 0), D->ndim, false, &ax) != WEFT_OK) {
            weft_error_clear();
            return NULL;
        }
        rows = I->shape[ax];
    } else {
        int64_t k = I->shape[I->ndim - 1];
        rows = k > 0 ? weft_gvalue_numel(I) / k : 0;
    }
    if (rows < SCATTER_LOOP_MIN_ROWS) return NULL;
    return elements ? scatter_elements_loop : scatter_nd_loop;
}
