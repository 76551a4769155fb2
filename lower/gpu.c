/* GPU lowering passes: barriers and the launch check (contract in lower/gpu.h and here).
 *
 * barriers: inside a block (the body of a block-bound loop, or a thread-bound loop outside any
 * block loop), every statement of a sequence that stores to a SHARED buffer gets a barrier
 * before it (readers of the previous contents are done: write-after-read, e.g. in a loop) and
 * after it (the data is complete before anyone reads it); an ALLOCATE or nested sequence is
 * not wrapped as a whole, its own producers are. Only sequences outside thread-bound
 * loops get barriers, so every thread of the block reaches them. Repeated barriers collapse.
 *
 * launch: every top-level nest is bound (contains a bound loop); no PARALLEL loops; no block
 * loop under a thread loop; barriers, SHARED allocations outside thread loops; with threads,
 * stores to GLOBAL or SHARED buffers and LOCAL allocations under a thread loop (a statement
 * outside would be run redundantly by every thread); threads per block, grid and block extents
 * and shared bytes within the caps and CUDA's limits.
 */
#include <stdlib.h>

#include "ir/launch.h"

#include "ir/error.h"
#include "lower/lower_internal.h"
#include "runtime/mem.h"

static bool stores_shared(const weft_stmt *s)
{
    if (!s) return false;
    switch (s->kind) {
    case WEFT_STMT_FOR: return stores_shared(s->u.loop.body);
    case WEFT_STMT_STORE: return s->u.store.buf->scope == WEFT_SCOPE_SHARED;
    case WEFT_STMT_ALLOCATE: return stores_shared(s->u.alloc.body);
    case WEFT_STMT_IF: return stores_shared(s->u.cond.then_s) || stores_shared(s->u.cond.else_s);
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++)
            if (stores_shared(s->u.seq.items[i])) return true;
        return false;
    default: return false;
    }
}

static bool is_block(const weft_stmt *s)
{
    return s->kind == WEFT_STMT_FOR && s->u.loop.kind == WEFT_FOR_THREAD_BOUND && s->u.loop.thread_axis >= WEFT_BLOCK_X &&
           s->u.loop.thread_axis <= WEFT_BLOCK_Z;
}
static bool is_thread(const weft_stmt *s)
{
    return s->kind == WEFT_STMT_FOR && s->u.loop.kind == WEFT_FOR_THREAD_BOUND && s->u.loop.thread_axis >= WEFT_THREAD_X;
}

/* Rewrites s; in_block: inside a block, outside thread loops. */
static const weft_stmt *place(weft_arena *a, const weft_stmt *s, bool in_block)
{
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        if (is_thread(s)) {
            if (in_block) return s;
            /* A grid of one block: the loop is the block; its thread loops hold no barrier. */
            return s;
        }
        const weft_stmt *b = place(a, s->u.loop.body, in_block || is_block(s));
        return weft_for_full(a, s->u.loop.var, s->u.loop.min, s->u.loop.extent, s->u.loop.kind, s->u.loop.thread_axis,
                             s->u.loop.auto_unroll, b);
    }
    case WEFT_STMT_ALLOCATE: return weft_allocate(a, s->u.alloc.buf, place(a, s->u.alloc.body, in_block));
    case WEFT_STMT_IF:
        return weft_if(a, s->u.cond.cond, place(a, s->u.cond.then_s, in_block),
                       s->u.cond.else_s ? place(a, s->u.cond.else_s, in_block) : NULL);
    case WEFT_STMT_SEQ: {
        int n = s->u.seq.n, m = 0;
        const weft_stmt **items = weft_arena_alloc(a, sizeof *items * (size_t)(3 * n + 1));
        if (!items) return NULL;
        for (int i = 0; i < n; i++) {
            const weft_stmt *it = place(a, s->u.seq.items[i], in_block);
            /* Loop nests and stores are wrapped; an ALLOCATE or SEQ got its barriers inside. */
            bool wrap = in_block && it->kind != WEFT_STMT_ALLOCATE && it->kind != WEFT_STMT_SEQ && stores_shared(it);
            if (wrap && (m == 0 || items[m - 1]->kind != WEFT_STMT_BARRIER)) items[m++] = weft_barrier(a);
            items[m++] = it;
            if (wrap) items[m++] = weft_barrier(a);
        }
        return weft_seq(a, m, items);
    }
    default: return s;
    }
}

weft_status weft_lower_barriers(weft_arena *a, weft_loop_func *f, const weft_target_caps *caps)
{
    if (!caps || !caps->has_thread_binding) return WEFT_OK;
    const weft_stmt *b = place(a, f->body, false);
    if (!b || weft_arena_failed(a)) return weft_fail(WEFT_ERR_NOMEM, "barriers %s: out of memory", f->name);
    f->body = b;
    return WEFT_OK;
}

typedef struct cctx {
    const weft_loop_func *f;
    int launch;
    bool has_threads;
    weft_status st;
} cctx;

static void check(cctx *c, const weft_stmt *s, bool in_thread, bool bound)
{
    if (!s || c->st != WEFT_OK) return;
    const char *fn = c->f->name;
    switch (s->kind) {
    case WEFT_STMT_FOR: {
        const char *v = weft_expr_var_name(s->u.loop.var);
        if (s->u.loop.kind == WEFT_FOR_PARALLEL) {
            c->st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: loop %s is parallel; GPU schedules bind loops instead",
                              fn, c->launch, v);
            return;
        }
        if (is_block(s) && in_thread) {
            c->st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: block loop %s is inside a thread loop", fn, c->launch, v);
            return;
        }
        check(c, s->u.loop.body, in_thread || is_thread(s), bound || s->u.loop.kind == WEFT_FOR_THREAD_BOUND);
        return;
    }
    case WEFT_STMT_STORE:
        if (!bound || (c->has_threads && !in_thread && s->u.store.buf->scope != WEFT_SCOPE_LOCAL))
            c->st = weft_fail(WEFT_ERR_INVALID_ARG,
                              "launch %s #%d: the store to %s is outside every %s loop (it would run redundantly on "
                              "every thread; bind the stage's loops)",
                              fn, c->launch, s->u.store.buf->name, bound ? "thread-bound" : "bound");
        return;
    case WEFT_STMT_BARRIER:
        if (in_thread) c->st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: a barrier inside a thread loop", fn, c->launch);
        return;
    case WEFT_STMT_ALLOCATE: {
        const weft_buffer *b = s->u.alloc.buf;
        if (b->scope == WEFT_SCOPE_SHARED && in_thread)
            c->st = weft_fail(WEFT_ERR_INVALID_ARG,
                              "launch %s #%d: shared buffer %s is allocated inside a thread loop (attach it at a block "
                              "or serial loop outside the thread loops)",
                              fn, c->launch, b->name);
        else if (b->scope == WEFT_SCOPE_LOCAL && c->has_threads && !in_thread)
            c->st = weft_fail(WEFT_ERR_INVALID_ARG,
                              "launch %s #%d: local buffer %s is allocated outside the thread loops (registers are per "
                              "thread; attach it inside them)",
                              fn, c->launch, b->name);
        else if (b->scope == WEFT_SCOPE_GLOBAL)
            c->st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: global buffer %s is allocated inside a kernel", fn,
                              c->launch, b->name);
        check(c, s->u.alloc.body, in_thread, bound);
        return;
    }
    case WEFT_STMT_IF:
        check(c, s->u.cond.then_s, in_thread, bound);
        check(c, s->u.cond.else_s, in_thread, bound);
        return;
    case WEFT_STMT_SEQ:
        for (int i = 0; i < s->u.seq.n; i++) check(c, s->u.seq.items[i], in_thread, bound);
        return;
    default: return;
    }
}

enum { MAX_LAUNCHES = 256 };

weft_status weft_lower_launch_check(const weft_loop_func *f, const weft_target_caps *caps)
{
    if (!caps || !caps->has_thread_binding) return WEFT_OK;
    weft_gpu_launch *ls = weft_malloc(sizeof *ls * MAX_LAUNCHES);
    if (!ls) return weft_fail(WEFT_ERR_NOMEM, "launch %s: out of memory", f->name);
    const weft_buffer *allocs[1];
    int na, n = weft_gpu_launches(f, ls, MAX_LAUNCHES, allocs, 0, &na);
    weft_status st = WEFT_OK;
    if (n < 0) st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s: a bound loop has a non-constant extent", f->name);
    else if (n > MAX_LAUNCHES) st = weft_fail(WEFT_ERR_UNSUPPORTED, "launch %s: more than %d launches", f->name, MAX_LAUNCHES);
    static const int64_t grid_max[3] = {2147483647, 65535, 65535}, block_max[3] = {1024, 1024, 64};
    for (int i = 0; i < n && st == WEFT_OK; i++) {
        const weft_gpu_launch *l = &ls[i];
        int64_t threads = l->block[0] * l->block[1] * l->block[2];
        for (int d = 0; d < 3 && st == WEFT_OK; d++) {
            if (l->grid[d] > grid_max[d])
                st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: grid extent %lld on blockIdx.%c exceeds %lld", f->name, i,
                               (long long)l->grid[d], "xyz"[d], (long long)grid_max[d]);
            else if (l->block[d] > block_max[d])
                st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: block extent %lld on threadIdx.%c exceeds %lld", f->name,
                               i, (long long)l->block[d], "xyz"[d], (long long)block_max[d]);
        }
        if (st != WEFT_OK) break;
        if (threads > caps->max_threads)
            st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: %lld threads per block, the target allows %d", f->name, i,
                           (long long)threads, caps->max_threads);
        else if (l->shared_bytes > caps->shared_bytes)
            st = weft_fail(WEFT_ERR_INVALID_ARG, "launch %s #%d: %lld bytes of shared memory, the target allows %ld", f->name,
                           i, (long long)l->shared_bytes, caps->shared_bytes);
        else {
            cctx c = {f, i, threads > 1, WEFT_OK};
            check(&c, l->body, false, false);
            st = c.st;
        }
    }
    free(ls);
    return st;
}
