/* GPU launches of a lowered function (contract in ir/launch.h). */
#include "ir/launch.h"

typedef struct lctx {
    const weft_loop_func *f;
    weft_gpu_launch *l;
    bool bad_extent;
} lctx;

static void dims(lctx *c, const weft_stmt *s)
{
    if (!s) return;
    switch (s->kind) {
    case WEFT_STMT_FOR:
        if (s->u.loop.kind == WEFT_FOR_THREAD_BOUND) {
            if (s->u.loop.extent->kind != WEFT_EXPR_INT) c->bad_extent = true;
            int64_t e = weft_expr_int(s->u.loop.extent);
            int ax = s->u.loop.thread_axis;
            int64_t *d = ax <= WEFT_BLOCK_Z ? &c->l->grid[ax - WEFT_BLOCK_X] : &c->l->block[ax - WEFT_THREAD_X];
            if (e > *d) *d = e;
        }
        dims(c, s->u.loop.body);
        return;
    case WEFT_STMT_ALLOCATE:
        if (s->u.alloc.buf->scope == WEFT_SCOPE_SHARED)
            c->l->shared_bytes += s->u.alloc.buf->size * weft_dtype_bytes(s->u.alloc.buf->dtype);
        dims(c, s->u.alloc.body);
        return;
    case WEFT_STMT_IF:
        dims(c, s->u.cond.then_s);
        dims(c, s->u.cond.else_s);
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) dims(c, s->u.seq.items[i]);
        return;
    default: return;
    }
}

int weft_gpu_launches(const weft_loop_func *f, weft_gpu_launch *out, int max, const weft_buffer **allocs,
                      int max_allocs, int *n_allocs)
{
    const weft_stmt *s = f->body;
    *n_allocs = 0;
    while (s->kind == WEFT_STMT_ALLOCATE) {
        if (*n_allocs < max_allocs) allocs[*n_allocs] = s->u.alloc.buf;
        (*n_allocs)++;
        s = s->u.alloc.body;
    }
    int n = s->kind == WEFT_STMT_SEQ ? s->u.seq.n : 1;
    bool bad = false;
    for (int i = 0; i < n && i < max; i++) {
        weft_gpu_launch *l = &out[i];
        *l = (weft_gpu_launch){.body = s->kind == WEFT_STMT_SEQ ? s->u.seq.items[i] : s};
        lctx c = {f, l, false};
        dims(&c, l->body);
        bad |= c.bad_extent;
        for (int d = 0; d < 3; d++) {
            if (!l->grid[d]) l->grid[d] = 1;
            if (!l->block[d]) l->block[d] = 1;
        }
    }
    return bad ? -1 : n;
}

