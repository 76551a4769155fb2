/* partition: full tiles without guards, one guarded remainder (loop unswitching on a loop
 * variable, as TVM's loop partitioning and Halide's boundary splitting do).
 *
 * A split whose factor does not divide the extent leaves a guard such as
 *     if (i.0*6 + i < 37 && j.0*32 + j < 333) { ... }
 * around the innermost statements, so every iteration tests it and the vectorized loop under it
 * cannot use plain vector loads and stores. For a guard term whose variables are one serial or
 * parallel loop v and loops inside it, the term holds for every inner iteration exactly when
 * its upper bound over the inner loops holds: `i.0*6 + 5 < 37`. The loop's body becomes
 *     if (i.0*6 + 5 < 37) { body with the term replaced by true } else { body }
 * so the bulk of the iterations run the guard-free copy and only the last tile takes the
 * guarded one. Terms are unswitched outermost loop first; in the guarded copy an inner loop
 * may unswitch the same term again on its own variable (the last panel of a split axis still
 * runs its full tiles unguarded). A term whose bound is never (or always) true is left to the
 * simplifier. At most MAX_DEPTH conditions
 * are nested, so no statement is copied more than 2^MAX_DEPTH times.
 *
 * Requires: loops with min 0 and constant extents (nest's output), guards simplified.
 * Ensures: the same computation; conditions only added around whole loop bodies.
 */
#include "ir/error.h"
#include "lower/lower_internal.h"

#define MAX_DEPTH 3
#define MAX_TERMS 32

typedef struct pctx {
    weft_arena *a;
    weft_range_env env; /* ranges of the loops enclosing the statement being visited */
    const weft_expr *taken[MAX_DEPTH]; /* conditions already unswitched on the current path */
    int n_taken;
    bool nomem;
} pctx;

static bool is_cmp(const weft_expr *e)
{
    return e->kind == WEFT_EXPR_LT || e->kind == WEFT_EXPR_LE || e->kind == WEFT_EXPR_GT || e->kind == WEFT_EXPR_GE;
}

/* Conjunction terms of cond that are comparisons, appended to terms (deduplicated). */
static void split_terms(const weft_expr *cond, const weft_expr **terms, int *n)
{
    if (cond->kind == WEFT_EXPR_AND) {
        split_terms(weft_expr_a(cond), terms, n);
        split_terms(weft_expr_b(cond), terms, n);
        return;
    }
    if (!is_cmp(cond) || !weft_dtype_is_int(weft_expr_a(cond)->dtype)) return;
    for (int i = 0; i < *n; i++)
        if (weft_expr_equal(terms[i], cond)) return;
    if (*n < MAX_TERMS) terms[(*n)++] = cond;
}

/* The terms of a reduction update's select: B[i] = B[i] op select(c, x, identity), as
 * rfactor writes the moved-back last block of a split that does not divide its axis (the
 * points it shares with the block before add the identity). Unswitched like a guard, every
 * full block sums without the select. Other selects (padding reads) are left alone: their
 * clamped reads without the select would lose the masked loads the target makes of them. */
static void collect_update_select(const weft_stmt *s, const weft_expr **terms, int *n)
{
    const weft_expr *v = s->u.store.value;
    if (!weft_expr_is_binary(v)) return;
    const weft_expr *x = weft_expr_a(v), *y = weft_expr_b(v);
    if (y->kind == WEFT_EXPR_LOAD) {
        const weft_expr *t = x;
        x = y, y = t;
    }
    if (x->kind != WEFT_EXPR_LOAD || y->kind != WEFT_EXPR_SELECT || weft_expr_load_buf(x) != s->u.store.buf ||
        !weft_expr_equal(weft_expr_load_index(x), s->u.store.index))
        return;
    split_terms(weft_expr_sel_cond(y), terms, n);
}

static void collect_terms(const weft_stmt *s, const weft_expr **terms, int *n)
{
    if (!s) return;
    switch (s->kind) {
    case WEFT_STMT_STORE: collect_update_select(s, terms, n); break;
    case WEFT_STMT_FOR: collect_terms(s->u.loop.body, terms, n); break;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect_terms(s->u.seq.items[i], terms, n);
        break;
    case WEFT_STMT_IF:
        split_terms(s->u.cond.cond, terms, n);
        collect_terms(s->u.cond.then_s, terms, n);
        collect_terms(s->u.cond.else_s, terms, n);
        break;
    case WEFT_STMT_ALLOCATE: collect_terms(s->u.alloc.body, terms, n); break;
    default: break;
    }
}

/* Ranges of every constant-extent loop inside s. */
static void collect_loops(const weft_stmt *s, weft_range_env *env)
{
    if (!s) return;
    switch (s->kind) {
    case WEFT_STMT_FOR:
        if (s->u.loop.min->kind == WEFT_EXPR_INT && s->u.loop.extent->kind == WEFT_EXPR_INT &&
            weft_expr_int(s->u.loop.extent) > 0) {
            int64_t lo = weft_expr_int(s->u.loop.min);
            weft_range_push(env, s->u.loop.var, lo, lo + weft_expr_int(s->u.loop.extent) - 1);
        }
        collect_loops(s->u.loop.body, env);
        break;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) collect_loops(s->u.seq.items[i], env);
        break;
    case WEFT_STMT_IF:
        collect_loops(s->u.cond.then_s, env);
        collect_loops(s->u.cond.else_s, env);
        break;
    case WEFT_STMT_ALLOCATE: collect_loops(s->u.alloc.body, env); break;
    default: break;
    }
}

/* The condition under which `term` holds for every iteration of the loops inside loop v
 * (inner: their ranges), in v and the enclosing loops' variables; NULL when the term cannot
 * be bounded or does not use v. */
static const weft_expr *full_condition(pctx *c, const weft_expr *term, const weft_expr *v, const weft_range_env *inner)
{
    if (!weft_expr_uses_var(term, v)) return NULL;
    const weft_expr *x = weft_expr_a(term), *y = weft_expr_b(term);
    bool strict = term->kind == WEFT_EXPR_LT || term->kind == WEFT_EXPR_GT;
    /* diff < 0 (strict) or diff <= 0 */
    const weft_expr *diff = term->kind == WEFT_EXPR_LT || term->kind == WEFT_EXPR_LE ? weft_sub(c->a, x, y) : weft_sub(c->a, y, x);
    if (!diff) return NULL;
    weft_range_env all = *inner;
    const weft_expr *free_vars[WEFT_RANGE_MAX];
    int n_free = 0;
    for (int i = 0; i < inner->n; i++)
        if (weft_expr_uses_var(term, inner->vars[i])) free_vars[n_free++] = inner->vars[i];
    if (n_free == 0) return NULL; /* the term itself: nothing inside the loop to hoist it over */
    for (int i = 0; i < c->env.n && all.n < WEFT_RANGE_MAX; i++)
        weft_range_push(&all, c->env.vars[i], c->env.lo[i], c->env.hi[i]);
    diff = weft_simplify(c->a, diff, NULL);
    weft_interval iv;
    if (!diff || !weft_bound_interval(c->a, diff, &all, n_free, free_vars, &iv)) return NULL;
    if (weft_expr_uses_var(iv.lo, v) == false) return NULL; /* the bound does not move with v */
    for (int i = 0; i < n_free; i++)
        if (weft_expr_uses_var(iv.lo, free_vars[i])) return NULL;
    const weft_expr *hi = weft_add(c->a, iv.lo, weft_i64(c->a, iv.width));
    const weft_expr *cond = hi ? weft_cmp(c->a, strict ? WEFT_EXPR_LT : WEFT_EXPR_LE, hi, weft_i64(c->a, 0)) : NULL;
    return cond ? weft_simplify(c->a, cond, &c->env) : NULL;
}

/* cond with every term in `drop` replaced by true. */
static const weft_expr *drop_terms(pctx *c, const weft_expr *cond, const weft_expr *const *drop, int n_drop)
{
    if (cond->kind == WEFT_EXPR_AND) {
        const weft_expr *x = drop_terms(c, weft_expr_a(cond), drop, n_drop);
        const weft_expr *y = drop_terms(c, weft_expr_b(cond), drop, n_drop);
        if (!x || !y) return NULL;
        if (x == weft_expr_a(cond) && y == weft_expr_b(cond)) return cond;
        if (weft_expr_is_int_const(x, 1)) return y;
        if (weft_expr_is_int_const(y, 1)) return x;
        return weft_and(c->a, x, y);
    }
    for (int i = 0; i < n_drop; i++)
        if (weft_expr_equal(cond, drop[i])) return weft_int(c->a, WEFT_BOOL, 1);
    return cond;
}

/* s with each direct child statement c replaced by fn(c, ud) (conditions, loop headers and
 * buffers kept); s itself when no child changed. */
typedef const weft_stmt *(*child_fn)(pctx *c, const weft_stmt *s, void *ud);

static const weft_stmt *map_children(pctx *c, const weft_stmt *s, child_fn fn, void *ud)
{
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_stmt *b = fn(c, s->u.loop.body, ud);
        if (b == s->u.loop.body) return s;
        return weft_for_full(c->a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, s->u.loop.thread_axis,
                             s->u.loop.auto_unroll, b);
    }
    case WEFT_STMT_SEQ: {
        const weft_stmt **items = weft_arena_alloc(c->a, sizeof *items * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
        if (!items) {
            c->nomem = true;
            return s;
        }
        bool same = true;
        for (int i = 0; i < s->u.seq.n; i++) {
            items[i] = fn(c, s->u.seq.items[i], ud);
            same = same && items[i] == s->u.seq.items[i];
        }
        return same ? s : weft_seq(c->a, s->u.seq.n, items);
    }
    case WEFT_STMT_IF: {
        const weft_stmt *t = fn(c, s->u.cond.then_s, ud);
        const weft_stmt *e = s->u.cond.else_s ? fn(c, s->u.cond.else_s, ud) : NULL;
        return t == s->u.cond.then_s && e == s->u.cond.else_s ? s : weft_if(c->a, s->u.cond.cond, t, e);
    }
    case WEFT_STMT_ALLOCATE: {
        const weft_stmt *b = fn(c, s->u.alloc.body, ud);
        return b == s->u.alloc.body ? s : weft_allocate(c->a, s->u.alloc.buf, b);
    }
    default: return s;
    }
}

typedef struct drop_set {
    const weft_expr *const *terms;
    int n;
} drop_set;

typedef struct drop_ctx {
    pctx *c;
    const drop_set *d;
} drop_ctx;

/* e with the dropped terms true in its selects' conditions (a select on true is its first arm). */
static const weft_expr *select_without(void *ud, const weft_expr *e)
{
    const drop_ctx *dc = ud;
    if (e->kind == WEFT_EXPR_INT || e->kind == WEFT_EXPR_FLOAT || e->kind == WEFT_EXPR_VAR) return e;
    const weft_expr *m = weft_expr_map_children(dc->c->a, e, select_without, ud);
    if (!m || m->kind != WEFT_EXPR_SELECT) return m;
    const weft_expr *cond = drop_terms(dc->c, weft_expr_sel_cond(m), dc->d->terms, dc->d->n);
    if (!cond) return NULL;
    if (weft_expr_is_int_const(cond, 1)) return weft_expr_sel_true(m);
    return cond == weft_expr_sel_cond(m) ? m : weft_select(dc->c->a, cond, weft_expr_sel_true(m), weft_expr_sel_false(m));
}

static const weft_stmt *without_terms(pctx *c, const weft_stmt *s, void *ud)
{
    if (!s || c->nomem) return s;
    if (s->kind == WEFT_STMT_STORE) {
        const weft_expr *v = select_without(&(drop_ctx){c, ud}, s->u.store.value);
        if (!v) {
            c->nomem = true;
            return s;
        }
        return v == s->u.store.value ? s : weft_store(c->a, s->u.store.buf, s->u.store.index, v);
    }
    if (s->kind != WEFT_STMT_IF) return map_children(c, s, without_terms, ud);
    const drop_set *d = ud;
    const weft_expr *cond = drop_terms(c, s->u.cond.cond, d->terms, d->n);
    if (!cond) {
        c->nomem = true;
        return s;
    }
    const weft_stmt *t = without_terms(c, s->u.cond.then_s, ud);
    const weft_stmt *e = without_terms(c, s->u.cond.else_s, ud);
    if (weft_expr_is_int_const(cond, 1)) return t;
    if (cond == s->u.cond.cond && t == s->u.cond.then_s && e == s->u.cond.else_s) return s;
    return weft_if(c->a, cond, t, e);
}

static const weft_stmt *partition(pctx *c, const weft_stmt *s, int depth);

/* The body of loop v, unswitched on the first unswitchable condition (then recursively). */
static const weft_stmt *unswitch(pctx *c, const weft_stmt *body, const weft_expr *v, int depth)
{
    if (depth >= MAX_DEPTH) return partition(c, body, depth);
    const weft_expr *terms[MAX_TERMS];
    int n = 0;
    collect_terms(body, terms, &n);
    weft_range_env *inner = weft_arena_alloc(c->a, sizeof *inner);
    if (!inner) {
        c->nomem = true;
        return body;
    }
    inner->n = 0;
    collect_loops(body, inner);
    for (int i = 0; i < n; i++) {
        const weft_expr *full = full_condition(c, terms[i], v, inner);
        if (!full || weft_expr_is_const(full)) continue;
        bool taken = false;
        for (int t = 0; t < c->n_taken; t++) taken = taken || weft_expr_equal(c->taken[t], full);
        if (taken) continue; /* the else side of this very condition */
        /* Every term with the same full condition goes with it (the init, update and copy
         * nests of one stage guard the same split with different inner variables). */
        const weft_expr *drop[MAX_TERMS];
        int n_drop = 0;
        for (int j = i; j < n; j++) {
            const weft_expr *fj = j == i ? full : full_condition(c, terms[j], v, inner);
            if (fj && weft_expr_equal(fj, full)) drop[n_drop++] = terms[j];
        }
        drop_set ds = {drop, n_drop};
        const weft_stmt *fast = without_terms(c, body, &ds);
        if (c->nomem) return body;
        c->taken[c->n_taken++] = full;
        const weft_stmt *t = unswitch(c, fast, v, depth + 1);
        const weft_stmt *e = unswitch(c, body, v, depth + 1);
        c->n_taken--;
        return weft_if(c->a, full, t, e);
    }
    return partition(c, body, depth);
}

static const weft_stmt *partition_child(pctx *c, const weft_stmt *s, void *ud)
{
    return partition(c, s, *(const int *)ud);
}

static const weft_stmt *partition(pctx *c, const weft_stmt *s, int depth)
{
    if (!s || c->nomem) return s;
    if (s->kind != WEFT_STMT_FOR) return map_children(c, s, partition_child, &depth);
    weft_for_kind k = s->u.loop.kind;
    if (k == WEFT_FOR_VECTORIZED || k == WEFT_FOR_THREAD_BOUND) return s; /* straight line / device */
    bool const_range = s->u.loop.min->kind == WEFT_EXPR_INT && s->u.loop.extent->kind == WEFT_EXPR_INT;
    bool loop_ok = (k == WEFT_FOR_SERIAL || k == WEFT_FOR_PARALLEL) && const_range && weft_expr_int(s->u.loop.extent) > 1;
    int saved = c->env.n;
    if (const_range) {
        int64_t lo = weft_expr_int(s->u.loop.min);
        weft_range_push(&c->env, s->u.loop.var, lo, lo + weft_expr_int(s->u.loop.extent) - 1);
    }
    const weft_stmt *b = loop_ok ? unswitch(c, s->u.loop.body, s->u.loop.var, depth) : partition(c, s->u.loop.body, depth);
    c->env.n = saved;
    if (b == s->u.loop.body) return s;
    return weft_for_full(c->a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, k, s->u.loop.thread_axis,
                         s->u.loop.auto_unroll, b);
}

weft_status weft_lower_partition(weft_arena *a, weft_loop_func *f)
{
    pctx *c = weft_arena_alloc(a, sizeof *c);
    if (!c) return weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory (partition)", f->name ? f->name : "?");
    c->a = a;
    c->env.n = 0;
    c->nomem = false;
    c->n_taken = 0;
    const weft_stmt *body = partition(c, f->body, 0);
    if (c->nomem || !body) return weft_fail(WEFT_ERR_NOMEM, "lowering %s: out of memory (partition)", f->name ? f->name : "?");
    f->body = body;
    return WEFT_OK;
}
