/* inline: every stage's body with the stages it reads that are computed inline expanded in
 * place (their body with its axes replaced by the reader's indices), recursively.
 *
 * Requires: a checked schedule. Ensures: c->stage[i].body for every stage; a TLOAD left in a
 * body reads an input or a stage with a buffer of its own (root or attached).
 */
#include "lower/lower_internal.h"

typedef struct ictx {
    weft_lower_ctx *c;
    int depth; /* inlining depth of the expansion in progress */
} ictx;

static const weft_expr *expand(ictx *x, const weft_expr *e, int depth);

static const weft_expr *expand_child(void *ud, const weft_expr *e)
{
    ictx *x = ud;
    return expand(x, e, x->depth);
}

static const weft_expr *expand(ictx *x, const weft_expr *e, int depth)
{
    if (!e) return NULL;
    weft_lower_ctx *c = x->c;
    /* Constants are rebuilt in the lowering's arena: a step may have created them in the
     * schedule's arena (rfactor's clamp and identity), which need not outlive the loop IR. */
    if (e->kind == WEFT_EXPR_INT) return weft_int(c->a, e->dtype, weft_expr_int(e));
    if (e->kind == WEFT_EXPR_FLOAT) return weft_float(c->a, e->dtype, weft_expr_float(e));
    int saved = x->depth;
    x->depth = depth;
    e = weft_expr_map_children(c->a, e, expand_child, x);
    x->depth = saved;
    if (!e || e->kind != WEFT_EXPR_TLOAD || depth > WEFT_SCHED_MAX_STAGES) return e;
    int q = weft_sched_stage_of(c->s, weft_expr_tload_tensor(e));
    if (q < 0 || c->s->stages[q].attach != WEFT_ATTACH_INLINE) return e;
    const weft_tensor *op = c->s->stages[q].op;
    const weft_expr *from[WEFT_MAX_DIMS], *to[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) {
        from[d] = op->axis[d].var;
        to[d] = weft_expr_tload_idx(e, d);
    }
    return expand(x, weft_expr_substitute(c->a, op->body, op->ndim, from, to), depth + 1);
}

weft_status weft_lower_inline(weft_lower_ctx *c)
{
    ictx x = {c, 0};
    for (int i = 0; i < c->s->n_stages; i++) {
        const weft_expr *body = c->s->stages[i].op->body;
        c->stage[i].body = expand(&x, body, 0);
        if (body && !c->stage[i].body) return weft_lower_nomem(c);
    }
    return WEFT_OK;
}
