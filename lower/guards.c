/* guards: every store nest made is wrapped in an IF on its point being inside the stage's
 * domain: each imperfect split keeps its parent iterator below the parent's extent (reduction
 * splits too, except around a reduction's init store), and a stage computed over a partial
 * region stays inside its tensor. A store that needs none is left as is.
 *
 * Requires: nest's loop IR and its record of stores. Ensures: the conditions are unsimplified
 * conjunctions (simplify folds those the loop ranges prove).
 */
#include "lower/lower_internal.h"

static const weft_expr *domain_guard(weft_lower_ctx *c, const weft_lower_guard *g)
{
    weft_arena *a = c->a;
    const weft_stage *st = &c->s->stages[g->stage];
    const weft_lower_stage *si = &c->stage[g->stage];
    const weft_expr *cond = NULL;
    for (int k = 0; k < st->n_rels; k++) {
        const weft_rel *rel = &st->rels[k];
        if (rel->kind != WEFT_REL_SPLIT || (g->spatial_only && st->iters[rel->in[0]].is_reduce)) continue;
        int64_t prod = 1;
        for (int i = 0; i < rel->n_out; i++) prod *= si->iter_ext[rel->out[i]];
        if (prod <= si->iter_ext[rel->in[0]]) continue;
        const weft_expr *t = weft_cmp(a, WEFT_EXPR_LT, g->val[rel->in[0]], weft_i64(a, si->iter_ext[rel->in[0]]));
        cond = cond ? weft_and(a, cond, t) : t;
    }
    const weft_tensor *op = st->op;
    for (int d = 0; d < op->ndim; d++) {
        if (si->ext[d] == op->shape[d] && weft_expr_is_int_const(si->lo[d], 0)) continue;
        const weft_expr *v = weft_add(a, si->lo[d], g->val[d]);
        const weft_expr *t = weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, 0)),
                                      weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, op->shape[d])));
        cond = cond ? weft_and(a, cond, t) : t;
    }
    return cond;
}

static const weft_stmt *guard_store(void *ud, const weft_stmt *orig, const weft_stmt *rebuilt, const weft_range_env *env)
{
    weft_lower_ctx *c = ud;
    if (orig->kind != WEFT_STMT_STORE) return rebuilt;
    for (int i = 0; i < c->n_guards; i++) {
        if (c->guards[i].store != orig) continue;
        const weft_expr *cond = domain_guard(c, &c->guards[i]);
        return cond ? weft_if(c->a, cond, rebuilt, NULL) : rebuilt;
    }
    return rebuilt;
}

weft_status weft_lower_guards(weft_lower_ctx *c)
{
    weft_rewriter r = {.a = c->a, .post = guard_store, .ud = c};
    const weft_stmt *body = weft_rewrite_stmt(&r, c->lf->body);
    if (!body) return weft_lower_nomem(c);
    c->lf->body = body;
    c->n_guards = 0; /* the recorded statements are gone */
    return WEFT_OK;
}
