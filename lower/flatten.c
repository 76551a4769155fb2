/* flatten: tensor reads become buffer reads. Every TLOAD of an input or of a stage becomes a
 * LOAD of its buffer at the flat row-major index of the point, the stage's region min
 * subtracted first (a stage attached inside a loop holds only its region).
 *
 * Requires: region's buffers, nest's loop IR. Ensures: no TLOAD remains.
 */
#include "ir/error.h"
#include "lower/lower_internal.h"

static const weft_expr *flat_index(weft_arena *a, int n, const weft_expr *const *idx, const weft_expr *const *lo,
                                   const int64_t *ext)
{
    const weft_expr *flat = NULL;
    for (int d = 0; d < n; d++) {
        const weft_expr *i = lo && !weft_expr_is_int_const(lo[d], 0) ? weft_sub(a, idx[d], lo[d]) : idx[d];
        flat = flat ? weft_add(a, weft_mul(a, flat, weft_i64(a, ext[d])), i) : i;
    }
    return flat ? flat : weft_i64(a, 0);
}

static const weft_expr *to_loads(void *ud, const weft_expr *e);

static const weft_expr *to_loads_child(void *ud, const weft_expr *e) { return to_loads(ud, e); }

static const weft_expr *to_loads(void *ud, const weft_expr *e)
{
    weft_lower_ctx *c = ud;
    e = weft_expr_map_children(c->a, e, to_loads_child, c);
    if (!e || e->kind != WEFT_EXPR_TLOAD) return e;
    const weft_tensor *t = weft_expr_tload_tensor(e);
    const weft_expr *const *idx = e->u.tload.idx;
    int q = weft_sched_stage_of(c->s, t);
    if (q < 0) {
        for (int i = 0; i < c->f->n_inputs; i++)
            if (c->f->inputs[i] == t) return weft_load(c->a, c->params[i], flat_index(c->a, t->ndim, idx, NULL, t->shape));
        c->err = weft_fail(WEFT_ERR_INTERNAL, "lowering %s: tensor %s has no buffer", c->f->name, t->name);
        return NULL;
    }
    const weft_lower_stage *pi = &c->stage[q];
    if (!pi->buf) {
        c->err = weft_fail(WEFT_ERR_INTERNAL, "lowering %s: stage %s is read but has no buffer", c->f->name,
                           c->s->stages[q].name);
        return NULL;
    }
    return weft_load(c->a, pi->buf, flat_index(c->a, t->ndim, idx, pi->lo, pi->ext));
}

static const weft_expr *flatten_expr(void *ud, const weft_expr *e, const weft_range_env *env) { return to_loads(ud, e); }

weft_status weft_lower_flatten(weft_lower_ctx *c)
{
    weft_rewriter r = {.a = c->a, .expr = flatten_expr, .ud = c};
    const weft_stmt *body = weft_rewrite_stmt(&r, c->lf->body);
    if (!body) return c->err != WEFT_OK ? c->err : weft_lower_nomem(c);
    c->lf->body = body;
    return WEFT_OK;
}
