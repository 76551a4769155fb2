/* auto_unroll: under a loop carrying `pragma auto_unroll N`, every serial loop with a constant
 * extent whose whole subtree runs at most N innermost statements becomes UNROLLED (TVM's
 * auto_unroll_max_step). Requires constant extents; keeps everything else as it is. */
#include "ir/error.h"
#include "lower/lower_internal.h"

static int64_t steps(const weft_stmt *s)
{
    if (!s) return 0;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        if (s->u.loop.extent->kind != WEFT_EXPR_INT) return INT64_MAX / 4;
        int64_t b = steps(s->u.loop.body), e = weft_expr_int(s->u.loop.extent);
        return b > (INT64_MAX / 4) / (e ? e : 1) ? INT64_MAX / 4 : b * e;
    }
    case WEFT_STMT_SEQ: {
        int64_t t = 0;
        for (int i = 0; i < s->u.seq.n && t < INT64_MAX / 8; i++) t += steps(s->u.seq.items[i]);
        return t;
    }
    case WEFT_STMT_IF: return steps(s->u.cond.then_s) + steps(s->u.cond.else_s);
    case WEFT_STMT_ALLOCATE: return steps(s->u.alloc.body);
    default: return 1;
    }
}

static const weft_stmt *unroll(weft_arena *a, const weft_stmt *s, int max_step)
{
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        int inner_max = s->u.loop.auto_unroll > max_step ? s->u.loop.auto_unroll : max_step;
        const weft_stmt *body = unroll(a, s->u.loop.body, inner_max);
        if (!body) return NULL;
        weft_for_kind k = s->u.loop.kind;
        if (max_step > 0 && k == WEFT_FOR_SERIAL && s->u.loop.extent->kind == WEFT_EXPR_INT && steps(s) <= max_step)
            k = WEFT_FOR_UNROLLED;
        if (body == s->u.loop.body && k == s->u.loop.kind) return s;
        return weft_for_full(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, k, s->u.loop.thread_axis,
                             s->u.loop.auto_unroll, body);
    }
    case WEFT_STMT_SEQ: {
        const weft_stmt **items = weft_arena_alloc(a, sizeof *items * (size_t)(s->u.seq.n ? s->u.seq.n : 1));
        if (!items) return NULL;
        bool same = true;
        for (int i = 0; i < s->u.seq.n; i++) {
            items[i] = unroll(a, s->u.seq.items[i], max_step);
            if (!items[i]) return NULL;
            same = same && items[i] == s->u.seq.items[i];
        }
        return same ? s : weft_seq(a, s->u.seq.n, items);
    }
    case WEFT_STMT_IF: {
        const weft_stmt *t = unroll(a, s->u.cond.then_s, max_step);
        const weft_stmt *e = s->u.cond.else_s ? unroll(a, s->u.cond.else_s, max_step) : NULL;
        if (!t || (s->u.cond.else_s && !e)) return NULL;
        return t == s->u.cond.then_s && e == s->u.cond.else_s ? s : weft_if(a, s->u.cond.cond, t, e);
    }
    case WEFT_STMT_ALLOCATE: {
        const weft_stmt *b = unroll(a, s->u.alloc.body, max_step);
        if (!b) return NULL;
        return b == s->u.alloc.body ? s : weft_allocate(a, s->u.alloc.buf, b);
    }
    default: return s;
    }
}

weft_status weft_lower_auto_unroll(weft_arena *a, weft_loop_func *f)
{
    const weft_stmt *body = unroll(a, f->body, 0);
    if (!body) return weft_fail(WEFT_ERR_NOMEM, "auto_unroll: out of memory rebuilding the loop nest");
    f->body = body;
    return WEFT_OK;
}
