/* Tensor expression construction and DAG collection. */
#include "ir/tensor.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/error.h"

const char *const weft_reduce_names[WEFT_REDUCE_COUNT] = {"none", "sum", "max", "min", "prod"};

weft_tensor *weft_te_placeholder(weft_arena *a, const char *name, weft_dtype t, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > WEFT_MAX_DIMS) return NULL;
    weft_tensor *x = weft_arena_alloc(a, sizeof *x);
    if (!x) return NULL;
    x->name = weft_arena_strdup(a, name);
    x->dtype = t;
    x->ndim = ndim;
    for (int d = 0; d < ndim; d++) x->shape[d] = shape[d];
    x->is_placeholder = true;
    return x;
}

weft_tensor *weft_te_compute(weft_arena *a, const char *name, int ndim, const int64_t *shape,
                             const char *const *axis_names)
{
    if (ndim < 0 || ndim > WEFT_MAX_DIMS) return NULL;
    weft_tensor *x = weft_arena_alloc(a, sizeof *x);
    if (!x) return NULL;
    x->name = weft_arena_strdup(a, name);
    x->dtype = WEFT_F32;
    x->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        x->shape[d] = shape[d];
        char buf[16];
        snprintf(buf, sizeof buf, "ax%d", d);
        x->axis[d].var = weft_var(a, axis_names ? axis_names[d] : buf, WEFT_I64);
        x->axis[d].extent = shape[d];
    }
    return x;
}

const weft_expr *weft_te_axis(const weft_tensor *t, int d)
{
    assert(!t->is_placeholder && d >= 0 && d < t->ndim);
    return t->axis[d].var;
}

const weft_expr *weft_te_reduce_axis(weft_arena *a, weft_tensor *t, const char *name, int64_t extent)
{
    if (!t || t->n_reduce >= WEFT_MAX_DIMS) return NULL;
    const weft_expr *v = weft_var(a, name, WEFT_I64);
    t->reduce_axis[t->n_reduce].var = v;
    t->reduce_axis[t->n_reduce].extent = extent;
    t->n_reduce++;
    return v;
}

void weft_te_set_body(weft_tensor *t, weft_reduce_kind r, const weft_expr *body)
{
    if (!t) return;
    t->reduce = r;
    t->body = body;
    if (body) t->dtype = body->dtype;
}

const weft_expr *weft_te_at(weft_arena *a, const weft_tensor *t, ...)
{
    if (!t) return NULL;
    const weft_expr *idx[WEFT_MAX_DIMS];
    va_list ap;
    va_start(ap, t);
    for (int d = 0; d < t->ndim; d++) idx[d] = va_arg(ap, const weft_expr *);
    va_end(ap);
    return weft_tload(a, t, t->ndim, idx);
}

const weft_expr *weft_te_reduce_identity(weft_arena *a, weft_reduce_kind r, weft_dtype t)
{
    if (weft_dtype_is_float(t)) {
        if (r == WEFT_REDUCE_MAX) return weft_float(a, t, -INFINITY);
        if (r == WEFT_REDUCE_MIN) return weft_float(a, t, INFINITY);
        return weft_float(a, t, r == WEFT_REDUCE_PROD ? 1.0 : 0.0);
    }
    int64_t lo = t.bits == 32 ? INT32_MIN : INT64_MIN, hi = t.bits == 32 ? INT32_MAX : INT64_MAX;
    if (r == WEFT_REDUCE_MAX) return weft_int(a, t, lo);
    if (r == WEFT_REDUCE_MIN) return weft_int(a, t, hi);
    return weft_int(a, t, r == WEFT_REDUCE_PROD ? 1 : 0);
}

const weft_expr *weft_te_reduce_combine(weft_arena *a, weft_reduce_kind r, const weft_expr *acc, const weft_expr *x)
{
    if (r == WEFT_REDUCE_MAX) return weft_max(a, acc, x);
    if (r == WEFT_REDUCE_MIN) return weft_min(a, acc, x);
    if (r == WEFT_REDUCE_PROD) return weft_mul(a, acc, x);
    return weft_add(a, acc, x);
}

int64_t weft_te_numel(const weft_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}

typedef struct reads_ctx {
    const weft_tensor **out;
    int n, max;
} reads_ctx;

static void collect_reads(void *ud, const weft_expr *e)
{
    reads_ctx *c = ud;
    if (e->kind == WEFT_EXPR_TLOAD) {
        const weft_tensor *t = e->u.tload.tensor;
        bool seen = false;
        for (int i = 0; i < c->n; i++) seen = seen || c->out[i] == t;
        if (!seen && c->n < c->max) c->out[c->n++] = t;
    }
    weft_expr_each_child(e, collect_reads, ud);
}

int weft_te_reads(const weft_tensor *t, const weft_tensor **out, int max)
{
    reads_ctx c = {out, 0, max};
    if (!t->is_placeholder && t->body) collect_reads(&c, t->body);
    return c.n;
}

#define MAX_TENSORS 256

/* Post-order DFS gives producers before consumers. state: 0 new, 1 on stack, 2 done. */
static weft_status visit(const weft_tensor *t, const weft_tensor **order, int *n, const weft_tensor **seen,
                         int *state, int *n_seen)
{
    int idx = -1;
    for (int i = 0; i < *n_seen; i++)
        if (seen[i] == t) idx = i;
    if (idx >= 0 && state[idx] == 2) return WEFT_OK;
    if (idx >= 0 && state[idx] == 1) return weft_fail(WEFT_ERR_INVALID_ARG, "tensor %s is part of a cycle", t->name);
    if (*n_seen >= MAX_TENSORS) return weft_fail(WEFT_ERR_UNSUPPORTED, "kernel has more than %d tensors", MAX_TENSORS);
    idx = (*n_seen)++;
    seen[idx] = t;
    state[idx] = 1;
    if (!t->is_placeholder) {
        if (!t->body) return weft_fail(WEFT_ERR_INVALID_ARG, "compute tensor %s has no body", t->name);
        const weft_tensor *reads[MAX_TENSORS];
        int nr = weft_te_reads(t, reads, MAX_TENSORS);
        for (int i = 0; i < nr; i++) {
            weft_status st = visit(reads[i], order, n, seen, state, n_seen);
            if (st != WEFT_OK) return st;
        }
    }
    state[idx] = 2;
    order[(*n)++] = t;
    return WEFT_OK;
}

weft_status weft_te_func_create(weft_arena *a, const char *name, int n_inputs, const weft_tensor *const *inputs,
                                int n_outputs, const weft_tensor *const *outputs, weft_te_func **out)
{
    *out = NULL;
    const weft_tensor *order[MAX_TENSORS], *seen[MAX_TENSORS];
    int state[MAX_TENSORS], n = 0, n_seen = 0;
    for (int i = 0; i < n_outputs; i++) {
        if (!outputs[i]) return weft_fail(WEFT_ERR_INVALID_ARG, "kernel %s: output %d is NULL", name, i);
        weft_status st = visit(outputs[i], order, &n, seen, state, &n_seen);
        if (st != WEFT_OK) return st;
    }
    for (int i = 0; i < n; i++) {
        if (!order[i]->is_placeholder) continue;
        bool declared = false;
        for (int j = 0; j < n_inputs; j++) declared = declared || inputs[j] == order[i];
        if (!declared)
            return weft_fail(WEFT_ERR_INVALID_ARG, "kernel %s reads placeholder %s that is not an input", name,
                             order[i]->name);
    }
    weft_te_func *f = weft_arena_alloc(a, sizeof *f);
    const weft_tensor **ins = weft_arena_alloc(a, sizeof *ins * (size_t)(n_inputs + 1));
    const weft_tensor **outs = weft_arena_alloc(a, sizeof *outs * (size_t)(n_outputs + 1));
    const weft_tensor **all = weft_arena_alloc(a, sizeof *all * (size_t)(n + 1));
    if (!f || !ins || !outs || !all) return weft_fail(WEFT_ERR_NOMEM, "out of memory building kernel %s", name);
    memcpy(ins, inputs, sizeof *ins * (size_t)n_inputs);
    memcpy(outs, outputs, sizeof *outs * (size_t)n_outputs);
    memcpy(all, order, sizeof *all * (size_t)n);
    f->name = weft_arena_strdup(a, name);
    f->n_inputs = n_inputs;
    f->n_outputs = n_outputs;
    f->inputs = ins;
    f->outputs = outs;
    f->n_tensors = n;
    f->tensors = all;
    f->arena = a;
    *out = f;
    return WEFT_OK;
}

static double count_ops(const weft_expr *e)
{
    if (!e) return 0;
    switch ((weft_expr_kind)e->kind) {
    case WEFT_EXPR_INT:
    case WEFT_EXPR_FLOAT:
    case WEFT_EXPR_VAR:
    case WEFT_EXPR_LOAD:
    case WEFT_EXPR_TLOAD: return 0; /* index arithmetic is not counted */
    case WEFT_EXPR_NOT:
    case WEFT_EXPR_CAST: return count_ops(e->u.un.a);
    case WEFT_EXPR_SELECT: return 1 + count_ops(e->u.sel.t) + count_ops(e->u.sel.f);
    case WEFT_EXPR_CALL: {
        double s = 1;
        for (int i = 0; i < e->u.call.n; i++) s += count_ops(e->u.call.args[i]);
        return s;
    }
    default: return 1 + count_ops(e->u.bin.a) + count_ops(e->u.bin.b);
    }
}

double weft_te_func_flops(const weft_te_func *f)
{
    double total = 0;
    for (int i = 0; i < f->n_tensors; i++) {
        const weft_tensor *t = f->tensors[i];
        if (t->is_placeholder) continue;
        double pts = (double)weft_te_numel(t);
        for (int r = 0; r < t->n_reduce; r++) pts *= (double)t->reduce_axis[r].extent;
        total += pts * (count_ops(t->body) + (t->n_reduce ? 1 : 0));
    }
    return total;
}
