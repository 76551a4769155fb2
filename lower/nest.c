/* Loop nest materialization: (TE, schedule) -> loop IR.
 *
 * Requires: a schedule whose steps each passed validation.
 * Does:
 *   1. expands inlined stages into their readers' bodies;
 *   2. gives every input, output and root stage a full-size buffer (inputs then outputs are
 *      the kernel's params; other root stages are ALLOCATEd around the whole body);
 *   3. for each root stage in order, builds its nest: leaf loops in schedule order, each
 *      leaf's body first computing the stages attached at it (over the region inferred by
 *      lower/bound.c, in a buffer ALLOCATEd there), then the inner loops; a reduction gets
 *      its init nest just outside its first reduction loop (TVM's placement);
 *   4. guards imperfect splits and partial regions with IFs around the innermost statement
 *      (guards the ranges prove true are simplified away).
 * Ensures: loops have min 0 and constant extents; leaves of extent 1 have no loop; every
 * access is a flat LOAD/STORE; no TLOAD remains.
 */
#include <string.h>

#include "ir/error.h"
#include "lower/lower_internal.h"

typedef struct stage_info {
    const weft_expr *body;   /* op body with inlined stages expanded */
    const weft_buffer *buf;
    const weft_expr *lo[WEFT_MAX_DIMS]; /* region min per dim (in enclosing loop vars) */
    int64_t ext[WEFT_MAX_DIMS];         /* region extent per dim */
    /* while the stage's nest is being built: */
    int64_t iter_ext[WEFT_SCHED_MAX_ITERS];
    const weft_expr *leaf_var[WEFT_SCHED_MAX_ITERS]; /* by leaf position; NULL for extent 1 */
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];      /* value of every iterator */
    const weft_expr *axis_val[2 * WEFT_MAX_DIMS];   /* op axis values (region min added), then reduce */
} stage_info;

typedef struct ctx {
    weft_arena *a;
    const weft_schedule *s;
    const weft_te_func *f;
    const weft_buffer **input_bufs;
    stage_info *info;
    weft_range_env env;
    weft_status err;
    int depth; /* inlining depth of the expansion in progress */
} ctx;

static weft_status fail_nomem(ctx *c)
{
    if (c->err == WEFT_OK) c->err = weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory", c->f->name);
    return c->err;
}

/* ---- 1. inlining ------------------------------------------------------------------------ */

static const weft_expr *expand(ctx *c, const weft_expr *e, int depth);

static const weft_expr *expand_child(void *ud, const weft_expr *e)
{
    ctx *c = ud;
    return expand(c, e, c->depth);
}

static const weft_expr *expand(ctx *c, const weft_expr *e, int depth)
{
    if (!e) return NULL;
    int saved = c->depth;
    c->depth = depth;
    e = weft_expr_map_children(c->a, e, expand_child, c);
    c->depth = saved;
    if (!e || e->kind != WEFT_EXPR_TLOAD || depth > WEFT_SCHED_MAX_STAGES) return e;
    int q = weft_sched_stage_of(c->s, weft_expr_tload_tensor(e));
    if (q < 0 || c->s->stages[q].attach != WEFT_ATTACH_INLINE) return e;
    const weft_tensor *op = c->s->stages[q].op;
    const weft_expr *from[WEFT_MAX_DIMS], *to[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) {
        from[d] = op->axis[d].var;
        to[d] = weft_expr_tload_idx(e, d);
    }
    return expand(c, weft_expr_substitute(c->a, op->body, op->ndim, from, to), depth + 1);
}

/* ---- TLOAD -> LOAD ------------------------------------------------------------------------ */

static const weft_expr *flat_index(ctx *c, int n, const weft_expr *const *idx, const weft_expr *const *lo,
                                   const int64_t *ext)
{
    const weft_expr *flat = weft_i64(c->a, 0);
    for (int d = 0; d < n; d++) {
        const weft_expr *i = lo ? weft_sub(c->a, idx[d], lo[d]) : idx[d];
        flat = weft_add(c->a, weft_mul(c->a, flat, weft_i64(c->a, ext[d])), i);
    }
    return weft_simplify(c->a, flat, &c->env);
}

static const weft_expr *to_loads_child(void *ud, const weft_expr *e);

/* e with every TLOAD turned into a flat LOAD of its buffer (region offsets subtracted). */
static const weft_expr *to_loads(ctx *c, const weft_expr *e)
{
    e = weft_expr_map_children(c->a, e, to_loads_child, c);
    if (!e || e->kind != WEFT_EXPR_TLOAD) return e;
    weft_arena *a = c->a;
    const weft_tensor *t = weft_expr_tload_tensor(e);
    const weft_expr *const *idx = e->u.tload.idx;
    int q = weft_sched_stage_of(c->s, t);
    if (q < 0) {
        for (int i = 0; i < c->f->n_inputs; i++)
            if (c->f->inputs[i] == t) return weft_load(a, c->input_bufs[i], flat_index(c, t->ndim, idx, NULL, t->shape));
        c->err = weft_fail(WEFT_ERR_INTERNAL, "lowering %s: tensor %s has no buffer", c->f->name, t->name);
        return NULL;
    }
    stage_info *pi = &c->info[q];
    if (!pi->buf) {
        c->err = weft_fail(WEFT_ERR_INTERNAL, "lowering %s: stage %s is read before it is computed", c->f->name,
                           c->s->stages[q].name);
        return NULL;
    }
    return weft_load(a, pi->buf, flat_index(c, t->ndim, idx, pi->lo, pi->ext));
}

static const weft_expr *to_loads_child(void *ud, const weft_expr *e) { return to_loads(ud, e); }

/* ---- iterator extents and values --------------------------------------------------------- */

static void compute_extents(const weft_stage *st, stage_info *si)
{
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
                for (int i = 1; i < rel->n_out; i++) {
                    si->iter_ext[rel->out[i]] = rel->factors[i - 1];
                    prod *= rel->factors[i - 1];
                }
                si->iter_ext[rel->out[0]] = (e + prod - 1) / prod;
            }
        } else {
            int64_t prod = 1;
            for (int i = 0; i < rel->n_in; i++) prod *= si->iter_ext[rel->in[i]];
            si->iter_ext[rel->out[0]] = prod;
        }
    }
}

/* Values of every iterator from the leaf values in val[] (relations walked backwards). */
static void compute_values(ctx *c, const weft_stage *st, const weft_expr **val, const int64_t *ext)
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

/* The condition under which the point given by val[] is inside the stage's domain: imperfect
 * splits stay below their parent's extent, partial regions inside the tensor. */
static const weft_expr *domain_guard(ctx *c, const weft_stage *st, stage_info *si, const weft_expr **val, bool spatial_only)
{
    weft_arena *a = c->a;
    const weft_expr *cond = weft_int(a, WEFT_BOOL, 1);
    for (int k = 0; k < st->n_rels; k++) {
        const weft_rel *rel = &st->rels[k];
        if (rel->kind != WEFT_REL_SPLIT || (spatial_only && st->iters[rel->in[0]].is_reduce)) continue;
        int64_t prod = 1;
        for (int i = 0; i < rel->n_out; i++) prod *= si->iter_ext[rel->out[i]];
        if (prod > si->iter_ext[rel->in[0]])
            cond = weft_and(a, cond, weft_cmp(a, WEFT_EXPR_LT, val[rel->in[0]], weft_i64(a, si->iter_ext[rel->in[0]])));
    }
    const weft_tensor *op = st->op;
    for (int d = 0; d < op->ndim; d++) {
        if (si->ext[d] == op->shape[d] && weft_expr_is_int_const(si->lo[d], 0)) continue;
        const weft_expr *v = weft_add(a, si->lo[d], val[d]);
        cond = weft_and(a, cond, weft_and(a, weft_cmp(a, WEFT_EXPR_GE, v, weft_i64(a, 0)),
                                          weft_cmp(a, WEFT_EXPR_LT, v, weft_i64(a, op->shape[d]))));
    }
    return weft_simplify(a, cond, &c->env);
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

static void compute_extents(const weft_stage *st, stage_info *si);
static void compute_values(ctx *c, const weft_stage *st, const weft_expr **val, const int64_t *ext);
static weft_status infer_region(ctx *c, int p, int cons, int lp);

/* A reader q attached at cons (level lq >= lp): its axis values with every one of its loops
 * free, for bounding what it reads of a stage attached at cons's level lp. The free loop
 * variables are pushed on env (the caller restores env). */
static weft_status preview_reader(ctx *c, int q, reader_view *rv, const weft_expr **free_vars, int *n_free)
{
    const weft_stage *qs = &c->s->stages[q];
    stage_info *qi = &c->info[q];
    int lq = weft_sched_leaf_pos(&c->s->stages[qs->at_stage], qs->at_iter);
    weft_status rc = infer_region(c, q, qs->at_stage, lq);
    if (rc != WEFT_OK) return rc;
    compute_extents(qs, qi);
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
    compute_values(c, qs, val, qi->iter_ext);
    rv->body = qi->body;
    rv->op = qs->op;
    for (int d = 0; d < qs->op->ndim; d++) rv->to[d] = weft_add(c->a, qi->lo[d], val[d]);
    for (int r = 0; r < qs->op->n_reduce; r++) rv->to[qs->op->ndim + r] = val[qs->op->ndim + r];
    return weft_arena_failed(c->a) ? fail_nomem(c) : WEFT_OK;
}

/* Region of stage p needed by one iteration of stage cons's loops down to leaf position lp:
 * what cons reads of p, plus what the stages attached at cons below lp read of it. */
static weft_status infer_region(ctx *c, int p, int cons, int lp)
{
    const weft_schedule *s = c->s;
    const weft_stage *ps = &s->stages[p], *cs = &s->stages[cons];
    stage_info *pi = &c->info[p], *ci = &c->info[cons];
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
    return weft_arena_failed(c->a) ? fail_nomem(c) : WEFT_OK;
}

/* ---- nest construction -------------------------------------------------------------------- */

static const weft_stmt *gen_stage(ctx *c, int si_idx);

/* Stages attached at leaf position lp of stage cons: their computations in order, and the
 * buffers that must be allocated around them and the rest of the level's body. */
typedef struct attached {
    const weft_stmt *compute;
    int n_bufs;
    const weft_buffer *bufs[WEFT_SCHED_MAX_STAGES];
} attached;

static void gen_attached(ctx *c, int cons, int lp, attached *out)
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
        if (infer_region(c, p, cons, lp) != WEFT_OK) return;
        stage_info *pi = &c->info[p];
        weft_buffer *b = weft_buffer_new(c->a, ps->name, ps->ref->dtype, ps->ref->ndim, pi->ext, ps->scope, -1);
        if (!b) {
            fail_nomem(c);
            return;
        }
        if (ps->scope == WEFT_SCOPE_GLOBAL) b->scope = WEFT_SCOPE_LOCAL; /* allocated inside a loop */
        pi->buf = b;
        out->bufs[out->n_bufs++] = b;
        items[n++] = gen_stage(c, p);
        if (c->err != WEFT_OK) return;
    }
    if (n) out->compute = weft_seq(c->a, n, items);
}

/* The init nest of a reduction: loops over the spatial leaves after the first reduction leaf. */
static const weft_stmt *gen_init(ctx *c, int sidx, int first_reduce)
{
    const weft_stage *st = &c->s->stages[sidx];
    stage_info *si = &c->info[sidx];
    const weft_tensor *op = st->op;
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];
    const weft_expr *vars[WEFT_SCHED_MAX_ITERS];
    int env_mark = c->env.n;
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
    compute_values(c, st, val, si->iter_ext);
    const weft_expr *idx[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) idx[d] = val[d];
    const weft_expr *flat = flat_index(c, op->ndim, idx, NULL, si->ext);
    const weft_stmt *body = weft_store(c->a, si->buf, flat, weft_te_reduce_identity(c->a, op->reduce, op->dtype));
    const weft_expr *guard = domain_guard(c, st, si, val, true);
    if (!weft_expr_is_int_const(guard, 1)) body = weft_if(c->a, guard, body, NULL);
    for (int l = st->n_leaves - 1; l > first_reduce; l--) {
        if (!vars[l]) continue;
        const weft_sched_iter *it = &st->iters[st->leaves[l]];
        body = weft_for(c->a, vars[l], weft_i64(c->a, 0), weft_i64(c->a, si->iter_ext[st->leaves[l]]), it->annot, body);
    }
    c->env.n = env_mark;
    return body;
}

static const weft_stmt *gen_stage(ctx *c, int sidx)
{
    const weft_stage *st = &c->s->stages[sidx];
    stage_info *si = &c->info[sidx];
    const weft_tensor *op = st->op;
    weft_arena *a = c->a;
    compute_extents(st, si);
    int env_mark = c->env.n;
    const weft_expr *val[WEFT_SCHED_MAX_ITERS];
    int first_reduce = -1;
    for (int l = 0; l < st->n_leaves; l++) {
        int it = st->leaves[l];
        if (st->iters[it].is_reduce && first_reduce < 0) first_reduce = l;
        if (si->iter_ext[it] == 1) {
            si->leaf_var[l] = NULL;
            val[it] = weft_i64(a, 0);
        } else {
            si->leaf_var[l] = weft_var(a, st->iters[it].name, WEFT_I64);
            weft_range_push(&c->env, si->leaf_var[l], 0, si->iter_ext[it] - 1);
            val[it] = si->leaf_var[l];
        }
    }
    compute_values(c, st, val, si->iter_ext);
    memcpy(si->val, val, sizeof val);
    for (int d = 0; d < op->ndim; d++) si->axis_val[d] = weft_simplify(a, weft_add(a, si->lo[d], val[d]), &c->env);
    for (int r = 0; r < op->n_reduce; r++) si->axis_val[op->ndim + r] = val[op->ndim + r];

    /* The innermost statement. */
    const weft_expr *from[2 * WEFT_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < op->ndim; d++) from[m++] = op->axis[d].var;
    for (int r = 0; r < op->n_reduce; r++) from[m++] = op->reduce_axis[r].var;
    const weft_stmt *init = op->n_reduce ? gen_init(c, sidx, first_reduce) : NULL;
    /* Attached stages first (outermost level first): the body's loads need their buffers and
     * regions, which depend only on this stage's loop variables. */
    attached *att = weft_arena_alloc(a, sizeof *att * (size_t)(st->n_leaves ? st->n_leaves : 1));
    if (!att) {
        fail_nomem(c);
        return NULL;
    }
    for (int l = 0; l < st->n_leaves; l++) {
        gen_attached(c, sidx, l, &att[l]);
        if (c->err != WEFT_OK) return NULL;
    }
    const weft_expr *value = to_loads(c, weft_expr_substitute(a, si->body, m, from, si->axis_val));
    const weft_expr *idx[WEFT_MAX_DIMS];
    for (int d = 0; d < op->ndim; d++) idx[d] = val[d];
    const weft_expr *flat = flat_index(c, op->ndim, idx, NULL, si->ext);
    if (op->n_reduce) value = weft_te_reduce_combine(a, op->reduce, weft_load(a, si->buf, flat), value);
    value = weft_simplify(a, value, &c->env);
    const weft_stmt *body = weft_store(a, si->buf, flat, value);
    const weft_expr *guard = domain_guard(c, st, si, val, false);
    if (!weft_expr_is_int_const(guard, 1)) body = weft_if(a, guard, body, NULL);

    /* Loop levels, innermost first. */
    for (int l = st->n_leaves - 1; l >= 0; l--) {
        const weft_stmt *items[2] = {att[l].compute, body};
        const weft_stmt *lb = weft_seq(a, 2, items);
        for (int b = att[l].n_bufs - 1; b >= 0; b--) lb = weft_allocate(a, att[l].bufs[b], lb);
        const weft_sched_iter *it = &st->iters[st->leaves[l]];
        if (si->leaf_var[l])
            lb = weft_for_full(a, si->leaf_var[l], weft_i64(a, 0), weft_i64(a, si->iter_ext[st->leaves[l]]),
                               it->annot, WEFT_THREAD_NONE, it->auto_unroll, lb);
        if (init && l == first_reduce) {
            const weft_stmt *two[2] = {init, lb};
            lb = weft_seq(a, 2, two);
        }
        body = lb;
    }
    c->env.n = env_mark;
    return body;
}

/* ---- entry ------------------------------------------------------------------------------ */

weft_status weft_lower_nest(const weft_schedule *s, weft_arena *a, weft_loop_func **out)
{
    *out = NULL;
    const weft_te_func *f = s->func;
    weft_status rc = weft_sched_check(s);
    if (rc != WEFT_OK) return rc;
    ctx *c = weft_arena_alloc(a, sizeof *c);
    stage_info *info = weft_arena_alloc(a, sizeof *info * (size_t)(s->n_stages ? s->n_stages : 1));
    const weft_buffer **params = weft_arena_alloc(a, sizeof *params * (size_t)(f->n_inputs + f->n_outputs));
    if (!c || !info || !params) return weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory", f->name);
    c->a = a;
    c->s = s;
    c->f = f;
    c->info = info;
    c->input_bufs = params;
    for (int i = 0; i < f->n_inputs; i++) {
        const weft_tensor *t = f->inputs[i];
        params[i] = weft_buffer_new(a, t->name, t->dtype, t->ndim, t->shape, WEFT_SCOPE_GLOBAL, i);
    }
    /* Bodies with inlined stages expanded; full regions and buffers for root stages. */
    const weft_buffer *allocs[WEFT_SCHED_MAX_STAGES];
    int n_allocs = 0;
    for (int i = 0; i < s->n_stages; i++) {
        const weft_stage *st = &s->stages[i];
        info[i].body = expand(c, st->op->body, 0);
        if (st->attach != WEFT_ATTACH_ROOT) continue;
        for (int d = 0; d < st->ref->ndim; d++) {
            info[i].lo[d] = weft_i64(a, 0);
            info[i].ext[d] = st->ref->shape[d];
        }
        int out_idx = -1;
        for (int o = 0; o < f->n_outputs; o++)
            if (f->outputs[o] == st->ref) out_idx = o;
        weft_buffer *b = weft_buffer_new(a, st->name, st->ref->dtype, st->ref->ndim, st->ref->shape,
                                         out_idx >= 0 ? WEFT_SCOPE_GLOBAL : st->scope,
                                         out_idx >= 0 ? f->n_inputs + out_idx : -1);
        info[i].buf = b;
        if (out_idx >= 0) params[f->n_inputs + out_idx] = b;
        else allocs[n_allocs++] = b;
    }
    for (int o = 0; o < f->n_outputs; o++)
        if (!params[f->n_inputs + o])
            return weft_fail(WEFT_ERR_INVALID_ARG, "lowering %s: output %s is not a root stage", f->name, f->outputs[o]->name);
    const weft_stmt *items[WEFT_SCHED_MAX_STAGES];
    int n = 0;
    for (int i = 0; i < s->n_stages; i++) {
        if (s->stages[i].attach != WEFT_ATTACH_ROOT) continue;
        items[n++] = gen_stage(c, i);
        if (c->err != WEFT_OK) return c->err;
    }
    const weft_stmt *body = weft_seq(a, n, items);
    for (int k = n_allocs - 1; k >= 0; k--) body = weft_allocate(a, allocs[k], body);
    weft_loop_func *lf = weft_arena_alloc(a, sizeof *lf);
    if (!lf || !body || weft_arena_failed(a)) return weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory", f->name);
    lf->name = f->name;
    lf->n_params = f->n_inputs + f->n_outputs;
    lf->params = params;
    lf->body = body;
    *out = lf;
    return WEFT_OK;
}
