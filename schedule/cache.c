/* Cache steps: cache_write and cache_read add a stage that holds a copy in a memory scope.
 *
 *   cache_write C SCOPE   C.SCOPE computes what C computed (reduction included) and C becomes
 *                         a copy of it: C[i..] = C.SCOPE[i..]. Must come before any split/fuse/
 *                         reorder of C; stages attached to C move to C.SCOPE.
 *   cache_read T SCOPE R  T.SCOPE[i..] = T[i..], and the readers R (which must read T directly)
 *                         read T.SCOPE instead. T may be an input or a stage.
 * New tensors live in the schedule's arena; consumers keep naming stages by their `ref`.
 */
#include <string.h>

#include "ir/error.h"
#include "schedule/state.h"

static bool parse_scope(const char *s, weft_scope *out)
{
    for (int k = 0; k < WEFT_SCOPE_COUNT; k++)
        if (!strcmp(s, weft_scope_names[k])) {
            *out = (weft_scope)k;
            return true;
        }
    return false;
}

typedef struct retarget_ctx {
    weft_arena *a;
    const weft_tensor *from, *to;
} retarget_ctx;

/* e rebuilt with TLOADs of `from` reading `to` instead. */
static const weft_expr *retarget(void *ud, const weft_expr *e)
{
    const retarget_ctx *c = ud;
    e = weft_expr_map_children(c->a, e, retarget, ud);
    if (!e || e->kind != WEFT_EXPR_TLOAD || weft_expr_tload_tensor(e) != c->from) return e;
    return weft_tload(c->a, c->to, e->u.tload.n, e->u.tload.idx);
}

/* A copy of t's definition under a new name with fresh axis variables. */
static weft_tensor *clone_op(weft_arena *a, const weft_tensor *t, const char *name)
{
    const char *names[WEFT_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) names[d] = weft_expr_var_name(t->axis[d].var);
    weft_tensor *n = weft_te_compute(a, name, t->ndim, t->shape, names);
    if (!n) return NULL;
    const weft_expr *from[2 * WEFT_MAX_DIMS], *to[2 * WEFT_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < t->ndim; d++) {
        from[m] = t->axis[d].var;
        to[m++] = n->axis[d].var;
    }
    for (int r = 0; r < t->n_reduce; r++) {
        from[m] = t->reduce_axis[r].var;
        to[m++] = weft_te_reduce_axis(a, n, weft_expr_var_name(t->reduce_axis[r].var), t->reduce_axis[r].extent);
    }
    weft_te_set_body(n, t->reduce, weft_expr_substitute(a, t->body, m, from, to));
    return n;
}

weft_status weft_sched_apply_cache_write(weft_schedule *s, const weft_step *step)
{
    int c = weft_sched_find_stage(s, step->args[0]);
    if (c < 0) return WEFT_ERR_INVALID_ARG;
    weft_scope scope;
    if (step->n_args != 2 || !parse_scope(step->args[1], &scope))
        return weft_fail(WEFT_ERR_INVALID_ARG, "cache_write scope must be global, shared or local, got '%s'", step->args[1]);
    weft_stage *cs = &s->stages[c];
    if (cs->attach == WEFT_ATTACH_INLINE) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is inlined", cs->name);
    if (cs->n_rels > 0 || cs->n_iters != cs->n_root)
        return weft_fail(WEFT_ERR_INVALID_ARG, "cache_write must come before splits and fuses of %s", cs->name);
    if (s->n_stages >= WEFT_SCHED_MAX_STAGES) return weft_fail(WEFT_ERR_UNSUPPORTED, "too many stages");
    char name[WEFT_SCHED_NAME];
    weft_status rc = weft_sched_unique_name(s, cs->name, step->args[1], name);
    if (rc != WEFT_OK) return rc;
    weft_tensor *cache = clone_op(s->arena, cs->op, name);
    weft_tensor *copy = weft_te_compute(s->arena, cs->name, cs->op->ndim, cs->op->shape, NULL);
    if (copy) {
        for (int d = 0; d < copy->ndim; d++)
            copy->axis[d].var = cs->op->axis[d].var ? weft_var(s->arena, weft_expr_var_name(cs->op->axis[d].var), WEFT_I64) : NULL;
        const weft_expr *idx[WEFT_MAX_DIMS];
        for (int d = 0; d < copy->ndim; d++) idx[d] = copy->axis[d].var;
        weft_te_set_body(copy, WEFT_REDUCE_NONE, weft_tload(s->arena, cache, copy->ndim, idx));
    }
    if (!cache || !copy || !copy->body || weft_arena_failed(s->arena))
        return weft_fail(WEFT_ERR_NOMEM, "cache_write: out of memory");
    /* Keep the order of loops the user saw: reorders before cache_write are not allowed, so
     * the cache's loops are the root axes in order. */
    int pos = weft_sched_insert_stage(s, c);
    cs = &s->stages[c + 1];
    weft_stage *ls = &s->stages[pos];
    snprintf(ls->name, sizeof ls->name, "%s", name);
    ls->ref = ls->op = cache;
    ls->scope = scope;
    ls->attach = WEFT_ATTACH_ROOT;
    weft_sched_stage_init_iters(ls);
    for (int q = 0; q < s->n_stages; q++)
        if (s->stages[q].attach == WEFT_ATTACH_AT && s->stages[q].at_stage == c + 1) s->stages[q].at_stage = pos;
    /* C keeps the annotations of its spatial loops (the copy has no reduction loops). */
    weft_sched_iter saved[WEFT_MAX_DIMS];
    memcpy(saved, cs->iters, sizeof saved);
    cs->op = copy;
    weft_sched_stage_init_iters(cs);
    for (int d = 0; d < copy->ndim; d++) {
        cs->iters[d].annot = saved[d].annot;
        cs->iters[d].thread_axis = saved[d].thread_axis;
        cs->iters[d].auto_unroll = saved[d].auto_unroll;
        memcpy(cs->iters[d].prefetch, saved[d].prefetch, sizeof saved[d].prefetch);
    }
    return WEFT_OK;
}

weft_status weft_sched_apply_cache_read(weft_schedule *s, const weft_step *step)
{
    /* The tensor: a stage or an input placeholder. */
    const weft_tensor *t = NULL;
    const weft_te_func *f = s->func;
    for (int i = 0; i < f->n_inputs; i++)
        if (!strcmp(f->inputs[i]->name, step->args[0])) t = f->inputs[i];
    int ts = -1;
    if (!t) {
        ts = weft_sched_find_stage(s, step->args[0]);
        if (ts < 0) return WEFT_ERR_INVALID_ARG;
        t = s->stages[ts].ref;
        if (s->stages[ts].attach == WEFT_ATTACH_INLINE)
            return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s is inlined", s->stages[ts].name);
    }
    weft_scope scope;
    if (!parse_scope(step->args[1], &scope))
        return weft_fail(WEFT_ERR_INVALID_ARG, "cache_read scope must be global, shared or local, got '%s'", step->args[1]);
    int readers[WEFT_STEP_MAX_ARGS], n_readers = step->n_args - 2, first = s->n_stages;
    for (int k = 0; k < n_readers; k++) {
        int r = weft_sched_find_stage(s, step->args[2 + k]);
        if (r < 0) return WEFT_ERR_INVALID_ARG;
        const weft_tensor *reads[64];
        int n = weft_te_reads(s->stages[r].op, reads, 64);
        bool direct = false;
        for (int i = 0; i < n; i++) direct = direct || reads[i] == t;
        if (!direct) return weft_fail(WEFT_ERR_INVALID_ARG, "stage %s does not read %s directly", step->args[2 + k], t->name);
        for (int j = 0; j < k; j++)
            if (readers[j] == r) return weft_fail(WEFT_ERR_INVALID_ARG, "reader %s is named twice", step->args[2 + k]);
        readers[k] = r;
        if (r < first) first = r;
    }
    if (s->n_stages >= WEFT_SCHED_MAX_STAGES) return weft_fail(WEFT_ERR_UNSUPPORTED, "too many stages");
    char name[WEFT_SCHED_NAME];
    weft_status rc = weft_sched_unique_name(s, t->name, step->args[1], name);
    if (rc != WEFT_OK) return rc;
    const char *axis_names[WEFT_MAX_DIMS];
    char buf[WEFT_MAX_DIMS][16];
    for (int d = 0; d < t->ndim; d++) {
        snprintf(buf[d], sizeof buf[d], "ax%d", d);
        axis_names[d] = t->is_placeholder ? buf[d] : weft_expr_var_name(t->axis[d].var);
    }
    weft_tensor *cache = weft_te_compute(s->arena, name, t->ndim, t->shape, axis_names);
    if (cache) {
        const weft_expr *idx[WEFT_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++) idx[d] = cache->axis[d].var;
        weft_te_set_body(cache, WEFT_REDUCE_NONE, weft_tload(s->arena, t, t->ndim, idx));
    }
    weft_tensor *new_ops[WEFT_STEP_MAX_ARGS];
    for (int k = 0; k < n_readers; k++) {
        const weft_tensor *old = s->stages[readers[k]].op;
        new_ops[k] = weft_arena_alloc(s->arena, sizeof *new_ops[k]);
        if (!new_ops[k] || !cache) break;
        *new_ops[k] = *old;
        retarget_ctx rt = {s->arena, t, cache};
        new_ops[k]->body = retarget(&rt, old->body);
    }
    if (!cache || !cache->body || weft_arena_failed(s->arena)) return weft_fail(WEFT_ERR_NOMEM, "cache_read: out of memory");
    for (int k = 0; k < n_readers; k++) s->stages[readers[k]].op = new_ops[k];
    int pos = weft_sched_insert_stage(s, first);
    weft_stage *ls = &s->stages[pos];
    snprintf(ls->name, sizeof ls->name, "%s", name);
    ls->ref = ls->op = cache;
    ls->scope = scope;
    ls->attach = WEFT_ATTACH_ROOT;
    weft_sched_stage_init_iters(ls);
    return WEFT_OK;
}
