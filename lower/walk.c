/* Bottom-up statement rewriting with loop ranges in scope, shared by the passes that map every
 * expression or statement of the loop IR (guards, flatten, simplify). */
#include "lower/lower_internal.h"

static const weft_expr *map_expr(weft_rewriter *r, const weft_expr *e)
{
    if (!e || !r->expr) return e;
    const weft_expr *m = r->expr(r->ud, e, r->env);
    if (!m) r->failed = true;
    return m;
}

static const weft_stmt *rebuild(weft_rewriter *r, const weft_stmt *s)
{
    weft_arena *a = r->a;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const weft_expr *min = map_expr(r, s->u.loop.min), *ext = map_expr(r, s->u.loop.extent);
        if (r->failed) return NULL;
        int mark = r->env ? r->env->n : 0;
        if (r->env && min->kind == WEFT_EXPR_INT && ext->kind == WEFT_EXPR_INT)
            weft_range_push(r->env, s->u.loop.var, weft_expr_int(min), weft_expr_int(min) + weft_expr_int(ext) - 1);
        const weft_stmt *body = weft_rewrite_stmt(r, s->u.loop.body);
        if (r->env) r->env->n = mark;
        if (!body) return NULL;
        return weft_for_full(a, s->u.loop.var, min, ext, s->u.loop.kind, s->u.loop.thread_axis, s->u.loop.auto_unroll, body);
    }
    case WEFT_STMT_STORE: {
        const weft_expr *idx = map_expr(r, s->u.store.index), *val = map_expr(r, s->u.store.value);
        return r->failed ? NULL : weft_store(a, s->u.store.buf, idx, val);
    }
    case WEFT_STMT_ALLOCATE: {
        const weft_stmt *body = weft_rewrite_stmt(r, s->u.alloc.body);
        return body ? weft_allocate(a, s->u.alloc.buf, body) : NULL;
    }
    case WEFT_STMT_IF: {
        const weft_expr *cond = map_expr(r, s->u.cond.cond);
        const weft_stmt *t = weft_rewrite_stmt(r, s->u.cond.then_s);
        const weft_stmt *e = s->u.cond.else_s ? weft_rewrite_stmt(r, s->u.cond.else_s) : NULL;
        if (r->failed || !t || (s->u.cond.else_s && !e)) return NULL;
        return weft_if(a, cond, t, e);
    }
    case WEFT_STMT_SEQ: {
        const weft_stmt **items = weft_arena_alloc(a, sizeof *items * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
        if (!items) return NULL;
        for (int i = 0; i < s->u.seq.n; i++)
            if (!(items[i] = weft_rewrite_stmt(r, s->u.seq.items[i]))) return NULL;
        return weft_seq(a, s->u.seq.n, items);
    }
    case WEFT_STMT_BARRIER: return s;
    case WEFT_STMT_PREFETCH: {
        const weft_expr *idx = map_expr(r, s->u.store.index);
        return r->failed ? NULL : weft_prefetch(a, s->u.store.buf, idx);
    }
    default: return NULL;
    }
}

const weft_stmt *weft_rewrite_stmt(weft_rewriter *r, const weft_stmt *s)
{
    if (r->failed || !s) {
        r->failed = true;
        return NULL;
    }
    const weft_stmt *out = rebuild(r, s);
    if (out && r->post) out = r->post(r->ud, s, out, r->env);
    if (!out) r->failed = true;
    return out;
}
