/* nest: the loop nests of every stage, as loop IR that still reads tensors.
 *
 * Requires: region's buffers and loop variables. Does: for each root stage in order, its
 * nest: leaf loops in schedule order, each leaf's body first computing the stages attached at
 * it (in their buffers, ALLOCATEd there), then the inner loops; a reduction gets its init nest
 * just outside its first reduction loop (TVM's placement). Each stage's innermost statement
 * stores its value at its point of its own buffer (flat, region-relative index); its value
 * still reads other stages and inputs with TLOADs in tensor coordinates. Every store is
 * recorded for guards, unguarded.
 * Ensures: loops have min 0 and constant extents; leaves of extent 1 have no loop; every
 * loop variable is bound by one FOR; root temporaries ALLOCATEd around the whole body.
 */
#include "ir/error.h"
#include "lower/lower_internal.h"

static const weft_expr *flat_index(weft_arena *a, int n, const weft_expr *const *idx, const int64_t *ext)
{
    const weft_expr *flat = n ? idx[0] : weft_i64(a, 0);
    for (int d = 1; d < n; d++) flat = weft_add(a, weft_mul(a, flat, weft_i64(a, ext[d])), idx[d]);
    return flat;
}

/* The store, recorded for guards with a copy of the iterator values at it. */
static const weft_stmt *guarded_store(weft_lower_ctx *c, int stage, bool spatial_only, const weft_expr *const *val,
                                      const weft_expr *index, const weft_expr *value)
{
    const weft_stmt *st = weft_store(c->a, c->stage[stage].buf, index, value);
    if (c->n_guards == c->cap_guards) {
        int cap = c->cap_guards ? 2 * c->cap_guards : 16;
        weft_lower_guard *g = weft_arena_alloc(c->a, sizeof *g * (size_t)cap);
        if (!g) return NULL;
        for (int i = 0; i < c->n_guards; i++) g[i] = c->guards[i];
        c->guards = g;
        c->cap_guards = cap;
    }
    const weft_expr **v = weft_arena_alloc(c->a, sizeof *v * WEFT_SCHED_MAX_ITERS);
    if (!st || !v) return NULL;
    for (int i = 0; i < WEFT_SCHED_MAX_ITERS; i++) v[i] = val[i];
    c->guards[c->n_guards++] = (weft_lower_guard){st, stage, spatial_only, v};
    return st;
}

static const weft_stmt *gen_stage(weft_lower_ctx *c, int sidx);

/* Stages attached at leaf position lp of stage cons: their computations in order, and the
 * buffers that must be allocated around them and the rest of the level's body. */
typedef struct attached {
    const weft_stmt *compute;
    int n_bufs;
    const weft_buffer *bufs[WEFT_SCHED_MAX_STAGES];
} attached;

static void gen_attached(weft_lower_ctx *c, int cons, int lp, attached *out)
{
    const weft_schedule *s = c->s;
    const weft_stmt *items[WEFT_SCHED_MAX_STAGES];
    int n = 0;
    out->n_bufs = 0;
    out->compute = NULL;
    int leaf_iter = s->stages[cons].leaves[lp];
    for (int p = 0; p < s->n_stages; p++) {
        const weft_stage *ps = &s->stages[p];
        if (ps->attach != WEFT_ATTACH_AT || ps->at_stage != cons || ps->at_iter != leaf_iter) continue;
        out->bufs[out->n_bufs++] = c->stage[p].buf;
        items[n++] = gen_stage(c, p);
        if (c->err != WEFT_OK) return;
    }
    if (n) out->compute = weft_seq(c->a, n, items);
}

/* The init nest of a reduction: loops over the spatial leaves after the first reduction leaf. */
static const weft_stmt *gen_init(weft_lower_ctx *c, int sidx, int first_reduce)
{
    const weft_stage *st = &c->s->stages[sidx];
    weft_lower_stage *si = &c->stage[sidx];
    const weft_tensor *op = st->op;
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];
    const weft_expr *vars[WEFT_SCHED_MAX_ITERS];
    int env_mark = c->env.n; /* the init's own variables matter only for its values */
    for (int l = 0; l < st->n_leaves; l++) {
        int it = st->leaves[l];
        vars[l] = NULL;
        if (st->iters[it].is_reduce) val[it] = weft_i64(c->a, 0);
        else if (l < first_reduce || !si->leaf_var[l]) val[it] = si->leaf_var[l] ? si->leaf_var[l] : weft_i64(c->a, 0);
        else {
            vars[l] = weft_var(c->a, st->iters[it].name, WEFT_I64);
            weft_range_push(&c->env, vars[l], 0, si->iter_ext[it] - 1);
            val[it] = vars[l];
        }
    }
    weft_lower_iter_values(c, st, val, si->iter_ext);
    c->env.n = env_mark;
    const weft_stmt *body = guarded_store(c, sidx, true, val, flat_index(c->a, op->ndim, val, si->ext),
                                          weft_te_reduce_identity(c->a, op->reduce, op->dtype));
    for (int l = st->n_leaves - 1; l > first_reduce; l--) {
        if (!vars[l]) continue;
        const weft_sched_iter *it = &st->iters[st->leaves[l]];
        body = weft_for_full(c->a, vars[l], weft_i64(c->a, 0), weft_i64(c->a, si->iter_ext[st->leaves[l]]), it->annot,
                             it->annot == WEFT_FOR_THREAD_BOUND ? it->thread_axis : WEFT_THREAD_NONE, 0, body);
    }
    return body;
}

static const weft_stmt *gen_stage(weft_lower_ctx *c, int sidx)
{
    const weft_stage *st = &c->s->stages[sidx];
    weft_lower_stage *si = &c->stage[sidx];
    const weft_tensor *op = st->op;
    weft_arena *a = c->a;
    const weft_expr *from[2 * WEFT_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < op->ndim; d++) from[m++] = op->axis[d].var;
    for (int r = 0; r < op->n_reduce; r++) from[m++] = op->reduce_axis[r].var;
    const weft_stmt *init = op->n_reduce ? gen_init(c, sidx, si->first_reduce) : NULL;
    attached *att = weft_arena_alloc(a, sizeof *att * (size_t)(st->n_leaves ? st->n_leaves : 1));
    if (!att) {
        weft_lower_nomem(c);
        return NULL;
    }
    for (int l = 0; l < st->n_leaves; l++) {
        gen_attached(c, sidx, l, &att[l]);
        if (c->err != WEFT_OK) return NULL;
    }
    /* The innermost statement. */
    const weft_expr *value = weft_expr_substitute(a, si->body, m, from, si->axis_val);
    const weft_expr *flat = flat_index(a, op->ndim, si->val, si->ext);
    if (op->n_reduce) value = weft_te_reduce_combine(a, op->reduce, weft_load(a, si->buf, flat), value);
    const weft_stmt *body = guarded_store(c, sidx, false, si->val, flat, value);

    /* Loop levels, innermost first. */
    for (int l = st->n_leaves - 1; l >= 0; l--) {
        const weft_stmt *items[2] = {att[l].compute, body};
        const weft_stmt *lb = weft_seq(a, 2, items);
        for (int b = att[l].n_bufs - 1; b >= 0; b--) lb = weft_allocate(a, att[l].bufs[b], lb);
        const weft_sched_iter *it = &st->iters[st->leaves[l]];
        if (si->leaf_var[l] && it->prefetch[0] && c->n_prefetch < WEFT_LOWER_MAX_PREFETCH) {
            c->prefetch[c->n_prefetch].var = si->leaf_var[l];
            c->prefetch[c->n_prefetch++].tensor = it->prefetch;
        }
        if (si->leaf_var[l])
            lb = weft_for_full(a, si->leaf_var[l], weft_i64(a, 0), weft_i64(a, si->iter_ext[st->leaves[l]]),
                               it->annot, it->annot == WEFT_FOR_THREAD_BOUND ? it->thread_axis : WEFT_THREAD_NONE,
                               it->auto_unroll, lb);
        if (init && l == si->first_reduce) {
            const weft_stmt *two[2] = {init, lb};
            lb = weft_seq(a, 2, two);
        }
        body = lb;
    }
    return body;
}

weft_status weft_lower_nest(weft_lower_ctx *c)
{
    const weft_schedule *s = c->s;
    weft_arena *a = c->a;
    const weft_stmt *items[WEFT_SCHED_MAX_STAGES];
    int n = 0;
    for (int i = 0; i < s->n_stages; i++) {
        if (s->stages[i].attach != WEFT_ATTACH_ROOT) continue;
        items[n++] = gen_stage(c, i);
        if (c->err != WEFT_OK) return c->err;
    }
    const weft_stmt *body = weft_seq(a, n, items);
    for (int k = c->n_allocs - 1; k >= 0; k--) body = weft_allocate(a, c->allocs[k], body);
    weft_loop_func *lf = weft_arena_alloc(a, sizeof *lf);
    if (!lf || !body || weft_arena_failed(a)) return weft_lower_nomem(c);
    lf->name = c->f->name;
    lf->n_params = c->f->n_inputs + c->f->n_outputs;
    lf->params = c->params;
    lf->body = body;
    c->lf = lf;
    return WEFT_OK;
}
