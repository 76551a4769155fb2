/* region: buffers, regions and loop variables of every stage (bound inference).
 *
 * Requires: inline's bodies. Does:
 *   1. gives every input, output and root stage a full-size buffer (inputs then outputs are
 *      the kernel's params; other root stages are ALLOCATEd around the whole body);
 *   2. for each stage attached at a leaf of another (consumers first), infers the region of it
 *      that one iteration of the consumer's loops down to that leaf needs: what the consumer
 *      and the other stages attached at it below that leaf read (lower/bound.c), a min in the
 *      enclosing loop variables and a constant extent per dimension; its buffer is that size;
 *   3. for every stage: the extent of every iterator, a loop variable per leaf of extent > 1,
 *      the value of every iterator in them and of every op axis (region min added).
 * Ensures: c->params complete; every stage placed, its variables' ranges in c->env.
 */
#include <string.h>

#include "ir/error.h"
#include "lower/lower_internal.h"

weft_status weft_lower_nomem(weft_lower_ctx *c)
{
    if (c->err == WEFT_OK) c->err = weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory", c->f->name);
    return c->err;
}

/* a * b for loop extents: a product past 2^40 (fused loops of large split factors) fails the
 * lowering (sticky c->err) and yields 1, so nothing downstream overflows on the way out. */
static int64_t ext_mul(weft_lower_ctx *c, const weft_stage *st, int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_mul_overflow(a, b, &r) && r <= (INT64_C(1) << 40)) return r;
    if (c->err == WEFT_OK)
        c->err = weft_fail(WEFT_ERR_UNSUPPORTED, "lowering %s: stage %s: a loop's extent after its splits and fuses is "
                                                 "over 2^40", c->f->name, st->name);
    return 1;
}

void weft_lower_iter_extents(weft_lower_ctx *c, int i)
{
    const weft_stage *st = &c->s->stages[i];
    weft_lower_stage *si = &c->stage[i];
    const weft_tensor *op = st->op;
    for (int d = 0; d < op->ndim; d++) si->iter_ext[d] = si->ext[d];
    for (int r = 0; r < op->n_reduce; r++) si->iter_ext[op->ndim + r] = op->reduce_axis[r].extent;
    for (int k = 0; k < st->n_rels; k++) {
        const weft_rel *rel = &st->rels[k];
        if (rel->kind == WEFT_REL_SPLIT) {
            int64_t e = si->iter_ext[rel->in[0]];
            if (rel->nparts) {
                int64_t p = rel->factors[0] < e ? rel->factors[0] : e;
                si->iter_ext[rel->out[0]] = p;
                si->iter_ext[rel->out[1]] = (e + p - 1) / p;
            } else {
                int64_t prod = 1;
                for (int j = 1; j < rel->n_out; j++) {
                    si->iter_ext[rel->out[j]] = rel->factors[j - 1];
                    prod = ext_mul(c, st, prod, rel->factors[j - 1]);
                }
                si->iter_ext[rel->out[0]] = (e + prod - 1) / prod;
            }
        } else {
            int64_t prod = 1;
            for (int j = 0; j < rel->n_in; j++) prod = ext_mul(c, st, prod, si->iter_ext[rel->in[j]]);
            si->iter_ext[rel->out[0]] = prod;
        }
    }
}

void weft_lower_iter_values(weft_lower_ctx *c, const weft_stage *st, const weft_expr **val, const int64_t *ext)
{
    weft_arena *a = c->a;
    for (int k = st->n_rels - 1; k >= 0; k--) {
        const weft_rel *rel = &st->rels[k];
        if (rel->kind == WEFT_REL_SPLIT) {
            const weft_expr *v = weft_i64(a, 0);
            for (int i = 0; i < rel->n_out; i++)
                v = weft_add(a, weft_mul(a, v, weft_i64(a, ext[rel->out[i]])), val[rel->out[i]]);
            val[rel->in[0]] = weft_simplify(a, v, &c->env);
        } else {
            int64_t inner = 1;
            for (int i = rel->n_in - 1; i >= 0; i--) {
                const weft_expr *v = val[rel->out[0]];
                if (inner > 1) v = weft_floordiv(a, v, weft_i64(a, inner));
                if (i > 0) v = weft_floormod(a, v, weft_i64(a, ext[rel->in[i]]));
                val[rel->in[i]] = weft_simplify(a, v, &c->env);
                inner *= ext[rel->in[i]];
            }
        }
    }
}

/* ---- bound inference for an attached stage ----------------------------------------------- */

typedef struct access_ctx {
    const weft_tensor *t;
    const weft_expr **acc[64]; /* index lists of the TLOADs of t */
    int n;
} access_ctx;

static void collect_accesses(void *ud, const weft_expr *e)
{
    access_ctx *ac = ud;
    if (e->kind == WEFT_EXPR_TLOAD && weft_expr_tload_tensor(e) == ac->t && ac->n < 64)
        ac->acc[ac->n++] = (const weft_expr **)e->u.tload.idx;
    weft_expr_each_child(e, collect_accesses, ud);
}

/* Accesses of stage p's result by one reader: the reader's expanded body with its axis
 * variables to be replaced by `to` (the reader's axis values). */
typedef struct reader_view {
    const weft_expr *body;
    const weft_tensor *op;
    const weft_expr *to[2 * WEFT_MAX_DIMS];
} reader_view;

static weft_status infer_region(weft_lower_ctx *c, int p, int cons, int lp);

/* A reader q attached at cons (level lq >= lp): its axis values with every one of its loops
 * free, for bounding what it reads of a stage attached at cons's level lp. The free loop
 * variables are pushed on env (the caller restores env). */
static weft_status preview_reader(weft_lower_ctx *c, int q, reader_view *rv, const weft_expr **free_vars, int *n_free)
{
    const weft_stage *qs = &c->s->stages[q];
    weft_lower_stage *qi = &c->stage[q];
    int lq = weft_sched_leaf_pos(&c->s->stages[qs->at_stage], qs->at_iter);
    weft_status rc = infer_region(c, q, qs->at_stage, lq);
    if (rc != WEFT_OK) return rc;
    weft_lower_iter_extents(c, q);
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];
    for (int l = 0; l < qs->n_leaves; l++) {
        int it = qs->leaves[l];
        if (qi->iter_ext[it] == 1) {
            val[it] = weft_i64(c->a, 0);
            continue;
        }
        val[it] = weft_var(c->a, qs->iters[it].name, WEFT_I64);
        weft_range_push(&c->env, val[it], 0, qi->iter_ext[it] - 1);
        free_vars[(*n_free)++] = val[it];
    }
    weft_lower_iter_values(c, qs, val, qi->iter_ext);
    rv->body = qi->body;
    rv->op = qs->op;
    for (int d = 0; d < qs->op->ndim; d++) rv->to[d] = weft_add(c->a, qi->lo[d], val[d]);
    for (int r = 0; r < qs->op->n_reduce; r++) rv->to[qs->op->ndim + r] = val[qs->op->ndim + r];
    return weft_arena_failed(c->a) ? weft_lower_nomem(c) : WEFT_OK;
}

/* Region of stage p needed by one iteration of stage cons's loops down to leaf position lp:
 * what cons reads of p, plus what the stages attached at cons below lp read of it. A stage's
 * attachment is fixed, so its region is inferred once: readers previewed again for every
 * producer they read made a chain of k stages that each read the two before (TopK's selection
 * rounds) take 2^k inferences (k = 16: minutes and 4 GB). */
static weft_status infer_region(weft_lower_ctx *c, int p, int cons, int lp)
{
    if (c->stage[p].region_done) return WEFT_OK;
    const weft_schedule *s = c->s;
    const weft_stage *ps = &s->stages[p], *cs = &s->stages[cons];
    weft_lower_stage *pi = &c->stage[p], *ci = &c->stage[cons];
    const weft_tensor *pt = ps->ref;
    int env_mark = c->env.n;
    const weft_expr *free_vars[4 * WEFT_SCHED_MAX_ITERS];
    int n_free = 0;
    for (int l = lp + 1; l < cs->n_leaves; l++)
        if (ci->leaf_var[l]) free_vars[n_free++] = ci->leaf_var[l];
    reader_view views[8];
    int n_views = 0;
    views[n_views].body = ci->body;
    views[n_views].op = cs->op;
    for (int m = 0; m < cs->op->ndim + cs->op->n_reduce; m++) views[n_views].to[m] = ci->axis_val[m];
    n_views++;
    for (int q = 0; q < s->n_stages; q++) {
        const weft_stage *qs = &s->stages[q];
        if (q == p || qs->attach != WEFT_ATTACH_AT || qs->at_stage != cons) continue;
        const weft_tensor *reads[64];
        int nr = weft_te_reads(qs->op, reads, 64);
        bool reads_p = false;
        for (int i = 0; i < nr; i++) reads_p = reads_p || reads[i] == pt;
        if (!reads_p) continue;
        if (weft_sched_leaf_pos(cs, qs->at_iter) < lp) {
            c->err = weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is computed at %s.%s, outside %s which it reads", qs->name,
                               cs->name, cs->iters[qs->at_iter].name, ps->name);
            return c->err;
        }
        if (n_views == 8) {
            c->err = weft_fail(WEFT_ERR_UNSUPPORTED, "stage %s has more than 7 readers attached at %s", ps->name, cs->name);
            return c->err;
        }
        weft_status rc = preview_reader(c, q, &views[n_views], free_vars, &n_free);
        if (rc != WEFT_OK) return rc;
        n_views++;
    }
    access_ctx ac = {.t = pt};
    const reader_view *acc_view[64];
    for (int v = 0; v < n_views; v++) {
        int before = ac.n;
        if (views[v].body) collect_accesses(&ac, views[v].body);
        for (int k = before; k < ac.n; k++) acc_view[k] = &views[v];
    }
    const weft_expr **const *acc = ac.acc;
    int n_acc = ac.n;
    for (int d = 0; d < pt->ndim; d++) {
        bool full = n_acc == 0;
        const weft_expr *lo = NULL;
        int64_t hi_off = 0; /* region is [lo, lo + hi_off] */
        for (int k = 0; k < n_acc && !full; k++) {
            const reader_view *rv = acc_view[k];
            const weft_expr *from[2 * WEFT_MAX_DIMS];
            int m = 0;
            for (int e = 0; e < rv->op->ndim; e++) from[m++] = rv->op->axis[e].var;
            for (int r = 0; r < rv->op->n_reduce; r++) from[m++] = rv->op->reduce_axis[r].var;
            const weft_expr *idx = weft_simplify(c->a, weft_expr_substitute(c->a, acc[k][d], m, from, rv->to), &c->env);
            weft_interval iv;
            if (!weft_bound_interval(c->a, idx, &c->env, n_free, free_vars, &iv)) {
                full = true;
                break;
            }
            const weft_expr *ilo = weft_simplify(c->a, iv.lo, &c->env);
            if (!lo) {
                lo = ilo;
                hi_off = iv.width;
                continue;
            }
            const weft_expr *diff = weft_simplify(c->a, weft_sub(c->a, ilo, lo), &c->env);
            if (diff->kind != WEFT_EXPR_INT) {
                full = true;
                break;
            }
            int64_t dlt = weft_expr_int(diff);
            int64_t new_hi = dlt + iv.width > hi_off ? dlt + iv.width : hi_off;
            if (dlt < 0) {
                lo = ilo;
                new_hi -= dlt;
            }
            hi_off = new_hi;
        }
        if (!full && hi_off + 1 >= pt->shape[d]) full = true;
        if (full) {
            pi->lo[d] = weft_i64(c->a, 0);
            pi->ext[d] = pt->shape[d];
        } else {
            pi->lo[d] = lo;
            pi->ext[d] = hi_off + 1;
        }
    }
    c->env.n = env_mark;
    if (weft_arena_failed(c->a)) return weft_lower_nomem(c);
    pi->region_done = true;
    return WEFT_OK;
}

/* ---- loop variables of a placed stage ----------------------------------------------------- */

static void place(weft_lower_ctx *c, int i)
{
    const weft_stage *st = &c->s->stages[i];
    weft_lower_stage *si = &c->stage[i];
    const weft_tensor *op = st->op;
    weft_arena *a = c->a;
    weft_lower_iter_extents(c, i);
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];
    si->first_reduce = -1;
    for (int l = 0; l < st->n_leaves; l++) {
        int it = st->leaves[l];
        if (st->iters[it].is_reduce && si->first_reduce < 0) si->first_reduce = l;
        /* a bound loop of extent 1 stays: on a thread axis it says that one thread of the block
         * runs the body (the others skip it), as a block-per-row reduction's final sum needs;
         * on a block axis it keeps the launch's block structure (barriers, shared memory) */
        if (si->iter_ext[it] == 1 && st->iters[it].annot != WEFT_FOR_THREAD_BOUND) {
            si->leaf_var[l] = NULL;
            val[it] = weft_i64(a, 0);
        } else {
            si->leaf_var[l] = weft_var(a, st->iters[it].name, WEFT_I64);
            weft_range_push(&c->env, si->leaf_var[l], 0, si->iter_ext[it] - 1);
            val[it] = si->leaf_var[l];
        }
    }
    weft_lower_iter_values(c, st, val, si->iter_ext);
    memcpy(si->val, val, sizeof val);
    for (int d = 0; d < op->ndim; d++) si->axis_val[d] = weft_simplify(a, weft_add(a, si->lo[d], val[d]), &c->env);
    for (int r = 0; r < op->n_reduce; r++) si->axis_val[op->ndim + r] = val[op->ndim + r];
    si->placed = true;
}

weft_status weft_lower_region(weft_lower_ctx *c)
{
    const weft_schedule *s = c->s;
    const weft_te_func *f = c->f;
    weft_arena *a = c->a;
    for (int i = 0; i < f->n_inputs; i++) {
        const weft_tensor *t = f->inputs[i];
        c->params[i] = weft_buffer_new(a, t->name, t->dtype, t->ndim, t->shape, WEFT_SCOPE_GLOBAL, i);
    }
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        weft_lower_stage *si = &c->stage[i];
        if (st->attach != WEFT_ATTACH_ROOT) continue;
        for (int d = 0; d < st->ref->ndim; d++) {
            si->lo[d] = weft_i64(a, 0);
            si->ext[d] = st->ref->shape[d];
        }
        int out_idx = -1;
        for (int o = 0; o < f->n_outputs; o++)
            if (f->outputs[o] == st->ref) out_idx = o;
        weft_buffer *b = weft_buffer_new(a, st->name, st->ref->dtype, st->ref->ndim, st->ref->shape,
                                         out_idx >= 0 ? WEFT_SCOPE_GLOBAL : st->scope,
                                         out_idx >= 0 ? f->n_inputs + out_idx : -1);
        si->buf = b;
        if (out_idx >= 0) c->params[f->n_inputs + out_idx] = b;
        else c->allocs[c->n_allocs++] = b;
        place(c, i);
    }
    for (int o = 0; o < f->n_outputs; o++)
        if (!c->params[f->n_inputs + o])
            return weft_fail(WEFT_ERR_INVALID_ARG, "lowering %s: output %s is not a root stage", f->name, f->outputs[o]->name);
    /* Attached stages once their consumer is placed, consumers before producers. */
    for (bool progress = true; progress;) {
        progress = false;
        for (int p = 0; p < s->n_stages; p++) {
            const weft_stage *ps = &s->stages[p];
            if (ps->attach != WEFT_ATTACH_AT || c->stage[p].placed || !c->stage[ps->at_stage].placed) continue;
            weft_status rc = infer_region(c, p, ps->at_stage, weft_sched_leaf_pos(&s->stages[ps->at_stage], ps->at_iter));
            if (rc != WEFT_OK) return rc;
            weft_buffer *b = weft_buffer_new(a, ps->name, ps->ref->dtype, ps->ref->ndim, c->stage[p].ext, ps->scope, -1);
            if (!b) return weft_lower_nomem(c);
            if (ps->scope == WEFT_SCOPE_GLOBAL) b->scope = WEFT_SCOPE_LOCAL; /* allocated inside a loop */
            c->stage[p].buf = b;
            place(c, p);
            progress = true;
        }
    }
    for (int p = 0; p < s->n_stages; p++)
        if (s->stages[p].attach == WEFT_ATTACH_AT && !c->stage[p].placed)
            return weft_fail(WEFT_ERR_INVALID_ARG, "lowering %s: stage %s is attached to a stage that is never computed",
                             f->name, s->stages[p].name);
    return weft_arena_failed(a) ? weft_lower_nomem(c) : WEFT_OK;
}
