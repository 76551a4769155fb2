/* Loop IR constructors. */
#include "ir/stmt.h"

#include <string.h>

const char *const weft_scope_names[WEFT_SCOPE_COUNT] = {"global", "shared", "local"};
const char *const weft_for_kind_names[WEFT_FOR_KIND_COUNT] = {"serial", "parallel", "vectorized", "unrolled",
                                                               "thread_bound"};
const char *const weft_thread_axis_names[WEFT_THREAD_AXIS_COUNT] = {
    "none", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};

weft_buffer *weft_buffer_new(weft_arena *a, const char *name, weft_dtype t, int ndim, const int64_t *shape,
                             weft_scope scope, int param_index)
{
    weft_buffer *b = weft_arena_alloc(a, sizeof *b);
    if (!b) return NULL;
    b->name = weft_arena_strdup(a, name);
    b->dtype = t;
    b->scope = scope;
    b->param_index = param_index;
    b->ndim = ndim > 8 ? 8 : ndim;
    b->size = 1;
    for (int d = 0; d < ndim; d++) {
        b->size *= shape[d];
        if (d < 8) b->shape[d] = shape[d];
    }
    return b;
}

const weft_expr *weft_load(weft_arena *a, const weft_buffer *b, const weft_expr *index)
{
    if (!b || !index) return NULL;
    weft_expr *e = weft_arena_alloc(a, sizeof *e);
    if (!e) return NULL;
    e->kind = WEFT_EXPR_LOAD;
    e->dtype = b->dtype;
    e->u.load.buf = b;
    e->u.load.index = index;
    return e;
}

static weft_stmt *stmt(weft_arena *a, weft_stmt_kind k)
{
    weft_stmt *s = weft_arena_alloc(a, sizeof *s);
    if (s) s->kind = k;
    return s;
}

const weft_stmt *weft_for_full(weft_arena *a, const weft_expr *var, const weft_expr *min, const weft_expr *extent,
                               weft_for_kind kind, weft_thread_axis axis, int auto_unroll, const weft_stmt *body)
{
    if (!var || !min || !extent || !body) return NULL;
    weft_stmt *s = stmt(a, WEFT_STMT_FOR);
    if (!s) return NULL;
    s->u.loop.var = var;
    s->u.loop.min = min;
    s->u.loop.extent = extent;
    s->u.loop.kind = kind;
    s->u.loop.thread_axis = axis;
    s->u.loop.auto_unroll = auto_unroll;
    s->u.loop.body = body;
    return s;
}

const weft_stmt *weft_for(weft_arena *a, const weft_expr *var, const weft_expr *min, const weft_expr *extent,
                          weft_for_kind kind, const weft_stmt *body)
{
    return weft_for_full(a, var, min, extent, kind, WEFT_THREAD_NONE, 0, body);
}

/* A STORE, or a PREFETCH (value NULL): both use the store member. */
static const weft_stmt *access(weft_arena *a, weft_stmt_kind k, const weft_buffer *b, const weft_expr *index,
                               const weft_expr *value)
{
    if (!b || !index || (k == WEFT_STMT_STORE && !value)) return NULL;
    weft_stmt *s = stmt(a, k);
    if (!s) return NULL;
    s->u.store.buf = b;
    s->u.store.index = index;
    s->u.store.value = value;
    return s;
}

const weft_stmt *weft_store(weft_arena *a, const weft_buffer *b, const weft_expr *index, const weft_expr *value)
{
    return access(a, WEFT_STMT_STORE, b, index, value);
}

const weft_stmt *weft_allocate(weft_arena *a, const weft_buffer *b, const weft_stmt *body)
{
    if (!b || !body) return NULL;
    weft_stmt *s = stmt(a, WEFT_STMT_ALLOCATE);
    if (!s) return NULL;
    s->u.alloc.buf = b;
    s->u.alloc.body = body;
    return s;
}

const weft_stmt *weft_if(weft_arena *a, const weft_expr *cond, const weft_stmt *then_s, const weft_stmt *else_s)
{
    if (!cond || !then_s) return NULL;
    weft_stmt *s = stmt(a, WEFT_STMT_IF);
    if (!s) return NULL;
    s->u.cond.cond = cond;
    s->u.cond.then_s = then_s;
    s->u.cond.else_s = else_s;
    return s;
}

const weft_stmt *weft_seq(weft_arena *a, int n, const weft_stmt *const *items)
{
    int m = 0;
    for (int i = 0; i < n; i++) m += items[i] != NULL;
    if (m == 1)
        for (int i = 0; i < n; i++)
            if (items[i]) return items[i];
    weft_stmt *s = stmt(a, WEFT_STMT_SEQ);
    const weft_stmt **v = weft_arena_alloc(a, sizeof *v * (size_t)(m ? m : 1));
    if (!s || !v) return NULL;
    m = 0;
    for (int i = 0; i < n; i++)
        if (items[i]) v[m++] = items[i];
    s->u.seq.n = m;
    s->u.seq.items = v;
    return s;
}

const weft_stmt *weft_barrier(weft_arena *a) { return stmt(a, WEFT_STMT_BARRIER); }

const weft_stmt *weft_prefetch(weft_arena *a, const weft_buffer *b, const weft_expr *index)
{
    return access(a, WEFT_STMT_PREFETCH, b, index, NULL);
}
